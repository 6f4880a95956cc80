"""The board as the TUI holds it: plain values from loopx_core, grouped into
columns, filtered and sorted. No Textual and no database here, so the rules
(which column a card is in, what a drop onto a column means) are easy to test."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable, NamedTuple

from loopx_core.rules.columns import COLUMN_OF, STATUS_COLUMNS

# What ``status:`` / ``is:`` accepts: a status, or a column of the status view.
KNOWN_STATUSES = tuple(COLUMN_OF) + tuple(key for key, _, _ in STATUS_COLUMNS if key not in COLUMN_OF)
from loopx_core.shapes.values import AgentView, CardView, GateView

STATUS, OWNER = "status", "owner"
UNASSIGNED = "@unassigned"

# How many cards a column mounts at first: a screenful (a card is 5 rows).
# Going down past the last one (keys or the mouse wheel) mounts the next
# screenful; the rest is counted ("+N more") and reachable by filtering.
COLUMN_LIMIT = 12
COLUMN_STEP = 12

# Within a column, the cards that need attention come first.
_STATUS_RANK = {s: i for i, s in enumerate(("waiting", "paused", "active", "handoff", "monitoring", "ready", "blocked", "backlog", "done", "cancelled"))}


class Column(NamedTuple):
    key: str
    title: str


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
    def parse(cls, text: str) -> "Query":
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
        return cls(text=text.strip(), words=tuple(words), owners=tuple(owners), statuses=tuple(statuses), errors=tuple(errors))

    @property
    def active(self) -> bool:
        return bool(self.words or self.owners or self.statuses or self.errors)

    def matches(self, card: CardView) -> bool:
        if self.owners:
            owner = (card.owner or "unassigned").lower()
            if not any(o == owner or (o in ("none", "unassigned", "-") and card.owner is None) or owner.startswith(o) for o in self.owners):
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


@dataclass
class BoardModel:
    cards: dict[int, CardView] = field(default_factory=dict)
    agents: list[str] = field(default_factory=list)
    pending: dict[int, GateView] = field(default_factory=dict)  # gate id -> gate
    mode: str = STATUS
    query: Query = field(default_factory=Query)
    objective: str = ""
    seq: int = 0
    runners: dict = field(default_factory=dict)  # agent -> loopx_core.ops.runners.RunnerView

    # -- loading and applying -------------------------------------------------
    def load(self, cards: Iterable[CardView], agents: Iterable[AgentView], pending: Iterable[GateView], seq: int, objective: str = "") -> None:
        self.cards = {c.id: c for c in cards}
        self.agents = sorted(a.id for a in agents)
        self.pending = {g.id: g for g in pending}
        self.seq = seq
        self.objective = objective

    def apply_cards(self, cards: Iterable[CardView]) -> set[int]:
        """Take newer views of cards; returns the ids that changed. An older
        view (a late poll after our own write) never replaces a newer one."""
        changed: set[int] = set()
        for card in cards:
            old = self.cards.get(card.id)
            if old is not None and old.version > card.version:
                continue
            if old != card:
                self.cards[card.id] = card
                changed.add(card.id)
        return changed

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
        if self.mode == STATUS:
            return [Column(key, title) for key, title, _ in STATUS_COLUMNS]
        owners = set(self.agents) | {c.owner for c in self.cards.values() if c.owner}
        return [Column(a, a) for a in sorted(owners)] + [Column(UNASSIGNED, "Unassigned")]

    def column_of(self, card: CardView) -> str:
        if self.mode == STATUS:
            return COLUMN_OF.get(card.status, "ready")
        return card.owner or UNASSIGNED

    def column_title(self, key: str) -> str:
        for col in self.columns():
            if col.key == key:
                return col.title
        return key

    def column_cards(self, key: str) -> list[CardView]:
        """Every card of the column that passes the filter, in display order."""
        cards = [c for c in self.cards.values() if self.column_of(c) == key and self.query.matches(c)]
        cards.sort(key=_status_sort(key) if self.mode == STATUS else _owner_sort)
        return cards

    def grouped(self) -> dict[str, list[CardView]]:
        """All columns at once (one pass over the cards)."""
        out: dict[str, list[CardView]] = {col.key: [] for col in self.columns()}
        for card in self.cards.values():
            if self.query.matches(card):
                out.setdefault(self.column_of(card), []).append(card)
        for key, cards in out.items():
            cards.sort(key=_status_sort(key) if self.mode == STATUS else _owner_sort)
        return out

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
    def counts(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for card in self.cards.values():
            key = COLUMN_OF.get(card.status, "ready")
            out[key] = out.get(key, 0) + 1
        return out
