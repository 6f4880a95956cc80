"""A runner's stop signal can land anywhere — also inside the waker's own wait.

A Python signal handler runs in the main thread between two bytecodes. The
runner's handler used to call ``threading.Event.set``, which takes the lock
``Event.wait`` holds around its sleep: a SIGTERM landing there deadlocked the
runner for good (a demo runner asleep on a paused card never stopped and was
killed, its card never released). The harness below delivers the "signal" at
every line the waiting code runs, in the same thread, as CPython would; each
case runs in a child process so a deadlock shows as a hang of the child."""

from __future__ import annotations

import subprocess
import sys
import textwrap

HARNESS = textwrap.dedent(
    """
    import sys, threading
    from loopx_core.runner.waker import Interrupt

    make = {"interrupt": Interrupt, "event": threading.Event}[sys.argv[1]]
    WAITING_CODE = ("waker.py", "threading.py")

    def deliver_at(n):
        flag = make()
        seen = [0]

        def tracer(frame, event, arg):
            if frame.f_code.co_filename.endswith(WAITING_CODE):
                frame.f_trace = line_tracer
            return None

        def line_tracer(frame, event, arg):
            if event == "line":
                seen[0] += 1
                if seen[0] == n:
                    flag.set()  # what the runner's signal handler does, at this point of the wait
            return line_tracer

        sys.settrace(tracer)
        try:
            woke = flag.wait(0.05)
        finally:
            sys.settrace(None)
        return seen[0], woke, flag.is_set()

    lines, _, _ = deliver_at(0)
    for n in range(1, lines + 1):
        _, woke, is_set = deliver_at(n)
        assert is_set, n
    print("stopped at every point", lines)
    """
)


def _run(kind: str, timeout: float) -> subprocess.CompletedProcess | None:
    try:
        return subprocess.run([sys.executable, "-c", HARNESS, kind], capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None


def test_the_stop_flag_can_be_set_by_a_signal_landing_anywhere_in_its_own_wait():
    done = _run("interrupt", timeout=120)
    assert done is not None, "the runner's stop flag deadlocked when set from inside its own wait"
    assert done.returncode == 0 and "stopped at every point" in done.stdout, done.stderr


def test_the_harness_catches_the_deadlock_a_threading_event_has():
    # threading.Event, set from inside its own wait: the child hangs (it would, forever).
    assert _run("event", timeout=8) is None
