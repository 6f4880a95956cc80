"""The PostgreSQL backend: a shared team board (DESIGN §3).

Only PostgreSQL boards import this module and the psycopg (v3) driver.
Guarantees match SQLite's, with two transaction-scoped advisory locks. A
write has the board to itself (the *board lock*, exclusive), as SQLite's BEGIN
IMMEDIATE gives it — except a write that touches one card alone
(``Store.run(card=…)``: a turn's writeback, heartbeat, release…), which takes
the board lock shared, then its card's row FOR UPDATE, so such writes on
different cards run side by side. What stays serial is the log: an event is
appended only under the *append lock* (``before_append``), held to COMMIT, so
the sequence stays gap-free *in commit order* — a reader that has seen
``seq`` N never later finds a smaller one committing behind it, which "events
since the last seen seq" relies on — and the hash chain has one order.
Card rows are also locked (FOR UPDATE) as operators read them.
``LOOPX_PG_WRITES=serial`` gives every write the board alone (the bench's
"before").

Two clients, one board: a process that has not loaded peewee (every per-turn
verb, the board's reads) runs its statements on libpq itself (``libpq.py``,
~18 ms of CPU where psycopg's import alone costs ~190 ms); the first use of
the models (``PostgresStore.db``) opens psycopg through peewee, and from then
on the store runs there. A write transaction on libpq that reaches for the
models is rolled back and run again on peewee (operator bodies are pure apart
from their queries, so running one again is safe: ``Store.run`` does it for a
busy board). ``LOOPX_PG_CLIENT=psycopg`` keeps a process on peewee.
"""

from __future__ import annotations

import contextlib
import os
import sys
from _thread import _local as thread_local

from .. import POSTGRES_HINT
from ..rules import faults
from ..shapes.errors import BoardError
from . import migrations
from .base import Store

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Sequence
    from contextlib import AbstractContextManager
    from pathlib import Path
    from types import ModuleType
    from typing import Any, TypeVar

    import peewee

    from . import libpq
    from .base import Cursor, Params
    from .discovery import BoardLocation

    T = TypeVar("T")

# Any fixed 64-bit keys: "LoopX" in ASCII, and the next one.
WRITE_LOCK_KEY = 0x4C6F6F7058  # the board lock
APPEND_LOCK_KEY = WRITE_LOCK_KEY + 1  # the log's append


def normalise(url: str) -> str:
    return "postgresql://" + url.split("://", 1)[1] if url.startswith("postgres://") else url


def _peewee() -> ModuleType:
    """peewee, with psycopg imported first so that it finds its driver."""
    try:  # before peewee loads (orm.py)
        import psycopg  # noqa: F401
    except ImportError:
        pass
    from .orm import peewee as pw

    return pw


_database_class = None


def _loopx_postgres() -> type[peewee.PostgresqlDatabase]:
    """PostgreSQL with table lookups in the connection's current schema (not
    always ``public``), so a board can live in its own schema via search_path."""
    global _database_class
    if _database_class is None:
        pw = _peewee()

        class LoopxPostgres(pw.PostgresqlDatabase):  # type: ignore[name-defined]  # (peewee, imported here: only when the models are needed)
            def get_tables(self, schema: str | None = None) -> list[str]:
                if schema is None:
                    schema = self.execute_sql("SELECT current_schema()").fetchone()[0]
                return super().get_tables(schema)

            def table_exists(self, table_name: str, schema: str | None = None) -> bool:
                return table_name in self.get_tables(schema)

            def get_columns(self, table: str, schema: str | None = None) -> list[peewee.ColumnMetadata]:
                if schema is None:
                    schema = self.execute_sql("SELECT current_schema()").fetchone()[0]
                return super().get_columns(table, schema)

        _database_class = LoopxPostgres
    return _database_class


def _unreachable(exc: Exception) -> BoardError:
    first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return BoardError(
        f"cannot reach the PostgreSQL board: {first}",
        "check the URL (postgresql://user@host:5432/db), that the server runs and that it accepts this user",
        code="board_unreachable",
    )


def open_postgres(location: BoardLocation) -> peewee.PostgresqlDatabase:
    """Peewee's database for ``location``, connected (imports psycopg and peewee)."""
    pw = _peewee()
    from .orm import has_psycopg

    if not has_psycopg():
        if "psycopg" in sys.modules:  # (installed, but this process loaded peewee first)
            raise BoardError(
                "this process loaded the models of a SQLite board before opening a PostgreSQL one, so peewee has no driver for it",
                "run the command again on its own; if it fails again, report it as a bug",
                code="no_driver",
            )
        raise BoardError(
            "PostgreSQL boards need the psycopg driver",
            POSTGRES_HINT,
            code="no_driver",
        )
    db = _loopx_postgres()(normalise(location.url), prefer_psycopg3=True)
    try:
        db.connect()
    except pw.OperationalError as exc:
        raise _unreachable(exc) from None
    return db


def take_write_lock(execute: Callable[[str, Params], object], *, shared: bool = False) -> None:
    """The board lock: exclusive, or ``shared`` for a card-local write.
    ``execute``: a statement runner taking ``?`` placeholders."""
    from .base import lock_wait

    # Bounded (LOOPX_LOCK_WAIT), as every lock this transaction waits for
    # after it: a writer that holds one long makes this one fail with "lock
    # timeout", said as such by ``Store.run``.
    execute("SELECT set_config('lock_timeout', ?, true)", (f"{int(lock_wait() * 1000)}ms",))
    if shared:
        execute("SELECT pg_advisory_xact_lock_shared(?)", (WRITE_LOCK_KEY,))
    else:
        execute("SELECT pg_advisory_xact_lock(?)", (WRITE_LOCK_KEY,))


def card_writes_apart() -> bool:
    """Card-local writes run side by side (unless ``LOOPX_PG_WRITES=serial``)."""
    return os.environ.get("LOOPX_PG_WRITES") != "serial"


def reset_sequences(db: peewee.Database, models: Sequence[type[peewee.Model]]) -> None:
    """After rows were copied in with explicit ids, move each serial past them."""
    pw = _peewee()
    for model in models:
        pk = model._meta.primary_key
        if isinstance(pk, pw.AutoField):
            table = model._meta.table_name
            db.execute_sql(
                f"SELECT setval(pg_get_serial_sequence('\"{table}\"', '{pk.column_name}'), "
                f'COALESCE((SELECT MAX("{pk.column_name}") FROM "{table}"), 0) + 1, false)'
            )


class NeedsModels(BaseException):
    """A transaction on libpq reached for the models: it is rolled back and
    run again on peewee. (A BaseException, so that no operator's ``except
    Exception`` swallows it.)"""


def _fast_client_wanted() -> bool:
    """libpq for a process that has not loaded peewee (see the module's doc)."""
    if "peewee" in sys.modules or os.environ.get("LOOPX_PG_CLIENT") == "psycopg":
        return False
    from . import libpq

    return libpq.available()


class PostgresStore(Store):
    """A PostgreSQL board: one connection per thread, libpq's (fast) until
    something needs the models, then peewee's (psycopg). Every write
    transaction first takes the board lock (``take_write_lock``), a
    card-local one shared; reads taken "for update" lock their rows."""

    backend = "postgresql"
    locks_rows = True

    def __init__(self, location: BoardLocation, db: peewee.Database | None = None, *, fast: bool = False):
        super().__init__(location, db)
        self._fast = fast  # statements go to libpq (``_local.conn``), not peewee
        self._local = thread_local()

    @classmethod
    def connect(cls, location: BoardLocation, *, create: bool) -> Store:
        if _fast_client_wanted():
            from . import libpq

            store = cls(location, fast=True)
            try:
                store._raw()  # reach the server now, as peewee's open does
            except libpq.OperationalError as exc:
                raise _unreachable(exc) from None
            return store
        return cls(location, open_postgres(location))

    # -- the two clients -------------------------------------------------------
    @property
    def db(self) -> peewee.Database:
        """Peewee's database: built on first use, and from then on the store's client."""
        if self._db is None:
            self._db = open_postgres(self.location)
        self._fast = False
        conn = getattr(
            self._local, "conn", None
        )  # (this thread's write on libpq, begun before the switch or by another thread's)
        if conn is not None and conn.in_transaction and getattr(self._local, "writing", False):
            raise NeedsModels
        return self._db

    def _raw(self) -> libpq.Connection:
        """This thread's libpq connection (opened if need be)."""
        conn = getattr(self._local, "conn", None)
        if conn is None or conn.closed:
            from . import libpq

            conn = self._local.conn = libpq.Connection(normalise(self.location.url))
        return conn

    def _fast_here(self) -> libpq.Connection | None:
        """libpq's connection when this thread's statements go there: in the
        fast mode, or inside a transaction begun on it before the switch."""
        conn = getattr(self._local, "conn", None)
        if self._fast:
            return conn or self._raw()
        return conn if conn is not None and conn.in_transaction else None

    def _drop_fast(self) -> None:
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            self._local.conn = None
            conn.close()

    def connection(self) -> Any:  # (libpq's, or psycopg's under peewee)
        conn = self._fast_here()
        return conn if conn is not None else self.db.connection()

    def _checkout(self) -> tuple[Path, str] | None:
        """(folder, checkout id) of this machine's checkout of the board, or None
        — read once per location (the per-turn verbs ask it more than once)."""
        cached = getattr(self, "_checkout_of", None)
        if cached is None or cached[0] is not self.location:  # (init re-points it: a new location)
            from . import team_checkout

            cached = self._checkout_of = (self.location, team_checkout.of(self.location, self.board_uid()))
        return cached[1]

    def project_folder(self) -> Path | None:
        """A team board records no project folder (it spans machines): this
        machine's is the checkout the command runs in, when it points at this
        board (``store/team_checkout.py``, issue #26)."""
        found = self._checkout()
        return found[0] if found else None

    def checkout_id(self) -> str | None:
        found = self._checkout()
        return found[1] if found else None

    def execute(self, sql: str, params: Params = ()) -> Cursor:
        from .failures import connection_lost

        conn = self._fast_here()
        if conn is not None:
            if conn.in_transaction:
                return conn.execute(sql, params)
            try:
                return conn.execute(sql, params)
            except Exception as exc:  # a read outside a transaction (a poll): the server may have gone away
                if not connection_lost(exc):
                    raise
            with self._fast_atomic():  # reconnects, as a transaction's BEGIN does
                return self._raw().execute(sql, params)
        sql = sql.replace("%", "%%").replace("?", "%s")
        if self.db.in_transaction():
            return self.db.execute_sql(sql, params)
        try:
            return self.db.execute_sql(sql, params)
        except Exception as exc:  # a read outside a transaction (a poll): the server may have gone away
            if not connection_lost(exc):
                raise
        with self._pg_atomic():  # reconnects, as a transaction's BEGIN does
            return self.db.execute_sql(sql, params)

    def _in_transaction(self) -> bool:
        conn = getattr(self._local, "conn", None)
        if conn is not None and conn.in_transaction:
            return True
        return self._db is not None and self._db.in_transaction()

    def _has_table(self, name: str) -> bool:
        if self._fast:
            return bool(
                self.query(
                    "SELECT 1 FROM pg_catalog.pg_tables WHERE schemaname = current_schema() AND tablename = ?", (name,)
                )
            )
        return self.db.table_exists(name)

    def _has_foreign_tables(self) -> bool:
        if self._fast:
            return bool(self.query("SELECT 1 FROM pg_catalog.pg_tables WHERE schemaname = current_schema()"))
        return bool(self.db.get_tables())

    def _ensure_schema(self, *, create: bool) -> None:
        if self._fast and self._schema_version() != migrations.SCHEMA_VERSION:
            self.db  # noqa: B018 (the migrations run through peewee: switch before their transaction)
        super()._ensure_schema(create=create)

    def close(self) -> None:
        self._drop_fast()
        if self._db is not None and not self._db.is_closed():
            self._db.close()

    def _transaction(self, body: Callable[[], T], *, write: bool, card: int | None = None) -> T:
        from . import records

        token = records.using(self)  # the body's statements run on this store's connection
        if card is not None and not card_writes_apart():
            card = None
        try:
            if self._fast:
                try:
                    return self._run_in(self._fast_atomic(write=write), body, write, card)
                except NeedsModels:
                    self._drop_fast()  # rolled back: run again on peewee, below
            return self._run_in(self._pg_atomic(), body, write, card)
        finally:
            records.release(token)

    def _run_in(
        self, atomic: AbstractContextManager[object], body: Callable[[], T], write: bool, card: int | None
    ) -> T:
        """``body`` in the transaction ``atomic`` (either client's). A write takes
        the board lock first — shared and then its card's row when ``card``
        (see the module's doc) — and notifies the channel before COMMIT."""
        try:
            with atomic:
                if write:
                    take_write_lock(self.execute, shared=card is not None)
                    # Lock order, so two writers never wait on each other in a
                    # circle: board lock, card row, append lock.
                    self._local.appends_free = card is None  # (the board alone: the log is this write's already)
                    if card is not None:
                        self.execute('SELECT 1 FROM "card" WHERE "id" = ? FOR UPDATE', (card,))
                    self._locked()
                result = body()
                if write:
                    self._notify()
                faults.point("commit")
        finally:
            self._local.appends_free = True
        faults.point("committed")
        return result

    def before_append(self) -> None:
        """A card-local write takes the append lock at its first event (held
        to COMMIT); a write that has the board alone needs none."""
        if not getattr(self._local, "appends_free", True):
            self.execute("SELECT pg_advisory_xact_lock(?)", (APPEND_LOCK_KEY,))
            self._local.appends_free = True

    _savepoints = 0

    def _savepoint(self, body: Callable[[], T]) -> T:
        conn = getattr(self._local, "conn", None)
        if conn is None or not conn.in_transaction:
            with self.db.atomic():
                return body()
        PostgresStore._savepoints += 1
        name = f"loopx_sp{PostgresStore._savepoints}"
        conn.execute(f"SAVEPOINT {name}")
        try:
            result = body()
        except Exception:
            conn.execute(f"ROLLBACK TO SAVEPOINT {name}")
            conn.execute(f"RELEASE SAVEPOINT {name}")
            raise
        conn.execute(f"RELEASE SAVEPOINT {name}")
        return result

    def _snapshot(self) -> AbstractContextManager[None]:
        return self._fast_atomic() if self._fast else self._pg_atomic()

    @contextlib.contextmanager
    def _fast_atomic(self, *, write: bool = False) -> Iterator[None]:
        """``_pg_atomic`` on libpq: a BEGIN that finds the server gone
        reconnects with backoff; cut off before COMMIT: ``Uncommitted``."""
        from .failures import connection_lost

        conn = self._begin_fast()
        self._local.writing = write
        try:
            yield
        except BaseException as exc:
            try:
                if not conn.closed and conn.in_transaction:
                    conn.execute("ROLLBACK")
            except Exception:
                if not connection_lost(exc):
                    raise
                self._drop_fast()  # (the rollback could not reach the server either)
            if isinstance(exc, Exception) and connection_lost(exc):
                self._drop_fast()
                raise Uncommitted(self.location.describe(), exc) from exc
            raise
        finally:
            self._local.writing = False
        conn.execute("COMMIT")  # (the server gone during COMMIT: not known whether it committed, so raised as is)

    def _begin_fast(self) -> libpq.Connection:
        """BEGIN on this thread's libpq connection, reconnecting as ``reconnect`` does."""
        import time

        from .failures import connection_lost, first_line, reconnect_wait

        wait = reconnect_wait()
        deadline, delay, lost = time.monotonic() + wait, 0.2, None
        where = self.location.describe()
        while True:
            try:
                conn = self._raw()
                conn.execute("BEGIN")
            except Exception as exc:
                if not connection_lost(exc):
                    raise
                if lost is None:
                    sys.stderr.write(
                        f"loopx: lost the connection to the board {where} ({first_line(exc)}); reconnecting for up to {wait:g} s\n"
                    )
                    sys.stderr.flush()
                lost = exc
                self._drop_fast()
                if time.monotonic() + delay > deadline:
                    raise BoardError(
                        f"lost the connection to the PostgreSQL board {where} and could not reconnect within {wait:g} s: {first_line(exc)}",
                        "check that the server runs; LOOPX_RECONNECT_WAIT=SECONDS waits longer",
                        code="board_unreachable",
                    ) from None
                time.sleep(delay)
                delay = min(delay * 2, 5.0)
                continue
            if lost is not None:
                sys.stderr.write(f"loopx: reconnected to the board {where}\n")
                sys.stderr.flush()
            return conn

    @contextlib.contextmanager
    def _pg_atomic(self) -> Iterator[None]:
        """A transaction whose BEGIN finds the server gone (a restart)
        reconnects with backoff and begins again — safe, as nothing of it ran
        yet — for up to ``LOOPX_RECONNECT_WAIT`` seconds, said on stderr
        (``reconnect``); then exit 4 ``board_unreachable``. Cut off before its
        COMMIT: ``Uncommitted`` (``Store.run`` runs a write again)."""
        from .failures import connection_lost

        txn = reconnect(self.db, self.location.describe())
        try:
            yield
        except BaseException as exc:
            try:
                txn.__exit__(type(exc), exc, exc.__traceback__)
            except Exception:
                if not connection_lost(exc):
                    raise
                self.db._state.reset()  # type: ignore[attr-defined]  # (peewee-stubs leave out _state; the rollback could not reach the server either)
            if isinstance(exc, Exception) and connection_lost(exc):
                raise Uncommitted(self.location.describe(), exc) from exc
            raise
        txn.__exit__(
            None, None, None
        )  # (the server gone during COMMIT: not known whether it committed, so raised as is)

    @contextlib.contextmanager
    def thread_connection(self) -> Iterator[None]:
        if not self._fast:
            with self.db.connection_context():
                yield
            return
        opened_here = getattr(self._local, "conn", None) is None
        try:
            yield
        finally:
            if opened_here:
                self._drop_fast()
                if self._db is not None and not self._db.is_closed():
                    self._db.close()  # (this thread switched to peewee meanwhile)

    def change_token(self) -> int:
        """The event sequence: PostgreSQL has no cheap "another connection committed" counter."""
        return self.max_seq()

    def channel(self) -> str:
        """The board's notification channel (LISTEN/NOTIFY are per database, and
        a database may hold several boards, one per schema)."""
        uid = "".join(c for c in self.board_uid().lower() if c.isalnum() or c == "_")
        return f"loopx_{uid}"[:63]

    def _notify(self) -> None:
        """Listeners (``listener``) hear of this write when it commits."""
        self.execute("SELECT pg_notify(?, '')", (self.channel(),))

    def listener(self) -> Listener | None:
        """A LISTEN on the board's channel, on a libpq connection of its own
        (None when it cannot be had: the caller keeps polling)."""
        try:
            return Listener(self.location, self.channel())
        except Exception:  # no libpq, the server away: polling still notices every change
            return None


class Listener:
    """A connection LISTENing on a board's channel: its socket becomes readable
    when a write commits. A waker selects on it beside its polling, which
    stays the fallback (a notification lost with the connection is caught by
    the next probe). When the connection is gone (a server restart), it
    LISTENs again on a new one, trying at most every ``AGAIN`` seconds: a
    runner that lived through a restart is pushed to again, not left polling."""

    AGAIN = 5.0

    def __init__(self, location: BoardLocation, channel: str):
        self._url, self._channel = normalise(location.url), channel
        self._conn: libpq.Connection | None = None
        self._closed = False
        self._again_at = 0.0
        self._listen()  # (the first failure is the caller's: it keeps polling)

    def _listen(self) -> None:
        from . import libpq

        conn = libpq.Connection(self._url)
        try:
            conn.execute(f'LISTEN "{self._channel}"')
        except Exception:
            conn.close()
            raise
        self._conn = conn

    def fileno(self) -> int:
        if self._conn is None and not self._closed:
            import time

            if time.monotonic() >= self._again_at:
                self._again_at = time.monotonic() + self.AGAIN
                try:
                    self._listen()
                except Exception:  # the server still away: polling goes on, and so do the attempts
                    pass
        return self._conn.fileno() if self._conn is not None else -1

    def drain(self) -> int:
        """Notifications that arrived (0 once the connection is gone: polling goes on)."""
        if self._conn is None:
            return 0
        try:
            return self._conn.notifications()
        except Exception:
            self._drop()
            return 0

    def _drop(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def close(self) -> None:
        self._closed = True
        self._drop()


class Uncommitted(BoardError):
    """The server went away in the middle of a transaction, before its commit:
    nothing of it was written (``Store.run`` runs a write again)."""

    code = "uncommitted"

    def __init__(self, where: str, exc: BaseException):
        from .failures import GONE_HINT, first_line

        super().__init__(
            f"lost the connection to the PostgreSQL board {where} in the middle of a transaction ({first_line(exc)}); nothing of it was written",
            GONE_HINT,
        )


def reconnect(db: peewee.Database, where: str) -> peewee._atomic:
    """Begin a transaction on ``db`` (returns the entered peewee transaction);
    when the server went away, reconnect with backoff (0.2 s doubling to 5 s)
    until ``LOOPX_RECONNECT_WAIT`` (default 60 s) has passed, saying so on stderr."""
    import time

    from .failures import connection_lost, reconnect_wait
    from .failures import first_line as _first_line

    wait = reconnect_wait()
    deadline, delay, lost = time.monotonic() + wait, 0.2, None
    while True:
        txn = db.atomic()
        try:
            txn.__enter__()
        except Exception as exc:
            if not connection_lost(exc):
                raise
            if lost is None:
                sys.stderr.write(
                    f"loopx: lost the connection to the board {where} ({_first_line(exc)}); reconnecting for up to {wait:g} s\n"
                )
                sys.stderr.flush()
            lost = exc
            try:
                db.close()
            except Exception:  # a connection the server dropped may not close cleanly
                db._state.reset()  # type: ignore[attr-defined]  # (peewee-stubs leave out _state, its per-thread connection state)
            if time.monotonic() + delay > deadline:
                raise BoardError(
                    f"lost the connection to the PostgreSQL board {where} and could not reconnect within {wait:g} s: {_first_line(exc)}",
                    "check that the server runs; LOOPX_RECONNECT_WAIT=SECONDS waits longer",
                    code="board_unreachable",
                ) from None
            time.sleep(delay)
            delay = min(delay * 2, 5.0)
            try:
                db.connect(reuse_if_open=True)
            except _peewee().OperationalError:
                pass  # still down: the next BEGIN says so, and we wait again
            continue
        if lost is not None:
            sys.stderr.write(f"loopx: reconnected to the board {where}\n")
            sys.stderr.flush()
        return txn
