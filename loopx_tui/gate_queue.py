"""The gates waiting for the person, shown one at a time.

New pending gates (from the change poller) join the queue, ring the alert and
pop the gate dialog as soon as no other dialog is up; ``Esc`` leaves one for
later (``g`` walks through all of them again). The gate's brief — its card
and latest evidence — is read in a thread worker just before it is shown, and
a gate answered elsewhere meanwhile is skipped. Answers go to
``HumanActions.answer_gate``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterable

from textual.screen import ModalScreen

from loopx_core.rules import ids
from loopx_core.shapes.values import GateView

if TYPE_CHECKING:
    from .app import LoopxApp


class GateQueue:
    def __init__(self, app: "LoopxApp"):
        self.app = app
        self.queue: list[int] = []
        self.deferred: set[int] = set()
        self.modal = None  # the GateModal on screen
        self._fetching: int | None = None  # a brief being read

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

    # -- what the person asks for ----------------------------------------------
    def show_all(self) -> None:
        """``g``: every pending gate, the deferred ones too."""
        self.deferred.clear()
        pending = sorted(self.app.model.pending)
        if not pending:
            self.app.notice("No gates are waiting for you")
            return
        self.queue = pending
        self.show_next()

    def show_first(self, gate_id: int) -> None:
        """A card's own gate, before the others."""
        self.deferred.discard(gate_id)
        if gate_id in self.queue:
            self.queue.remove(gate_id)
        self.queue.insert(0, gate_id)
        self.show_next()

    # -- showing ---------------------------------------------------------------------
    def show_next(self) -> None:
        """Show the next queued gate, unless one (or another dialog) is up."""
        app = self.app
        if self.modal is not None or self._fetching is not None or app.reader is None or not app.is_running or not app.screen_stack:
            return
        if isinstance(app.screen, ModalScreen):
            return  # shown when that dialog closes
        while self.queue:
            gid = self.queue.pop(0)
            if gid in app.model.pending and gid not in self.deferred:
                self._fetch(gid)
                return

    def _fetch(self, gid: int) -> None:
        self._fetching = gid
        reader = self.app.reader

        def job():
            try:
                brief = reader.gate_brief(gid)
            except Exception as exc:  # shown, and the queue goes on
                self.app.call_from_thread(self._fetched, gid, None, f"{type(exc).__name__}: {exc}")
                return
            self.app.call_from_thread(self._fetched, gid, brief, None)

        self.app.run_worker(job, thread=True, group="reads", name=f"brief {ids.fmt(ids.GATE, gid)}", exit_on_error=False)

    def _fetched(self, gid: int, brief, error: str | None) -> None:
        from .modals.gate import GateModal

        self._fetching = None
        app = self.app
        if error is not None:
            app.notice(f"cannot read {ids.fmt(ids.GATE, gid)}: {error}", severity="error")
        elif brief is None or brief.gate.status != "pending":
            app.model.pending.pop(gid, None)
        elif gid not in app.model.pending or gid in self.deferred or not app.is_running:
            pass
        elif isinstance(app.screen, ModalScreen):
            self.queue.insert(0, gid)  # a dialog opened meanwhile: after it
            return
        else:
            app.clear_notifications()  # nothing may cover the question
            self.modal = GateModal(brief, app.now, blink=app.background)
            app.push_screen(self.modal, callback=self._answered)
            return
        self.show_next()

    def _answered(self, result) -> None:
        modal, self.modal = self.modal, None
        gid = modal.gate_id if modal is not None else None
        self.app.release_notices()
        if result is None or gid is None:
            return
        key = ids.fmt(ids.GATE, gid)
        if result.decision == "later":
            self.deferred.add(gid)
            self.app.notice(f"{key} left for later in Needs you — g answers it")
        elif result.decision == "gone":
            self.app.notice(f"{key} was answered elsewhere")
        else:
            self.app.actions.answer_gate(gid, result.decision, result.note, result.remember)
        self.app.call_later(self.show_next)
