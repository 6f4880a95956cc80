"""A column's cards, drawn line by line in one widget (Textual's line API).

Each widget is a message pump of its own: mounting and laying one out cost
the board ~3 ms, so a widget per card made the first paint and the first
owner view (a column per agent) slow. Here a column's cards are rows of one
scrolling widget: only the lines on screen are drawn, each card's five lines
are kept until it (or the width, the selection, the pointer) changes, and
every card in hand is reachable by scrolling without mounting anything.
Its scrollbar is one cell of its own lines, not Textual's: a scrollbar
widget per column was a quarter of what switching the view cost (each one
laid out and drawn again on every switch).

The list never reads the store. It selects (``cursor``; drawn with a heavy
edge while the list has focus), opens a card on a click, and drags one onto
another column (``DragHover`` while moving, ``CardDropped`` on release)."""

from __future__ import annotations

from collections.abc import Callable

from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.color import Color
from textual.errors import NoWidget
from textual.geometry import Offset, Region, Size
from textual.scroll_view import ScrollView
from textual.strip import Strip

from loopx_core.shapes.values import CardView

from ..format import lease_left
from ..messages import CardDropped, CardSelected, DragHover, OpenCard
from .card_face import CARD_ROWS, EDGE, Look, draw

DRAG_THRESHOLD = 2  # cells the pointer must travel before a press becomes a drag


class CardList(ScrollView, can_focus=True, inherit_bindings=False):
    """The cards of one column. No keys of its own: the board screen's ↑↓
    move ``cursor`` (``select``), which scrolls the list."""

    ALLOW_SELECT = False

    COMPONENT_CLASSES = {
        "card-list--face",
        "card-list--hover",
        "card-list--selected",
        "card-list--dragging",
        "card-list--muted",
        "card-list--title",
        "card-list--edge",
        *(f"card-list--edge-{kind}" for kind in set(EDGE.values())),
        "card-list--badge",
        *(f"card-list--badge-{kind}" for kind in set(EDGE.values())),
    }

    def __init__(self, cards: list[CardView], now: Callable[[], float], **kw):
        super().__init__(**kw)
        self.cards: list[CardView] = list(cards)
        self.cursor = 0  # the selected card's index (shown while the list has focus)
        self._now = now
        self._hover: int | None = None
        self._press: Offset | None = None
        self._pressed: int | None = None  # the card under the press
        self._dragging = False
        self._suppress_click = False
        self._clicked: int | None = None  # the card a press-and-release (not a drag) was on
        self._on_bar = False  # the last press was on the scrollbar (its click opens nothing)
        self._grab: int | None = None  # dragging the scrollbar's thumb: the row of the thumb held
        self._bar: tuple[Segment, ...] | None = None  # track, thumb, thumb held
        self._look: Look | None = None
        self._times_shown: tuple[str, ...] = ()  # the time left on the cards' faces at the last tick
        self._drawn: dict[int, tuple[tuple, list[Strip]]] = {}  # card id → (what it was drawn from, its lines)
        self.set_reactive(ScrollView.virtual_size, Size(0, len(self.cards) * CARD_ROWS))

    # -- what it holds -------------------------------------------------------------
    @property
    def selected(self) -> CardView | None:
        """The selected card (None in an empty column)."""
        return self.cards[self.cursor] if 0 <= self.cursor < len(self.cards) else None

    def index_of(self, card_id: int) -> int | None:
        for i, card in enumerate(self.cards):
            if card.id == card_id:
                return i
        return None

    def set_cards(self, cards: list[CardView]) -> None:
        """The column's new cards: the selection follows its card where it
        stays in the column, else keeps its row; only changed cards redraw."""
        if cards == self.cards:
            return
        chosen = self.selected
        self.cards = list(cards)
        index = self.index_of(chosen.id) if chosen is not None else None
        self.cursor = index if index is not None else max(0, min(self.cursor, len(self.cards) - 1))
        keep = {c.id for c in self.cards}
        for gone in [cid for cid in self._drawn if cid not in keep]:
            del self._drawn[gone]
        self._fit_virtual()
        self.refresh()
        if self.has_focus and self.selected is not None:
            self.post_message(CardSelected(self.selected.id))

    def select(self, index: int) -> None:
        """Select the card at ``index`` and bring it into view."""
        if not self.cards:
            return
        self.cursor = max(0, min(index, len(self.cards) - 1))
        self.refresh()
        self.scroll_to_card(self.cursor)
        self.post_message(CardSelected(self.cards[self.cursor].id))

    def scroll_to_card(self, index: int, top: bool = False) -> None:
        """Bring the card into view (``top``: to the top of the column)."""
        self.scroll_to_region(
            Region(0, index * CARD_ROWS, max(1, self.size.width), CARD_ROWS), animate=False, force=True, top=top
        )

    def card_region(self, card_id: int) -> Region | None:
        """Where the card is on screen (None when it is not in this list)."""
        index = self.index_of(card_id)
        if index is None:
            return None
        region = self.scrollable_content_region
        top = region.y + index * CARD_ROWS - round(self.scroll_y)
        return Region(region.x, top, self._width(), CARD_ROWS).intersection(region)

    def screenful(self) -> int:
        """How many whole cards the list shows at once (at least one): a page."""
        return max(1, self.size.height // CARD_ROWS)

    def first_in_view(self) -> int:
        """The index of the first card on screen (in part or whole)."""
        return round(self.scroll_y) // CARD_ROWS

    def end_of_view(self) -> int:
        """One past the last card on screen (in part or whole): the cards on
        screen or scrolled past."""
        if not self.size.height:
            return 0
        return min(len(self.cards), -(-(round(self.scroll_y) + self.scrollable_content_region.height) // CARD_ROWS))

    def drawn(self, card_id: int) -> list[Strip] | None:
        """The card's lines as last drawn (None: not drawn since it changed)."""
        entry = self._drawn.get(card_id)
        return entry[1] if entry is not None else None

    def card_text(self, card_id: int) -> str:
        """The card's five lines as drawn (what a person reads)."""
        index = self.index_of(card_id)
        if index is None:
            return ""
        return "\n".join(strip.text for strip in self._card_lines(index, self._width()))

    # -- drawing -----------------------------------------------------------------
    def _fit_virtual(self) -> None:
        # As tall as the cards; no width of its own (the column gives it one):
        # a virtual size that followed the width laid the screen out again
        # each time a column was first shown or resized.
        self.virtual_size = Size(0, len(self.cards) * CARD_ROWS)

    def _width(self) -> int:
        """The cards' width: the list's, less the scrollbar's cell when it scrolls."""
        return max(6, self.scrollable_content_region.width - self.scrolls())

    def scrolls(self) -> bool:
        """More rows of cards than the list is tall: a scrollbar is drawn."""
        return self.virtual_size.height > self.size.height > 0

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._look = None  # (the theme changed: draw again from the new styles)
        self._bar = None
        self._drawn.clear()

    def look(self) -> Look:
        """The card styles from the CSS, colours with an alpha blended here
        over what they are drawn on (Rich styles have no alpha)."""
        if self._look is None:
            under = self.background_colors[1]
            face = self._part("card-list--face", under)
            card_bg = Color.from_rich_color(face.bgcolor) if face.bgcolor is not None else under
            part = lambda name: self._part(name, card_bg)  # noqa: E731
            kinds = set(EDGE.values())
            self._look = Look(
                face=face,
                hover=part("card-list--hover"),
                selected=part("card-list--selected"),
                dragging=part("card-list--dragging"),
                muted=part("card-list--muted"),
                title=part("card-list--title"),
                edges={"": part("card-list--edge"), **{k: part(f"card-list--edge-{k}") for k in kinds}},
                badges={"": part("card-list--badge"), **{k: part(f"card-list--badge-{k}") for k in kinds}},
            )
        return self._look

    def _part(self, name: str, under: Color) -> Style:
        styles = self.get_component_styles(name)
        color = (under + styles.color).rich_color if styles.has_rule("color") else None
        background = (under + styles.background).rich_color if styles.has_rule("background") else None
        return Style(color=color, bgcolor=background) + styles.text_style

    def _card_lines(self, index: int, width: int) -> list[Strip]:
        card = self.cards[index]
        state = (
            index == self.cursor and self.has_focus,
            index == self._hover,
            index == self._pressed and self._dragging,
        )
        now = self._now()
        notice = getattr(getattr(self.app, "model", None), "notices", {}).get(
            card.id
        )  # a runtime wants its person (notices.py)
        key = (card, width, state, lease_left(card, now), notice)
        drawn = self._drawn.get(card.id)
        if drawn is None or drawn[0] != key:
            drawn = (
                key,
                draw(
                    card, width, now, self.look(), selected=state[0], hover=state[1], dragging=state[2], notice=notice
                ),
            )
            self._drawn[card.id] = drawn
        return drawn[1]

    def render_line(self, y: int) -> Strip:
        width = self._width()
        index, row = divmod(y + round(self.scroll_y), CARD_ROWS)
        line = Strip.blank(width, self.rich_style) if index >= len(self.cards) else self._card_lines(index, width)[row]
        if not self.scrolls():
            return line
        return Strip([*line, self._bar_cell(y)], width + 1)

    # -- the scrollbar ----------------------------------------------------------------
    def thumb(self) -> tuple[int, int]:
        """The scrollbar's thumb: its first row and its height (whole cells)."""
        height, rows = self.size.height, self.virtual_size.height
        if not self.scrolls():
            return 0, height
        length = max(1, round(height * height / rows))
        top = round((height - length) * min(1.0, self.scroll_y / max(1, self.max_scroll_y)))
        return top, length

    def _bar_cell(self, y: int) -> Segment:
        if self._bar is None:
            # The scrollbar colours of the CSS (the theme's), as Textual's scrollbar reads them.
            styles, (under, _) = self.styles, self.background_colors
            track = under + styles.scrollbar_background
            thumb = track + styles.scrollbar_color
            held = (under + styles.scrollbar_background_active) + styles.scrollbar_color_active
            self._bar = tuple(Segment(" ", Style(bgcolor=c.rich_color)) for c in (track, thumb, held))
        bar = self._bar
        top, length = self.thumb()
        if not top <= y < top + length:
            return bar[0]
        return bar[2] if self._grab is not None else bar[1]

    def _bar_at(self, x: int) -> bool:
        return self.scrolls() and x >= self._width()

    def _bar_down(self, y: int) -> None:
        """A press on the scrollbar: on the thumb it is held (and dragged);
        above or below it, the list moves by a screenful of whole cards."""
        top, length = self.thumb()
        if top <= y < top + length:
            self._grab = y - top
            self.capture_mouse()
            self.refresh()
            return
        page = self.screenful() * CARD_ROWS
        self.scroll_to(y=self.scroll_y + (page if y >= top + length else -page), animate=False)

    def _bar_drag(self, y: int) -> None:
        if self._grab is None:
            return  # (only while the thumb is held)
        top, length = self.thumb()
        room = max(1, self.size.height - length)
        share = max(0.0, min(1.0, (y - self._grab) / room))
        self.scroll_to(y=round(share * self.max_scroll_y), animate=False)

    def _bar_up(self) -> None:
        self._grab = None
        self.release_mouse()
        self.refresh()

    def tick(self) -> None:
        """Draw again when a card's face would show another time left (its
        lease, its next check): minutes mostly, so not every second."""
        now = self._now()
        shown = tuple(lease_left(c, now) for c in self.cards if c.lease is not None or c.monitor_due is not None)
        if shown != self._times_shown:
            self._times_shown = shown
            self.refresh()

    # -- the pointer: hover, click opens, drag moves ------------------------------------
    def _index_at(self, y: int) -> int | None:
        index = (y + round(self.scroll_y)) // CARD_ROWS
        return index if 0 <= y < self.size.height and 0 <= index < len(self.cards) else None

    def _set_hover(self, index: int | None) -> None:
        if index != self._hover:
            self._hover = index
            self.refresh()

    def on_leave(self, event: events.Leave) -> None:
        self._set_hover(None)

    @property
    def dragging(self) -> bool:
        return self._dragging

    @property
    def dragged(self) -> CardView | None:
        """The card being dragged, if any."""
        if self._dragging and self._pressed is not None and self._pressed < len(self.cards):
            return self.cards[self._pressed]
        return None

    def _column_at(self, offset: Offset) -> str | None:
        """The key of the column under ``offset``: the nearest ancestor that takes
        dropped cards (a ``BoardColumn`` names itself with ``drop_key``)."""
        try:
            widget, _ = self.screen.get_widget_at(*offset)
        except NoWidget:
            return None
        for node in widget.ancestors_with_self:
            key = getattr(node, "drop_key", None)
            if isinstance(key, str):
                return key
        return None

    def on_mouse_down(self, event: events.MouseDown) -> None:
        if event.button not in (0, 1):
            return
        self._on_bar = self._bar_at(event.x)
        if self._on_bar:
            self._bar_down(event.y)
            return
        index = self._index_at(event.y)
        if index is None:
            return
        self._press = event.screen_offset
        self._pressed = index
        self._dragging = False
        self._suppress_click = False
        self.capture_mouse()

    def on_mouse_move(self, event: events.MouseMove) -> None:
        # Pilot's hover sends button 0: follow the press, not the button state.
        if self._grab is not None:
            self._bar_drag(event.y)
            return
        if self._press is None:
            self._set_hover(None if self._bar_at(event.x) else self._index_at(event.y))
            return
        delta = event.screen_offset - self._press
        if not self._dragging and max(abs(delta.x), abs(delta.y)) >= DRAG_THRESHOLD:
            self._dragging = True
            self.refresh()
        card = self.dragged
        if card is not None:
            self.post_message(DragHover(card.id, self._column_at(event.screen_offset)))

    def on_mouse_up(self, event: events.MouseUp) -> None:
        if self._grab is not None:
            self._bar_up()
            return
        if self._press is None:
            return
        card = self.dragged
        target = self._column_at(event.screen_offset) if card is not None else None
        self._clicked = self._pressed if card is None else None
        self._end_drag()
        if card is not None:
            self._suppress_click = True  # a release on the card itself must not open it
            if target is not None:
                self.post_message(CardDropped(card.id, target))

    def on_mouse_release(self, event: events.MouseRelease) -> None:
        # Capture was taken away (another widget captured the mouse): cancel.
        if self._grab is not None:
            self._bar_up()
        if self._press is not None:
            self._end_drag()

    def cancel_drag(self) -> None:
        if self._press is not None:
            self._suppress_click = self._dragging
            self._end_drag()

    def _end_drag(self) -> None:
        card = self.dragged
        self._press = None
        self._pressed = None
        self._dragging = False
        self.release_mouse()
        if card is not None:
            self.refresh()
            self.post_message(DragHover(card.id, None))

    def on_click(self, event: events.Click) -> None:
        event.stop()
        if self._on_bar:  # (a press on the scrollbar, released anywhere)
            self._on_bar = False
            return
        if self._suppress_click:
            self._suppress_click = False
            return
        # The card pressed, not the one under the release (a press on one card's
        # bottom edge released a row lower is still a click on it).
        index, self._clicked = (self._clicked if self._clicked is not None else self._index_at(event.y)), None
        if index is None or index >= len(self.cards):
            return
        self.focus(scroll_visible=False)
        self.select(index)
        self.post_message(OpenCard(self.cards[index].id))
