"""One card on the board: id, title, owner, quota bar, lease time left,
evidence count and gate badge. Drag it onto another column to move it."""

from __future__ import annotations

from typing import Callable

from rich.text import Text
from textual import events
from textual.errors import NoWidget
from textual.geometry import Offset
from textual.widget import Widget

from loopx_core.shapes.values import CardView

from ..format import ellipsize, lease_left, quota_face
from ..messages import CardDropped, DragHover, OpenCard

DRAG_THRESHOLD = 2  # cells the pointer must travel before a press becomes a drag

STATUS_CLASSES = {s: f"-{s}" for s in ("backlog", "ready", "active", "waiting", "monitoring", "handoff", "paused", "blocked", "done", "cancelled")}


def badge(card: CardView) -> str:
    """The card's corner badge: what it waits on, or why it stopped."""
    if card.pending_gate is not None:
        return f"⚑G-{card.pending_gate}"
    if card.status == "paused":
        return "‖ " + {"budget": "budget", "no_progress": "stalled"}.get(card.paused_reason or "", "paused")
    if card.status == "handoff" and card.handoff_to:
        return f"→{card.handoff_to}"
    if card.status == "blocked":
        return "blocked"
    if card.status in ("backlog", "cancelled", "monitoring"):
        return card.status
    return ""


class CardWidget(Widget, can_focus=True):
    """Renders a ``CardView``; never reads the store. ``now`` is the app's clock."""

    ALLOW_SELECT = False

    def __init__(self, card: CardView, now: Callable[[], float], **kw):
        # The classes given at construction: added one by one, each would restyle the widget.
        classes = [kw.pop("classes", ""), STATUS_CLASSES.get(card.status, ""), "-gate" if card.pending_gate is not None else ""]
        super().__init__(classes=" ".join(c for c in classes if c), **kw)
        self.card = card
        self._now = now
        self._press: Offset | None = None
        self._dragging = False
        self._suppress_click = False
        self._titles()

    # -- rendering ---------------------------------------------------------
    def set_card(self, card: CardView) -> None:
        if card == self.card:
            return
        old = self.card
        self.card = card
        self._apply_classes(old)
        self.refresh()

    def _apply_classes(self, old: CardView | None) -> None:
        if old is not None and old.status != self.card.status:
            self.remove_class(STATUS_CLASSES.get(old.status, ""))
        self.add_class(STATUS_CLASSES.get(self.card.status, ""))
        self.set_class(self.card.pending_gate is not None, "-gate")
        self._titles()

    def _titles(self) -> None:
        self.border_title = self.card.key + ("" if self.card.priority == 2 else f" P{self.card.priority}")
        self.border_subtitle = badge(self.card)

    def render(self) -> Text:
        card = self.card
        width = max(4, self.content_size.width or 14)
        title = Text(ellipsize(card.title, width), style="bold")
        owner = card.owner or "—"
        if card.status == "done" and card.owner:
            owner = f"✓ by {card.owner}"  # who finished it
        left = lease_left(card, self._now())
        room = width - len(left) - 1 if left else width
        line2 = Text(ellipsize(owner, max(1, room)), style="" if card.owner else "dim")
        if left:
            line2.append(" " * max(1, width - len(line2.plain) - len(left)))
            line2.append(left, style="red" if left == "expired" else "dim")
        evidence = f" ≡{card.evidence_count}"
        line3 = quota_face(card.quota, max(3, width - len(evidence)))
        line3.append(evidence, style="dim" if card.evidence_count == 0 else "")
        line3.truncate(width)
        return Text("\n").join([title, line2, line3])

    def tick(self) -> None:
        """Re-render the parts that depend on the clock (lease time left)."""
        if self.card.lease is not None or self.card.monitor_due is not None:
            self.refresh()

    # -- mouse: click opens, drag moves --------------------------------------
    @property
    def dragging(self) -> bool:
        return self._dragging

    def _column_at(self, offset: Offset) -> str | None:
        from .column import BoardColumn

        try:
            widget, _ = self.screen.get_widget_at(*offset)
        except NoWidget:
            return None
        for node in widget.ancestors_with_self:
            if isinstance(node, BoardColumn):
                return node.key
        return None

    def on_mouse_down(self, event: events.MouseDown) -> None:
        if event.button not in (0, 1):
            return
        self._press = event.screen_offset
        self._dragging = False
        self._suppress_click = False
        self.capture_mouse()

    def on_mouse_move(self, event: events.MouseMove) -> None:
        # Pilot's hover sends button 0: follow the press, not the button state.
        if self._press is None:
            return
        delta = event.screen_offset - self._press
        if not self._dragging and max(abs(delta.x), abs(delta.y)) >= DRAG_THRESHOLD:
            self._dragging = True
            self.add_class("-dragging")
        if self._dragging:
            self.post_message(DragHover(self.card.id, self._column_at(event.screen_offset)))

    def on_mouse_up(self, event: events.MouseUp) -> None:
        if self._press is None:
            return
        was_dragging = self._dragging
        target = self._column_at(event.screen_offset) if was_dragging else None
        self._end_drag()
        if was_dragging:
            self._suppress_click = True  # a release on the card itself must not open it
            if target is not None:
                self.post_message(CardDropped(self.card.id, target))

    def on_mouse_release(self, event: events.MouseRelease) -> None:
        # Capture was taken away (another widget captured the mouse): cancel.
        if self._press is not None:
            self._end_drag()

    def cancel_drag(self) -> None:
        if self._press is not None:
            self._suppress_click = self._dragging
            self._end_drag()

    def _end_drag(self) -> None:
        dragging = self._dragging
        self._press = None
        self._dragging = False
        self.remove_class("-dragging")
        self.release_mouse()
        if dragging:
            self.post_message(DragHover(self.card.id, None))

    def on_click(self, event: events.Click) -> None:
        event.stop()
        if self._suppress_click:
            self._suppress_click = False
            return
        self.post_message(OpenCard(self.card.id))
