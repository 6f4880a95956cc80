"""Background work that follows the board, each loop in its own thread worker
with its own connection.

``ChangePoller`` probes ``store.change_token()`` (SQLite ``PRAGMA
data_version``, a few microseconds; PostgreSQL ``max(seq)``) every
``interval`` seconds and, only when it moved, reads the events after the last
seen seq with the cards they touched and posts them to the app. It only reads.
While the board is busy (a change in the last ``BUSY_FOR`` seconds) it probes
five times as often: agents write in bursts, and the next write of a burst
reaches the screen ~20 ms sooner, while an idle board costs what it did.
Every ``RUNNERS_EVERY`` seconds it also re-reads the runners' rows: their
heartbeats are no events, and without this the board would call a runner
waiting on a gate gone, and a killed one running (``runners_every``).

``LeaseReaper`` is the board's one writer of its own: every few seconds it
reaps expired leases and overdue gates (a dead agent's card goes back to
Ready on screen without anyone typing a command). A reap that waits for
another process's write lock delays only this thread.

The app starts these only when ``background`` is on; tests and snapshots turn
it off and drive changes themselves."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from loopx_core.ops import reaper
from loopx_core.store.backends import Store

from .messages import BoardChanged, LogWentBack, PollFailed, RunnersRead
from .reads import BoardReader

if TYPE_CHECKING:
    from textual.message import Message

BUSY_FOR = 2.0  # s after a change during which the poller probes five times as often
# s between re-reads of the runners' rows: well inside a heartbeat (5 s) and
# the liveness window (30 s), so the board says "gone" when `runner list` does.
RUNNERS_EVERY = 2.0


class ChangePoller:
    def __init__(
        self,
        reader: BoardReader,
        seq: int,
        post: Callable[[Message], object],
        *,
        interval: float = 0.05,
        cancelled: Callable[[], bool] = lambda: False,
        runners_every: float = RUNNERS_EVERY,
    ):
        self.reader = reader
        self.runners_every = runners_every
        self._runners: tuple | None = None  # the rows last posted (posted again only when they change)
        self._runners_at = float("-inf")  # (monotonic) when they were read
        self.seq = seq
        self.post = post
        self.interval = interval
        self.cancelled = cancelled
        self.wake = threading.Event()  # set to poll at once (e.g. after our own write)

    def run(self) -> None:
        store = self.reader.store
        with store.thread_connection():
            token: int | None = None  # None: read the delta now, whatever the token says
            failures = 0
            busy_until = 0.0
            while not self.cancelled():
                try:
                    current = store.change_token()
                    if current != token:
                        token = current
                        gone = self.reader.witnessed()
                        if gone is not None:  # the log went backwards: follow it no further
                            self.post(LogWentBack(gone))
                            return
                        delta = self.reader.delta(self.seq)
                        if delta.events:
                            self.seq = delta.seq
                            self.post(BoardChanged(delta))
                            busy_until = time.monotonic() + BUSY_FOR
                    self._reread_runners()
                    failures = 0
                except Exception as exc:  # a poll must never take the app down
                    failures += 1
                    token = None
                    if failures in (1, 10, 100):
                        self.post(PollFailed(f"{type(exc).__name__}: {exc}"))
                    self.wake.wait(min(2.0, self.interval * (2 ** min(failures, 6))))
                    self.wake.clear()
                    continue
                busy = time.monotonic() < busy_until
                if self.wake.wait(self.interval / 5 if busy else self.interval):
                    self.wake.clear()
                    token = None  # our own commits do not move our data_version

    def _reread_runners(self) -> None:
        """Every ``runners_every`` seconds: the runners' rows, posted when they changed."""
        at = time.monotonic()
        if at - self._runners_at < self.runners_every:
            return
        self._runners_at = at
        found = self.reader.runners()
        if found != self._runners:
            if self._runners is not None or found:
                self.post(RunnersRead(found))
            self._runners = found


class LeaseReaper:
    def __init__(
        self,
        store: Store,
        *,
        every: float = 2.0,
        cancelled: Callable[[], bool] = lambda: False,
        reaped: Callable[[], None] = lambda: None,
    ):
        self.store = store
        self.every = every
        self.cancelled = cancelled
        self.reaped = reaped  # called after a reap that committed (wakes the poller)
        self.stop = threading.Event()

    def run(self) -> None:
        with self.store.thread_connection():
            while not self.cancelled():
                try:
                    if reaper.has_due():
                        self.store.run(reaper.reap_due)
                        self.reaped()
                except Exception:  # busy or gone: try again next round; the poller reports a dead board
                    pass
                if self.stop.wait(self.every):
                    return
