"""Fault points the tests arm: ``LOOPX_FAULT=POINT:N`` makes this process
SIGKILL itself the N-th time it reaches POINT (N defaults to 1).

Points: ``commit`` (a write transaction's body ran, before COMMIT: the kill
rolls it back) and ``committed`` (right after COMMIT, before anything else —
the answer, the next transaction); ``notify_claimed`` (a deliverer has
claimed notifications and not yet started one: ops/notify_send.py). A test kills an operator at each point in
turn and retries it with the same ``--op-id`` (tests/faults/).

Inert unless the variable is set, and it only ever kills the process that
reads it — what any process can do to itself. ``loopx hook`` disarms it
(``disarm``): a runtime treats a hook that died as "no objection", so the
variable must never turn the person's check into an allow (SECURITY.md).

One point only delays, never kills, and the hook does honour it:
``LOOPX_FAULT=transcript-lag`` makes a Stop hook read each transcript as if
its last model call had not been written yet (Claude Code writes the
transcript asynchronously: the race of a Stop that reads it early, made
certain — ``lagging``). It can only make a Stop charge less: what it hides is
charged by the session's next Stop, its SessionEnd or ``loopx run`` — which
is what the tests that arm it show (DESIGN §13 "Fault points").
"""

from __future__ import annotations

import os

POINTS = ("commit", "committed", "notify_claimed")
LAGS = ("transcript-lag",)

_armed: tuple[str, int] | None = None
_seen: dict[str, int] = {}
_read = False


def _arm() -> None:
    global _armed, _read
    _read = True
    spec = os.environ.get("LOOPX_FAULT", "")
    name, _, count = spec.partition(":")
    if name in POINTS:
        _armed = (name, int(count) if count.isdigit() and int(count) > 0 else 1)


def disarm() -> None:
    global _armed, _read
    _armed, _read = None, True


def point(name: str) -> None:
    """Reached ``name``: die here if a test asked for it."""
    if not _read:
        _arm()
    if _armed is None or _armed[0] != name:
        return
    _seen[name] = _seen.get(name, 0) + 1
    if _seen[name] == _armed[1]:
        import signal

        os.kill(os.getpid(), signal.SIGKILL)


def lagging(name: str) -> bool:
    """Is the delay point ``name`` (one of ``LAGS``) armed? (``disarm`` leaves it:
    it only ever hides what a later charge adds.)"""
    return name in LAGS and os.environ.get("LOOPX_FAULT", "").partition(":")[0] == name
