"""Opening a board: the SQLite backend, and the table of backends.

Everything database-specific lives in the store's class, one per backend, so a
PostgreSQL board is a second subclass, not a rewrite of the operators.

A SQLite board (``SqliteStore``) is a plain ``sqlite3`` connection per thread
(WAL, synchronous normal, busy_timeout, foreign keys; every write transaction
``BEGIN IMMEDIATE``): the per-turn operators run their SQL on it through
``records.py`` and never import peewee. Peewee (``Store.db``) is built only
when something needs the models — migrations, agents, people, the timeline —
and then runs on the very same connections, so it sees the same transaction.
A PostgreSQL board (``pg.PostgresStore``) is opened through peewee.

What every backend shares — ``Store`` itself, ``lock_wait`` — lives below
them in ``base.py`` (so ``pg`` imports that, never this module); it is
re-exported here, where callers import it from.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
from _thread import (
    _local as thread_local,  # threading.local itself, without importing threading (~1 ms cold)
)

from ..rules import faults
from ..shapes.errors import BoardError
from . import records
from .base import (  # noqa: F401 (re-exported: callers import them from here)
    DEFAULT_SETTINGS,
    KINDS,
    LOCK_WAIT,
    Store,
    _cannot_open,
    _errors,
    _is_busy,
    lock_wait,
)
from .discovery import BoardLocation

TYPE_CHECKING = False  # (typing is not imported on the cold path; checkers read this as typing's)
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from pathlib import Path
    from typing import TypeVar

    import peewee

    from ..shapes.errors import BoardBusy, LoopxError
    from .base import Cursor, Params

    T = TypeVar("T")  # what an operator body returns

HELD_FOR = 1.0  # s: a lock on the whole board file held this long by one process is said, not waited for
SQLITE_PRAGMAS = (
    ("busy_timeout", 10000),  # first: the rest wait out a passing lock (another writer, a checkpoint)
    ("journal_mode", "wal"),
    ("synchronous", "normal"),
    ("foreign_keys", 1),
)


def _reads_only(path: Path, refusal: LoopxError) -> sqlite3.Connection | None:
    from .failures import read_only_fallback

    return read_only_fallback(path, refusal)


def _adopting_peewee(store: SqliteStore) -> peewee.SqliteDatabase:
    """A peewee database whose connections are the store's own (one per
    thread): the models run inside the store's transactions. ``_connect`` is
    peewee's documented hook for where connections come from ("Adding a Custom
    Database Driver"); ``close`` is public."""
    from .orm import peewee as pw

    class Adopted(pw.SqliteDatabase):
        def _connect(self) -> sqlite3.Connection:
            return store.connection()

        def close(self) -> bool:
            closed = super().close()
            store._drop_connection()
            return closed

    return Adopted(str(store.location.path), lock_type="IMMEDIATE", timeout=10)


class SqliteStore(Store):
    """A SQLite board: a plain ``sqlite3`` connection per thread (WAL,
    synchronous normal, busy_timeout, foreign keys; every write transaction
    ``BEGIN IMMEDIATE``). Peewee's database is built only when something needs
    the models, on the very same connections."""

    backend = "sqlite"

    def __init__(self, location: BoardLocation, db: peewee.Database | None = None):
        super().__init__(location, db)
        self._local = thread_local()

    @classmethod
    def connect(cls, location: BoardLocation, *, create: bool) -> Store:
        assert location.path is not None
        from ..rules.given_paths import check_target

        # (a FIFO, a device or a link to nothing named as the board: said so, never opened)
        check_target(
            str(location.path),
            "the board",
            "point --db / LOOPX_DB at a board file (`loopx init` makes one)",
            error=BoardError,
        )
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
    def db(self) -> peewee.Database:
        if self._db is None:
            self._db = _adopting_peewee(self)
        return self._db

    def connection(self) -> sqlite3.Connection:
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

    def _busy(self, exc: Exception) -> BoardBusy:
        """The board could not be had in time: who holds it, as far as the OS says."""
        from ..shapes.errors import BoardBusy
        from .holder import holder

        who = holder(self.location.path)
        return BoardBusy(
            f"the board {self.location.describe()} is held by {who.text()}, which locked the whole file: LoopX cannot read it ({exc})",
            "end that process (or wait until it lets go of the board), then retry; LoopX's own processes never lock it so",
            data={"holder": who.to_json()},
        )

    def _refuse_if_held(self, conn: sqlite3.Connection, exc: Exception) -> None:
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

    def execute(self, sql: str, params: Params = ()) -> Cursor:
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

    def _transaction(self, body: Callable[[], T], *, write: bool, card: int | None = None) -> T:
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


def _postgres() -> type[Store]:
    from .pg import PostgresStore  # only PostgreSQL boards pay for the driver

    return PostgresStore


KINDS.update(sqlite=lambda: SqliteStore, postgresql=_postgres)
