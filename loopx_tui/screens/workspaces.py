"""The board's workspaces (#26): each card's git worktree with its size on
disk, age and whether its folder may go without losing anything; the total
against the person's cap. Read in a worker (git and the file system)."""

from __future__ import annotations

from rich.console import JustifyMethod
from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import Static

from loopx_core.ops.workspace_cap import human_size
from loopx_core.rules.clock import human_delta
from loopx_core.shapes.errors import LoopxError

from ..messages import Refused
from ..widgets.footer import KeyBar


def size_text(n: int | None) -> str:
    return "gone" if n is None else human_size(n)


def workspaces_table(found) -> Table:
    table = Table(box=None, pad_edge=False, show_edge=False, padding=(0, 2, 0, 0), header_style="bold")
    columns: tuple[tuple[str, JustifyMethod], ...] = (
        ("card", "left"),
        ("state", "left"),
        ("card is", "left"),
        ("branch", "left"),
        ("size", "right"),
        ("age", "right"),
        ("may go", "left"),
    )
    for name, justify in columns:
        table.add_column(name, justify=justify, no_wrap=True)
    for w in found:
        table.add_row(
            w.key,
            w.state,
            w.card_status or "—",
            w.branch,
            size_text(w.size),
            human_delta(w.age),
            Text(w.removable or "no: not merged or archived", style="green" if w.removable else "yellow"),
        )
    return table


class WorkspacesScreen(Screen):
    BINDINGS = [
        Binding("escape,q", "back", "Back", tooltip="back"),
        Binding("r", "reload", "Reload", tooltip="measure the workspaces again"),
    ]

    def __init__(self, reader):
        super().__init__()
        self.reader = reader
        self.found: list = []
        self.loads = 0  # reads applied (tests wait on this)

    def compose(self) -> ComposeResult:
        yield Static(
            Text.assemble((" Workspaces ", "bold reverse"), " each card's git worktree"), id="workspaces-header"
        )
        with VerticalScroll(id="workspaces-body"):
            yield Static(Text("measuring the workspaces…", style="dim"), id="workspaces-table")
        yield Static(id="workspaces-total")
        yield KeyBar()

    def on_mount(self) -> None:
        self.action_reload()

    def action_reload(self) -> None:
        def read() -> None:
            try:
                found, cap = self.reader.workspaces()
            except LoopxError as err:
                self.app.post_message(Refused(err.message, err.hint or ""))
                return
            self.app.call_from_thread(self._show, found, cap)

        self.run_worker(read, thread=True, group="reads", name="workspaces", exit_on_error=False)

    def _show(self, found: list, cap: int | None) -> None:
        if not self.is_attached:
            return
        self.found = found
        body = (
            workspaces_table(found)
            if found
            else Text(
                "No workspaces: a card gets one at its first turn when the project is a git repository.", style="dim"
            )
        )
        self.query_one("#workspaces-table", Static).update(body)
        total = sum(w.size or 0 for w in found)
        line = Text.assemble(" total ", (size_text(total), "bold"))
        if cap:
            line.append(f" of a {size_text(cap)} cap", style="bold red" if total >= cap else "")
        else:
            line.append(" · no cap (`loopx workspace cap 20G`)", style="dim")
        line.append(" · `loopx workspace gc` removes what may go", style="dim")
        self.query_one("#workspaces-total", Static).update(line)
        self.loads += 1

    def action_back(self) -> None:
        self.app.pop_screen()
