"""The columns side by side, and the one-line header above them."""

from __future__ import annotations

from typing import Callable, Iterable

from rich.text import Text
from textual.app import ComposeResult
from textual import events
from textual.containers import HorizontalScroll
from textual.widgets import Static

from loopx_core import clock

from ..runners import runner_text, summary
from ..state import OWNER, BoardModel
from .card import CardWidget
from .column import BoardColumn


MIN_COLUMN = 16  # cells; below this the board scrolls sideways (many agents in owner view)


class BoardView(HorizontalScroll, can_focus=False):
    """Owns one ``BoardColumn`` per column of the model's current mode. Columns
    share the width; with more columns than fit, the board scrolls sideways."""

    def __init__(self, model: BoardModel, now: Callable[[], float], **kw):
        super().__init__(**kw)
        self.model = model
        self._now = now
        self.columns: dict[str, BoardColumn] = {}

    def _make_columns(self) -> list[BoardColumn]:
        grouped = self.model.grouped()
        self.columns = {col.key: BoardColumn(col.key, col.title, self._now, grouped.get(col.key, [])) for col in self.model.columns()}
        self.show_runners()
        return list(self.columns.values())

    def show_runners(self) -> None:
        """Owner view: each agent's runner under its column's name."""
        now = self._now()
        for key, column in self.columns.items():
            column.set_subtitle(runner_text(self.model.runners.get(key), now) if self.model.mode == OWNER else "")

    def compose(self) -> ComposeResult:
        yield from self._make_columns()
        self._size_columns(self.size.width)

    def on_resize(self, event: events.Resize) -> None:
        self._size_columns(event.size.width)

    def _size_columns(self, width: int) -> None:
        columns = list(self.columns.values())
        if not columns or width <= 0:
            return
        each = max(MIN_COLUMN, width // len(columns))
        spare = max(0, width - each * len(columns)) if each * len(columns) <= width else 0
        for i, column in enumerate(columns):
            column.styles.width = each + (1 if i < spare else 0)

    def rebuild(self) -> None:
        """New columns (the view mode or the set of agents changed)."""
        self.set_class(self.model.mode == OWNER, "-owner")
        self.remove_children()
        self.mount_all(self._make_columns())
        self._size_columns(self.size.width)

    def sync(self, keys: Iterable[str] | None = None) -> bool:
        """Re-sync the given columns (all when None). Returns False when a
        column is missing, i.e. the caller should ``rebuild``."""
        keys = list(self.columns) if keys is None else list(keys)
        if any(k not in self.columns for k in keys):
            return False
        for key in keys:
            self.columns[key].sync(self.model.column_cards(key))
        return True

    def column(self, key: str) -> BoardColumn | None:
        return self.columns.get(key)

    def card_widget(self, card_id: int) -> CardWidget | None:
        for column in self.columns.values():
            widget = column.widgets.get(card_id)
            if widget is not None:
                return widget
        return None

    def column_of_widget(self, widget: CardWidget) -> BoardColumn | None:
        for column in self.columns.values():
            if column.widgets.get(widget.card.id) is widget:
                return column
        return None

    def set_hints(self, hints: dict[str, str]) -> None:
        for key, column in self.columns.items():
            column.set_hint(hints.get(key, ""))

    def tick(self) -> None:
        for column in self.columns.values():
            column.tick()
        if self.model.runners:
            self.show_runners()


class BoardHeader(Static):
    """Objective, counts, gates waiting, view mode and filter — no clock, so
    a snapshot never changes with the time of day."""

    def __init__(self, now=None, **kw):
        super().__init__("", **kw)
        self.note = ""
        self._now = now or clock.now

    def show(self, model: BoardModel, demo: bool = False) -> None:
        counts = model.counts()
        text = Text()
        text.append(" LoopX ", style="bold reverse")
        if demo:
            text.append(" demo ", style="bold")
        if model.objective:
            text.append(f" {model.objective} ", style="bold")
        text.append(f" {len(model.cards)} cards", style="dim")
        needs = counts.get("needs_you", 0)
        gates = len(model.pending)
        if gates:
            text.append(f"  ⚑ {gates} gate{'s' if gates != 1 else ''}", style="bold yellow")
        if needs:
            text.append(f"  {needs} need you", style="yellow")
        running = summary(model.runners.values(), self._now()) if model.runners else ""
        if running:
            text.append(f"  {running}", style="cyan")
        text.append(f"  view:{model.mode}", style="dim")
        if model.query.active:
            text.append(f"  filter: {model.query.text}", style="bold cyan")
        if self.note:
            text.append(f"  {self.note}", style="bold reverse")
        self.update(text)
