"""The board read a screenful at a time: how many cards each column holds
(one GROUP BY, never the cards themselves) and the first cards of a column in
the order the board shows them. A board with years of history opens as fast
as a new one: nothing here grows with the cards that are not on screen.

The filter the board offers (words, ``@agent``/``owner:``, ``status:``/``is:``)
is one rule, ``CardFilter``: ``where()`` for the store, ``matches()`` for a
card already in hand (a live change), so both say the same."""

from __future__ import annotations

from typing import NamedTuple

from ..rules import ids
from ..rules.columns import COLUMN_OF, STATUS_COLUMNS
from ..rules.holding import HELD, owner_of
from ..shapes.values import CardView
from ..store import records
from ..store.backends import Store
from ..store.records import Card
from ..store.rows import card_row, card_views

TYPE_CHECKING = False  # (annotations only: typing is not imported on the cold path; checkers read this as typing's)
if TYPE_CHECKING:
    from collections.abc import Iterable

STATUS_MODE, OWNER_MODE = "status", "owner"
UNASSIGNED_WORDS = ("none", "unassigned", "-")

# Within an owner's column, the cards that need attention come first.
STATUS_RANK = {
    s: i
    for i, s in enumerate(
        ("waiting", "paused", "active", "handoff", "monitoring", "ready", "blocked", "backlog", "done", "cancelled")
    )
}
FINISHED = ("done", "cancelled")

# A condition is ``(sql, params)`` with ``?`` placeholders (plain SQL on the
# record layer's connection, both backends: DESIGN §9 "How it stays fast").


def _in(values: Iterable[object]) -> tuple[str, tuple]:
    values = tuple(values)
    return "(" + ", ".join("?" * len(values)) + ")", values


def owner_of_row() -> tuple[str, tuple]:
    """The owner a card shows (``rows.card_view``, ``holding.owner_of``): the
    lease holder while held, the receiver of a handoff, else the assignee — as SQL."""
    held, params = _in(HELD)
    return (
        f"""(CASE WHEN "lease_holder" IS NOT NULL AND "lease_holder" != '' AND "status" IN {held} THEN "lease_holder" """
        """WHEN "status" = 'handoff' THEN "handoff_to" ELSE "assignee" END)""",
        params,
    )


FINISHED_AT = 'COALESCE("done_at", "updated_at")'


def _contains(hay: str) -> str:
    """SQL: ``hay`` holds the next parameter (as given: no case folding)."""
    return f"instr({hay}, ?) > 0" if records.current().backend == "sqlite" else f"strpos({hay}, ?) > 0"


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
            owner = (card.owner or "unassigned").lower()  # (an empty owner is none)
            if not any(
                o == owner or (o in UNASSIGNED_WORDS and not card.owner) or owner.startswith(o) for o in self.owners
            ):
                return False
        if self.statuses:
            column = COLUMN_OF.get(card.status, "")
            if not any(s == card.status or s == column or card.status.startswith(s) for s in self.statuses):
                return False
        if self.words:
            hay = " ".join(
                (
                    card.key.lower(),
                    card.title.lower(),
                    (card.owner or "").lower(),
                    card.status,
                    " ".join(card.needs).lower(),
                    (card.next_action or "").lower(),
                )
            )
            if not all(w in hay for w in self.words):
                return False
        return True

    def where(self) -> tuple[str, tuple] | None:
        """The same test in SQL, ``(sql, params)`` (None: no test). Words are
        matched in the card's text as stored (needs as its JSON text),
        lower-cased by the database (SQLite folds ASCII only)."""
        conds: list[tuple[str, tuple]] = []
        owner, owner_params = owner_of_row()
        if self.owners:
            any_owner: list[tuple[str, tuple]] = []
            for o in self.owners:
                any_owner.append(
                    (
                        f"SUBSTR(LOWER(COALESCE(NULLIF({owner}, ''), 'unassigned')), 1, ?) = ?",
                        (*owner_params, len(o), o),
                    )
                )
                if o in UNASSIGNED_WORDS:  # (an empty owner is no owner, as in the unassigned column)
                    any_owner.append((f"({owner} IS NULL OR {owner} = '')", owner_params * 2))
            conds.append(_any(any_owner))
        if self.statuses:
            any_status = []
            for s in self.statuses:
                of_column = [st for key, _, sts in STATUS_COLUMNS if key == s for st in sts]
                prefixed = [st for st in set(COLUMN_OF) | {s} if st.startswith(s)]
                marks, params = _in(sorted(set(of_column) | set(prefixed)))
                any_status.append((f'"status" IN {marks}', params))
            conds.append(_any(any_status))
        if self.words:
            hay = (
                f"""LOWER(? || CAST("id" AS TEXT) || ' ' || "title" || ' ' || COALESCE({owner}, '') || ' ' || "status" """
                """|| ' ' || COALESCE("needs", '') || ' ' || COALESCE("next_action", ''))"""
            )
            test = _contains(hay)
            conds.extend((test, (ids.CARD.lower() + "-", *owner_params, w)) for w in self.words)
        return _all(conds)


def _any(conds: list[tuple[str, tuple]]) -> tuple[str, tuple]:
    return "(" + " OR ".join(sql for sql, _ in conds) + ")", tuple(p for _, params in conds for p in params)


def _all(conds: list[tuple[str, tuple]]) -> tuple[str, tuple] | None:
    if not conds:
        return None
    return "(" + " AND ".join(sql for sql, _ in conds) + ")", tuple(p for _, params in conds for p in params)


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
    columns = '"status"' if not by_owner else '"status", "lease_holder", "handoff_to", "assignee"'
    where, params = card_filter.where() or ("", ())
    sql = f'SELECT {columns}, COUNT(*) FROM "card"' + (f" WHERE {where}" if where else "") + f" GROUP BY {columns}"
    found = records.rows(sql, params)
    if not by_owner:
        return Tally(tuple(sorted((status, None, int(n)) for status, n in found)), by_owner=False)
    counts: dict[tuple[str, str | None], int] = {}
    for status, lease_holder, handoff_to, assignee, n in found:
        key = (status, owner_of(status, lease_holder, handoff_to, assignee) or None)
        counts[key] = counts.get(key, 0) + int(n)
    return Tally(
        tuple(sorted(((status, owner, n) for (status, owner), n in counts.items()), key=lambda r: (r[0], r[1] or "")))
    )


# -- one column, a page at a time ------------------------------------------------------


def _order(mode: str, key: str | None) -> tuple[str, tuple]:
    """ORDER BY of a column, in the board's order."""
    if mode == OWNER_MODE:
        rank = 'CASE "status" ' + " ".join("WHEN ? THEN ?" for _ in STATUS_RANK) + " ELSE 99 END"
        finished, finished_params = _in(FINISHED)
        recency = f'CASE WHEN "status" IN {finished} THEN {FINISHED_AT} * -1 ELSE 0 END'
        return f'{rank}, {recency}, "priority", "id"', (
            *(v for item in STATUS_RANK.items() for v in item),
            *finished_params,
        )
    first = {"ready": "ready", "needs_you": "waiting", "done": "done"}.get(key or "")
    if key == "done":
        return f'"status" != ?, {FINISHED_AT} DESC, "id"', (first,)
    if first:
        return '"status" != ?, "priority", "id"', (first,)
    return '"priority", "id"', ()


def column_where(mode: str, key: str | None) -> tuple[str, tuple]:
    if mode == OWNER_MODE:
        owner, params = owner_of_row()
        if key is None:
            return f"({owner} IS NULL OR {owner} = '')", params * 2
        return f"{owner} = ?", (*params, key)
    marks, statuses = _in(st for k, _, sts in STATUS_COLUMNS if k == key for st in sts)
    return (f'"status" IN {marks}', statuses) if statuses else ("1 = 0", ())


def column_page(
    mode: str, key: str | None, offset: int, limit: int, card_filter: CardFilter = CardFilter()
) -> list[CardView]:
    """Cards ``offset``…``offset+limit`` of a column, in the board's order
    (inside the caller's read). ``key``: a status column, or an owner (None: unassigned)."""
    where, params = _all([c for c in (column_where(mode, key), card_filter.where()) if c is not None]) or (
        "1 = 1",
        (),
    )  # (the column's own condition is always there)
    order, order_params = _order(mode, key)
    return card_views(
        Card.where(f"WHERE {where} ORDER BY {order} LIMIT ? OFFSET ?", (*params, *order_params, limit, offset))
    )


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


def more_of_column(
    store: Store, mode: str, key: str | None, offset: int, limit: int, card_filter: CardFilter = CardFilter()
) -> tuple[CardView, ...]:
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
