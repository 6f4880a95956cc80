"""The board read a screenful at a time: how many cards each column holds
(one GROUP BY, never the cards themselves) and the first cards of a column in
the order the board shows them. A board with years of history opens as fast
as a new one: nothing here grows with the cards that are not on screen.

The filter the board offers (words, ``@agent``/``owner:``, ``status:``/``is:``)
is one rule, ``CardFilter``: ``where()`` for the store, ``matches()`` for a
card already in hand (a live change), so both say the same."""

from __future__ import annotations

from typing import NamedTuple

import peewee as pw

from ..rules import ids
from ..rules.columns import COLUMN_OF, STATUS_COLUMNS
from ..rules.holding import HELD, owner_of
from ..store.models import Card
from ..store.rows import card_row, card_views
from ..store.backends import Store
from ..shapes.values import CardView

STATUS_MODE, OWNER_MODE = "status", "owner"
UNASSIGNED_WORDS = ("none", "unassigned", "-")

# Within an owner's column, the cards that need attention come first.
STATUS_RANK = {s: i for i, s in enumerate(("waiting", "paused", "active", "handoff", "monitoring", "ready", "blocked", "backlog", "done", "cancelled"))}
FINISHED = ("done", "cancelled")


def owner_of_row():
    """The owner a card shows (``rows.card_view``): the lease holder while held,
    the receiver of a handoff, else the assignee — as SQL."""
    held = (Card.lease_holder.is_null(False)) & (Card.lease_holder != "") & (Card.status.in_(HELD))
    return pw.Case(None, ((held, Card.lease_holder), (Card.status == "handoff", Card.handoff_to)), Card.assignee)


def _finished_at():
    return pw.fn.COALESCE(Card.done_at, Card.updated_at)


# -- the filter -------------------------------------------------------------------


class CardFilter(NamedTuple):
    """Lower-case tokens: every word in the card's text, one of the owners
    (prefix; ``none``/``unassigned``/``-`` for no owner), one of the statuses
    (a status or its prefix, or a status column's key)."""

    words: tuple[str, ...] = ()
    owners: tuple[str, ...] = ()
    statuses: tuple[str, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.words or self.owners or self.statuses)

    def matches(self, card: CardView) -> bool:
        if self.owners:
            owner = (card.owner or "unassigned").lower()
            if not any(o == owner or (o in UNASSIGNED_WORDS and card.owner is None) or owner.startswith(o) for o in self.owners):
                return False
        if self.statuses:
            column = COLUMN_OF.get(card.status, "")
            if not any(s == card.status or s == column or card.status.startswith(s) for s in self.statuses):
                return False
        if self.words:
            hay = " ".join((card.key.lower(), card.title.lower(), (card.owner or "").lower(), card.status, " ".join(card.needs).lower(), (card.next_action or "").lower()))
            if not all(w in hay for w in self.words):
                return False
        return True

    def where(self):
        """The same test in SQL (None: no test). Words are matched in the
        card's text as stored (needs as its JSON text), lower-cased by the
        database (SQLite folds ASCII only)."""
        conds = []
        owner = owner_of_row()
        if self.owners:
            shown = pw.fn.LOWER(pw.fn.COALESCE(owner, "unassigned"))
            any_owner = []
            for o in self.owners:
                any_owner.append(pw.fn.SUBSTR(shown, 1, len(o)) == o)
                if o in UNASSIGNED_WORDS:
                    any_owner.append(owner.is_null())
            conds.append(_any(any_owner))
        if self.statuses:
            any_status = []
            for s in self.statuses:
                of_column = [st for key, _, sts in STATUS_COLUMNS if key == s for st in sts]
                prefixed = [st for st in set(COLUMN_OF) | {s} if st.startswith(s)]
                any_status.append(Card.status.in_(sorted(set(of_column) | set(prefixed))))
            conds.append(_any(any_status))
        if self.words:
            parts = (pw.Cast(Card.id, "TEXT"), Card.title, pw.fn.COALESCE(owner, ""), Card.status, pw.fn.COALESCE(Card.needs, ""), pw.fn.COALESCE(Card.next_action, ""))
            text = pw.Value(ids.CARD.lower() + "-")
            for i, part in enumerate(parts):
                text = text.concat(part) if i == 0 else text.concat(" ").concat(part)
            hay = pw.fn.LOWER(text)
            conds.extend(hay.contains(w) for w in self.words)
        return _all(conds)


def _any(conds):
    out = conds[0]
    for c in conds[1:]:
        out = out | c
    return out


def _all(conds):
    if not conds:
        return None
    out = conds[0]
    for c in conds[1:]:
        out = out & c
    return out


# -- counts ---------------------------------------------------------------------------


class Tally(NamedTuple):
    """How many cards there are, by (status, owner) — owner None: unassigned.
    ``by_owner`` False: counted by status only (every owner None), the cheap
    count a live change in the status view needs."""

    rows: tuple[tuple[str, str | None, int], ...]
    by_owner: bool = True

    def total(self) -> int:
        return sum(n for _, _, n in self.rows)

    def by_column(self, mode: str) -> dict[str | None, int]:
        """Cards per column key: a status column's key, or an owner (None: unassigned)."""
        out: dict[str | None, int] = {}
        for status, owner, n in self.rows:
            key = COLUMN_OF.get(status, "ready") if mode == STATUS_MODE else owner
            out[key] = out.get(key, 0) + n
        return out


def tally(card_filter: CardFilter = CardFilter(), by_owner: bool = True) -> Tally:
    """One GROUP BY over the cards (inside the caller's read), served by an
    index alone: by status from the status index; by owner from the index of
    the four columns the owner is worked out from (schema v5), grouped as
    stored and folded here by ``owner_of`` — a few ms at 50,000 cards, where
    working the owner out in SQL read every row."""
    if not by_owner:
        query = Card.select(Card.status, pw.fn.COUNT(pw.SQL("*"))).group_by(Card.status)
        where = card_filter.where()
        if where is not None:
            query = query.where(where)
        return Tally(tuple(sorted((status, None, int(n)) for status, n in query.tuples())), by_owner=False)
    columns = (Card.status, Card.lease_holder, Card.handoff_to, Card.assignee)
    query = Card.select(*columns, pw.fn.COUNT(pw.SQL("*"))).group_by(*columns)
    where = card_filter.where()
    if where is not None:
        query = query.where(where)
    counts: dict[tuple[str, str | None], int] = {}
    for status, lease_holder, handoff_to, assignee, n in query.tuples():
        key = (status, owner_of(status, lease_holder, handoff_to, assignee) or None)
        counts[key] = counts.get(key, 0) + int(n)
    return Tally(tuple(sorted(((status, owner, n) for (status, owner), n in counts.items()), key=lambda r: (r[0], r[1] or ""))))


# -- one column, a page at a time ------------------------------------------------------


def _order(mode: str, key: str | None) -> list:
    if mode == OWNER_MODE:
        rank = pw.Case(Card.status, tuple(STATUS_RANK.items()), 99)
        recency = pw.Case(None, ((Card.status.in_(FINISHED), _finished_at() * -1),), 0)
        return [rank, recency, Card.priority, Card.id]
    first = {"ready": "ready", "needs_you": "waiting", "done": "done"}.get(key or "")
    if key == "done":
        return [Card.status != first, _finished_at().desc(), Card.id]
    if first:
        return [Card.status != first, Card.priority, Card.id]
    return [Card.priority, Card.id]


def column_where(mode: str, key: str | None):
    if mode == OWNER_MODE:
        owner = owner_of_row()
        return owner.is_null() | (owner == "") if key is None else owner == key
    statuses = [st for k, _, sts in STATUS_COLUMNS if k == key for st in sts]
    return Card.status.in_(statuses)


def column_page(mode: str, key: str | None, offset: int, limit: int, card_filter: CardFilter = CardFilter()) -> list[CardView]:
    """Cards ``offset``…``offset+limit`` of a column, in the board's order
    (inside the caller's read). ``key``: a status column, or an owner (None: unassigned)."""
    where = column_where(mode, key)
    extra = card_filter.where()
    if extra is not None:
        where = where & extra
    rows = list(Card.select().where(where).order_by(*_order(mode, key)).offset(offset).limit(limit))
    return card_views(rows)


class Page(NamedTuple):
    """The first cards of some columns and the counts they are out of."""

    seq: int
    tally: Tally  # every card (the header's figures)
    shown: Tally  # the cards passing the filter (the columns' counts); ``tally`` when none
    cards: tuple[CardView, ...]


def board_page(store: Store, mode: str, limits: dict[str | None, int], card_filter: CardFilter = CardFilter()) -> Page:
    """Counts and the first ``limits[key]`` cards of each named column, in one read."""
    with store.read():
        seq = store.max_seq()
        everything = tally()
        shown = tally(card_filter) if card_filter else everything
        cards: list[CardView] = []
        for key, limit in limits.items():
            if limit > 0:
                cards.extend(column_page(mode, key, 0, limit, card_filter))
    return Page(seq, everything, shown, tuple(cards))


def more_of_column(store: Store, mode: str, key: str | None, offset: int, limit: int, card_filter: CardFilter = CardFilter()) -> tuple[CardView, ...]:
    with store.read():
        return tuple(column_page(mode, key, offset, limit, card_filter))


def board_tally(store: Store, card_filter: CardFilter = CardFilter()) -> tuple[Tally, Tally]:
    """(every card, the cards passing the filter), in one read."""
    with store.read():
        everything = tally()
        return everything, (tally(card_filter) if card_filter else everything)


def read_card(store: Store, card_id: int) -> CardView:
    """One card, a pure read (to open a card that is not on the board's pages)."""
    with store.read():
        return card_views([card_row(card_id)])[0]
