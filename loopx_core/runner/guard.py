"""A turn's keeper: ``python -I -m loopx_core.runner.guard PARENT -- ARGV…``
runs ARGV (the runtime) and makes sure that its whole process tree ends with
it — sandbox helpers included (issue #44: a Codex ``bwrap … codex-linux-sandbox``
and Claude Code's ``socat`` bridge outlived their turns, parent 1, for hours).

The runner starts every turn through it, in a session of its own (process.py).
On Linux:

- it is the *subreaper* of everything the runtime starts
  (``PR_SET_CHILD_SUBREAPER``): a helper whose parent exits — a daemon that
  double-forks, ``setsid``s out of the turn's process group — becomes its
  child instead of init's, so it can still be found;
- when the runtime exits, the turn is over: every process still under the
  guard is killed (SIGKILL) and reaped, and the guard exits as the runtime did
  (its exit code, or the same signal);
- when the guard is told to stop (SIGTERM/SIGINT/SIGHUP: the runner stopping
  the turn's group), the runtime gets SIGTERM, ``GRACE`` seconds to end, then
  the same sweep;
- when the runner dies, even by SIGKILL, the guard gets SIGTERM from the
  kernel (``PR_SET_PDEATHSIG``) and does the same: a killed runner leaves no
  turn behind. The runtime itself dies with the guard (SIGKILL) should the
  guard be killed outright.

Elsewhere it only runs ARGV (no subreaper there). Standard library only, and
nothing of LoopX imported: it starts once per turn.
"""

from __future__ import annotations

import os
import select
import signal
import sys
import time

TYPE_CHECKING = False  # (annotations only; checkers read this as typing's)
if TYPE_CHECKING:
    from types import FrameType
    from typing import NoReturn

GRACE = 1.5  # seconds a stopped runtime has to end before everything is killed (the runner escalates at 3)
PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36
STOPS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)


class Stop(Exception):
    pass


def _prctl(option: int, value: int) -> bool:
    try:
        import ctypes

        return ctypes.CDLL(None, use_errno=True).prctl(option, value, 0, 0, 0) == 0
    except Exception:  # no prctl: not Linux
        return False


def _on_stop(signum: int, frame: FrameType | None) -> NoReturn:
    raise Stop


def children(pid: int) -> list[int]:
    """The live children of ``pid`` (from /proc: every task's ``children``, else a scan)."""
    found: list[int] = []
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/children") as fh:
                found += [int(p) for p in fh.read().split()]
        return found
    except OSError:
        pass
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat", "rb") as fh:
                    if int(fh.read().rsplit(b")", 1)[1].split()[1]) == pid:
                        found.append(int(entry))
            except (OSError, ValueError, IndexError):
                pass
    return found


def descendants(pid: int) -> list[int]:
    out, todo = [], [pid]
    while todo:
        for child in children(todo.pop()):
            if child not in out:
                out.append(child)
                todo.append(child)
    return out


def sweep(limit: float = 10.0) -> None:
    """Kill and reap every process under this one until none is left (as the
    subreaper, what a killed process leaves behind becomes our child, to be
    killed in turn)."""
    me = os.getpid()
    deadline = time.monotonic() + limit
    while True:
        left = descendants(me)  # (zombies among them: reaped below)
        for pid in left:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        while True:
            try:
                if os.waitpid(-1, os.WNOHANG)[0] == 0:
                    break
            except ChildProcessError:
                break
        if not left or time.monotonic() > deadline:
            return
        time.sleep(0.01)  # the kernel delivering the kills; then a look at who is left


def wait_for(pid: int, timeout: float) -> int | None:
    """Its wait status once it ended within ``timeout`` seconds, else None (reaping others meanwhile)."""
    deadline = time.monotonic() + timeout
    fd = None
    try:
        fd = os.pidfd_open(pid)  # (Linux >= 5.3)
    except (AttributeError, OSError):
        pass
    try:
        while True:
            try:
                done, status = os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:
                # Already reaped: the stop came between the main loop's waitpid
                # returning the runtime and its status being kept. It ended as
                # the stop meant it to (a busy machine makes this race real).
                return signal.SIGTERM  # (the wait status of "killed by SIGTERM")
            if done:
                return status
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            if fd is not None:
                select.select([fd], [], [], left)
            else:
                time.sleep(min(0.05, left))
    finally:
        if fd is not None:
            os.close(fd)


def main(argv: list[str]) -> int:
    if len(argv) < 3 or argv[1] != "--":
        sys.stderr.write("usage: python -I -m loopx_core.runner.guard PARENT_PID -- ARGV...\n")
        return 2
    parent, command = int(argv[0]), argv[2:]
    linux = sys.platform.startswith("linux")
    if not linux:
        os.execvp(command[0], command)
    _prctl(PR_SET_CHILD_SUBREAPER, 1)
    # A stop (the runner's, or its death) that comes before the runtime runs is
    # held until the guard waits on it: raised anywhere before, it would end
    # the guard and leave a just-forked runtime free (seen under load: a killed
    # runner's turn went on and wrote back).
    signal.pthread_sigmask(signal.SIG_BLOCK, STOPS)
    for sig in STOPS:
        signal.signal(sig, _on_stop)
    _prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    if os.getppid() != parent:  # the runner died before PDEATHSIG was armed: no turn
        return 128 + signal.SIGTERM
    guard = os.getpid()
    pid = os.fork()
    if pid == 0:  # the runtime: default signals, dies with the guard
        try:
            for sig in STOPS:
                signal.signal(sig, signal.SIG_DFL)
            _prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
            if os.getppid() != guard:  # the guard died before that was armed: no turn
                os._exit(128 + signal.SIGKILL)
            signal.pthread_sigmask(signal.SIG_UNBLOCK, STOPS)  # (exec keeps the mask: a held stop ends it here)
            os.execvp(command[0], command)
        except BaseException as exc:
            sys.stderr.write(f"cannot start {command[0]}: {getattr(exc, 'strerror', None) or exc}\n")
        finally:
            os._exit(127)
    status = None
    try:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, STOPS)  # a stop held meanwhile is raised here, as Stop
        while status is None:  # (reaping, meanwhile, what the runtime's tree leaves to us)
            ended, how = os.waitpid(-1, 0)
            if ended == pid:
                status = how
    except Stop:
        pass
    try:
        if status is None:  # stopped: the runtime gets its SIGTERM and a moment
            for sig in STOPS:
                signal.signal(sig, signal.SIG_IGN)
            try:
                os.kill(pid, signal.SIGTERM)
            except OSError:
                pass
            status = wait_for(pid, GRACE)
    finally:
        for sig in STOPS:
            signal.signal(sig, signal.SIG_IGN)
        sweep()
    if status is None:
        return 128 + signal.SIGKILL  # it was killed by the sweep
    if os.WIFSIGNALED(status):
        ended_by = os.WTERMSIG(status)
        signal.signal(ended_by, signal.SIG_DFL)
        os.kill(os.getpid(), ended_by)
    return os.waitstatus_to_exitcode(status)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
