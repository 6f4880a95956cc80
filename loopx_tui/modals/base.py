"""What every LoopX dialog shares.

Keys typed fast after the key that opens a dialog reach the app before the
dialog has a focused field. The app holds them (``LoopxApp.on_event``) until
the dialog says it is ready (``DialogReady``, sent once its first field has
focus), then delivers them in order: "n, the title, Tab, the scopes" lands
in the right fields however fast it is typed. A dialog that must not take
keys typed before it appeared (the gate dialog: a ``y`` meant for something
else must never approve a gate) sets ``TYPE_AHEAD = False``: they are dropped.
Once ready, a dialog may still drop a key (``drops``: the gate dialog's
answer keys before it is armed).
"""

from __future__ import annotations

from textual import events
from textual.screen import ModalScreen

from ..messages import DialogClosed, DialogReady


class LoopxModal(ModalScreen):
    """A dialog; when it closes, a gate that arrived meanwhile may pop."""

    TYPE_AHEAD = True

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.ready = False
        self.early_keys: list[events.Key] = []

    def on_mount(self) -> None:
        self.call_after_refresh(self._ready)

    def drops(self, key: str) -> bool:
        """Whether the app drops ``key`` instead of delivering it (the dialog is ready)."""
        return False

    def _ready(self) -> None:
        if self.is_attached:
            self.app.post_message(DialogReady(self))

    def on_unmount(self) -> None:
        if self.app.is_running:
            self.app.post_message(DialogClosed())
