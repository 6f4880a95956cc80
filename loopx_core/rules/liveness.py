"""Is the process that took something still there? One rule for every taker
that records where it runs (a runner's row, a notification's claim): on this
machine a process that is gone is seen at once; elsewhere only its own bound
(a heartbeat gone stale, a claim past its time) says so. Standard library only."""

from __future__ import annotations

import os


def host_name() -> str:
    """Where this process runs: agents on a shared team board come from many machines."""
    return os.environ.get("LOOPX_HOST") or os.uname().nodename


def process_alive(pid: int | None) -> bool:
    if not pid:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # someone else's process with that id: assume it is the taker
    return True


def gone_here(host: str | None, pid: int | None) -> bool:
    """The taker ran on this machine and its process is gone."""
    return host == host_name() and not process_alive(pid)
