"""The board store's contract, below every backend: ``Store`` (one open
board; transactions, retries on a busy board, settings, trust) and what the
backends share (``lock_wait``, the default settings).

Each backend subclasses ``Store`` in its own module — ``backends.SqliteStore``,
``pg.PostgresStore`` — and importing ``backends`` registers both in ``KINDS``,
the table ``Store.open`` picks from by the location's backend (PostgreSQL's
module, and its driver, are imported only when such a board is opened). So the
backends import this module and never each other: callers import ``Store``
from ``backends``, which re-exports it.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import sys
import time
from _thread import get_ident as thread_id  # (threading.get_ident is this)
from pathlib import Path

from .. import UPGRADE_HINT
from ..rules import clock
from ..shapes.errors import BoardError
from . import migrations, records
from .discovery import BoardLocation

TYPE_CHECKING = False  # (typing is not imported on the cold path; checkers read this as typing's)
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from contextlib import AbstractContextManager
    from pathlib import Path
    from typing import Any, Protocol, TypeVar

    import peewee as pw

    from ..authority.keys import Person
    from ..authority.trust import Trust
    from ..shapes.errors import BoardBusy, LoopxError
    from .records import Cursor, Params

    class Listener(Protocol):
        """Readable (``fileno``) when another process committed a write (pg.Listener)."""

        def fileno(self) -> int: ...
        def drain(self) -> object: ...
        def close(self) -> None: ...

    T = TypeVar("T")  # what an operator body returns

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


def _cannot_open(exc: Exception, where: str, path: str | Path | None = None) -> LoopxError:
    """A full disk, a read-only or damaged file said as such (store/failures.py);
    anything else: not a board."""
    from .failures import explain

    known = explain(exc, where, path)
    if known is not None and known.code != "cannot_open":
        return known
    return BoardError(f"cannot open board {where}: {exc}", "is it a LoopX board? check --db / LOOPX_DB")


def _is_busy(exc: Exception) -> bool:
    text = str(exc).lower()
    return any(word in text for word in ("locked", "busy", "deadlock", "could not serialize"))


def _errors(name: str) -> tuple:
    """sqlite3's exception class ``name``, and peewee's (it wraps the driver's)
    and PostgreSQL's libpq client's (store/libpq.py) when they are loaded."""
    found = [getattr(sqlite3, name)]
    for module in ("peewee", "loopx_core.store.libpq"):
        loaded = sys.modules.get(module)
        if loaded is not None:
            found.append(getattr(loaded, name))
    return tuple(found)


# backend name -> its Store subclass, imported when first asked for (``backends`` fills it)
KINDS: dict[str, Callable[[], type[Store]]] = {}


class Store:
    """One open board. ``run`` executes an operator body in a single write
    transaction and retries it if the database was busy, so an operator body
    must be pure apart from its queries. One subclass per backend
    (``backends.SqliteStore``, ``pg.PostgresStore``) says how its connections,
    transactions and catalogue work; ``Store.open`` picks it from the location."""

    backend = ""
    locks_rows = False  # reads taken "for update" lock their rows (SQLite's BEGIN IMMEDIATE already serialises writers)

    def __init__(self, location: BoardLocation, db: pw.Database | None = None):
        self.location = location
        self._db = db  # peewee's database (``db``)
        self._settings: dict[str, str] | None = None
        self._trust: Trust | None = None
        self.created = False  # this open created the board's schema
        self.refuses_writes: LoopxError | None = (
            None  # the storage's refusal (a full disk, read-only, damaged): writes raise it, reads go on
        )
        self._lock_waits: dict[
            int, float
        ] = {}  # thread → since when (time.monotonic) its write waits for the write lock

    # -- opening -----------------------------------------------------------
    @classmethod
    def open(cls, location: BoardLocation, *, create: bool = False, frozen_ok: bool = False) -> Store:
        """``frozen_ok``: the caller is making this a test board (``init --test-board``)
        or copying one (``migrate``), so ``LOOPX_NOW`` is not refused here."""
        kind = KINDS.get(location.backend)
        if kind is None:  # pragma: no cover - discovery only yields the backends ``backends`` registers
            raise BoardError(f"unsupported board {location.url}", "import Store from loopx_core.store.backends")
        store = kind().connect(location, create=create)
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
    def db(self) -> pw.Database:
        """Peewee's database (imports peewee): for the models, migrations and raw
        tests (each backend builds its own on first use)."""
        raise NotImplementedError

    # -- what each backend says ----------------------------------------------
    def connection(self) -> Any:  # (the backend's DB-API connection: sqlite3's or libpq's)
        """This thread's DB-API connection."""
        raise NotImplementedError

    def execute(self, sql: str, params: Params = ()) -> Cursor:
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

    def _transaction(self, body: Callable[[], T], *, write: bool, card: int | None = None) -> T:
        """``body`` in one transaction; ``card``: see ``run``."""
        raise NotImplementedError

    def before_append(self) -> None:
        """An event is about to be appended in this thread's write transaction
        (``events.emit``): a backend whose card-local writes run side by side
        (PostgreSQL's) makes the log's append wait its turn here."""

    def _savepoint(self, body: Callable[[], T]) -> T:
        raise NotImplementedError

    def _snapshot(self) -> AbstractContextManager[None]:
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

    def thread_connection(self) -> AbstractContextManager[None]:
        """A context manager: one connection per thread; worker threads wrap jobs in it."""
        raise NotImplementedError

    def change_token(self) -> int:
        """Cheap "did anyone write?" probe."""
        raise NotImplementedError

    def listener(self) -> Listener | None:
        """Something to ``select`` on that becomes readable when another
        process commits a write (``fileno()``; ``drain()`` reads it; ``close()``),
        or None where the backend pushes nothing (SQLite: the probe is cheap)."""
        return None

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
                raise BoardError(
                    f"{self.location.describe()} is not a LoopX board", "point --db at a board, or run `loopx init`"
                )
            raise BoardError(
                f"no LoopX board in {self.location.describe()}", f"create one: `loopx --db {self.location.url} init`"
            )

        def migrate() -> None:
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
                    self.execute(
                        'INSERT INTO "setting" ("key", "value") VALUES (?, ?) ON CONFLICT ("key") DO NOTHING',
                        (key, value),
                    )
            self.put_setting("schema_version", str(migrations.SCHEMA_VERSION))

        self.run(migrate)

    def put_setting(self, key: str, value: str) -> None:
        """Upsert a board setting (inside the caller's write transaction)."""
        self.execute(
            'INSERT INTO "setting" ("key", "value") VALUES (?, ?) ON CONFLICT ("key") DO UPDATE SET "value" = excluded."value"',
            (key, value),
        )
        self._settings = None

    def put_signed_setting(
        self, key: str, value: str, person: Person, kind: str = "setting_changed", **extra: object
    ) -> None:
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
    def run(self, body: Callable[[], T], *, card: int | None = None) -> T:
        """``body`` in one write transaction, run again while the board is busy.
        ``card``: the write touches that card alone — its row, gates, evidence,
        workspace — besides appending events. Where the backend locks rows
        (PostgreSQL), such writes on different cards run side by side: each
        waits for writers of its card and, at its first event, for the log's
        append; any other write still has the board to itself (DESIGN §3,
        ``pg.py``). SQLite serialises every writer anyway. Inside a caller's
        transaction, the caller's lock holds."""
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
                    return self._transaction(body, write=True, card=card)
                except BoardError as exc:
                    if exc.code != "uncommitted" or lost >= 3:
                        raise
                    lost += (
                        1  # PostgreSQL went away mid-transaction, before its commit: run it again on a new connection
                    )
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

    def _waited(self, exc: Exception) -> BoardBusy:
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
