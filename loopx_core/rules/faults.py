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
"""

from __future__ import annotations

import os

POINTS = ("commit", "committed", "notify_claimed")

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
