"""``?``: every key, per screen, generated from the screens' own bindings.

The text is rich tables (a column of keys, one of what they do), laid out
once per width and kept (``help_lines``): a ``Static`` laid them out three
times each time the screen opened (its width, its height, its lines). The
help is ``WIDTH`` columns wide wherever the terminal has room (the dialog fits
around it), so the app lays it out ahead, after the board's first paint: the
first ``?`` only draws it."""

from __future__ import annotations

import io

from rich.console import Console, Group
from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.geometry import Size
from textual.strip import Strip
from textual.widget import Widget

from ..modals.base import LoopxModal

MOUSE = (
    ("click a card", "open it"),
    ("drag a card", "move it to that column (status view: ready / cancel; owner view: reassign with a handoff packet)"),
    ("Esc while dragging", "cancel the drag"),
    (
        "a column's scrollbar",
        "drag its thumb to scroll; click above or below it for a page (PgUp / PgDn); the wheel scrolls too",
    ),
    ("+N more (a column's foot)", "click: the next cards (↓ past the last one)"),
    ("click a board (B's list)", "switch this pane to it (Enter)"),
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
    return _pairs(
        (_keys(app, b), b.tooltip or b.description) for b in bindings if isinstance(b, Binding) and b.description
    )


def help_renderables(app) -> list:
    from ..modals.boards import BoardsModal
    from ..modals.confirm import ConfirmModal
    from ..modals.gate import GateModal
    from ..widgets.diff_view import DiffView
    from ..widgets.evidence_log import EvidenceLog
    from .artifact import ArtifactScreen
    from .board import BoardScreen
    from .card import CardScreen
    from .timeline import TimelineScreen
    from .tries import TriesScreen
    from .workspaces import WorkspacesScreen

    out: list = []
    for title, bindings in (
        ("Board", BoardScreen.BINDINGS),
        ("Gate dialog", GateModal.BINDINGS),
        ("Card screen", CardScreen.BINDINGS + EvidenceLog.BINDINGS + DiffView.BINDINGS),
        ("Artifact viewer", ArtifactScreen.BINDINGS),
        ("Timeline", TimelineScreen.BINDINGS),
        ("Tries", TriesScreen.BINDINGS),
        ("Workspaces", WorkspacesScreen.BINDINGS),
        ("Your boards ( B )", BoardsModal.BINDINGS),
        ("Cancelling a card", ConfirmModal.BINDINGS),
    ):
        out.append(Text(f"\n{title}", style="bold underline"))
        out.append(_section(app, bindings))
    out.append(Text("\nMouse", style="bold underline"))
    out.append(_pairs(MOUSE))
    out.append(Text("\nFilter ( / )", style="bold underline"))
    out.append(_pairs(FILTER))
    out.append(
        Text(
            "\nctrl+p opens the command palette (bell and desktop notifications for new gates are switched there, or with LOOPX_BELL=0 / LOOPX_DESKTOP_NOTIFY=0). Gates you answer are recorded as "
            + getattr(app, "human", "human:you")
            + ".",
            style="dim",
        )
    )
    return out


_LAID_OUT: dict[tuple[int, str], list[Strip]] = {}  # (width, who signs) → the help's lines
WIDTH = 92  # the help's columns (fewer on a narrow terminal: laid out then for its width)


def help_lines(app, width: int) -> list[Strip]:
    """The help laid out ``width`` cells wide (kept: the keys never change
    while the app runs; the person's name is in the last line)."""
    key = (width, getattr(app, "human", ""))
    lines = _LAID_OUT.get(key)
    if lines is None:
        console = Console(
            width=width, file=io.StringIO(), color_system="truecolor", force_terminal=True, legacy_windows=False
        )
        rendered = console.render_lines(Group(*help_renderables(app)), console.options.update_width(width), pad=False)
        lines = _LAID_OUT[key] = [Strip(line) for line in rendered]
    return lines


class HelpText(Widget):
    """The help's lines (``help_lines``), ``WIDTH`` wide and as tall as they are."""

    def get_content_width(self, container: Size, viewport: Size) -> int:
        return WIDTH

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        return len(help_lines(self.app, width))

    def render_line(self, y: int) -> Strip:
        width = self.content_size.width
        lines = help_lines(self.app, width)
        return lines[y].extend_cell_length(width) if y < len(lines) else Strip.blank(width)

    @property
    def text(self) -> str:
        """The help as shown (tests and the curious)."""
        return "\n".join(line.text.rstrip() for line in help_lines(self.app, self.content_size.width))


class HelpScreen(LoopxModal):
    BINDINGS = [Binding("escape,q,question_mark", "close", "Close", show=True)]

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="help-dialog", classes="dialog") as box:
            box.border_title = "LoopX keys"
            box.border_subtitle = "Esc/? close"  # (the board's footer, which would say so, is under the dialog)
            yield HelpText(id="help-text")

    def action_close(self) -> None:
        self.dismiss(None)
