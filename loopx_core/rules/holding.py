"""Which cards an agent holds, and which one is *its card* right now.

One rule for every reader: ``loopx next`` (``claims.next_turn``), the hooks
(the PreToolUse gate, the Stop hook's usage charge and evidence check), the
hook's sqlite3 reader (``adapters.fastcheck``) and the watcher (observed
artifacts). DESIGN §10 "next with several held cards": work the agent can do
now comes first — an active card, then a monitored card that is due, then a
pending gate (waiting), then a paused card; a monitored card that is not due
comes last. Ties go to the higher priority (the lower number), then the older
card. Standard library only: the PreToolUse hook imports it cold.
"""

from __future__ import annotations

# Statuses in which a card keeps its lease holder: the agent "holds" it.
HELD = ("active", "waiting", "monitoring", "paused")

ACTIVE, DUE, WAITING, PAUSED, SLEEPING, NOT_HELD = range(6)


def owner_of(status: str, lease_holder: str | None, handoff_to: str | None, assignee: str | None) -> str | None:
    """Whose card it is, as every view shows it: its lease holder while held,
    the receiver of a pending handoff, else its assignee."""
    if lease_holder and status in HELD:
        return lease_holder
    return handoff_to if status == "handoff" else assignee


def rank(status: str, monitor_due: float | None, now: float) -> int:
    """Where a held card stands in the choice order (lower: chosen first)."""
    if status == "active":
        return ACTIVE
    if status == "monitoring":
        return DUE if monitor_due is not None and monitor_due <= now else SLEEPING
    if status == "waiting":
        return WAITING
    if status == "paused":
        return PAUSED
    return NOT_HELD


def order(card, now: float) -> tuple:
    """Sort key for anything with ``status``, ``monitor_due``, ``priority``, ``id``."""
    return (rank(card.status, card.monitor_due, now), card.priority, card.id)


def choose(cards, now: float):
    """The agent's card among ``cards`` (all held by it), or None."""
    best = None
    for card in cards:
        if card.status in HELD and (best is None or order(card, now) < order(best, now)):
            best = card
    return best
