"""Who holds a SQLite board so that nobody else may even read it.

In WAL mode readers never wait for a writer: the only lock that stops them is
one on the database file itself — another process that set ``PRAGMA
locking_mode = EXCLUSIVE`` and then read or wrote keeps it until it closes
(SQLite's own connections in WAL mode take only shared locks on the file; the
writer's lock lives in the ``-shm`` file). Rather than wait out the busy
timeout for every statement and then say "database is locked", LoopX asks
the OS who holds that lock (Linux: ``/proc/locks``, then the holder's
``/proc/PID/cmdline``) and says so at once. Best effort: where the OS does
not tell (macOS, another host's process on a shared disk), the holder is
unknown and the message says only that the board is held.

Standard library only; the command line passes through ``terminal_safe``
(it is whatever the holder was started with, perhaps by an agent)."""

from __future__ import annotations

import os
from typing import NamedTuple

from ..rules.text import terminal_safe

COMMAND_MAX = 200


class Holder(NamedTuple):
    pid: int | None
    command: str  # terminal-safe, at most COMMAND_MAX characters ("" when unknown)

    def text(self) -> str:
        if self.pid is None:
            return "another process (the OS does not say which)"
        return f"pid {self.pid}" + (f" ({self.command})" if self.command else "")

    def to_json(self) -> dict:
        return {"pid": self.pid, "command": self.command or None}


def _command(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            raw = fh.read(4 * COMMAND_MAX)
    except OSError:
        return ""
    text = terminal_safe(raw.rstrip(b"\0").replace(b"\0", b" ").decode("utf-8", "replace"))
    return text if len(text) <= COMMAND_MAX else text[: COMMAND_MAX - 1] + "…"


def _locks_by_pid(path: str | os.PathLike) -> tuple[dict[int, set[str]], dict[int, set[str]]] | None:
    """The POSIX locks ``/proc/locks`` lists on the board file and on its
    ``-shm`` file, as {pid: {mode, …}} each (None where it cannot be read)."""
    try:
        st = os.stat(path)
        with open("/proc/locks", encoding="ascii", errors="replace") as fh:
            lines = fh.read().splitlines()
    except OSError:
        return None
    try:
        shm = os.stat(f"{os.fspath(path)}-shm")
        shm_key = (os.major(shm.st_dev), os.minor(shm.st_dev), shm.st_ino)
    except OSError:
        shm_key = None
    db_key = (os.major(st.st_dev), os.minor(st.st_dev), st.st_ino)
    on_db: dict[int, set[str]] = {}
    on_shm: dict[int, set[str]] = {}
    for line in lines:
        fields = line.split()
        if "->" in fields or len(fields) < 6:  # "->": a process waiting for the lock, not holding it
            continue
        mode, pid, where = fields[3], fields[4], fields[5]
        try:
            major, minor, inode = where.split(":")
            key = (int(major, 16), int(minor, 16), int(inode))
            pid_n = int(pid)
        except ValueError:
            continue
        if key == db_key:
            on_db.setdefault(pid_n, set()).add(mode)
        elif key == shm_key:
            on_shm.setdefault(pid_n, set()).add(mode)
    return on_db, on_shm


def exclusive_holders(path: str | os.PathLike) -> list[int]:
    """Pids of other processes holding a write lock on the file at ``path``
    (Linux; [] where ``/proc/locks`` cannot be read)."""
    locks = _locks_by_pid(path)
    if locks is None:
        return []
    me = os.getpid()
    return [pid for pid, modes in locks[0].items() if "WRITE" in modes and pid not in (me, -1)]


def exclusive_mode_holders(path: str | os.PathLike) -> set[int]:
    """The holders among ``exclusive_holders`` that hold the board in
    exclusive locking mode, not for a moment.

    An ordinary WAL connection also locks the whole file when it is the last
    one to close: it checkpoints the WAL into the board first, which takes
    seconds on a loaded machine with a long WAL. But such a connection has the
    WAL index (``-shm``) open until the checkpoint is done, and holds a read
    lock on it all the while (SQLite's "DMS" byte); a connection in exclusive
    locking mode keeps its WAL index in its own memory and has no lock on
    ``-shm`` (SQLite's WAL docs, "Use of WAL Without Shared-Memory")."""
    locks = _locks_by_pid(path)
    if locks is None:
        return set()
    on_db, on_shm = locks
    me = os.getpid()
    return {pid for pid, modes in on_db.items() if "WRITE" in modes and pid not in (me, -1) and pid not in on_shm}


def holder(path: str | os.PathLike) -> Holder:
    """Who holds the board at ``path`` exclusively, as far as the OS says."""
    pids = exclusive_holders(path)
    if not pids:
        return Holder(None, "")
    return Holder(pids[0], _command(pids[0]))
