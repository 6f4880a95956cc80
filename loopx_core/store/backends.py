"""Opening a board and running transactions on it.

Everything database-specific lives in the store's class, one per backend, so a
PostgreSQL board is a second subclass, not a rewrite of the operators.

A SQLite board (``SqliteStore``) is a plain ``sqlite3`` connection per thread
(WAL, synchronous normal, busy_timeout, foreign keys; every write transaction
``BEGIN IMMEDIATE``): the per-turn operators run their SQL on it through
``records.py`` and never import peewee. Peewee (``Store.db``) is built only
when something needs the models — migrations, agents, people, the timeline —
and then runs on the very same connections, so it sees the same transaction.
A PostgreSQL board (``pg.PostgresStore``) is opened through peewee.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import sys
import time
from _thread import (
    _local as thread_local,  # threading.local itself, without importing threading (~1 ms cold)
)
from _thread import get_ident as thread_id  # (threading.get_ident is this)
from pathlib import Path

from .. import UPGRADE_HINT
from ..rules import clock, faults
from ..shapes.errors import BoardError
from . import migrations, records
from .discovery import BoardLocation

TYPE_CHECKING = False  # (typing is not imported on the cold path; checkers read this as typing's)
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from typing import TypeVar

    from ..authority.trust import Trust
    from ..shapes.errors import StorageError

    T = TypeVar("T")  # what an operator body returns

HELD_FOR = 1.0  # s: a lock on the whole board file held this long by one process is said, not waited for
SQLITE_PRAGMAS = (
    ("busy_timeout", 10000),  # first: the rest wait out a passing lock (another writer, a checkpoint)
    ("journal_mode", "wal"),
    ("synchronous", "normal"),
    ("foreign_keys", 1),
)

DEFAULT_SETTINGS = {
    "objective": "",
    "no_progress_limit": "3",
    "default_lease": "1800",
    "verify_timeout": "600",
}


LOCK_WAIT = 30.0  # s: how long a write waits for another writer, unless LOOPX_LOCK_WAIT says otherwise


def lock_wait() -> float:
    """``LOOPX_LOCK_WAIT`` (seconds, 0.1–3600): the bound on a write's wait for
    the board's write lock (SQLite's, or PostgreSQL's advisory lock)."""
    try:
        return min(max(float(os.environ.get("LOOPX_LOCK_WAIT", LOCK_WAIT)), 0.1), 3600.0)
    except ValueError:
        return LOCK_WAIT


def _cannot_open(exc: Exception, where: str, path=None):
    """A full disk, a read-only or damaged file said as such (store/failures.py);
    anything else: not a board."""
    from .failures import explain

    known = explain(exc, where, path)
    if known is not None and known.code != "cannot_open":
        return known
    return BoardError(f"cannot open board {where}: {exc}", "is it a LoopX board? check --db / LOOPX_DB")


def _reads_only(path, refusal):
    from .failures import read_only_fallback

    return read_only_fallback(path, refusal)


def _is_busy(exc: Exception) -> bool:
    text = str(exc).lower()
    return any(word in text for word in ("locked", "busy", "deadlock", "could not serialize"))


def _errors(name: str) -> tuple:
    """sqlite3's exception class ``name``, and peewee's when peewee is loaded (it wraps the driver's)."""
    found = [getattr(sqlite3, name)]
    pw = sys.modules.get("peewee")
    if pw is not None:
        found.append(getattr(pw, name))
    return tuple(found)


def _adopting_peewee(store: SqliteStore):
    """A peewee database whose connections are the store's own (one per
    thread): the models run inside the store's transactions. ``_connect`` is
    peewee's documented hook for where connections come from ("Adding a Custom
    Database Driver"); ``close`` is public."""
    from .orm import peewee as pw

    class Adopted(pw.SqliteDatabase):
        def _connect(self):
            return store.connection()

        def close(self):
            closed = super().close()
            store._drop_connection()
            return closed

    return Adopted(str(store.location.path), lock_type="IMMEDIATE", timeout=10)


class Store:
    """One open board. ``run`` executes an operator body in a single write
    transaction and retries it if the database was busy, so an operator body
    must be pure apart from its queries. One subclass per backend
    (``SqliteStore`` here, ``pg.PostgresStore``) says how its connections,
    transactions and catalogue work; ``Store.open`` picks it from the location."""

    backend = ""
    locks_rows = False  # reads taken "for update" lock their rows (SQLite's BEGIN IMMEDIATE already serialises writers)

    def __init__(self, location: BoardLocation, db=None):
        self.location = location
        self._db = db  # peewee's database (``db``)
        self._settings: dict[str, str] | None = None
        self._trust: Trust | None = None
        self.created = False  # this open created the board's schema
        self.refuses_writes: StorageError | None = None  # the storage's refusal (a full disk, read-only, damaged): writes raise it, reads go on
        self._lock_waits: dict[int, float] = {}  # thread → since when (time.monotonic) its write waits for the write lock

    # -- opening -----------------------------------------------------------
    @classmethod
    def open(cls, location: BoardLocation, *, create: bool = False, frozen_ok: bool = False) -> Store:
        """``frozen_ok``: the caller is making this a test board (``init --test-board``)
        or copying one (``migrate``), so ``LOOPX_NOW`` is not refused here."""
        kind: type[Store]
        if location.backend == "sqlite":
            kind = SqliteStore
        elif location.backend == "postgresql":
            from .pg import PostgresStore  # only PostgreSQL boards pay for the driver

            kind = PostgresStore
        else:  # pragma: no cover - discovery only yields the two above
            raise BoardError(f"unsupported board {location.url}")
        store = kind.connect(location, create=create)
        records.bind_default(store)  # statements outside a transaction run on the board opened last
        try:
            store._ensure_schema(create=create)
        except _errors("DatabaseError") as exc:  # (OperationalError is one)
            store.close()
            raise _cannot_open(exc, location.describe()) from exc
        if clock.frozen_by_env() and not frozen_ok:
            store._check_frozen_clock()
        return store

    @classmethod
    def connect(cls, location: BoardLocation, *, create: bool) -> Store:
        """The store for ``location``, its schema not yet checked."""
        raise NotImplementedError

    @property
    def db(self):
        """Peewee's database (imports peewee): for the models, migrations and raw tests."""
        return self._db

    # -- what each backend says ----------------------------------------------
    def connection(self):
        """This thread's DB-API connection."""
        raise NotImplementedError

    def execute(self, sql: str, params=()):
        """Run one statement (``?`` placeholders on both backends) in this
        thread's connection; returns the cursor."""
        raise NotImplementedError

    def in_transaction(self) -> bool:
        """Whether this thread is inside one of this board's transactions (a
        caller that must not run a slow command under the write lock asks)."""
        return self._in_transaction()

    def _in_transaction(self) -> bool:
        raise NotImplementedError

    def _has_table(self, name: str) -> bool:
        raise NotImplementedError

    def _has_foreign_tables(self) -> bool:
        raise NotImplementedError

    def _transaction(self, body: Callable[[], T], *, write: bool) -> T:
        raise NotImplementedError

    def _savepoint(self, body: Callable[[], T]) -> T:
        raise NotImplementedError

    def _snapshot(self):
        """A context manager: a read transaction on this thread's connection."""
        raise NotImplementedError

    def _refuse_storage(self, exc: Exception) -> None:
        """A write the storage refused (a read-only or full board, a server
        that takes no writes) is raised as such, with where and what to change."""
        from .failures import explain

        known = explain(exc, self.location.describe(), self.location.path)
        if known is not None and known.code in ("read_only", "disk_full"):
            raise known from exc

    def _holder(self) -> str:
        """Who holds the board's write lock, as far as this backend can tell ("" when it cannot)."""
        return ""

    def thread_connection(self):
        """A context manager: one connection per thread; worker threads wrap jobs in it."""
        raise NotImplementedError

    def change_token(self) -> int:
        """Cheap "did anyone write?" probe."""
        raise NotImplementedError

    def close(self) -> None:
        """Close this thread's connection."""
        raise NotImplementedError

    def _check_frozen_clock(self) -> None:
        """``LOOPX_NOW`` moves the clock of every lease and deadline, so only a
        board a person made for tests and demos honours it (SECURITY.md)."""
        from ..authority.trust import clock_movable
        from ..shapes.errors import Altered, UsageError

        if not clock_movable(self.query, self.trust()):
            changed = self.trust().changed
            if changed:  # (the real reason: this machine trusts nothing on it)
                raise Altered(changed, "unset LOOPX_NOW to see `loopx verify`'s report", code="clock_refused")
            raise UsageError(
                "LOOPX_NOW is set, but this board is not a test board: its clock cannot be moved",
                "unset LOOPX_NOW; a person makes a board for tests and demos with `loopx init --test-board`",
                code="clock_refused",
            )

    def _schema_version(self) -> int:
        if not self._has_table("setting"):
            return 0
        row = self.query("SELECT value FROM setting WHERE key = 'schema_version'")
        return int(row[0][0]) if row else 0

    def _ensure_schema(self, *, create: bool) -> None:
        version = self._schema_version()
        if version == migrations.SCHEMA_VERSION:
            return
        if version > migrations.SCHEMA_VERSION:
            raise BoardError(
                f"board schema v{version} is newer than this LoopX (v{migrations.SCHEMA_VERSION})",
                UPGRADE_HINT,
            )
        if version == 0 and not create:
            if self._has_foreign_tables():
                raise BoardError(f"{self.location.describe()} is not a LoopX board", "point --db at a board, or run `loopx init`")
            raise BoardError(f"no LoopX board in {self.location.describe()}", f"create one: `loopx --db {self.location.url} init`")

        def migrate():
            current = self._schema_version()  # re-read under the write lock: another process may have won
            self.created = current == 0
            for target, step in migrations.STEPS:
                if target > current:
                    step(self.db)
            if current == 0:
                now = clock.now()
                rows = dict(DEFAULT_SETTINGS, created_at=repr(now))
                root = self.location.project_root
                if root is not None:
                    rows["project_root"] = str(root)
                for key, value in rows.items():
                    self.execute('INSERT INTO "setting" ("key", "value") VALUES (?, ?) ON CONFLICT ("key") DO NOTHING', (key, value))
            self.put_setting("schema_version", str(migrations.SCHEMA_VERSION))

        self.run(migrate)

    def put_setting(self, key: str, value: str) -> None:
        """Upsert a board setting (inside the caller's write transaction)."""
        self.execute('INSERT INTO "setting" ("key", "value") VALUES (?, ?) ON CONFLICT ("key") DO UPDATE SET "value" = excluded."value"', (key, value))
        self._settings = None

    def put_signed_setting(self, key: str, value: str, person, kind: str = "setting_changed", **extra) -> None:
        """A person's setting: the signed event (``kind``, one of SETTING_EVENTS,
        its data holding ``key`` and ``value``) is its proof (inside the caller's
        write transaction)."""
        from . import events

        seq = events.emit(person, kind, None, key=key, value=value, **extra)
        self.execute(
            'INSERT INTO "setting" ("key", "value", "decided_seq") VALUES (?, ?, ?) '
            'ON CONFLICT ("key") DO UPDATE SET "value" = excluded."value", "decided_seq" = excluded."decided_seq"',
            (key, value, seq),
        )
        self._settings = None

    # -- transactions ------------------------------------------------------
    def run(self, body: Callable[[], T]) -> T:
        if self._in_transaction():
            return self._savepoint(body)  # inside the caller's transaction
        if self.refuses_writes is None and self.backend == "sqlite":
            self.connection()  # (opening may find the storage refusing writes)
        if self.refuses_writes is not None:
            raise self.refuses_writes
        deadline = time.monotonic() + lock_wait()
        lost = 0
        me = thread_id()
        try:
            for attempt in range(100_000):  # (bounded by the deadline: LOOPX_LOCK_WAIT)
                self._lock_waits.setdefault(me, time.monotonic())  # (until the transaction has the lock: ``_locked``)
                try:
                    return self._transaction(body, write=True)
                except BoardError as exc:
                    if exc.code != "uncommitted" or lost >= 3:
                        raise
                    lost += 1  # PostgreSQL went away mid-transaction, before its commit: run it again on a new connection
                    continue
                except _errors("OperationalError") as exc:
                    timed_out = "lock timeout" in str(exc).lower()  # PostgreSQL's lock_timeout: the whole wait
                    if not _is_busy(exc) and not timed_out:
                        self._refuse_storage(exc)
                        raise
                    if timed_out or time.monotonic() >= deadline:
                        raise self._waited(exc) from exc
                    import random  # only on the rare busy path

                    time.sleep(0.02 * min(attempt + 1, 10) + random.random() * 0.03)
                except _errors("DatabaseError") as exc:
                    self._refuse_storage(exc)
                    raise
            raise self._waited(TimeoutError("the write lock"))
        finally:
            self._lock_waits.pop(me, None)

    def _locked(self) -> None:
        """This thread's write transaction has the board's write lock: it waits no more."""
        self._lock_waits.pop(thread_id(), None)

    def lock_waits(self) -> dict[int, float]:
        """The threads whose write waits now for the board's write lock (another
        writer holds it), each with since when (``time.monotonic``): the board
        says "waiting for the board" while a person's action does (#30)."""
        return dict(self._lock_waits)

    def _waited(self, exc: Exception):
        """A write waited ``LOOPX_LOCK_WAIT`` for another writer: said, with who (exit 5)."""
        from ..shapes.errors import BoardBusy

        found = self._holder()
        who = f" (held by {found})" if found else ""
        return BoardBusy(
            f"another writer held the board {self.location.describe()} for longer than {lock_wait():g} s{who}; nothing was written",
            "retry (with the same --op-id); LOOPX_LOCK_WAIT=SECONDS waits longer; if it keeps happening, end the process that holds the board",
            code="lock_wait",
        )

    @contextlib.contextmanager
    def read(self) -> Iterator[None]:
        """A consistent read snapshot (no write lock taken)."""
        if self._in_transaction():
            yield
            return
        token = records.using(self)
        try:
            with self._snapshot():
                yield
        finally:
            records.release(token)

    def max_seq(self) -> int:
        value = self.query('SELECT MAX("seq") FROM "event"')[0][0]
        return int(value or 0)

    # -- settings ----------------------------------------------------------
    def settings(self) -> dict[str, str]:
        if self._settings is None:
            self._settings = dict(self.query('SELECT "key", "value" FROM "setting"'))
        return self._settings

    def setting(self, key: str, default: str = "") -> str:
        return self.settings().get(key, DEFAULT_SETTINGS.get(key, default))

    def signed_setting(self, key: str) -> str | None:
        """A person's setting (prices, policy, test_clock): its value only when the
        signed event that set it verifies and says the same; else None."""
        from ..authority.trust import signed_setting

        return signed_setting(self.query, key, self.trust())

    # -- raw reads for the signature checks (trust.py) -----------------------
    def query(self, sql: str, params: tuple = ()) -> list:
        """Rows of a plain SQL read (``?`` placeholders on both backends)."""
        return self.execute(sql, params).fetchall()

    def board_uid(self) -> str:
        return self.settings().get("board_uid", "")

    def trust(self) -> Trust:
        """The people whose signatures this board honours (loaded once per open board)."""
        if self._trust is None:
            from ..authority import trust

            self._trust = trust.load(self.query, self.board_uid(), self.location.describe())
        return self._trust

    def forget_trust(self) -> None:
        self._trust = None

    def project_folder(self) -> Path | None:
        """The board's project folder on this machine, or None: a ``.loopx/``
        board's recorded one (``project_root``); on PostgreSQL, the checkout
        the command runs in when it points at this board (``team_checkout``)."""
        root = self.settings().get("project_root")
        return Path(root) if root else None

    def checkout_id(self) -> str | None:
        """Which checkout of the project this is, on a board shared by several
        (PostgreSQL): its workspaces are its own. None for a ``.loopx/`` board,
        whose one project folder is the only checkout."""
        return None

    def project_root(self) -> Path:
        return self.project_folder() or Path(os.getcwd())


class SqliteStore(Store):
    """A SQLite board: a plain ``sqlite3`` connection per thread (WAL,
    synchronous normal, busy_timeout, foreign keys; every write transaction
    ``BEGIN IMMEDIATE``). Peewee's database is built only when something needs
    the models, on the very same connections."""

    backend = "sqlite"

    def __init__(self, location: BoardLocation, db=None):
        super().__init__(location, db)
        self._local = thread_local()

    @classmethod
    def connect(cls, location: BoardLocation, *, create: bool) -> Store:
        assert location.path is not None
        from ..rules.given_paths import check_target

        # (a FIFO, a device or a link to nothing named as the board: said so, never opened)
        check_target(str(location.path), "the board", "point --db / LOOPX_DB at a board file (`loopx init` makes one)", error=BoardError)
        if not location.path.exists():
            if not create:
                if location.source == "none":
                    from .discovery import NO_BOARD, NO_BOARD_HINT

                    raise BoardError(NO_BOARD, NO_BOARD_HINT)
                raise BoardError(
                    f"no board at {location.path}",
                    "create one with `loopx init` in your project folder (or pass --db PATH)",
                )
            location.path.parent.mkdir(parents=True, exist_ok=True)
        return cls(location)

    @property
    def db(self):
        if self._db is None:
            self._db = _adopting_peewee(self)
        return self._db

    def connection(self):
        conn = getattr(self._local, "conn", None)
        if conn is None:
            try:
                conn = sqlite3.connect(str(self.location.path), timeout=0, isolation_level=None)
                try:  # without waiting: a board held exclusively is said at once, by whom
                    conn.execute("PRAGMA journal_mode = wal")
                except sqlite3.OperationalError as exc:
                    if not _is_busy(exc):
                        raise
                    self._refuse_if_held(conn, exc)
                for name, value in SQLITE_PRAGMAS:
                    if name == "busy_timeout":
                        value = min(value, int(lock_wait() * 1000))
                    conn.execute(f"PRAGMA {name} = {value}")
            except sqlite3.DatabaseError as exc:
                if _is_busy(exc):
                    raise self._busy(exc) from exc
                refusal = _cannot_open(exc, self.location.describe(), self.location.path)
                conn = _reads_only(self.location.path, refusal)
                if conn is None:
                    raise refusal from exc
                self.refuses_writes = refusal  # reads go on; `run` says why writes cannot
            else:
                self._refuse_if_damaged()
            self._local.conn = conn
        return conn

    def _refuse_if_damaged(self) -> None:
        """A board found damaged refuses writes until `verify` finds it whole (store/failures.py)."""
        if not os.path.exists(f"{self.location.path}-damaged"):  # (the mark's name: failures.damage_mark)
            return
        from .failures import damaged, known_damage

        detail = known_damage(self.location.path)
        if detail is not None:
            self.refuses_writes = damaged(self.location.describe(), detail)

    def _busy(self, exc: Exception):
        """The board could not be had in time: who holds it, as far as the OS says."""
        from ..shapes.errors import BoardBusy
        from .holder import holder

        who = holder(self.location.path)
        return BoardBusy(
            f"the board {self.location.describe()} is held by {who.text()}, which locked the whole file: LoopX cannot read it ({exc})",
            "end that process (or wait until it lets go of the board), then retry; LoopX's own processes never lock it so",
            data={"holder": who.to_json()},
        )

    def _refuse_if_held(self, conn, exc: Exception) -> None:
        """A new connection found the board's file locked: raise ``BoardBusy``
        when a process holds it in exclusive locking mode and still does after
        ``HELD_FOR``. SQLite itself locks the whole file for a while too — the
        last connection's checkpoint as it closes, a recovery — and that lock
        is waited for like any writer's (``busy_timeout``); the two differ in
        the WAL index, which only SQLite's own passing lock keeps open (see
        ``holder.exclusive_mode_holders``)."""
        from .holder import exclusive_mode_holders

        before = exclusive_mode_holders(self.location.path)
        if not before:
            return
        conn.execute(f"PRAGMA busy_timeout = {int(HELD_FOR * 1000)}")
        try:
            conn.execute("PRAGMA journal_mode = wal")
            return  # let go meanwhile
        except sqlite3.OperationalError as again:
            if not _is_busy(again):
                raise
        if before & exclusive_mode_holders(self.location.path):
            raise self._busy(exc) from exc

    def _drop_connection(self) -> None:
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            self._local.conn = None
            conn.close()

    def execute(self, sql: str, params=()):
        return self.connection().execute(sql, params)

    def _in_transaction(self) -> bool:
        conn = getattr(self._local, "conn", None)
        return conn is not None and conn.in_transaction

    def _has_table(self, name: str) -> bool:
        return bool(self.query("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (name,)))

    def _has_foreign_tables(self) -> bool:
        return bool(self.query("SELECT 1 FROM sqlite_master WHERE type = 'table'"))

    def _holder(self) -> str:
        from .holder import holder

        return holder(self.location.path).text()

    def close(self) -> None:
        if self._db is not None and not self._db.is_closed():
            self._db.close()
        self._drop_connection()

    def _transaction(self, body: Callable[[], T], *, write: bool) -> T:
        token = records.using(self)  # the body's statements run on this store's connection
        try:
            conn = self.connection()
            conn.execute("BEGIN IMMEDIATE" if write else "BEGIN DEFERRED")
            self._locked()
            try:
                result = body()
                faults.point("commit")
                conn.execute("COMMIT")
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise
            faults.point("committed")
            return result
        finally:
            records.release(token)

    _savepoints = 0

    def _savepoint(self, body: Callable[[], T]) -> T:
        SqliteStore._savepoints += 1
        name = f"loopx_sp{SqliteStore._savepoints}"
        conn = self.connection()
        conn.execute(f"SAVEPOINT {name}")
        try:
            result = body()
        except BaseException:
            conn.execute(f"ROLLBACK TO SAVEPOINT {name}")
            conn.execute(f"RELEASE SAVEPOINT {name}")
            raise
        conn.execute(f"RELEASE SAVEPOINT {name}")
        return result

    @contextlib.contextmanager
    def _snapshot(self) -> Iterator[None]:
        conn = self.connection()
        try:
            conn.execute("BEGIN DEFERRED")
            try:
                yield
            finally:
                if conn.in_transaction:
                    conn.execute("COMMIT")
        except _errors("OperationalError") as exc:
            if not _is_busy(exc):
                raise
            raise self._busy(exc) from exc  # (a WAL reader waits only for a lock on the whole file)

    @contextlib.contextmanager
    def thread_connection(self) -> Iterator[None]:
        """The connection is closed after — unless it was open when the block
        began (a job inside a long-lived loop, such as the board's change
        poller): closing it there would reopen the loop's connection, whose
        ``data_version`` (``change_token``) starts again from the same value
        and so could miss what was committed in between."""
        opened_here = getattr(self._local, "conn", None) is None
        try:
            yield
        finally:
            if opened_here:
                self.close()

    def change_token(self) -> int:
        """SQLite's data_version changes on every commit by another connection."""
        return int(self.query("PRAGMA data_version")[0][0])
