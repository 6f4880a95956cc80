"""``n``: add a card. The form's text is validated exactly like ``loopx card
add`` (``loopx_core.shapes.inputs.validate("card", …)``); errors show under the form."""

from __future__ import annotations

import re

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.suggester import SuggestFromList
from textual.widgets import Checkbox, Input, Label, Static

from loopx_core.shapes.errors import LoopxError
from loopx_core.shapes.inputs import validate

from .base import LoopxModal

# (field, label, placeholder)
FIELDS = (
    ("title", "Title", "what the card is for (required)"),
    ("needs", "Needs", "scopes, e.g. git:push deploy:staging"),
    ("after", "After", "cards it waits on, e.g. LX-1 LX-2"),
    ("priority", "Priority", "0 (urgent) … 4, default 2"),
    ("owner", "Owner", "an agent id, or empty for anyone"),
    ("next", "Next", "the first action"),
    ("max_turns", "Max turns", "optional limit"),
    ("max_tokens", "Max tokens", "optional limit"),
    ("max_usd", "Max $", "optional limit"),
)


def _words(text: str) -> list[str]:
    return [w for w in re.split(r"[\s,]+", text.strip()) if w]


def card_data(values: dict[str, str], backlog: bool = False) -> dict:
    """The form's text as ``add_card`` data, validated (InvalidInput on error)."""
    raw: dict = {"title": values.get("title", "")}
    if values.get("needs", "").strip():
        raw["needs"] = _words(values["needs"])
    if values.get("after", "").strip():
        raw["after"] = _words(values["after"])
    for key in ("priority", "max_turns", "max_tokens", "max_usd"):
        if values.get(key, "").strip():
            raw[key] = values[key].strip()
    for key in ("owner", "next"):
        if values.get(key, "").strip():
            raw[key] = values[key].strip()
    if backlog:
        raw["backlog"] = True
    return validate("card", raw)


class BacklogBox(Checkbox):
    """A checkbox whose box is empty when unchecked (Textual's shows a dim X
    either way, which reads as "checked")."""

    BUTTON_INNER = " "

    def watch_value(self) -> None:
        self.BUTTON_INNER = "X" if self.value else " "
        super().watch_value()
        self.refresh()


class AddCardModal(LoopxModal):
    BINDINGS = [
        Binding("escape", "cancel", "Cancel", show=True),
        Binding("ctrl+s", "submit", "Add", show=True),
    ]

    def __init__(self, agents: list[str], blink: bool = True):
        super().__init__()
        self.agents = agents
        self._blink = blink

    def compose(self) -> ComposeResult:
        with Vertical(id="add-dialog", classes="dialog") as box:
            box.border_title = "New card"
            for key, label, hint in FIELDS:
                with Horizontal(classes="form-row"):
                    yield Label(label, classes="form-label")
                    suggester = (
                        SuggestFromList(self.agents, case_sensitive=False) if key == "owner" and self.agents else None
                    )
                    yield Input(placeholder=hint, id=f"f-{key}", compact=True, suggester=suggester)
            yield BacklogBox("park it in the backlog", id="f-backlog", compact=True)
            yield Static("", id="add-error", classes="form-error")
            yield Static("Enter add · Tab next field · Space ticks the box · Esc cancel", classes="dialog-keys")

    def on_mount(self) -> None:
        for box in self.query(Input):
            box.cursor_blink = self._blink
        self.set_focus(self.query_one("#f-title", Input))  # now, not later: keys typed ahead go here

    def values(self) -> dict[str, str]:
        return {key: self.query_one(f"#f-{key}", Input).value for key, _, _ in FIELDS}

    @on(Input.Submitted)
    def _submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.action_submit()

    def action_submit(self) -> None:
        try:
            data = card_data(self.values(), backlog=self.query_one("#f-backlog", Checkbox).value)
        except LoopxError as err:
            self.query_one("#add-error", Static).update(Text(err.message, style="bold red"))
            return
        self.dismiss(data)

    def action_cancel(self) -> None:
        self.dismiss(None)
