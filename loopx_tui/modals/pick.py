"""Pick one of a few choices (the agent to reassign a card to)."""

from __future__ import annotations

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from .base import LoopxModal


class PickModal(LoopxModal):
    BINDINGS = [Binding("escape", "cancel", "Cancel", show=True)]

    def __init__(self, title: str, choices: list[tuple[str, str]], current: str | None = None):
        super().__init__()
        self.title_text = title
        self.choices = choices
        self.current = current

    def compose(self) -> ComposeResult:
        with Vertical(id="pick-dialog", classes="dialog") as box:
            box.border_title = self.title_text
            options = [
                Option(label + ("  (now)" if value == self.current else ""), id=value, disabled=value == self.current)
                for value, label in self.choices
            ]
            yield OptionList(*options, id="pick-options")
            yield Static("↑↓ choose · Enter pick · Esc cancel", classes="dialog-keys")

    def on_mount(self) -> None:
        options = self.query_one(OptionList)
        for index, (value, _) in enumerate(self.choices):
            if value != self.current:
                options.highlighted = index
                break
        self.set_focus(options)

    @on(OptionList.OptionSelected)
    def _picked(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.dismiss(event.option.id)

    def action_cancel(self) -> None:
        self.dismiss(None)
