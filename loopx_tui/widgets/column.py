"""A board column: a header with the count, the cards, and "+N more".

The header and "+N more" are the column's own border title and subtitle
(a ``panel`` top edge, a blank bottom one); the cards are one ``CardList``
drawn line by line: a column is two widgets however many cards it holds.

The count is the store's (the board holds only the first cards of each
column); going down past the last card in hand asks the app to read on
(``ColumnWanted``). A column of history (Done) starts with its count only.
"+N more" counts the cards below the screen, read or not."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from rich.cells import cell_len
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical

from loopx_core.shapes.values import CardView

from ..messages import ColumnWanted
from ..state import ON_DEMAND
from .card_face import CARD_ROWS
from .card_list import CardList
from .line import FittedLine

BOARD_CHROME = 4  # rows that are not cards: the board's header and footer, a column's header and "+N more"


def css_id(key: str) -> str:
    return "col-" + re.sub(r"[^A-Za-z0-9_-]", "_", key.lstrip("@"))


class ColumnCards(CardList):
    """The column's cards; scrolled to their end, it asks the column for more."""

    def watch_scroll_y(self, old: float, new: float) -> None:
        super().watch_scroll_y(old, new)
        column = self.parent
        if isinstance(column, BoardColumn):
            column.count_below()
            if new > old and new >= self.max_scroll_y - 1:
                column.show_more()

    def on_resize(self) -> None:
        if isinstance(self.parent, BoardColumn):
            self.parent.count_below()


class RunnerLine(FittedLine):
    """The longest of the runner's texts (``data``, longest first) that fits the column."""

    def draw(self, variants: list[str], width: int) -> Text:
        fits = next((v for v in variants if cell_len(v) <= width), variants[-1] if variants else "")
        return Text(fits, style="italic", no_wrap=True, overflow="ellipsis")


class BoardColumn(Vertical):
    @property
    def drop_key(self) -> str:
        """What a card dropped on this column moves to (``CardList`` asks it)."""
        return self.key

    def __init__(
        self,
        key: str,
        title: str,
        now: Callable[[], float],
        cards: Sequence[CardView] = (),
        total: int | None = None,
        unread: bool = False,
    ):
        super().__init__(id=css_id(key), classes=f"board-column -col-{css_id(key)[4:]}")
        self.key = key
        self.title = title
        self.total = len(cards) if total is None else total  # in the store (the filter's), not only in hand
        self.unread = unread  # cards of it not read from the store yet
        self.asked = False  # a read of the next cards is under way
        self.hint = ""
        self.subtitle = ""  # owner view: what the agent's runner is doing
        self.more = ""  # "+N more" as shown, or "" when no card is below the screen
        self.body = ColumnCards(list(cards), now, classes="column-body")
        self.runner_line: RunnerLine | None = None
        self.runner_variants: list[str] = []
        self._ready = False

    @property
    def cards(self) -> list[CardView]:
        """Every card of the column in hand (on screen or a scroll away)."""
        return self.body.cards

    def compose(self) -> ComposeResult:
        self._finish()
        yield self.body

    def on_click(self, event) -> None:
        """A click on "+N more" (the bottom edge) shows the next cards: the
        first one below the screen goes to the top (or, past the cards in
        hand, they are read, like ↓ past the last card; d in Done)."""
        if event.y == self.outer_size.height - 1 and self.border_subtitle:
            event.stop()
            below = self.body.end_of_view()
            if below < len(self.cards):
                self.body.scroll_to_card(below, top=True)
            else:
                self.show_more()

    def on_mount(self) -> None:
        self._ready = True
        if self.subtitle:
            self.set_runner(self.runner_variants)
        self._finish()

    def _more_text(self) -> Text | str:
        seen = self.body.end_of_view() if self._ready else min(len(self.cards), self._fits())
        hidden = self.total - seen
        if hidden <= 0:
            return ""
        if not self.cards and self.key in ON_DEMAND:
            return Text(f"d/click shows {hidden:,}", style="dim")  # (the header says they are done: "Done 2")
        return Text(f"+{hidden:,} more · ↓/click", style="dim")

    def _finish(self) -> None:
        self.border_title = self._header_text()
        self.count_below()
        everything = self.total <= len(self.cards) and self.total * CARD_ROWS <= self._room()
        self.set_class(everything, "-all-shown")  # (no "+N more" row)
        self.set_class(self.total == 0, "-empty")

    def count_below(self) -> None:
        """ "+N more": what is below the screen now (the list moved, was
        resized, or the cards changed); redrawn only when it says something else."""
        more = self._more_text()
        plain = more.plain if isinstance(more, Text) else more
        if plain != self.more:
            self.more = plain
            self.border_subtitle = more

    @property
    def header(self) -> str:
        """The header as shown (tests and the curious)."""
        return self._header_text().plain

    def _room(self) -> int:
        """Rows for cards under the column's header (the screen's height less
        the board's header and footer and the column's edges), 0 outside an app."""
        try:
            rows = self.app.size.height
        except Exception:  # (no app running: built outside one)
            return 0
        runner = 1 if self.subtitle else 0
        return max(0, rows - BOARD_CHROME - runner) if rows else 0

    def _fits(self) -> int:
        return -(-self._room() // CARD_ROWS)

    def _header_text(self) -> Text:
        text = Text.assemble((self.title, "bold"), (f" {self.total}", "dim"))
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

    def set_runner(self, variants: list[str]) -> None:
        """Owner view: what the agent's runner does, on a line of its own under
        the header (in the header it was cut to "▶ L…"), mounted the first time
        there is something to say; ``variants`` go from longest to shortest."""
        self.runner_variants = list(variants)
        self.subtitle = variants[0] if variants else ""
        if not self._ready:
            return  # (on_mount shows it)
        if self.runner_line is None:
            if not self.subtitle:
                return
            self.runner_line = RunnerLine(classes="column-runner")
            self.mount(self.runner_line, before=self.body)
        self.runner_line.show(self.runner_variants)
        self.runner_line.display = bool(self.subtitle)

    def show_more(self) -> bool:
        """Ask for the column's next cards to be read (False: every card is in
        hand, or a read is already under way)."""
        if not self._ready or len(self.cards) >= self.total or not self.unread or self.asked:
            return False
        self.asked = True
        self.post_message(ColumnWanted(self.key))
        return True

    def sync(self, cards: list[CardView], total: int | None = None, unread: bool = False) -> None:
        grew = len(cards) > len(self.cards)
        self.total = len(cards) if total is None else max(total, len(cards))
        self.unread = unread
        if grew or not unread:
            self.asked = False
        self.body.set_cards(cards)
        self._finish()

    def card_ids(self) -> list[int]:
        return [c.id for c in self.cards]

    def tick(self) -> None:
        self.body.tick()
