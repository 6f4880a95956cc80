"""The PostgreSQL backend: a shared team board (DESIGN §3).

Only PostgreSQL boards import this module and the psycopg (v3) driver.
Guarantees match SQLite's: every write transaction first takes one
transaction-scoped advisory lock, so writers are serialised exactly as SQLite's
BEGIN IMMEDIATE serialises them. That keeps the event sequence gap-free *in
commit order* — a reader that has seen ``seq`` N never later finds a smaller
one committing behind it, which "events since the last seen seq" relies on.
Card rows are additionally locked (FOR UPDATE) as operators read them.
"""

from __future__ import annotations

import contextlib
import sys

from .. import POSTGRES_HINT
from ..rules import faults
from ..shapes.errors import BoardError
from .base import Store

try:  # before peewee loads (orm.py), so that it finds its driver
    import psycopg  # noqa: F401
except ImportError:
    pass
from .orm import has_psycopg
from .orm import peewee as pw

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from typing import TypeVar

    T = TypeVar("T")

# Any fixed 64-bit key: "LoopX" in ASCII.
WRITE_LOCK_KEY = 0x4C6F6F7058


def normalise(url: str) -> str:
    return "postgresql://" + url.split("://", 1)[1] if url.startswith("postgres://") else url


class LoopxPostgres(pw.PostgresqlDatabase):
    """PostgreSQL with table lookups in the connection's current schema (not
    always ``public``), so a board can live in its own schema via search_path."""

    def get_tables(self, schema=None):
        if schema is None:
            schema = self.execute_sql("SELECT current_schema()").fetchone()[0]
        return super().get_tables(schema)

    def table_exists(self, table_name, schema=None):
        return table_name in self.get_tables(schema)

    def get_columns(self, table, schema=None):
        if schema is None:
            schema = self.execute_sql("SELECT current_schema()").fetchone()[0]
        return super().get_columns(table, schema)


def open_postgres(location) -> pw.Database:
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
    db = LoopxPostgres(normalise(location.url), prefer_psycopg3=True)
    try:
        db.connect()
    except pw.OperationalError as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise BoardError(
            f"cannot reach the PostgreSQL board: {first}",
            "check the URL (postgresql://user@host:5432/db), that the server runs and that it accepts this user",
            code="board_unreachable",
        ) from None
    return db


def take_write_lock(db: pw.Database) -> None:
    from .base import lock_wait

    # Bounded (LOOPX_LOCK_WAIT): a writer that holds the lock long makes this
    # one fail with "lock timeout", said as such by ``Store.run``.
    db.execute_sql("SELECT set_config('lock_timeout', %s, true)", (f"{int(lock_wait() * 1000)}ms",))
    db.execute_sql("SELECT pg_advisory_xact_lock(%s)", (WRITE_LOCK_KEY,))


def reset_sequences(db: pw.Database, models) -> None:
    """After rows were copied in with explicit ids, move each serial past them."""
    for model in models:
        pk = model._meta.primary_key
        if isinstance(pk, pw.AutoField):
            table = model._meta.table_name
            db.execute_sql(
                f"SELECT setval(pg_get_serial_sequence('\"{table}\"', '{pk.column_name}'), "
                f"COALESCE((SELECT MAX(\"{pk.column_name}\") FROM \"{table}\"), 0) + 1, false)"
            )


class PostgresStore(Store):
    """A PostgreSQL board, opened through peewee (one connection per thread,
    peewee's). Every write transaction first takes the board's advisory lock
    (``take_write_lock``); reads taken "for update" lock their rows."""

    backend = "postgresql"
    locks_rows = True

    @classmethod
    def connect(cls, location, *, create: bool) -> Store:
        return cls(location, open_postgres(location))

    def connection(self):
        return self.db.connection()

    def _checkout(self):
        """(folder, checkout id) of this machine's checkout of the board, or None
        — read once per location (the per-turn verbs ask it more than once)."""
        cached = getattr(self, "_checkout_of", None)
        if cached is None or cached[0] is not self.location:  # (init re-points it: a new location)
            from . import team_checkout

            cached = self._checkout_of = (self.location, team_checkout.of(self.location, self.board_uid()))
        return cached[1]

    def project_folder(self):
        """A team board records no project folder (it spans machines): this
        machine's is the checkout the command runs in, when it points at this
        board (``store/team_checkout.py``, issue #26)."""
        found = self._checkout()
        return found[0] if found else None

    def checkout_id(self) -> str | None:
        found = self._checkout()
        return found[1] if found else None

    def execute(self, sql: str, params=()):
        sql = sql.replace("%", "%%").replace("?", "%s")
        if self.db.in_transaction():
            return self.db.execute_sql(sql, params)
        try:
            return self.db.execute_sql(sql, params)
        except Exception as exc:  # a read outside a transaction (a poll): the server may have gone away
            from .failures import connection_lost

            if not connection_lost(exc):
                raise
        with self._pg_atomic():  # reconnects, as a transaction's BEGIN does
            return self.db.execute_sql(sql, params)

    def _in_transaction(self) -> bool:
        return self.db.in_transaction()

    def _has_table(self, name: str) -> bool:
        return self.db.table_exists(name)

    def _has_foreign_tables(self) -> bool:
        return bool(self.db.get_tables())

    def close(self) -> None:
        if not self.db.is_closed():
            self.db.close()

    def _transaction(self, body: Callable[[], T], *, write: bool) -> T:
        from . import records

        token = records.using(self)  # the body's statements run on this store's connection
        try:
            with self._pg_atomic():
                if write:
                    take_write_lock(self.db)
                    self._locked()
                result = body()
                faults.point("commit")
            faults.point("committed")
            return result
        finally:
            records.release(token)

    def _savepoint(self, body: Callable[[], T]) -> T:
        with self.db.atomic():
            return body()

    def _snapshot(self):
        return self._pg_atomic()

    @contextlib.contextmanager
    def _pg_atomic(self):
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
                self.db._state.reset()  # (the rollback could not reach the server either)
            if isinstance(exc, Exception) and connection_lost(exc):
                raise Uncommitted(self.location.describe(), exc) from exc
            raise
        txn.__exit__(None, None, None)  # (the server gone during COMMIT: not known whether it committed, so raised as is)

    @contextlib.contextmanager
    def thread_connection(self) -> Iterator[None]:
        with self.db.connection_context():
            yield

    def change_token(self) -> int:
        """The event sequence: PostgreSQL has no cheap "another connection committed" counter."""
        return self.max_seq()


class Uncommitted(BoardError):
    """The server went away in the middle of a transaction, before its commit:
    nothing of it was written (``Store.run`` runs a write again)."""

    code = "uncommitted"

    def __init__(self, where: str, exc: BaseException):
        from .failures import GONE_HINT, first_line

        super().__init__(f"lost the connection to the PostgreSQL board {where} in the middle of a transaction ({first_line(exc)}); nothing of it was written", GONE_HINT)


def reconnect(db: pw.Database, where: str):
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
                sys.stderr.write(f"loopx: lost the connection to the board {where} ({_first_line(exc)}); reconnecting for up to {wait:g} s\n")
                sys.stderr.flush()
            lost = exc
            try:
                db.close()
            except Exception:  # a connection the server dropped may not close cleanly
                db._state.reset()
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
            except pw.OperationalError:
                pass  # still down: the next BEGIN says so, and we wait again
            continue
        if lost is not None:
            sys.stderr.write(f"loopx: reconnected to the board {where}\n")
            sys.stderr.flush()
        return txn
