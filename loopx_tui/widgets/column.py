"""A board column: a header with the count, the cards, and "+N more".

The header and "+N more" are the column's own border title and subtitle
(a ``panel`` top edge, a blank bottom one): a column is two widgets (itself
and its scrolling body), not four — each widget is a message pump of its own,
and mounting and laying one out cost the board ~3 ms (the owner view has a
column per agent).

The count is the store's (the board holds only the first cards of each
column); going down past the last card in hand asks the app to read on
(``ColumnWanted``). A column of history (Done) starts with its count only.

``sync`` brings the column to a new list of cards by diffing against the
widgets it has: unchanged cards are left alone, changed ones re-render in
place, new ones are mounted at their position, gone ones removed. A column
never remounts wholesale on a change."""

from __future__ import annotations

import re
from typing import Callable

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical, VerticalScroll

from loopx_core.shapes.values import CardView

from ..messages import ColumnWanted
from ..state import BOARD_CHROME, CARD_ROWS, COLUMN_LIMIT, COLUMN_STEP, ON_DEMAND, screenful
from .card import CardWidget


def css_id(key: str) -> str:
    return "col-" + re.sub(r"[^A-Za-z0-9_-]", "_", key.lstrip("@"))


class ColumnBody(VerticalScroll, can_focus=False, inherit_bindings=False):
    """The cards; scrolled to its end, it asks the column for more. No keys of
    its own: ↑↓ move the selection (the board screen), which scrolls it."""

    def watch_scroll_y(self, old: float, new: float) -> None:
        super().watch_scroll_y(old, new)
        if new > old and new >= self.max_scroll_y - 1 and isinstance(self.parent, BoardColumn):
            self.parent.show_more()

    def on_resize(self) -> None:
        if isinstance(self.parent, BoardColumn):
            self.parent.fill()


class BoardColumn(Vertical):
    def __init__(self, key: str, title: str, now: Callable[[], float], cards: list[CardView] = (), limit: int = COLUMN_LIMIT, total: int | None = None, unread: bool = False):
        super().__init__(id=css_id(key), classes=f"board-column -col-{css_id(key)[4:]}")
        self.key = key
        self.title = title
        self._now = now
        self.limit = limit
        self.total = len(cards) if total is None else total  # in the store (the filter's), not only in hand
        self.unread = unread  # cards of it not read from the store yet
        self.asked = False  # a read of the next cards is under way
        self.hint = ""
        self.subtitle = ""  # owner view: what the agent's runner is doing
        shown = list(cards)[:limit]
        self.widgets: dict[int, CardWidget] = {c.id: CardWidget(c, now) for c in shown}
        self.cards: list[CardView] = list(cards)  # every card of the column, shown or not
        self._order: list[int] = [c.id for c in shown]
        self._ready = False
        self._pending: tuple | None = None

    def compose(self) -> ComposeResult:
        self._finish_titles()
        yield ColumnBody(*self.widgets.values(), classes="column-body -scrolls" if self._scrolls() else "column-body")

    def on_click(self, event) -> None:
        """A click on "+N more" (the bottom edge) reads on, like ↓ past the last card (or d in Done)."""
        if event.y == self.outer_size.height - 1 and self.border_subtitle:
            event.stop()
            self.show_more()

    def on_mount(self) -> None:
        self._ready = True
        self._finish()
        if self._pending is not None:
            pending, self._pending = self._pending, None
            self.sync(*pending)

    def _more_text(self) -> Text | str:
        hidden = self.total - len(self._order)
        if hidden <= 0:
            return ""
        if not self._order and self.key in ON_DEMAND:
            return Text(f"d/click shows {hidden:,}", style="dim")  # (the header says they are done: "Done 2")
        return Text(f"+{hidden:,} more · ↓/click", style="dim")

    def _finish_titles(self) -> None:
        self.border_title = self._header_text()
        self.border_subtitle = self._more_text()
        self.set_class(self.total <= len(self._order), "-all-shown")  # (no "+N more" row)
        self.set_class(self.total == 0, "-empty")

    def _finish(self) -> None:
        self._finish_titles()
        self.body.set_class(self._scrolls(), "-scrolls")

    @property
    def header(self) -> str:
        """The header as shown (tests and the curious)."""
        return self._header_text().plain

    @property
    def more(self) -> str:
        """"+N more" as shown, or "" when every card is."""
        text = self._more_text()
        return text.plain if isinstance(text, Text) else text

    def _scrolls(self) -> bool:
        """More cards in the column than fit under its header: it scrolls (now
        or once they are mounted), and its scrollbar's cell is kept from the
        first layout — found only after it, the scrollbar made every card of
        the column draw again one cell narrower before the first paint."""
        rows = self._screen_rows()
        return rows > 0 and self.total * CARD_ROWS > rows - BOARD_CHROME

    def _screen_rows(self) -> int:
        try:
            return self.app.size.height
        except Exception:  # (no app running: built outside one)
            return 0

    def fill(self) -> None:
        """The column grew taller (the terminal did): mount what now fits."""
        rows = self._screen_rows()
        if not rows:
            return
        fits = screenful(rows)
        if self._ready and self.limit < fits and len(self._order) < min(self.total, len(self.cards)):
            self.limit = fits
            self.sync(self.cards, self.total, self.unread)

    @property
    def body(self) -> VerticalScroll:
        return self.query_one(".column-body", ColumnBody)

    def _header_text(self) -> Text:
        text = Text.assemble((self.title, "bold"), (f" {self.total}", "dim"))
        if self.subtitle:
            text.append(f" {self.subtitle}", style="italic")
        if self.hint:
            text.append(f" {self.hint}", style="reverse")
        return text

    def set_hint(self, hint: str) -> None:
        """A short note in the header while a drag hovers over this column."""
        if hint != self.hint:
            self.hint = hint
            self.set_class(bool(hint), "-drop-target")
            if self._ready:
                self.border_title = self._header_text()

    def set_subtitle(self, subtitle: str) -> None:
        if subtitle != self.subtitle:
            self.subtitle = subtitle
            if self._ready:
                self.border_title = self._header_text()

    def show_more(self) -> bool:
        """Mount the next screenful of cards in hand, or ask for the next ones
        to be read (False: every card is shown)."""
        if not self._ready or len(self._order) >= self.total:
            return False
        if len(self._order) < len(self.cards):
            self.limit = len(self._order) + COLUMN_STEP
            self.sync(self.cards, self.total, self.unread)
            return True
        if self.unread and not self.asked:
            self.asked = True
            self.limit = max(self.limit, len(self._order) + COLUMN_STEP)
            self.post_message(ColumnWanted(self.key))
        return False

    def sync(self, cards: list[CardView], total: int | None = None, unread: bool = False) -> None:
        if not self._ready:
            self._pending = (list(cards), total, unread)
            return
        grew = len(cards) > len(self.cards)
        self.cards = list(cards)
        self.total = len(cards) if total is None else max(total, len(cards))
        self.unread = unread
        if grew or not unread:
            self.asked = False
        shown = cards[: self.limit]
        want = {c.id for c in shown}
        for cid in [c for c in self.widgets if c not in want]:
            self.widgets.pop(cid).remove()
        current = [cid for cid in self._order if cid in want]
        body = self.body
        fresh: list[CardWidget] = []
        if not current:
            # Nothing kept: mount the whole column in one go.
            fresh = [CardWidget(card, self._now) for card in shown]
            for widget in fresh:
                self.widgets[widget.card.id] = widget
            if fresh:
                body.mount_all(fresh)
        else:
            prev: CardWidget | None = None
            pos = 0
            for card in shown:
                widget = self.widgets.get(card.id)
                if widget is None:
                    widget = CardWidget(card, self._now)
                    self.widgets[card.id] = widget
                    if prev is not None:
                        body.mount(widget, after=prev)
                    elif pos < len(current):
                        body.mount(widget, before=self.widgets[current[pos]])
                    else:
                        body.mount(widget)
                else:
                    widget.set_card(card)
                    if pos < len(current) and current[pos] == card.id:
                        pos += 1
                    else:
                        current.remove(card.id)
                        if prev is not None:
                            body.move_child(widget, after=prev)
                        elif pos < len(current):
                            body.move_child(widget, before=self.widgets[current[pos]])
                prev = widget
        self._order = [c.id for c in shown]
        self._finish()

    def card_ids(self) -> list[int]:
        return list(self._order)

    def tick(self) -> None:
        for widget in self.widgets.values():
            widget.tick()
