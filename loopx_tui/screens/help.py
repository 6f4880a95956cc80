"""``?``: every key, per screen, generated from the screens' own bindings."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.widgets import Static

from ..modals.base import LoopxModal

MOUSE = (
    ("click a card", "open it"),
    ("drag a card", "move it to that column (status view: ready / cancel; owner view: reassign with a handoff packet)"),
    ("Esc while dragging", "cancel the drag"),
)

FILTER = (
    ("words", "match id, title, owner, status, scopes, next action"),
    ("@agent  owner:agent", "cards of that agent (@none for unassigned)"),
    ("status:waiting  is:paused", "by status or column (ready, active, needs_you, blocked, done)"),
)


def _keys(app, binding: Binding) -> str:
    parts = []
    for key in binding.key.split(","):
        parts.append(app.get_key_display(Binding(key.strip(), binding.action, binding.description)))
    return " ".join(parts)


def _section(app, title: str, bindings) -> Table:
    table = Table.grid(padding=(0, 2))
    table.add_column(style="bold", no_wrap=True, min_width=14)
    table.add_column()
    for binding in bindings:
        if isinstance(binding, Binding) and binding.description:
            table.add_row(_keys(app, binding), binding.tooltip or binding.description)
    return table


def help_renderables(app) -> list:
    from .artifact import ArtifactScreen
    from .board import BoardScreen
    from .card import CardScreen
    from ..modals.gate import GateModal
    from ..widgets.evidence_log import EvidenceLog

    out: list = []
    for title, bindings in (
        ("Board", BoardScreen.BINDINGS),
        ("Gate dialog", GateModal.BINDINGS),
        ("Card screen", CardScreen.BINDINGS + EvidenceLog.BINDINGS + [Binding("enter", "", "open the highlighted artifact (▸) in the viewer")]),
        ("Artifact viewer", ArtifactScreen.BINDINGS),
    ):
        out.append(Text(f"\n{title}", style="bold underline"))
        out.append(_section(app, title, bindings))
    out.append(Text("\nMouse", style="bold underline"))
    mouse = Table.grid(padding=(0, 2))
    mouse.add_column(style="bold", no_wrap=True, min_width=14)
    mouse.add_column()
    for a, b in MOUSE:
        mouse.add_row(a, b)
    out.append(mouse)
    out.append(Text("\nFilter ( / )", style="bold underline"))
    filt = Table.grid(padding=(0, 2))
    filt.add_column(style="bold", no_wrap=True, min_width=14)
    filt.add_column()
    for a, b in FILTER:
        filt.add_row(a, b)
    out.append(filt)
    out.append(Text("\nctrl+p opens the command palette. Gates you answer are recorded as " + getattr(app, "human", "human:you") + ".", style="dim"))
    return out


class HelpScreen(LoopxModal):
    BINDINGS = [Binding("escape,q,question_mark", "close", "Close", show=True)]

    def compose(self) -> ComposeResult:
        from rich.console import Group

        with VerticalScroll(id="help-dialog", classes="dialog") as box:
            box.border_title = "LoopX keys"
            yield Static(Group(*help_renderables(self.app)), id="help-text")

    def action_close(self) -> None:
        self.dismiss(None)
