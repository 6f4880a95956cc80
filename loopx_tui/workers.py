"""Background work that follows the board.

The change poller runs in a thread worker with its own connection: it probes
``store.change_token()`` (SQLite ``PRAGMA data_version``, a few microseconds;
PostgreSQL ``max(seq)``) every ``interval`` seconds and, only when it moved,
reads the events after the last seen seq with the cards they touched
(``board.board_delta``) and posts them to the app. It also reaps expired
leases and overdue gates every few seconds, so a dead agent's card goes back
to Ready on screen without anyone typing a command.

The app starts these only when ``background`` is on; tests and snapshots turn
it off and drive changes themselves. The file watcher (DESIGN §7) plugs in
here the same way: another worker started from ``start_background``.
"""

from __future__ import annotations

import threading
import time
from typing import Callable

from loopx_core import reaper
from loopx_core.board import board_delta
from loopx_core.store import Store

from .messages import BoardChanged, PollFailed


class ChangePoller:
    def __init__(
        self,
        store: Store,
        seq: int,
        post: Callable[[object], object],
        *,
        interval: float = 0.05,
        reap_every: float = 2.0,
        cancelled: Callable[[], bool] = lambda: False,
    ):
        self.store = store
        self.seq = seq
        self.post = post
        self.interval = interval
        self.reap_every = reap_every
        self.cancelled = cancelled
        self.wake = threading.Event()  # set to poll at once (e.g. after our own write)

    def run(self) -> None:
        with self.store.thread_connection():
            token: int | None = None  # None: read the delta now, whatever the token says
            last_reap = time.monotonic()
            failures = 0
            while not self.cancelled():
                try:
                    if time.monotonic() - last_reap >= self.reap_every:
                        last_reap = time.monotonic()
                        if reaper.has_due():
                            self.store.run(reaper.reap_due)
                            token = None  # our own commit does not move our data_version
                    current = self.store.change_token()
                    if current != token:
                        token = current
                        delta = board_delta(self.store, self.seq)
                        if delta.events:
                            self.seq = delta.seq
                            self.post(BoardChanged(delta))
                    failures = 0
                except Exception as exc:  # a poll must never take the app down
                    failures += 1
                    token = None
                    if failures in (1, 10, 100):
                        self.post(PollFailed(f"{type(exc).__name__}: {exc}"))
                    self.wake.wait(min(2.0, self.interval * (2 ** min(failures, 6))))
                    self.wake.clear()
                    continue
                if self.wake.wait(self.interval):
                    self.wake.clear()
                    token = None
