"""Waiting in tests: the one helper for "until this is true".

A test that waits for another process, a worker thread or a watcher polls a
check until it holds and gets the check's value back; past the deadline it fails
saying what it waited for and the last value seen (plus ``explain()``, when
given). ``abort()`` fails at once when waiting can no longer succeed (a process
that died). Deadlines are generous — a loaded 2-core machine is slow, not
wrong — and never asserted on: speed is measured in bench/, not here.

    from tests.polling import until, until_async
    rows = until(lambda: evidence(store), what="the evidence")
    await until_async(lambda: app.model.cards, what="the first load", pause=lambda: pilot.pause(0.05))

No bare sleep stands in for an event: wait for the thing itself.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

import pytest

T = TypeVar("T")

DEADLINE = 60.0  # seconds; the first check that holds returns at once
INTERVAL = 0.02


class _Wait:
    def __init__(self, what: str, timeout: float, explain, abort):
        self.what, self.timeout, self.explain, self.abort = what, timeout, explain, abort
        self.deadline = time.monotonic() + timeout

    def done(self, value) -> bool:
        """True once ``value`` holds; fails when ``abort()`` says why, or past the deadline."""
        if value:
            return True
        why = self.abort() if self.abort else None
        if not why and time.monotonic() > self.deadline:
            why = f"timed out after {self.timeout:g} s"
        if why:
            extra = f"\n{self.explain()}" if self.explain else ""
            pytest.fail(f"{why} waiting for {self.what}; last value {value!r}{extra}", pytrace=False)
        return False


def until(
    check: Callable[[], T],
    *,
    what: str,
    timeout: float = DEADLINE,
    interval: float = INTERVAL,
    explain: Callable[[], str] | None = None,
    abort: Callable[[], str | None] | None = None,
) -> T:
    """Call ``check()`` until it returns something truthy, and return that."""
    wait = _Wait(what, timeout, explain, abort)
    while not wait.done(value := check()):
        time.sleep(interval)
    return value


async def until_async(
    check: Callable[[], T],
    *,
    what: str,
    timeout: float = DEADLINE,
    interval: float = INTERVAL,
    explain: Callable[[], str] | None = None,
    abort: Callable[[], str | None] | None = None,
    pause: Callable[[], Awaitable] | None = None,
) -> T:
    """``until`` on the test's event loop: between checks it awaits ``pause()``
    (for example ``lambda: pilot.pause(0.05)``, so a Textual app under test
    processes its messages) or else sleeps ``interval`` seconds on the loop."""
    wait = _Wait(what, timeout, explain, abort)
    while not wait.done(value := check()):
        await (pause() if pause is not None else asyncio.sleep(interval))
    return value
