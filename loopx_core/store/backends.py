"""Opening a board and running transactions on it.

Everything database-specific lives here, so a PostgreSQL board is a second
backend of this class, not a rewrite of the operators."""

from __future__ import annotations

import contextlib
import os
import time
from pathlib import Path
from typing import Callable, TypeVar

from ..rules import clock
from . import migrations, models
from .discovery import BoardLocation
from ..shapes.errors import BoardError
from .orm import peewee as pw

T = TypeVar("T")

SQLITE_PRAGMAS = (
    ("journal_mode", "wal"),
    ("synchronous", "normal"),
    ("busy_timeout", 10000),
    ("foreign_keys", 1),
)

DEFAULT_SETTINGS = {
    "objective": "",
    "no_progress_limit": "3",
    "default_lease": "1800",
    "verify_timeout": "600",
}


def _is_busy(exc: Exception) -> bool:
    text = str(exc).lower()
    return any(word in text for word in ("locked", "busy", "deadlock", "could not serialize"))


class Store:
    """One open board. ``run`` executes an operator body in a single write
    transaction (``BEGIN IMMEDIATE`` on SQLite) and retries it if the database
    was busy, so an operator body must be pure apart from its queries."""

    def __init__(self, location: BoardLocation, db: pw.Database):
        self.location = location
        self.db = db
        self.backend = location.backend
        self._settings: dict[str, str] | None = None
        self._trust = None
        self.created = False  # this open created the board's schema

    # -- opening -----------------------------------------------------------
    @classmethod
    def open(cls, location: BoardLocation, *, create: bool = False, frozen_ok: bool = False) -> "Store":
        """``frozen_ok``: the caller is making this a test board (``init --test-board``)
        or copying one (``migrate``), so ``LOOPX_NOW`` is not refused here."""
        if location.backend == "sqlite":
            assert location.path is not None
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
            db = pw.SqliteDatabase(str(location.path), pragmas=SQLITE_PRAGMAS, lock_type="IMMEDIATE", timeout=10)
        elif location.backend == "postgresql":
            from .pg import open_postgres  # only PostgreSQL boards pay for the driver

            db = open_postgres(location)
        else:  # pragma: no cover - discovery only yields the two above
            raise BoardError(f"unsupported board {location.url}")
        models.database.initialize(db)
        store = cls(location, db)
        try:
            store._ensure_schema(create=create)
        except pw.OperationalError as exc:
            raise BoardError(f"cannot open board {location.describe()}: {exc}", "is it a LoopX board? check --db / LOOPX_DB") from exc
        except pw.DatabaseError as exc:
            raise BoardError(f"cannot open board {location.describe()}: {exc}", "is it a LoopX board? check --db / LOOPX_DB") from exc
        if clock.frozen_by_env() and not frozen_ok:
            store._check_frozen_clock()
        return store

    def _check_frozen_clock(self) -> None:
        """``LOOPX_NOW`` moves the clock of every lease and deadline, so only a
        board a person made for tests and demos honours it (SECURITY.md)."""
        from ..shapes.errors import UsageError

        if self.signed_setting("test_clock") != "on":
            raise UsageError(
                "LOOPX_NOW is set, but this board is not a test board: its clock cannot be moved",
                "unset LOOPX_NOW; a person makes a board for tests and demos with `loopx init --test-board`",
                code="clock_refused",
            )

    def _schema_version(self) -> int:
        if not self.db.table_exists("setting"):
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
                "upgrade loopx: pip install -U loopx",
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
                    models.Setting.insert(key=key, value=value).on_conflict_ignore().execute()
            self.put_setting("schema_version", str(migrations.SCHEMA_VERSION))

        self.run(migrate)

    def put_setting(self, key: str, value: str) -> None:
        """Upsert a board setting (inside the caller's write transaction)."""
        models.Setting.insert(key=key, value=value).on_conflict(
            conflict_target=[models.Setting.key], update={models.Setting.value: value}
        ).execute()
        self._settings = None

    def put_signed_setting(self, key: str, value: str, person, kind: str = "setting_changed", **extra) -> None:
        """A person's setting: the signed event (``kind``, one of SETTING_EVENTS,
        its data holding ``key`` and ``value``) is its proof (inside the caller's
        write transaction)."""
        from . import events

        seq = events.emit(person, kind, None, key=key, value=value, **extra)
        models.Setting.insert(key=key, value=value, decided_seq=seq).on_conflict(
            conflict_target=[models.Setting.key], update={models.Setting.value: value, models.Setting.decided_seq: seq}
        ).execute()
        self._settings = None

    def _has_foreign_tables(self) -> bool:
        return bool(self.db.get_tables())

    def close(self) -> None:
        if not self.db.is_closed():
            self.db.close()

    # -- transactions ------------------------------------------------------
    def run(self, body: Callable[[], T], *, attempts: int = 8) -> T:
        if self.db.in_transaction():
            with self.db.atomic():  # a savepoint inside the caller's transaction
                return body()
        for attempt in range(attempts):
            try:
                with self.db.atomic():
                    if self.backend == "postgresql":
                        from .pg import take_write_lock

                        take_write_lock(self.db)
                    return body()
            except pw.OperationalError as exc:
                if not _is_busy(exc) or attempt == attempts - 1:
                    raise
                import random  # only on the rare busy path

                time.sleep(0.02 * (attempt + 1) + random.random() * 0.03)
        raise AssertionError("unreachable")

    @contextlib.contextmanager
    def read(self):
        """A consistent read snapshot (no write lock taken)."""
        if self.db.in_transaction():
            yield
            return
        if self.backend == "sqlite":
            with self.db.transaction(lock_type="DEFERRED"):
                yield
        else:
            with self.db.atomic():
                yield

    @contextlib.contextmanager
    def thread_connection(self):
        """Peewee keeps one connection per thread; worker threads wrap jobs in this."""
        with self.db.connection_context():
            yield

    def change_token(self) -> int:
        """Cheap "did anyone write?" probe: SQLite's data_version changes on
        every commit by another connection; PostgreSQL uses the event sequence."""
        if self.backend == "sqlite":
            return int(self.db.execute_sql("PRAGMA data_version").fetchone()[0])
        return self.max_seq()

    def max_seq(self) -> int:
        value = models.Event.select(pw.fn.MAX(models.Event.seq)).scalar()
        return int(value or 0)

    # -- settings ----------------------------------------------------------
    def settings(self) -> dict[str, str]:
        if self._settings is None:
            self._settings = {row.key: row.value for row in models.Setting.select()}
        return self._settings

    def setting(self, key: str, default: str = "") -> str:
        return self.settings().get(key, DEFAULT_SETTINGS.get(key, default))

    def signed_setting(self, key: str) -> str | None:
        """A person's setting (prices, policy, test_clock): its value only when the
        signed event that set it verifies and says the same; else None."""
        from ..authority.trust import signed_setting

        return signed_setting(self.query, key, self.trust())

    # -- raw reads for the signature checks (trust.py) -----------------------
    def _sql(self, sql: str) -> str:
        return sql if self.backend == "sqlite" else sql.replace("%", "%%").replace("?", "%s")

    def query(self, sql: str, params: tuple = ()) -> list:
        """Rows of a plain SQL read (``?`` placeholders on both backends)."""
        return self.db.execute_sql(self._sql(sql), params).fetchall()

    def board_uid(self) -> str:
        return self.settings().get("board_uid", "")

    def trust(self):
        """The people whose signatures this board honours (loaded once per open board)."""
        if self._trust is None:
            from ..authority import trust

            self._trust = trust.load(self.query, self.board_uid())
        return self._trust

    def forget_trust(self) -> None:
        self._trust = None

    def project_root(self) -> Path:
        root = self.settings().get("project_root")
        return Path(root) if root else Path(os.getcwd())
