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


def _pairs(rows) -> Table:
    """Two columns: what to press (bold), what it does."""
    table = Table.grid(padding=(0, 2))
    table.add_column(style="bold", no_wrap=True, min_width=14)
    table.add_column()
    for key, what in rows:
        table.add_row(key, what)
    return table


def _section(app, bindings) -> Table:
    return _pairs((_keys(app, b), b.tooltip or b.description) for b in bindings if isinstance(b, Binding) and b.description)


def help_renderables(app) -> list:
    from .artifact import ArtifactScreen
    from .board import BoardScreen
    from .card import CardScreen
    from .timeline import TimelineScreen
    from ..modals.confirm import ConfirmModal
    from ..modals.gate import GateModal
    from ..widgets.evidence_log import EvidenceLog

    out: list = []
    for title, bindings in (
        ("Board", BoardScreen.BINDINGS),
        ("Gate dialog", GateModal.BINDINGS),
        ("Card screen", CardScreen.BINDINGS + EvidenceLog.BINDINGS),
        ("Artifact viewer", ArtifactScreen.BINDINGS),
        ("Timeline", TimelineScreen.BINDINGS),
        ("Cancelling a card", ConfirmModal.BINDINGS),
    ):
        out.append(Text(f"\n{title}", style="bold underline"))
        out.append(_section(app, bindings))
    out.append(Text("\nMouse", style="bold underline"))
    out.append(_pairs(MOUSE))
    out.append(Text("\nFilter ( / )", style="bold underline"))
    out.append(_pairs(FILTER))
    out.append(Text("\nctrl+p opens the command palette (bell and desktop notifications for new gates are switched there, or with LOOPX_BELL=0 / LOOPX_DESKTOP_NOTIFY=0). Gates you answer are recorded as " + getattr(app, "human", "human:you") + ".", style="dim"))
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
