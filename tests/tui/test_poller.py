"""The change poller, on a real board with a real writer in another process:
it probes at its interval while the board is idle, five times as often for a
while after a change (agents write in bursts), then slows down again."""

from __future__ import annotations

import threading

from loopx_core.rules import clock
from loopx_core.store.backends import Store
from loopx_tui import workers
from loopx_tui.messages import BoardChanged
from loopx_tui.reads import BoardReader

from .conftest import loopx


class RecordedWake(threading.Event):
    """The poller's wake event, recording how long each wait was for."""

    def __init__(self):
        super().__init__()
        self.waits: list[float] = []
        self.changed = threading.Condition()

    def wait(self, timeout=None):
        with self.changed:
            self.waits.append(timeout)
            self.changed.notify_all()
        return super().wait(timeout)

    def until(self, holds, what: str) -> None:
        with self.changed:
            assert self.changed.wait_for(lambda: holds(self.waits), timeout=30), f"{what}: {self.waits}"


def test_the_poller_probes_faster_while_the_board_is_busy(seeded):
    store = Store.open(seeded.location)
    posted: list[BoardChanged] = []
    seen = threading.Event()
    stop = threading.Event()
    try:
        with store.read():
            from loopx_core.store.models import Event

            seq = Event.select(Event.seq).order_by(Event.seq.desc()).scalar()  # the last one: idle from here
        poller = workers.ChangePoller(
            BoardReader(store, clock.now),
            seq,
            lambda m: (posted.append(m), seen.set()),
            interval=0.05,
            cancelled=stop.is_set,
        )
        poller.wake = wake = RecordedWake()
        thread = threading.Thread(target=poller.run)
        thread.start()
        wake.until(lambda w: len(w) >= 3, "idle polls")
        assert set(wake.waits) == {0.05} and not posted  # idle: the slow pace
        proc = loopx(seeded.location, "writeback", "LX-6", "--summary", "a turn", agent="claude-1")
        assert proc.returncode == 0, proc.stderr
        assert seen.wait(30) and posted[0].delta.events
        after = len(wake.waits)
        wake.until(lambda w: len(w) >= after + 3, "busy polls")
        assert wake.waits[after : after + 3] == [0.01] * 3  # busy: five times as often
        wake.until(lambda w: w[-1] == 0.05, "back to the slow pace")
    finally:
        stop.set()
        poller.wake.set()
        thread.join(10)
        store.close()
