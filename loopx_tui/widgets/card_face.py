"""A card's face as five terminal lines: a box with the card's key (and
priority) in its top edge, its badge in the bottom one, and three lines
inside — title · owner and lease left · quota and evidence.

Pure: a ``CardView``, a width, the clock's reading and a ``Look`` (Rich
styles taken from the board's CSS) in, ``Strip`` lines out. The column draws
its cards with it (``card_list.CardList``) instead of a widget per card."""

from __future__ import annotations

from dataclasses import dataclass

from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual.strip import Strip

from loopx_core.shapes.values import CardView

from ..format import ellipsize, lease_left, quota_face

CARD_ROWS = 5  # a card's height: its edges and three lines

# Box drawing: (top-left, top, top-right, side, bottom-left, bottom, bottom-right).
ROUND = ("╭", "─", "╮", "│", "╰", "─", "╯")
HEAVY = ("┏", "━", "┓", "┃", "┗", "━", "┛")  # the selected card: another line, not only a colour (NO_COLOR)
DASHED = ("┏", "╍", "┓", "╏", "┗", "╍", "┛")  # the card being dragged

# The status that picks a card's edge colour (see Look) and whether its text is muted.
EDGE = {
    "active": "active",
    "monitoring": "active",
    "handoff": "handoff",
    "waiting": "waiting",
    "paused": "waiting",
    "blocked": "blocked",
}
MUTED = frozenset({"done", "cancelled", "backlog"})


def badge(card: CardView, notice: str | None = None) -> str:
    """The card's corner badge: what it waits on, or why it stopped.
    ``notice``: the badge of a runtime's notice standing on it (notices.py)."""
    if card.pending_gate is not None:
        return f"⚑G-{card.pending_gate}"
    if notice:
        return notice
    if card.status == "paused":
        return "‖ " + {"budget": "budget", "no_progress": "stalled"}.get(card.paused_reason or "", "paused")
    if card.status == "handoff" and card.handoff_to:
        return f"→{card.handoff_to}"
    if card.status == "blocked":
        return "blocked"
    if card.status in ("backlog", "cancelled", "monitoring"):
        return card.status
    return ""


def label(card: CardView) -> str:
    """The key in the card's top edge, with its priority unless it is the default (P2)."""
    return card.key + ("" if card.priority == 2 else f" P{card.priority}")


@dataclass(frozen=True)
class Look:
    """The Rich styles a card is drawn with, read from the CSS once per theme.
    ``edges`` maps an ``EDGE`` value (and "" for the rest) to the edge's style;
    ``badges`` the same for the bottom edge's badge."""

    face: Style  # background and text of a card
    hover: Style  # a card under the pointer (over ``face``)
    selected: Style  # the selected card's edge and background (over ``face``)
    dragging: Style  # the card being dragged
    muted: Style  # text of done, cancelled and backlog cards
    title: Style  # the key in the top edge
    edges: dict[str, Style]
    badges: dict[str, Style]


def _edge_row(
    box: tuple[str, str, str], width: int, text: str, style: Style, text_style: Style, right: bool
) -> list[Segment]:
    """A top or bottom edge with ``text`` in it, placed as Textual places a
    border title (left, after one edge cell) or subtitle (right)."""
    left_corner, edge, right_corner = box
    inner = width - 2
    if text and inner > 2:
        label_text = Text(text, style=text_style)
        label_text.truncate(max(1, inner - 2), overflow="ellipsis")
        label_text.pad_left(1)
        label_text.pad_right(1)
        room = max(0, inner - label_text.cell_len)
        parts = [Segment(left_corner, style)]
        if right:
            parts.append(Segment(edge * max(0, room - 1), style))
            parts.extend(_segments(label_text, style))
            parts.append(Segment(edge * min(1, room), style))
        else:
            parts.append(Segment(edge * min(1, room), style))
            parts.extend(_segments(label_text, style))
            parts.append(Segment(edge * max(0, room - 1), style))
        parts.append(Segment(right_corner, style))
        return parts
    return [Segment(left_corner, style), Segment(edge * max(0, inner), style), Segment(right_corner, style)]


def _segments(text: Text, base: Style) -> list[Segment]:
    """``text`` as segments, each span's style over ``base`` (no console)."""
    plain = text.plain
    outer = base + _style(text.style) if text.style else base
    if not text.spans:
        return [Segment(plain, outer)]
    # Split at every span boundary; each piece carries the styles that cover it.
    cuts = sorted({0, len(plain), *(s.start for s in text.spans), *(s.end for s in text.spans)})
    segments = []
    for start, end in zip(cuts, cuts[1:]):
        if start >= end:
            continue
        style = outer
        for span in text.spans:
            if span.start <= start and span.end >= end:
                style = style + _style(span.style)
        segments.append(Segment(plain[start:end], style))
    return segments


def _style(style: str | Style) -> Style:
    return Style.parse(style) if isinstance(style, str) else style


def _content_row(side: str, width: int, text: Text, edge: Style, face: Style) -> list[Segment]:
    """``│ text   │``: one cell of padding on the left, the text cut or padded to fit."""
    inner = max(0, width - 3)
    text = text.copy()
    text.truncate(inner, pad=True)
    return [Segment(side, edge), Segment(" ", face), *_segments(text, face), Segment(side, edge)]


def content(card: CardView, width: int, now: float) -> list[Text]:
    """The three lines inside the box, ``width`` cells wide."""
    width = max(4, width)
    title = Text(ellipsize(card.title, width), style="bold")
    owner = card.owner or "—"
    if card.status == "done" and card.owner:
        owner = f"✓ by {card.owner}"  # who finished it
    left = lease_left(card, now)
    room = width - len(left) - 1 if left else width
    line2 = Text(ellipsize(owner, max(1, room)), style="" if card.owner else "dim")
    if left:
        line2.append(" " * max(1, width - len(line2.plain) - len(left)))
        line2.append(left, style="red" if left == "expired" else "dim")
    evidence = f" ≡{card.evidence_count}"
    line3 = quota_face(card.quota, max(3, width - len(evidence)))
    line3.append(evidence, style="dim" if card.evidence_count == 0 else "")
    line3.truncate(width)
    return [title, line2, line3]


def draw(
    card: CardView,
    width: int,
    now: float,
    look: Look,
    *,
    selected: bool = False,
    hover: bool = False,
    dragging: bool = False,
    notice: str | None = None,
) -> list[Strip]:
    """The card's five lines, each exactly ``width`` cells."""
    kind = EDGE.get(card.status, "")
    face = look.face
    if card.status in MUTED:
        face = face + look.muted
    if hover:
        face = face + look.hover
    if dragging:
        box, edge = DASHED, face + look.dragging
        face = face + Style(dim=True)
    elif selected:
        face = face + look.selected.background_style
        box, edge = HEAVY, face + look.selected
    else:
        box, edge = ROUND, face + look.edges.get(kind, look.edges[""])
    title_style = look.title + Style(reverse=True) if selected else look.title
    rows = [_edge_row(box[0:3], width, label(card), edge, title_style, right=False)]
    for line in content(card, width - 3, now):
        rows.append(_content_row(box[3], width, line, edge, face))
    rows.append(
        _edge_row(
            box[4:7],
            width,
            badge(card, notice),
            edge,
            look.badges.get("waiting" if notice and card.pending_gate is None else kind, look.badges[""]),
            right=True,
        )
    )
    return [Strip(row).adjust_cell_length(width) for row in rows]
