"""``t``: the trajectory of the whole board (from the board) or of one card
(from its screen) — the figures a person asks about a long loop, and the
plots. Read in a worker; kept current while agents write."""

from __future__ import annotations

import time

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import Static

from loopx_core.ops.trajectory import Figures, Trajectory, figures
from loopx_core.rules import ids
from loopx_core.rules.clock import human_delta

from ..format import tokens
from ..messages import BoardUpdated
from ..widgets.footer import KeyBar

RELOAD_EVERY = 5.0  # seconds: the whole board's timeline follows changes at most this often


def hours(h: float) -> str:
    return human_delta(h * 3600) if h < 48 else f"{h:,.0f}h"


def figures_text(f: Figures, board: bool = False) -> Text:
    """The figures a person asks about a long loop, in two lines. On the
    whole board, working and waiting add up over cards that run side by side."""
    t = Text()
    t.append(" lifecycle ", style="dim")
    t.append(hours(f.lifecycle_hours), style="bold")
    if board:
        t.append("  · summed over cards:", style="dim")
    t.append("  agents working ", style="dim")
    t.append(hours(f.agent_hours), style="bold green")
    t.append("  waiting for a person ", style="dim")
    t.append(hours(f.gate_wait_hours + f.paused_hours), style="bold yellow")
    t.append(f" (gates {hours(f.gate_wait_hours)}, paused {hours(f.paused_hours)})", style="dim")
    t.append("\n median time to answer a gate ", style="dim")
    t.append(human_delta(f.median_answer_seconds) if f.median_answer_seconds is not None else "—", style="bold")
    t.append(f" ({f.gates_answered} answered)", style="dim")
    t.append("  turns ", style="dim")
    t.append(f"{f.turns:,}", style="bold")
    t.append("  per day ", style="dim")
    t.append(f"{f.turns_per_day:,.1f}" if f.turns_per_day is not None else "— (under a day)", style="bold")
    t.append("  burned ", style="dim")
    t.append(f"{tokens(f.tokens)} tok ${f.usd:,.2f}", style="bold")
    return t


class TimelineScreen(Screen):
    BINDINGS = [
        Binding("escape,q", "back", "Back", tooltip="back"),
        Binding("r", "reload", "Reload", tooltip="read the timeline again"),
        Binding("question_mark", "app.help", "Help", tooltip="every key"),
    ]

    def __init__(self, reader, card_id: int | None, title: str):
        super().__init__()
        self.reader = reader
        self.card_id = card_id
        self.title_text = title
        self.trajectory: Trajectory | None = None
        self.loads = 0  # trajectories applied (tests wait on this)
        self._last_load = 0.0
        self._again = False

    def compose(self) -> ComposeResult:
        from ..widgets.timeline import BurnPlot, TrajectoryPlot

        what = ids.fmt(ids.CARD, self.card_id) if self.card_id is not None else "the whole board"
        yield Static(
            Text.assemble((" Timeline ", "bold reverse"), (f" {what} ", "bold"), (self.title_text, "")),
            id="timeline-header",
        )
        yield Static(Text(" reading the timeline…", style="dim"), id="timeline-figures")
        yield TrajectoryPlot(id="timeline-trajectory")
        yield BurnPlot(id="timeline-burn")
        yield KeyBar()

    def on_mount(self) -> None:
        self.action_reload()

    def action_reload(self) -> None:
        self._last_load = time.monotonic()
        self.run_worker(self._read, thread=True, group="reads", name="timeline", exclusive=True, exit_on_error=False)

    def _read(self) -> None:
        """Read, work out the figures and build both plots here, in the worker:
        the UI thread only puts the texts on screen."""
        from ..widgets.timeline import BurnPlot, TrajectoryPlot

        trajectory = self.reader.trajectory(self.card_id)
        text = figures_text(figures(trajectory), board=self.card_id is None)
        built = [plot.prebuild(trajectory) for plot in (self.query_one(TrajectoryPlot), self.query_one(BurnPlot))]
        self.app.call_from_thread(self._show, trajectory, text, built)

    def _show(self, trajectory: Trajectory, text: Text, built: list) -> None:
        from ..widgets.timeline import BurnPlot, TrajectoryPlot

        if not self.is_attached:
            return
        self.trajectory = trajectory
        self.query_one("#timeline-figures", Static).update(text)
        self.query_one(TrajectoryPlot).show(trajectory, built[0])
        self.query_one(BurnPlot).show(trajectory, built[1])
        self.loads += 1

    @on(BoardUpdated)
    def _board_updated(self, message: BoardUpdated) -> None:
        if self.card_id is not None and self.card_id not in message.touched:
            return
        wait = RELOAD_EVERY - (time.monotonic() - self._last_load) if self.card_id is None else 0
        if wait <= 0:
            self.action_reload()
        elif not self._again:
            self._again = True
            self.set_timer(wait, self._reload_later)

    def _reload_later(self) -> None:
        self._again = False
        self.action_reload()

    def action_back(self) -> None:
        self.app.pop_screen()
