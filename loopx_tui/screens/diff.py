"""A card's whole diff over the merge gate that asks to bring it in (``d`` in
the gate dialog): exactly the diff the gate pinned. Esc goes back to the dialog, whose answer keys wait a second
again: a key meant for the diff never answers the gate."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import Static

from ..widgets.diff_view import DiffView
from ..widgets.footer import KeyBar


class DiffScreen(Screen):
    BINDINGS = [
        Binding("escape,q", "back", "Back", tooltip="back to the gate"),
    ]

    def __init__(self, card_id: int, title: Text, reader, gate_id: int | None = None):
        super().__init__()
        self.card_id = card_id
        self.gate_id = gate_id  # the gate's pinned diff: exactly what it asks about
        self.title_text = title
        self.reader = reader

    def compose(self) -> ComposeResult:
        yield Static(self.title_text, id="diff-title")
        yield DiffView(self.card_id, self.reader, self.gate_id, id="diff-view")
        yield KeyBar()

    def on_mount(self) -> None:
        view = self.query_one(DiffView)
        view.load()
        view.focus_patch()

    def action_back(self) -> None:
        self.app.pop_screen()
