"""Asking before an action that cannot be undone (cancelling a card): ``y``
does it, ``n`` or ``Esc`` keeps things as they are."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.widgets import Static

from .base import LoopxModal


class ConfirmModal(LoopxModal):
    AUTO_FOCUS = None

    BINDINGS = [
        Binding("y", "answer(True)", "Yes", tooltip="do it"),
        Binding("n,escape", "answer(False)", "No", tooltip="leave it as it is"),
    ]

    def __init__(self, question: str, detail: str, yes: str, no: str):
        super().__init__()
        self.question = question
        self.detail = detail
        self.yes = yes
        self.no = no

    def compose(self) -> ComposeResult:
        with Vertical(id="confirm-dialog", classes="dialog") as box:
            box.border_title = self.question
            yield Static(Text(self.detail, style="bold"), id="confirm-detail")
            yes_key, yes_label = self.yes.split(" ", 1)
            no_key, no_label = self.no.split(" ", 1)
            yield Static(
                Text.assemble(
                    (yes_key, "bold reverse"),
                    f" {yes_label} · ",
                    (no_key, "bold reverse"),
                    "/",
                    ("Esc", "bold reverse"),
                    f" {no_label}",
                ),
                classes="dialog-keys",
            )

    def action_answer(self, yes: bool) -> None:
        self.dismiss(yes)
