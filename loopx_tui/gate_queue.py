"""The gates waiting for the person, shown one at a time.

New pending gates (from the change poller) join the queue and ring the alert.
A dialog the person did not ask for never takes the keys they are typing: a
queued gate opens by itself only when no other dialog is up and no key came
for ``gate_idle`` seconds (``LOOPX_GATE_IDLE``, default 2; the board's start
counts as a key), and at once when the person asks — ``g``, a card's own
gate, or the next one after they answered one. Until then the board's header
says which gate waits ("⚑ G-13 waiting — g"). The gates pending when the
board opened join the queue once its history is checked. ``Esc``/``q``
leave one for later (``g`` walks through all of them again). The gate's brief
— its card and latest evidence — is read in a thread worker just before it
is shown, and a gate answered elsewhere meanwhile is skipped. Answers go to
``HumanActions.answer_gate``; the dialog's own answer keys work only once it
has been on screen for ``arm_delay`` (modals/gate.py)."""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import TYPE_CHECKING

from textual.screen import ModalScreen

from loopx_core.rules import ids
from loopx_core.shapes.values import GateView

if TYPE_CHECKING:
    from .host import GateDialog, GatesHost
    from .messages import GateAnswer
    from .reads import BoardReader


GATE_IDLE = 2.0  # s without a key before a gate the person did not ask for opens
ARM_DELAY = 1.0  # s a gate dialog is on screen before its answer keys work


def idle_setting() -> float:
    """``LOOPX_GATE_IDLE`` (seconds, 0 or more), else ``GATE_IDLE``."""
    try:
        value = float(os.environ.get("LOOPX_GATE_IDLE", GATE_IDLE))
    except ValueError:
        return GATE_IDLE
    return value if 0 <= value <= 3600 else GATE_IDLE


class GateQueue:
    def __init__(self, app: GatesHost):
        self.app = app  # the app, as far as the gate queue sees it (host.py)
        self.queue: list[int] = []
        self.deferred: set[int] = set()
        self.modal: GateDialog | None = None  # the dialog on screen
        self._fetching: int | None = None  # a brief being read
        self.closed = False  # the pane left this board (another board's queue took over)

    @property
    def on_screen(self) -> bool:
        return self.modal is not None

    # -- what the poller says ---------------------------------------------------
    def changed(self, new: Iterable[GateView], gone: Iterable[int]) -> None:
        for gid in gone:
            self.deferred.discard(gid)
            if gid in self.queue:
                self.queue.remove(gid)
            if self.modal is not None and self.modal.gate_id == gid:
                self.modal.gone()
        fresh = [g for g in new if g.id not in self.deferred and g.id not in self.queue]
        if fresh:
            self.queue.extend(g.id for g in fresh)
            for gate in fresh:
                self.app.alert.gate_arrived(gate, self.app.model.cards.get(gate.card))
            self.show_next()

    def opened(self) -> None:
        """The board's history is checked: the gates pending when it opened
        join the queue (and open as any unasked gate does)."""
        self.queue.extend(g for g in sorted(self.app.model.pending) if g not in self.queue and g not in self.deferred)
        self._say_waiting()
        self.show_next()

    def when_idle(self) -> None:
        """The app's timer: a queued gate opens once the person is idle."""
        if self.queue:
            self.show_next()

    @property
    def waiting(self) -> list[int]:
        """The pending gates not on screen: the queued first, then the deferred."""
        shown = self.modal.gate_id if self.modal is not None else self._fetching
        pending = self.app.model.pending
        queued = [g for g in self.queue if g in pending and g != shown]
        return queued + sorted(g for g in pending if g not in queued and g != shown)

    # -- what the person asks for ----------------------------------------------
    def show_all(self) -> None:
        """``g``: every pending gate, the deferred ones too."""
        self.deferred.clear()
        pending = sorted(self.app.model.pending)
        if not pending:
            self.app.toasts.say("No gates are waiting for you")
            return
        self.queue = pending
        self.show_next(asked=True)

    def show_first(self, gate_id: int) -> None:
        """A card's own gate, before the others."""
        self.deferred.discard(gate_id)
        if gate_id in self.queue:
            self.queue.remove(gate_id)
        self.queue.insert(0, gate_id)
        self.show_next(asked=True)

    # -- showing ---------------------------------------------------------------------
    def show_next(self, asked: bool = False) -> None:
        """Show the next queued gate, unless one (or another dialog) is up, or
        — unless the person ``asked`` — they are typing (DESIGN §9)."""
        app = self.app
        if (
            self.modal is not None
            or self._fetching is not None
            or app.reader is None
            or not app.is_running
            or not app.screen_stack
        ):
            return
        if isinstance(app.screen, ModalScreen):
            return  # shown when that dialog closes
        if not asked and self._typing():
            return  # the timer (when_idle) tries again; the header already says it waits
        while self.queue:
            gid = self.queue.pop(0)
            if gid in app.model.pending and gid not in self.deferred:
                self._fetch(gid, asked, app.reader)
                return

    def _typing(self) -> bool:
        """A key came less than ``gate_idle`` ago."""
        return self.app.ticks() - self.app.last_input < self.app.gate_idle

    def _fetch(self, gid: int, asked: bool, reader: BoardReader) -> None:
        self._fetching = gid

        def job():
            try:
                brief = reader.gate_brief(gid)
            except Exception as exc:  # shown, and the queue goes on
                self.app.call_from_thread(self._fetched, gid, None, f"{type(exc).__name__}: {exc}", asked)
                return
            self.app.call_from_thread(self._fetched, gid, brief, None, asked)

        self.app.run_worker(
            job, thread=True, group="reads", name=f"brief {ids.fmt(ids.GATE, gid)}", exit_on_error=False
        )

    def _fetched(self, gid: int, brief, error: str | None, asked: bool) -> None:
        if self.closed:  # (the pane left this queue's board meanwhile: its gates are not this board's)
            return
        self._fetching = None
        app = self.app
        if error is not None:
            app.toasts.say(f"cannot read {ids.fmt(ids.GATE, gid)}: {error}", severity="error")
        elif brief is None or brief.gate.status != "pending":
            app.model.pending.pop(gid, None)
        elif gid not in app.model.pending or gid in self.deferred or not app.is_running:
            pass
        elif isinstance(app.screen, ModalScreen) or (not asked and self._typing()):
            self.queue.insert(0, gid)  # a dialog opened, or the person typed, meanwhile: later
            self._say_waiting()
            return
        else:
            self.modal = app.show_gate(brief, self._answered)
            self._say_waiting()
            return
        self.show_next(asked)

    def _say_waiting(self) -> None:
        self.app.refresh_header()

    def _answered(self, result: GateAnswer | None) -> None:
        modal, self.modal = self.modal, None
        gid = modal.gate_id if modal is not None else None
        self.app.toasts.release()
        if result is None or gid is None:
            return
        key = ids.fmt(ids.GATE, gid)
        if result.decision == "later":
            self.deferred.add(gid)
            self.app.toasts.say(f"{key} left for later in Needs you — g answers it")
        elif result.decision == "gone":
            self.app.toasts.say(f"{key} was answered elsewhere")
        else:
            self.app.answer_gate(gid, result)
        self._say_waiting()
        # The person is answering gates: the next one is asked for (not after
        # one that vanished under them, answered elsewhere).
        self.app.call_later(self.show_next, result.decision != "gone")
