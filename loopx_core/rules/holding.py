"""Which cards an agent holds, and which one is *its card* right now.

One rule for every reader: ``loopx next`` (``claims.next_turn``), the hooks
(the PreToolUse gate, the Stop hook's usage charge and evidence check), the
hook's sqlite3 reader (``adapters.fastcheck``) and the watcher (observed
artifacts). DESIGN §5 "next": work the agent can do
now comes first — an active card, then a monitored card that is due, then a
pending gate (waiting), then a paused card; a monitored card that is not due
comes last. Ties go to the higher priority (the lower number), then the older
card. Standard library only: the PreToolUse hook imports it cold.
"""

from __future__ import annotations

TYPE_CHECKING = False  # (annotations only: typing is not imported on the cold path; checkers read this as typing's)
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable
    from typing import Any, Protocol, TypeVar

    class HeldCard(Protocol):
        """What the choice reads of a card: a row of the kernel's or the hook's reader."""

        @property
        def id(self) -> int: ...
        @property
        def status(self) -> str: ...
        @property
        def monitor_due(self) -> float | None: ...
        @property
        def priority(self) -> int: ...

    CardT = TypeVar("CardT", bound=HeldCard)
    # ``query(sql, params)``: the (card id, gate kind) rows of the board's reader.
    KindsQuery = Callable[[str, tuple[int, ...]], Iterable[tuple[int, str]]]

# Statuses in which a card keeps its lease holder: the agent "holds" it.
HELD = ("active", "waiting", "monitoring", "paused")

ACTIVE, DUE, WAITING, PAUSED, SLEEPING, MERGING, NOT_HELD = range(7)

MERGE_GATE = "merge"  # the kind of gate a card's merge waits on (ops/merges)


def pending_kinds_sql(count: int) -> str:
    """The pending gates' (card, kind) of ``count`` cards (plain SQL, both backends)."""
    return f"""SELECT "card_id", "kind" FROM "gate" WHERE "status" = 'pending' AND "card_id" IN ({", ".join("?" * count)})"""


def merging(cards: Iterable[HeldCard], query: KindsQuery) -> frozenset[int]:
    """The ids of the waiting ``cards`` whose every pending gate is a merge
    gate: the person decides the merge, the agent has nothing left to do there.
    ``query(sql, params)`` reads the board (the kernel's or the hook's reader)."""
    waiting = [card.id for card in cards if card.status == "waiting"]
    if not waiting:
        return frozenset()
    kinds: dict[int, set[str]] = {}
    for card_id, kind in query(pending_kinds_sql(len(waiting)), tuple(waiting)):
        kinds.setdefault(card_id, set()).add(kind)
    return frozenset(card_id for card_id, found in kinds.items() if found == {MERGE_GATE})


def owner_of(status: str, lease_holder: str | None, handoff_to: str | None, assignee: str | None) -> str | None:
    """Whose card it is, as every view shows it: its lease holder while held,
    the receiver of a pending handoff, else its assignee."""
    if lease_holder and status in HELD:
        return lease_holder
    return handoff_to if status == "handoff" else assignee


def rank(status: str, monitor_due: float | None, now: float, on_merge: bool = False) -> int:
    """Where a held card stands in the choice order (lower: chosen first).
    ``on_merge``: the card waits only on its merge gate (``merging``)."""
    if status == "active":
        return ACTIVE
    if status == "monitoring":
        return DUE if monitor_due is not None and monitor_due <= now else SLEEPING
    if status == "waiting":
        return MERGING if on_merge else WAITING
    if status == "paused":
        return PAUSED
    return NOT_HELD


def order(card: HeldCard, now: float, on_merge: frozenset[int] = frozenset()) -> tuple[int, int, int]:
    """Sort key for anything with ``status``, ``monitor_due``, ``priority``, ``id``
    (``on_merge``: the ids ``merging`` found)."""
    return (rank(card.status, card.monitor_due, now, card.id in on_merge), card.priority, card.id)


# (truly ``CardT | None``: Any until ops/claims.next_turn narrows on ``card``,
# not only on its rank — ops/ is being moved by other branches of #41.)
def choose(cards: Iterable[CardT], now: float, on_merge: frozenset[int] = frozenset()) -> Any:
    """The agent's card among ``cards`` (all held by it), or None."""
    best: CardT | None = None
    for card in cards:
        if card.status in HELD and (best is None or order(card, now, on_merge) < order(best, now, on_merge)):
            best = card
    return best
