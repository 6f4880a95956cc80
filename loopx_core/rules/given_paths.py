"""What a path someone hands LoopX must be, judged before it is used (#44).

A person or an agent can name anything: a named pipe (FIFO) whose ``open``
waits for a writer forever, ``/dev/zero``, a folder, a link to nothing. Every
path argument of the verb table — ``verify --file``, ``writeback --input``,
``--db`` and ``migrate --to``, ``run --log-file``, ``--bin``, ``demo --keep``,
``runner add --watch``, ``notify set``'s program — and the files LoopX reads
from the project (``.loopx/policy.json``, the key file) go through one of the
checks below, so that nothing blocks and each refusal names what the path is.

Reading: ``open_regular`` opens with ``O_NONBLOCK`` (opening a FIFO returns
at once instead of waiting for a writer; ``O_NOCTTY``: a terminal never
becomes ours), then judges the descriptor with ``fstat`` — what was opened is
what is judged, so a file swapped for a FIFO between a check and the open
changes nothing — and only then makes it blocking again.

Writing or creating (a board, a log): ``check_target`` allows a missing path
or one of the wanted kind, and refuses a link to nothing (it would create a
file wherever the link points). A program must be a regular executable file.
These look without opening, so nothing blocks; the opener that follows
(SQLite, the log handler, exec) meets what was checked, or a plain error.
"""

from __future__ import annotations

import os
import stat

_READ_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0)


class Refused(Exception):
    """A given path refused, for the cold paths (the hook, board discovery)
    that must not import the kernel's errors: pass ``error=Refused``."""

    def __init__(self, message: str, hint: str = ""):
        super().__init__(message)
        self.message, self.hint = message, hint


def _error(error: type | None) -> type:
    if error is not None:
        return error
    from ..shapes.errors import InvalidInput  # (exit 3: the default refusal)

    return InvalidInput


def kind(mode: int) -> str:
    """What a file of ``mode`` is, as a person would say it."""
    if stat.S_ISREG(mode):
        return "a file"
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a named pipe (FIFO)"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def _shown(path: str) -> str:
    return repr(str(path)[:200])


def _dangling(path: str) -> bool:
    try:
        return stat.S_ISLNK(os.lstat(path).st_mode)
    except (OSError, ValueError):
        return False


def open_judged(path: str, *, nofollow: bool = False) -> tuple[int, os.stat_result]:
    """``path`` opened for reading without waiting (a FIFO's open returns at
    once), with ``fstat`` of what was opened — the rule every reader of a
    given path starts from (``open_regular`` below; ``artifacts.hash_within``
    with ``nofollow``). Raises OSError (ValueError: a NUL in the path)."""
    fd = os.open(path, _READ_FLAGS | (getattr(os, "O_NOFOLLOW", 0) if nofollow else 0))
    try:
        return fd, os.fstat(fd)
    except BaseException:
        os.close(fd)
        raise


def open_regular(path: str, what: str, hint: str, *, error: type | None = None, missing_ok: bool = False) -> int | None:
    """A blocking descriptor, open for reading, on the regular file ``path``;
    ``None`` when it is missing and ``missing_ok``. Anything else is ``error``
    naming what the path is: nothing here waits on a FIFO or a device."""
    error = _error(error)
    try:
        fd, st = open_judged(path)
    except FileNotFoundError:
        if _dangling(path):
            raise error(f"{what} {_shown(path)} is a link to a missing file", hint) from None
        if missing_ok:
            return None
        raise error(f"cannot read {what} {_shown(path)}: no such file", hint) from None
    except OSError as exc:
        raise error(f"cannot read {what} {_shown(path)}: {exc.strerror or exc}", hint) from None
    except ValueError as exc:  # a NUL in the path
        raise error(f"cannot read {what} {_shown(path)}: {exc}", hint) from None
    try:
        mode = st.st_mode
        if not stat.S_ISREG(mode):
            raise error(f"{what} {_shown(path)} is {kind(mode)}, not a regular file", hint)
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd


def read_regular(
    path: str, limit: int, what: str, hint: str, *, error: type | None = None, missing_ok: bool = False
) -> bytes | None:
    """At most ``limit`` bytes of the regular file ``path`` (``open_regular``);
    a larger file is ``error``."""
    error = _error(error)
    fd = open_regular(path, what, hint, error=error, missing_ok=missing_ok)
    if fd is None:
        return None
    with os.fdopen(fd, "rb") as handle:
        if os.fstat(fd).st_size > limit:
            raise error(f"{what} {_shown(path)} is larger than {limit:,} bytes", hint)
        try:
            raw = handle.read(limit + 1)
        except OSError as exc:
            raise error(f"cannot read {what} {_shown(path)}: {exc.strerror or exc}", hint) from None
    if len(raw) > limit:
        raise error(f"{what} {_shown(path)} is larger than {limit:,} bytes", hint)
    return raw


def check_target(path: str, what: str, hint: str, *, want: str = "file", error: type | None = None) -> None:
    """``path`` (to be written or created) is missing or ``want`` ("file" or
    "folder"); a link to nothing is refused. Looks without opening."""
    error = _error(error)
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        if _dangling(path):
            raise error(f"{what} {_shown(path)} is a link to a missing file", hint) from None
        return
    except (OSError, ValueError):
        return  # unreachable or unreadable: the opener says so in its own words
    fine = stat.S_ISREG(mode) if want == "file" else stat.S_ISDIR(mode)
    if not fine:
        raise error(
            f"{what} {_shown(path)} is {kind(mode)}, not {'a regular file' if want == 'file' else 'a folder'}", hint
        )


def check_folder(path: str, what: str, hint: str, *, error: type | None = None) -> None:
    """``path`` is an existing folder."""
    error = _error(error)
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        raise error(
            f"{what} {_shown(path)} {'is a link to a missing folder' if _dangling(path) else 'does not exist'}", hint
        ) from None
    except (OSError, ValueError) as exc:
        raise error(f"cannot use {what} {_shown(path)}: {getattr(exc, 'strerror', None) or exc}", hint) from None
    if not stat.S_ISDIR(mode):
        raise error(f"{what} {_shown(path)} is {kind(mode)}, not a folder", hint)


def check_program(path: str, what: str, hint: str, *, error: type | None = None) -> None:
    """``path`` is a regular file this user may execute."""
    error = _error(error)
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        raise error(
            f"{what} {_shown(path)} {'is a link to a missing file' if _dangling(path) else 'does not exist'}", hint
        ) from None
    except (OSError, ValueError) as exc:
        raise error(f"cannot use {what} {_shown(path)}: {getattr(exc, 'strerror', None) or exc}", hint) from None
    if not stat.S_ISREG(mode):
        raise error(f"{what} {_shown(path)} is {kind(mode)}, not a program", hint)
    if not os.access(path, os.X_OK):
        raise error(f"{what} {_shown(path)} is not executable", hint)
