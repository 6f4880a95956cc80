"""``+``: raise a card's budget (turns, tokens, dollars) — resumes a paused card."""

from __future__ import annotations

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.widgets import Input, Label, Static

from loopx_core.shapes.errors import LoopxError
from loopx_core.shapes.inputs import validate
from loopx_core.shapes.values import CardView

from ..format import limit_text
from .base import LoopxModal

FIELDS = (
    ("add_turns", "+ turns", "e.g. 3"),
    ("add_tokens", "+ tokens", "e.g. 50000"),
    ("add_usd", "+ dollars", "e.g. 0.50"),
)


def budget_data(values: dict[str, str]) -> dict:
    """The form's text, validated like ``loopx card budget`` (InvalidInput on error)."""
    raw: dict = {}
    for key, text in values.items():
        text = text.strip()
        if text:
            raw[key] = text
    if not raw:
        raise LoopxError("nothing to add", "fill at least one of turns, tokens, dollars")
    data = validate("budget", raw)
    return {k: v for k, v in data.items() if v is not None}


class BudgetModal(LoopxModal):
    BINDINGS = [Binding("escape", "cancel", "Cancel", show=True)]

    def __init__(self, card: CardView, blink: bool = True):
        super().__init__()
        self.card = card
        self._blink = blink

    def compose(self) -> ComposeResult:
        card = self.card
        quota = card.quota
        with Vertical(id="budget-dialog", classes="dialog") as box:
            box.border_title = f"Raise the budget of {card.key}"
            state = f"{card.status}" + (f" ({card.paused_reason})" if card.paused_reason else "")
            yield Static(
                Text.assemble(
                    (card.title, "bold"),
                    f"  {state}\n",
                    ("turns ", "dim"),
                    limit_text("turns", quota.turns),
                    ("  tokens ", "dim"),
                    limit_text("tokens", quota.tokens),
                    ("  usd ", "dim"),
                    limit_text("usd", quota.usd),
                )
            )
            for key, label, hint in FIELDS:
                with Horizontal(classes="form-row"):
                    yield Label(label, classes="form-label")
                    yield Input(placeholder=hint, id=key, compact=True, restrict=r"[0-9.]*")
            yield Static("", id="budget-error", classes="form-error")
            yield Static("Enter raise · Tab next field · Esc cancel", classes="dialog-keys")

    def on_mount(self) -> None:
        for box in self.query(Input):
            box.cursor_blink = self._blink
        self.set_focus(self.query_one("#add_turns", Input))

    @on(Input.Submitted)
    def _submit(self, event: Input.Submitted) -> None:
        event.stop()
        values = {key: self.query_one(f"#{key}", Input).value for key, _, _ in FIELDS}
        try:
            data = budget_data(values)
        except LoopxError as err:
            self.query_one("#budget-error", Static).update(Text(err.message, style="bold red"))
            return
        self.dismiss(data)

    def action_cancel(self) -> None:
        self.dismiss(None)
