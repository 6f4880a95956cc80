"""Shown instead of the board when there is none (or it cannot be opened)."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Center, Middle
from textual.screen import Screen
from textual.widgets import Static

from loopx_core.shapes.errors import LoopxError
from loopx_core.store.discovery import BoardLocation

from ..messages import BoardsWanted


def no_board_text(error: LoopxError, location: BoardLocation | None) -> Text:
    text = Text()
    text.append("No LoopX board here\n\n", style="bold")
    text.append(error.message + "\n")
    if location is not None:
        text.append(f"(looked at {location.describe()}, from {location.source})\n", style="dim")
    text.append("\nCreate one in your project folder:\n")
    text.append('    loopx init --objective "What this board is for"\n', style="bold")
    text.append("or open another:  ", style="")
    text.append("loopx --db PATH", style="bold")
    text.append("   ·   try a demo:  ", style="")
    text.append("loopx demo\n", style="bold")
    if error.hint and "init" not in error.hint:
        text.append(f"\n→ {error.hint}\n", style="dim")
    text.append("\nB your other boards   ·   q quits", style="dim")
    return text


class NoBoardScreen(Screen):
    BINDINGS = [
        Binding("q,escape", "app.quit", "Quit", show=True),
        Binding("B", "boards", "Your boards", tooltip="your other boards; Enter opens one in this pane"),
    ]

    def __init__(self, error: LoopxError, location: BoardLocation | None):
        super().__init__()
        self.error = error
        self.location = location

    def action_boards(self) -> None:
        self.app.post_message(BoardsWanted())

    def compose(self) -> ComposeResult:
        with Middle():
            with Center():
                yield Static(no_board_text(self.error, self.location), id="no-board")
