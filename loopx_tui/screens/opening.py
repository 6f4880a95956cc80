"""What the pane shows while it opens another of the person's boards (``B``, Enter)."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.screen import Screen
from textual.widgets import Static


class OpeningScreen(Screen):
    def __init__(self, where: str):
        super().__init__()
        self.where = where

    def compose(self) -> ComposeResult:
        yield Static(Text.assemble((" LoopX ", "bold reverse"), f"  opening {self.where}…"), id="opening")
