"""The columns side by side, and the one-line header above them."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.containers import Container, HorizontalScroll
from textual.widgets import Static

from loopx_core.rules import ids

from ..format import ellipsize
from ..runners import runner_variants
from ..state import OWNER, BoardModel
from .card_list import CardList
from .column import BoardColumn
from .line import Line

MIN_COLUMN = 16  # cells; below this the board scrolls sideways (many agents in owner view)


class ModeColumns(HorizontalScroll, can_focus=False, inherit_bindings=False):
    """The columns of one view mode, side by side. They share the width; with
    more columns than fit, they scroll sideways."""

    def __init__(self, mode: str, columns: dict[str, BoardColumn]):
        super().__init__(*columns.values(), classes="mode-columns")
        self.mode = mode
        self.columns = columns

    def on_resize(self, event: events.Resize) -> None:
        self.size_columns(event.size.width)

    _sized: tuple[int, int] | None = None  # (width, columns) the columns were sized for

    def size_columns(self, width: int) -> None:
        columns = list(self.columns.values())
        if not columns or width <= 0 or self._sized == (width, len(columns)):
            return  # (shown again at the same size: setting a width lays the screen out again)
        self._sized = (width, len(columns))
        each = max(MIN_COLUMN, width // len(columns))
        spare = max(0, width - each * len(columns)) if each * len(columns) <= width else 0
        for i, column in enumerate(columns):
            column.styles.width = each + (1 if i < spare else 0)


class BoardView(Container, can_focus=False):
    """One ``ModeColumns`` per view mode, built the first time it is shown and
    kept: switching modes hides one container and shows the other (one style
    change, no remount), after bringing the shown one up to date if the board
    changed while it was hidden."""

    def __init__(self, model: BoardModel, now: Callable[[], float], **kw):
        super().__init__(**kw)
        self.model = model
        self._now = now
        self.views: dict[str, ModeColumns] = {}
        self._stale: set[str] = set()  # modes whose hidden columns missed changes

    @property
    def columns(self) -> dict[str, BoardColumn]:
        view = self.views.get(self.model.mode)
        return view.columns if view is not None else {}

    def _make_view(self) -> ModeColumns:
        model = self.model
        columns = {
            col.key: BoardColumn(
                col.key,
                col.title,
                self._now,
                model.column_cards(col.key),
                total=model.column_total(col.key),
                unread=model.unread(col.key),
            )
            for col in model.columns()
        }
        view = ModeColumns(self.model.mode, columns)
        if self.is_attached and self.app.size.width:
            # Sized before its first layout (the board is the screen's width): sized
            # only once shown, it was laid out and drawn twice before the first paint.
            view.size_columns(self.app.size.width)
        self.views[self.model.mode] = view
        self._stale.discard(self.model.mode)
        self.show_runners()
        return view

    def prebuild(self, mode: str) -> None:
        """Build ``mode``'s columns now, hidden (its first cards were read
        ahead after the first paint): the first switch to it only shows them,
        instead of building ~20 widgets while the person waits."""
        if mode in self.views or not self.is_attached:
            return
        shown = self.model.mode
        self.model.mode = mode  # (the model answers for its current mode; put back below, nothing runs in between)
        try:
            view = self._make_view()
        finally:
            self.model.mode = shown
        view.display = False
        self.mount(view)

    def show_runners(self) -> None:
        """Owner view: each agent's runner next to its column's name."""
        view = self.views.get(OWNER)
        if view is not None:
            now = self._now()
            for key, column in view.columns.items():
                column.set_runner(runner_variants(self.model.runners.get(key), now))

    def compose(self) -> ComposeResult:
        yield self._make_view()

    def switch(self) -> None:
        """Show the columns of the model's (new) mode, building them the first time."""
        mode = self.model.mode
        current = self.views.get(mode)
        if current is not None and [c.key for c in self.model.columns()] != list(current.columns):
            current.remove()  # the set of agents changed while it was hidden
            del self.views[mode]
            current = None
        for other, view in self.views.items():
            if other != mode:
                view.display = False
        if current is None:
            self.mount(self._make_view())
        else:
            current.display = True
            if mode in self._stale:
                self._stale.discard(mode)
                self.sync()

    def stale(self, mode: str) -> None:
        """``mode``'s columns (hidden now) are brought up to date when next shown."""
        if mode in self.views:
            self._stale.add(mode)

    def rebuild(self) -> None:
        """New columns for the current mode (the set of agents changed); the
        other mode's are dropped and built again when next shown."""
        self.remove_children()
        self.views.clear()
        self._stale.clear()
        self.mount(self._make_view())

    def sync(self, keys: Iterable[str] | None = None) -> bool:
        """Re-sync the given columns (all when None). Returns False when a
        column is missing, i.e. the caller should ``rebuild``."""
        keys = list(self.columns) if keys is None else list(keys)
        if any(k not in self.columns for k in keys):
            return False
        model = self.model
        for key in keys:
            self.columns[key].sync(model.column_cards(key), model.column_total(key), model.unread(key))
        self._stale.update(m for m in self.views if m != self.model.mode)
        return True

    def column(self, key: str) -> BoardColumn | None:
        return self.columns.get(key)

    def column_of_card(self, card_id: int) -> BoardColumn | None:
        """The shown column that holds the card (None: not in hand, or filtered out)."""
        for column in self.columns.values():
            if column.body.index_of(card_id) is not None:
                return column
        return None

    def column_of_list(self, cards: CardList) -> BoardColumn | None:
        for column in self.columns.values():
            if column.body is cards:
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


class BoardHeader(Line):
    """Who you are, the objective, then the status: counts, gates waiting,
    who needs you, the runners, view mode and filter — no clock, so a
    snapshot never changes with the time of day. ``refusal`` says when the
    person's actions are refused (a read-only or locked board). On a narrow
    terminal the objective gives way (cut with "…"), never the status."""

    def __init__(self, **kw):
        super().__init__("", **kw)
        self.note = ""
        self._parts: tuple = (Text(), "", (), None)
        self.everywhere: tuple[int, int] | None = None

    def show(
        self,
        model: BoardModel,
        demo: bool = False,
        refusal: str | None = None,
        person: str | None = None,
        runners: tuple[str, str] = ("", ""),
        waiting: Sequence[int] = (),
        everywhere: tuple[int, int] | None = None,
    ) -> None:
        """``runners``: the runners' summary, long and short; ``waiting``: the gates
        queued behind the person's typing (named first: never cut at 80 columns)."""
        lead = Text()
        lead.append(" LoopX ", style="bold reverse")
        if waiting:  # the gates not on screen, and the key that opens them
            more = f" +{len(waiting) - 1}" if len(waiting) > 1 else ""
            lead.append(f" ⚑ {ids.fmt(ids.GATE, waiting[0])}{more} waiting — g ", style="bold reverse yellow")
        if demo:
            lead.append(" demo ", style="bold")
        if refusal:
            lead.append(f" {refusal} ", style="bold reverse")
        elif person:
            lead.append(f" as {person} ", style="dim")  # the key unlocked for this session signs what you decide
        self.everywhere = everywhere
        parts = (
            lead,
            model.objective or "",
            tuple(self._status(model, said, bool(waiting)) for said in runners),
            everywhere,
        )
        if parts != self._parts:
            self._parts = parts
            self.refresh()

    def _status(self, model: BoardModel, runners: str, waiting: bool) -> Text:
        status = Text()
        n = model.total()
        status.append(f" {n} card{'' if n == 1 else 's'}", style="dim")
        needs = model.counts().get("needs_you", 0)
        gates = len(model.pending)
        if gates and not waiting:  # (a waiting gate is named in the lead)
            status.append(f"  ⚑ {gates} gate{'s' if gates != 1 else ''}", style="bold yellow")
        if needs:
            status.append(f"  {needs} need you", style="yellow")
        if self.everywhere is not None:  # every board of the person's, this one included (B lists them)
            total, boards = self.everywhere
            status.append(f"  Σ{total} on {boards} boards (B)", style="bold magenta" if total else "dim")
        if runners:
            status.append(f"  {runners}", style="cyan")
        status.append(f"  view:{model.mode}", style="dim")
        if model.query.active:
            status.append(f"  filter: {model.query.text}", style="bold cyan")
            for error in model.query.errors:
                status.append(f"  ✗ {error}", style="bold red")
        if self.note:
            status.append(f"  {self.note}", style="bold reverse")
        return status

    def render(self) -> Text:
        lead, objective, statuses, _ = self._parts
        width = self.size.width
        text = lead.copy()
        status = next(
            (s for s in statuses if text.cell_len + s.cell_len <= width), statuses[-1] if statuses else Text()
        )
        room = width - text.cell_len - status.cell_len - 2
        if objective and room >= 4:  # (less than that says nothing)
            text.append(f" {ellipsize(objective, room)} ", style="bold")
        text.append_text(status)
        text.no_wrap, text.overflow = True, "ellipsis"
        return text

    def on_resize(self) -> None:
        self.refresh()


class BoardBanner(Static):
    """One line under the header that cannot be missed (hidden when empty).
    The board mounts it the first time it has something to say."""

    def say(self, text: str | None) -> None:
        self.update(Text(f" {text} ", style="bold") if text else "")
        self.display = bool(text)
