"""Is the process that took something still there? One rule for every taker
that records where it runs (a runner's row, a notification's claim): on this
machine a process that is gone is seen at once; elsewhere only its own bound
(a heartbeat gone stale, a claim past its time) says so. Standard library only."""

from __future__ import annotations

import os


def host_name() -> str:
    """Where this process runs: agents on a shared team board come from many machines."""
    return os.environ.get("LOOPX_HOST") or os.uname().nodename


STALE = 30.0  # seconds: a runner whose heartbeat is older than this is gone (it beats every 5 s)


def process_alive(pid: int | None) -> bool:
    if not pid:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # someone else's process with that id: assume it is the taker
    try:  # a zombie (killed, its parent has not reaped it yet) runs nothing: gone
        with open(f"/proc/{pid}/stat", "rb") as fh:
            return fh.read().rsplit(b")", 1)[1].split()[0] != b"Z"
    except (OSError, IndexError):
        return True  # no /proc (not Linux): the signal said it is there


def gone_here(host: str | None, pid: int | None) -> bool:
    """The taker ran on this machine and its process is gone."""
    return host == host_name() and not process_alive(pid)


def runner_alive(state: str | None, heartbeat: float | None, now: float, process_gone: bool) -> bool:
    """The one rule for "a runner drives its agent right now", used by
    ``loopx runner list``, the board and a runner taking an agent over: not
    stopped, a heartbeat younger than ``STALE``, and — on this machine — its
    process still there (``process_gone``: ``gone_here`` of its row, looked
    at when the row was read)."""
    return state != "stopped" and heartbeat is not None and now - heartbeat < STALE and not process_gone
