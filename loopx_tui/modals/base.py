"""What every LoopX dialog shares."""

from __future__ import annotations

from textual.screen import ModalScreen

from ..messages import DialogClosed


class LoopxModal(ModalScreen):
    """A dialog; when it closes, a gate that arrived meanwhile may pop."""

    def on_unmount(self) -> None:
        if self.app.is_running:
            self.app.post_message(DialogClosed())
