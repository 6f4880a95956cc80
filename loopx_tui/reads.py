"""Every read the board makes, in one place, for worker threads only.

Each call takes the thread's own connection, reads through loopx_core's API
(never the ORM), never writes (reaping has its own worker), and returns plain
frozen values with agents' text made safe for the terminal
(``loopx_core.rules.text``): everything the screens draw has passed through here.
Calling one on the UI thread raises — a slow writer must never freeze the
screen."""

from __future__ import annotations

import threading
from typing import Callable, TypeVar

from loopx_core.ops import board, cards, trajectory
from loopx_core.store.discovery import BoardLocation
from loopx_core.store.backends import Store
from loopx_core.rules.text import terminal_safe_value

T = TypeVar("T")

EVIDENCE_SHOWN = 100  # the latest entries on the card screen; `loopx log` has them all


class UIThreadRead(RuntimeError):
    """Store work was attempted on the UI thread."""


def off_ui_thread(what: str) -> None:
    if threading.current_thread() is threading.main_thread():
        raise UIThreadRead(f"{what} on the UI thread: run it in a thread worker")


def open_store(location: BoardLocation) -> Store:
    """Open an existing board (never creates one: that is ``loopx init``)."""
    off_ui_thread("opening the board")
    store = Store.open(location)
    store.db.close()  # this thread's connection; every read takes its own
    return store


class BoardReader:
    """Reads of one board, each in the calling worker thread's connection."""

    def __init__(self, store: Store, now: Callable[[], float]):
        self.store = store
        self.now = now

    def _read(self, what: str, fn: Callable[[], T]) -> T:
        off_ui_thread(what)
        with self.store.thread_connection():
            return terminal_safe_value(fn())

    def verify(self):
        """``loopx verify``'s report on this board (its chain, signatures and
        decisions); a clean one becomes this machine's anchor."""
        from loopx_core.authority import verify

        def check():
            report = verify.verify_store(self.store)
            verify.save_anchor(self.store, report)
            return report

        return self._read("verifying the history", check)

    def snapshot(self) -> board.BoardSnapshot:
        return self._read("reading the board", lambda: board.board_snapshot(self.store, reap=False))

    def delta(self, seq: int) -> board.BoardDelta:
        return self._read("reading changes", lambda: board.board_delta(self.store, seq))

    def card_detail(self, card_id: int):
        return self._read("reading a card", lambda: cards.card_detail(self.store, card_id, reap=False, evidence_limit=EVIDENCE_SHOWN))

    def gate_brief(self, gate_id: int) -> board.GateBrief | None:
        return self._read("reading a gate", lambda: board.gate_brief(self.store, gate_id))

    def trajectory(self, card_id: int | None) -> trajectory.Trajectory:
        # Times and numbers, agent ids (validated when registered) and labels the
        # kernel composes: no agent prose, so the tens of thousands of turns of a
        # long board skip the sanitiser.
        off_ui_thread("reading a timeline")
        with self.store.thread_connection():
            return trajectory.read_trajectory(self.store, card_id, self.now())
