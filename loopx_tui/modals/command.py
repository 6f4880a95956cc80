"""``:``: a person's command, typed as at the terminal (``card edit LX-3
--verify 'pytest -q'``, ``notify set -- /usr/bin/notify-send LoopX``,
``notify test``, ``workspace cap 20G``, ``price set …``, ``dangerous set …``,
``agent add …``), run by the verb's own handler under the board's unlock
(``loopx_core.cli.in_board``): the CLI's validation and signature, no
passphrase. ``e``: the edit form of the selected card, which runs ``card edit``
the same way."""

from __future__ import annotations

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.suggester import SuggestFromList
from textual.widgets import Input, Label, Static

from loopx_core.cli.in_board import SUGGESTIONS, words
from loopx_core.shapes.errors import LoopxError
from loopx_core.shapes.values import CardView

from .base import LoopxModal


class CommandModal(LoopxModal):
    """One line; dismissed with its words (the verb checks them when it runs)."""

    BINDINGS = [Binding("escape", "cancel", "Cancel", show=True)]

    def __init__(self, line: str = "", blink: bool = True):
        super().__init__()
        self.line = line
        self._blink = blink

    def compose(self) -> ComposeResult:
        with Vertical(id="command-dialog", classes="dialog") as box:
            box.border_title = "A person's command (signed with the board's unlock)"
            yield Input(
                value=self.line,
                placeholder="e.g. notify test · workspace cap 20G · card edit LX-3 --verify 'pytest -q'",
                id="command-line",
                compact=True,
                suggester=SuggestFromList(SUGGESTIONS, case_sensitive=False),
            )
            yield Static("", id="command-error", classes="form-error")
            yield Static(
                "Enter run · → takes the suggestion · Esc cancel · the verbs of `loopx --help` a person decides with",
                classes="dialog-keys",
            )

    def on_mount(self) -> None:
        box = self.query_one("#command-line", Input)
        box.cursor_blink = self._blink
        self.set_focus(box)

    @on(Input.Submitted)
    def _submitted(self, event: Input.Submitted) -> None:
        event.stop()
        try:
            argv = words(event.value)
        except LoopxError as err:
            self.query_one("#command-error", Static).update(Text(err.message, style="bold red"))
            return
        self.dismiss(argv)

    def action_cancel(self) -> None:
        self.dismiss(None)


EDIT_FIELDS = (("title", "Title"), ("body", "Objective"), ("next", "Next"), ("verify", "Verify"))


def edit_argv(card: CardView, values: dict[str, str]) -> list[str]:
    """``card edit`` with what the form changed (an emptied next or verify clears it)."""
    argv = ["card", "edit", card.key]
    was = {"title": card.title, "body": card.body or "", "next": card.next_action or "", "verify": card.verify or ""}
    for key, _ in EDIT_FIELDS:
        if values[key] != was[key]:
            argv += [f"--{key}", values[key]]
    return argv


class EditCardModal(LoopxModal):
    """``e``: a card's title, objective, next action and verify command."""

    BINDINGS = [Binding("escape", "cancel", "Cancel", show=True), Binding("ctrl+s", "submit", "Save", show=True)]

    def __init__(self, card: CardView, blink: bool = True):
        super().__init__()
        self.card = card
        self._blink = blink

    def compose(self) -> ComposeResult:
        card = self.card
        now = {
            "title": card.title,
            "body": card.body or "",
            "next": card.next_action or "",
            "verify": card.verify or "",
        }
        with Vertical(id="edit-dialog", classes="dialog") as box:
            box.border_title = f"Edit {card.key}"
            for key, label in EDIT_FIELDS:
                with Horizontal(classes="form-row"):
                    yield Label(label, classes="form-label")
                    yield Input(value=now[key], id=f"e-{key}", compact=True)
            yield Static("", id="edit-error", classes="form-error")
            yield Static(
                "Enter save · Tab next field · an empty Next or Verify clears it · Esc cancel", classes="dialog-keys"
            )

    def on_mount(self) -> None:
        for box in self.query(Input):
            box.cursor_blink = self._blink
        self.set_focus(self.query_one("#e-title", Input))

    @on(Input.Submitted)
    def _submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.action_submit()

    def action_submit(self) -> None:
        argv = edit_argv(self.card, {key: self.query_one(f"#e-{key}", Input).value for key, _ in EDIT_FIELDS})
        if len(argv) == 3:
            self.query_one("#edit-error", Static).update(Text("nothing changed", style="bold red"))
            return
        self.dismiss(argv)

    def action_cancel(self) -> None:
        self.dismiss(None)
