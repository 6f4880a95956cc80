"""The board as the TUI holds it: plain values from loopx_core, grouped into
columns, filtered and sorted. No Textual and no database here, so the rules
(which column a card is in, what a drop onto a column means) are easy to test."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import NamedTuple

from loopx_core.ops.board_pages import CardFilter, Page, Tally
from loopx_core.rules.columns import COLUMN_OF, STATUS_COLUMNS
from loopx_core.shapes.values import AgentView, CardView, GateView

# What ``status:`` / ``is:`` accepts: a status, or a column of the status view.
KNOWN_STATUSES = tuple(COLUMN_OF) + tuple(key for key, _, _ in STATUS_COLUMNS if key not in COLUMN_OF)

STATUS, OWNER = "status", "owner"
UNASSIGNED = "@unassigned"

# How many cards of a column are read from the store at a time: more than
# the tallest screen shows (a card is 5 rows), so ↓ and the wheel usually find
# the next ones in hand; going past the last one reads the next page, and the
# rest is counted ("+N more") and reachable by filtering.
PAGE = 24


# Columns of history: counted on open, their cards read when asked for.
ON_DEMAND = frozenset({"done"})

# Within a column, the cards that need attention come first.
_STATUS_RANK = {
    s: i
    for i, s in enumerate(
        ("waiting", "paused", "active", "handoff", "monitoring", "ready", "blocked", "backlog", "done", "cancelled")
    )
}


class Column(NamedTuple):
    key: str
    title: str


class Standing(NamedTuple):
    """What the board's header says of the person and the gates, as the app knows it now."""

    refusal: str | None = None  # why the person's actions are refused (None: they are not)
    person: str | None = None  # whose key signs what is decided here
    waiting: tuple[int, ...] = ()  # the gates waiting behind the person's typing, in order
    # What needs the person on all their boards (this one included) and on how
    # many boards: None while they have one board only (``B`` lists them).
    everywhere: tuple[int, int] | None = None


class Drop(NamedTuple):
    """What dropping a card on a column does: an operator call, or a refusal."""

    op: str | None  # "move" | "assign" | None (refused)
    arg: str | None  # the status for "move", the agent (None: unassign) for "assign"
    reason: str = ""  # why it is refused, when op is None


@dataclass
class Query:
    """A parsed filter: free words (all must match) plus ``owner:``/``@`` and ``status:``/``is:``."""

    text: str = ""
    words: tuple[str, ...] = ()
    owners: tuple[str, ...] = ()
    statuses: tuple[str, ...] = ()
    errors: tuple[str, ...] = ()  # what the filter could not use, said on screen (never a silent empty board)

    @classmethod
    def parse(cls, text: str) -> Query:
        words, owners, statuses, errors = [], [], [], []
        for token in text.lower().split():
            if token.startswith("@") and len(token) > 1:
                owners.append(token[1:])
            elif token.startswith("owner:") and len(token) > 6:
                owners.append(token[6:])
            elif token.startswith(("status:", "is:")):
                value = token.split(":", 1)[1].replace("needs-you", "needs_you").replace("needsyou", "needs_you")
                if not value:
                    continue
                if any(s.startswith(value) for s in KNOWN_STATUSES):
                    statuses.append(value)
                else:
                    errors.append(f"no status {value!r} (one of: {', '.join(KNOWN_STATUSES)})")
            else:
                words.append(token)
        return cls(
            text=text.strip(), words=tuple(words), owners=tuple(owners), statuses=tuple(statuses), errors=tuple(errors)
        )

    @property
    def active(self) -> bool:
        return bool(self.words or self.owners or self.statuses or self.errors)

    @property
    def card_filter(self) -> CardFilter:
        """The kernel's filter (the store applies the same rule to what it counts and reads)."""
        return CardFilter(self.words, self.owners, self.statuses)

    def matches(self, card: CardView) -> bool:
        return self.card_filter.matches(card)


def _status_sort(column: str):
    if column == "done":
        return lambda c: (c.status != "done", -(c.done_at or c.updated_at), c.id)
    if column == "ready":
        return lambda c: (c.status != "ready", c.priority, c.id)
    if column == "needs_you":
        return lambda c: (c.status != "waiting", c.priority, c.id)
    return lambda c: (c.priority, c.id)


def _owner_sort(c: CardView):
    rank = _STATUS_RANK.get(c.status, 99)
    recency = -(c.done_at or c.updated_at) if c.status in ("done", "cancelled") else 0
    return (rank, recency, c.priority, c.id)


COMPLETE = ("complete",)  # a column's frontier once every card of it is in hand


def _sort_key(mode: str, column: str):
    return _status_sort(column) if mode == STATUS else _owner_sort


@dataclass
class BoardModel:
    """The part of the board in hand: the cards read so far (the first pages
    of the columns, and every card a change touched), the counts of all cards,
    and for each column how far down it has been read (its frontier). A
    column shows the cards in hand up to its frontier, so it is always the
    true start of the column; its count comes from the store."""

    cards: dict[int, CardView] = field(default_factory=dict)
    agents: list[str] = field(default_factory=list)
    pending: dict[int, GateView] = field(default_factory=dict)  # gate id -> gate
    mode: str = STATUS
    query: Query = field(default_factory=Query)
    objective: str = ""
    seq: int = 0
    runners: dict = field(default_factory=dict)  # agent -> loopx_core.ops.runners.RunnerView
    tally: Tally = field(default_factory=lambda: Tally(()))  # every card, by (status, owner)
    shown: Tally | None = None  # the cards passing the filter (None: no filter, ``tally``)
    read: dict[tuple[str, str], int] = field(default_factory=dict)  # (mode, column) -> cards read from the store
    frontier: dict[tuple[str, str], tuple] = field(
        default_factory=dict
    )  # (mode, column) -> sort key of the last one read
    paged: dict[str, str] = field(default_factory=dict)  # mode -> the filter its columns were read for
    live: set[int] = field(default_factory=set)  # cards that changed while the board was open
    owners_seen: set[str] = field(default_factory=set)  # owners counted before counts by status only came
    notices: dict[int, str] = field(
        default_factory=dict
    )  # card id -> the badge of a runtime's notice standing on it (notices.py)
    asked: set[str] = field(
        default_factory=set
    )  # columns of history (``ON_DEMAND``) the person asked for: read with the rest from then on

    # -- loading and applying -------------------------------------------------
    def load(
        self,
        cards: Iterable[CardView],
        agents: Iterable[AgentView],
        pending: Iterable[GateView],
        seq: int,
        objective: str = "",
    ) -> None:
        """Every card of the board at once (small boards, tests): every column complete."""
        self.cards = {c.id: c for c in cards}
        self.agents = sorted(a.id for a in agents)
        self.pending = {g.id: g for g in pending}
        self.seq = seq
        self.objective = objective
        rows: dict[tuple[str, str | None], int] = {}
        for card in self.cards.values():
            rows[(card.status, card.owner)] = rows.get((card.status, card.owner), 0) + 1
        self.tally = Tally(tuple((st, ow, n) for (st, ow), n in rows.items()))
        self.shown = None
        self.read.clear()
        self.frontier = {(mode, col.key): COMPLETE for mode in (STATUS, OWNER) for col in self._columns(mode)}
        self.paged = {STATUS: self.query.text, OWNER: self.query.text}

    def start(
        self,
        page: Page,
        agents: Iterable[AgentView],
        pending: Iterable[GateView],
        objective: str,
        mode: str,
        limits: dict[str, int],
    ) -> None:
        """The board as it opens: counts, and the first page of some columns."""
        self.cards = {}
        self.agents = sorted(a.id for a in agents)
        self.pending = {g.id: g for g in pending}
        self.objective = objective
        self.read.clear()
        self.frontier.clear()
        self.paged.clear()
        self.add_page(page, mode, limits)

    def add_page(self, page: Page, mode: str, limits: dict[str, int]) -> None:
        """The first ``limits[key]`` cards of some columns (and fresh counts)."""
        self.seq = max(self.seq, page.seq)
        self.set_tally(page.tally, page.shown if self.query.card_filter else None)
        self.apply_cards(page.cards, live=False)
        self.paged[mode] = self.query.text
        by_column: dict[str, list[CardView]] = {key: [] for key in limits}
        for card in page.cards:
            key = self._column_of(mode, card)
            if key in by_column:
                by_column[key].append(card)
        for key, cards in by_column.items():
            self._advance(mode, key, cards, limits[key], offset=0)
            if mode == STATUS and key in ON_DEMAND and limits[key]:
                self.asked.add(key)  # (a filter searched it)

    def add_more(self, mode: str, key: str, offset: int, limit: int, cards: Iterable[CardView]) -> None:
        """Cards ``offset``… of a column, read because the person went down it."""
        cards = list(cards)
        if mode == STATUS and key in ON_DEMAND:
            self.asked.add(key)
        self.apply_cards(cards, live=False)
        self._advance(mode, key, cards, limit, offset)

    def _advance(self, mode: str, key: str, cards: list[CardView], limit: int, offset: int) -> None:
        self.read[(mode, key)] = offset + len(cards)
        if len(cards) < limit or limit == 0:  # (0: nothing to read, the column is empty)
            self.frontier[(mode, key)] = COMPLETE
        elif cards:
            self.frontier[(mode, key)] = _sort_key(mode, key)(cards[-1])

    def forget_pages(self, mode: str) -> None:
        """The filter changed: the cards read are kept, but where each column
        of ``mode`` starts and ends must be read again."""
        for key in [k for k in self.frontier if k[0] == mode]:
            del self.frontier[key]
            self.read.pop(key, None)

    def needs_pages(self, mode: str) -> bool:
        """True when ``mode``'s columns were never read, or read for another filter."""
        return self.paged.get(mode) != self.query.text

    def set_tally(self, tally: Tally, shown: Tally | None = None) -> bool:
        """New counts. Counts by status only keep the owners' from before
        for the owner view's columns, and its pages are read again when next shown."""
        if not tally.by_owner:
            self.paged.pop(OWNER, None)
            owners = {o for _, o, n in self.tally.rows if o and n}
            self.owners_seen |= owners
        changed = tally != self.tally or shown != self.shown
        self.tally, self.shown = tally, shown
        return changed

    def apply_cards(self, cards: Iterable[CardView], live: bool = True) -> set[int]:
        """Take newer views of cards; returns the ids that changed. An older
        view (a late poll after our own write) never replaces a newer one.
        A card in hand that changed column moves its count at once (the
        store's counts follow with the change poller's next read)."""
        changed: set[int] = set()
        for card in cards:
            old = self.cards.get(card.id)
            if old is not None and old.version > card.version:
                continue
            if old != card:
                self.cards[card.id] = card
                changed.add(card.id)
                if live:
                    self.live.add(card.id)
                if old is not None and (old.status, old.owner) != (card.status, card.owner):
                    self._recount(old, card)
        return changed

    def _recount(self, old: CardView, new: CardView) -> None:
        def moved(tally: Tally, passes) -> Tally:
            rows = {(st, ow): n for st, ow, n in tally.rows}
            was, now = (
                (old.status, old.owner if tally.by_owner else None),
                (new.status, new.owner if tally.by_owner else None),
            )
            if passes(old):
                rows[was] = max(0, rows.get(was, 0) - 1)
            if passes(new):
                rows[now] = rows.get(now, 0) + 1
            return Tally(tuple((st, ow, n) for (st, ow), n in rows.items() if n), tally.by_owner)

        self.tally = moved(self.tally, lambda c: True)
        if self.shown is not None:
            self.shown = moved(self.shown, self.query.matches)

    def set_agents(self, agents: Iterable[AgentView]) -> bool:
        ids = sorted(a.id for a in agents)
        if ids == self.agents:
            return False
        self.agents = ids
        return True

    def set_pending(self, gates: Iterable[GateView]) -> tuple[list[GateView], list[int]]:
        """Replace the pending gates; returns (new gates, gone gate ids)."""
        fresh = {g.id: g for g in gates}
        new = [g for gid, g in sorted(fresh.items()) if gid not in self.pending]
        gone = [gid for gid in self.pending if gid not in fresh]
        self.pending = fresh
        return new, gone

    # -- columns ---------------------------------------------------------------
    def columns(self) -> list[Column]:
        return self._columns(self.mode)

    def _columns(self, mode: str) -> list[Column]:
        if mode == STATUS:
            return [Column(key, title) for key, title, _ in STATUS_COLUMNS]
        owners = (
            set(self.agents)
            | {c.owner for c in self.cards.values() if c.owner}
            | {o for _, o, n in self.tally.rows if o and n}
        )
        if not self.tally.by_owner:
            owners |= self.owners_seen
        return [Column(a, a) for a in sorted(owners)] + [Column(UNASSIGNED, "Unassigned")]

    def column_of(self, card: CardView) -> str:
        return self._column_of(self.mode, card)

    @staticmethod
    def _column_of(mode: str, card: CardView) -> str:
        if mode == STATUS:
            return COLUMN_OF.get(card.status, "ready")
        return card.owner or UNASSIGNED

    def column_title(self, key: str) -> str:
        for col in self.columns():
            if col.key == key:
                return col.title
        return key

    def column_total(self, key: str) -> int:
        """How many cards the column holds in the store (passing the filter)."""
        counts = (self.shown or self.tally).by_column(self.mode)
        return counts.get(None if key == UNASSIGNED and self.mode == OWNER else key, 0)

    def column_cards(self, key: str) -> list[CardView]:
        """The cards of the column in hand that pass the filter, in display
        order, up to how far the column has been read (a column not read yet,
        Done before it is asked for, shows the cards that moved into it while
        the board was open)."""
        frontier = self.frontier.get((self.mode, key))
        sort = _sort_key(self.mode, key)
        cards = [c for c in self.cards.values() if self.column_of(c) == key and self.query.matches(c)]
        if frontier is None:
            cards = [c for c in cards if c.id in self.live]
        elif frontier is not COMPLETE:
            cards = [c for c in cards if sort(c) <= frontier]
        cards.sort(key=sort)
        return cards

    def unread(self, key: str) -> bool:
        """True while the column has cards not read from the store yet."""
        return self.frontier.get((self.mode, key)) is not COMPLETE

    def next_offset(self, key: str) -> int:
        return self.read.get((self.mode, key), 0)

    def grouped(self) -> dict[str, list[CardView]]:
        """All columns at once."""
        return {col.key: self.column_cards(col.key) for col in self.columns()}

    # -- what a drop means -------------------------------------------------------
    def drop(self, card: CardView, target: str) -> Drop:
        source = self.column_of(card)
        if self.mode == STATUS and target == "ready" and card.status == "backlog":
            return Drop("move", "ready")  # Ready holds the backlog too: dropping there readies it
        if target == source:
            return Drop(None, None, "")  # dropped where it was: nothing to do
        if self.mode == OWNER:
            return Drop("assign", None if target == UNASSIGNED else target)
        if target == "ready":
            return Drop("move", "ready")
        if target == "done":
            return Drop("move", "cancelled")
        why = {
            "active": "a card becomes active only when an agent claims it (`loopx next --claim`)",
            "needs_you": "a card needs you only when an agent asks a gate or it pauses",
            "blocked": "a card is blocked only by an open dependency or a rejected gate",
        }[target]
        return Drop(None, None, f"cannot move {card.key} to {self.column_title(target)}: {why}")

    def neighbour(self, key: str, step: int) -> str | None:
        keys = [c.key for c in self.columns()]
        if key not in keys:
            return None
        i = keys.index(key) + step
        return keys[i] if 0 <= i < len(keys) else None

    # -- header figures ----------------------------------------------------------
    def counts(self) -> dict[str | None, int]:
        """Cards per status column, of the whole board."""
        return self.tally.by_column(STATUS)

    def total(self) -> int:
        return self.tally.total()
