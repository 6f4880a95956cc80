"""What every LoopX dialog shares."""

from __future__ import annotations

from textual.screen import ModalScreen


class LoopxModal(ModalScreen):
    """A dialog; when it closes, a gate that arrived meanwhile may pop."""

    def on_unmount(self) -> None:
        closed = getattr(self.app, "dialog_closed", None)
        if closed is not None:
            closed()
