"""What the operating system or the database said, as a refusal a person can
act on (#30): a full disk, a read-only board, a damaged file, a path that
cannot be, a server that went away — each its own message and exit code
(DESIGN §6), never "internal error … report it"."""

from __future__ import annotations

import errno

from ..shapes.errors import (
    BoardBusy,
    BoardError,
    InvalidInput,
    LoopxError,
    StorageError,
)

TYPE_CHECKING = False  # (annotations only; checkers read this as typing's)
if TYPE_CHECKING:
    import sqlite3
    from pathlib import Path

    from .records import Store

    BoardPath = str | Path  # a SQLite board's file

FULL = "the disk holding the board is full"
FULL_HINT = "free some space (or move the board: `loopx migrate --to PATH`), then retry; reads still work"
READ_ONLY_HINT = (
    "make what is named writable by this user (the board's file, its -wal and -shm beside it, its folder), "
    "or mount its file system read-write; then retry; reads still work"
)
PG_READ_ONLY_HINT = (
    "point LOOPX_DB at the primary server with a role that may write the board's schema "
    "(not a standby; default_transaction_read_only off); then retry; reads still work"
)
DAMAGED_HINT = (
    "run `loopx verify` to see the damage; then copy what still reads into a fresh board (`loopx migrate --to NEW.db`) "
    "or put a backup back in its place"
)
GONE_HINT = (
    "check that the PostgreSQL server runs and accepts connections; retry (with the same --op-id) once it is back"
)

_PATH_ERRNOS = {
    errno.ENAMETOOLONG,
    errno.ENOENT,
    errno.ENOTDIR,
    errno.EISDIR,
    errno.ELOOP,
    errno.EINVAL,
    errno.EACCES,
    errno.EPERM,
    errno.EEXIST,
}


def damaged(where: str, detail: str) -> StorageError:
    return StorageError(f"the board {where} is damaged ({detail[:300]})", DAMAGED_HINT, code="board_damaged")


# A SQLite board found damaged (by `verify`'s integrity check, or by a read
# that met a malformed page) is marked by a file beside it, so every later
# write refuses it — before it writes into the damaged file — until `verify`
# finds the file whole again (a backup put back) and removes the mark.


def damage_mark(path: BoardPath) -> str:
    return f"{path}-damaged"


def mark_damaged(path: BoardPath, detail: str) -> None:
    import json
    import time

    try:
        with open(damage_mark(path), "w", encoding="utf-8") as fh:
            json.dump({"detail": detail[:2000], "at": time.time()}, fh)
    except OSError:
        pass  # (a full or read-only disk: the refusal is said anyway)


def known_damage(path: BoardPath) -> str | None:
    """What the mark beside the board says, or None when there is none."""
    import json

    try:
        with open(damage_mark(path), encoding="utf-8") as fh:
            return str(json.loads(fh.read(4096)).get("detail") or "found damaged")
    except FileNotFoundError:
        return None
    except (OSError, ValueError, AttributeError):
        return "found damaged"


def remember_damage(store: Store | None, err: LoopxError) -> None:
    """A read met damage (a malformed page, a card the log names with no row):
    mark the SQLite board so writes refuse it, and say so in ``err``'s hint —
    the CLI and ``loopx mcp`` alike."""
    if store is not None and store.backend == "sqlite":
        if known_damage(store.location.path) is None:  # (the first finding's words stay)
            mark_damaged(store.location.path, err.message)
        err.hint = DAMAGED_HINT + "; writes refuse this board until `loopx verify` finds the file whole"


def clear_damage(path: BoardPath) -> None:
    import contextlib
    import os

    mark = damage_mark(path)
    if os.path.exists(mark):
        with contextlib.suppress(OSError):  # (a read-only file system: the mark stays, and so do the refusals)
            os.remove(mark)


def integrity_problems(conn: sqlite3.Connection) -> list[str]:
    """SQLite's quick check of the whole file (every page, every row's shape;
    not the indexes' contents): what it names, empty when the file is whole."""
    import sqlite3

    try:
        found = [row[0] for row in conn.execute("PRAGMA quick_check(20)").fetchall()]
    except sqlite3.DatabaseError as exc:
        return [str(exc)]
    return [] if found == ["ok"] else found


def explain(exc: BaseException, where: str = "", path: BoardPath | None = None) -> LoopxError | None:
    """The refusal ``exc`` stands for, or None when it is a real internal error.
    ``path``: the board's file (a full disk is told by its folder's free space)."""
    if isinstance(exc, LoopxError):
        return exc
    found = _explain(exc, where)
    if path is not None and (found is None or found.code in ("io_error", "cannot_open", "read_only")):
        if _disk_full(path):
            return StorageError(f"cannot use the board {where}: {FULL}", FULL_HINT, code="disk_full")
        fixed = read_only_parts(path)
        if fixed:
            return StorageError(
                f"cannot write the board {where}: read-only for this user: {', '.join(fixed)}",
                READ_ONLY_HINT,
                code="read_only",
            )
    return found


def read_only_parts(path: BoardPath) -> list[str]:
    """What keeps this user from writing the board at ``path``: its file
    system, its folder, the file, or the WAL files beside it (SQLite makes those
    with the board file's mode, so a board once read-only leaves them so after
    the file is made writable again) — each named, so the person knows what to
    change. Empty when every part is writable."""
    import os

    folder = os.path.dirname(os.path.abspath(path)) or "."
    try:
        if os.statvfs(folder).f_flag & os.ST_RDONLY:
            return [f"its file system ({folder})"]
    except OSError:
        return []
    found = [] if os.access(folder, os.W_OK) else [f"its folder {folder}"]
    for part in (str(path), f"{path}-wal", f"{path}-shm"):
        if os.path.exists(part) and not os.access(part, os.W_OK):
            found.append(part)
    return found


def _disk_full(path: BoardPath) -> bool:
    import os

    try:
        found = os.statvfs(os.path.dirname(os.path.abspath(path)) or ".")
    except OSError:
        return False
    return found.f_bavail * found.f_frsize < 64 * 1024  # less than SQLite's WAL index needs to grow


def read_only_fallback(path: BoardPath, reason: LoopxError) -> sqlite3.Connection | None:
    """A connection that can still read a board whose storage refuses writes
    (a full disk, a read-only file or file system): SQLite's ``immutable`` mode,
    which needs no WAL index — only when no write waits in the WAL, or it would
    read an older board. None when that cannot be."""
    import os
    import sqlite3
    from urllib.parse import quote

    if reason.code not in ("disk_full", "read_only", "io_error", "cannot_open"):
        return None
    wal = f"{path}-wal"
    try:
        if os.path.exists(wal) and os.path.getsize(wal) > 0:
            return None
        conn = sqlite3.connect(f"file:{quote(str(path))}?immutable=1", uri=True, isolation_level=None)
        conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
    except (OSError, sqlite3.Error):
        return None
    return conn


def _explain(exc: BaseException, where: str) -> LoopxError | None:
    board = f" {where}" if where else ""
    if isinstance(exc, OSError) and not _is_db_error(exc):
        name = f" {str(exc.filename)[:200]!r}" if exc.filename else ""
        if exc.errno in (errno.ENOSPC, errno.EDQUOT):
            return StorageError(f"cannot write{name}: {FULL}", FULL_HINT, code="disk_full")
        if exc.errno == errno.EROFS:
            return StorageError(f"cannot write{name}: the file system is read-only", READ_ONLY_HINT, code="read_only")
        if exc.errno in _PATH_ERRNOS:
            return InvalidInput(
                f"cannot use{name}: {exc.strerror or exc}",
                "pass a path that can be opened (check its length, its folders and their permissions)",
                code="bad_path",
            )
        if exc.errno == errno.EIO:
            return StorageError(f"input/output error on{name}: the disk may be failing", DAMAGED_HINT, code="io_error")
        return None
    named = getattr(exc, "sqlite_errorname", None) or _wrapped_name(exc)
    text = str(exc)
    if named:
        if named == "SQLITE_FULL":
            return StorageError(f"cannot write the board{board}: {FULL}", FULL_HINT, code="disk_full")
        if named.startswith("SQLITE_READONLY"):
            return StorageError(
                f"cannot write the board{board}: its file or folder is read-only", READ_ONLY_HINT, code="read_only"
            )
        if named.startswith("SQLITE_CORRUPT"):  # (NOTADB: not a board, or its header is gone — said as such)
            return damaged(where or "file", text)
        if named.startswith("SQLITE_IOERR"):
            return StorageError(
                f"input/output error on the board{board} ({text})",
                "check the disk (full? failing? unmounted?) and retry",
                code="io_error",
            )
        if named.startswith("SQLITE_BUSY") or named.startswith("SQLITE_LOCKED"):
            return BoardBusy(
                f"the board{board} stayed locked by another writer ({text})",
                "retry; if it keeps happening, find the process holding it (`fuser` on the board file)",
                code="lock_wait",
            )
        if named == "SQLITE_CANTOPEN":
            return BoardError(
                f"cannot open the board{board} ({text})",
                "check the path and that its folder exists and is writable",
                code="cannot_open",
            )
    state = _sqlstate(exc)
    if state == "25006":  # read_only_sql_transaction: a standby, or default_transaction_read_only
        return StorageError(
            f"cannot write the board{board}: the PostgreSQL server takes no writes here (a read-only transaction)",
            PG_READ_ONLY_HINT,
            code="read_only",
        )
    if state == "42501":  # insufficient_privilege
        return StorageError(
            f"cannot write the board{board}: this PostgreSQL role may not ({text.strip().splitlines()[0][:200] if text.strip() else 'permission denied'})",
            PG_READ_ONLY_HINT,
            code="read_only",
        )
    if connection_lost(exc):
        return BoardError(
            f"lost the connection to the PostgreSQL board{board}: {text.strip().splitlines()[0] if text.strip() else type(exc).__name__}",
            GONE_HINT,
            code="board_unreachable",
        )
    return None


def _sqlstate(exc: BaseException) -> str | None:
    """PostgreSQL's SQLSTATE for ``exc`` (psycopg's, or peewee's around it)."""
    for found in (exc, exc.__cause__, exc.__context__):
        state = getattr(found, "sqlstate", None) if found is not None else None
        if isinstance(state, str):
            return state
    return None


def _is_db_error(exc: BaseException) -> bool:
    return type(exc).__module__.startswith(("sqlite3", "psycopg", "peewee", "loopx_core.store.libpq"))


def _wrapped_name(exc: BaseException) -> str | None:
    """peewee wraps the driver's exception: look at its cause."""
    inner = exc.__cause__ or exc.__context__
    return getattr(inner, "sqlite_errorname", None) if inner is not None else None


def connection_lost(exc: BaseException) -> bool:
    """psycopg (or peewee around it), or libpq (store/libpq.py), saying the server went away."""
    for found in (exc, exc.__cause__, exc.__context__):
        if found is None:
            continue
        module = type(found).__module__
        if not module.startswith(("psycopg", "peewee", "loopx_core.store.libpq")):
            continue
        text = str(found).lower()
        if type(found).__name__ in ("OperationalError", "InterfaceError", "AdminShutdown") and any(
            word in text
            for word in ("closed", "terminat", "connection", "server", "shutdown", "consuming input failed")
        ):
            return True
    return False


RECONNECT_WAIT = 60.0  # s: how long a long-lived process tries to reach a server that went away


def reconnect_wait() -> float:
    """``LOOPX_RECONNECT_WAIT`` (seconds, 0–3600; default 60): how long a
    process waits out a PostgreSQL server that went away (a restart)."""
    import os

    try:
        return min(max(float(os.environ.get("LOOPX_RECONNECT_WAIT", RECONNECT_WAIT)), 0.0), 3600.0)
    except ValueError:
        return RECONNECT_WAIT


def board_lost(exc: BaseException) -> bool:
    """The board's server went away under this call (a PostgreSQL restart):
    the driver says so, or the store already said it (``uncommitted``: cut off
    before its commit; ``board_unreachable``: not back, or cut off at COMMIT)."""
    # (by class and code: a refusal's code, e.g. done's ``uncommitted_work``, is not the store's)
    lost = isinstance(exc, BoardError) and exc.code in ("uncommitted", "board_unreachable")
    return lost or connection_lost(exc)


def may_run_again(exc: BaseException, *, reads_only: bool, idempotent: bool) -> bool:
    """Whether a whole call the server's going away cut off may simply be run
    again once the board is back — the rule ``loopx mcp`` follows, as the
    watcher re-runs its idempotent jobs and ``Store.run`` an uncommitted write:
    a call that only reads, one declared idempotent (an op id, a claim), or
    one whose transaction was cut off before its commit (nothing of it
    written). A write cut off *at* its commit may have committed: it is
    answered, with the hint to retry under the same op id."""
    if not board_lost(exc):
        return False
    return reads_only or idempotent or (isinstance(exc, BoardError) and exc.code == "uncommitted")


def first_line(exc: BaseException) -> str:
    """The first line of what ``exc`` says (drivers' messages run on for lines)."""
    text = str(exc).strip()
    return text.splitlines()[0][:200] if text else type(exc).__name__
