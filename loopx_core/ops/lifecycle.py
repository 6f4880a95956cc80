"""The card lifecycle's writes (DESIGN §4): the one place a card's status is
set — at birth (``create``) and on every move (``move``), checked against
``rules/lifecycle.ENTERS``, the table the replay folds — and the moves every operator shares — a lease cleared, pending
gates withdrawn, a card blocked by a gate that said no. The reaper applies the
clock's moves (``ops/reaper``); the budget's are ``ops/quota``. This module
imports no other operator, so leases, quota and the reaper all build on it."""

from __future__ import annotations

from ..rules import ids
from ..rules.lifecycle import may_enter
from ..shapes.errors import Conflict
from ..store import events, records
from ..store.records import Card, Gate
from ..store.rows import card_view, touch

TYPE_CHECKING = False  # (annotations only: typing is not imported on the cold path; checkers read this as typing's)
if TYPE_CHECKING:
    from typing import Any

SYSTEM = "system"
GATE_BLOCK = "gate "  # how a blocked_reason starts when a gate said no


def create(*, backlog: bool, waiting_on: list[int], **fields: Any) -> Card:
    """A new card (inside the caller's transaction): in the backlog when asked,
    ``blocked`` while a card it comes after is not done, else ``ready``. Its
    ``card_added`` event records the status (``Card.status`` says which)."""
    status = "backlog" if backlog else ("blocked" if waiting_on else "ready")
    if not may_enter("card_added", status):  # pragma: no cover - the three above are in the table
        raise AssertionError(f"a card cannot be added as {status!r}")
    reason = ("waiting on " + ", ".join(ids.key(ids.CARD, d) for d in waiting_on)) if waiting_on else None
    return Card.create(status=status, blocked_reason=reason, **fields)


def move(card: Card, to: str, kind: str) -> None:
    """Put ``card`` in status ``to``; ``kind`` is the event its operator
    writes for the move (the replay reads the same table)."""
    if not may_enter(kind, to):
        raise AssertionError(f"the lifecycle has no move to {to!r} recorded by {kind!r}")
    card.status = to


def withdraw_pending(card: Card, now: float, why: str) -> None:
    for gate in Gate.where("""WHERE "card_id" = ? AND "status" = 'pending' ORDER BY "id" """, (card.id,)):
        gate.status, gate.answered_by, gate.answered_at, gate.note = "withdrawn", SYSTEM, now, why
        gate.save()
        events.emit(SYSTEM, "gate_withdrawn", card.id, gate=ids.fmt(ids.GATE, gate.id), reason=why)


def clear_lease(card: Card) -> None:
    card.lease_holder = None
    card.lease_token = None
    card.lease_expires = None


def block_on_gate(card: Card, gate: Gate, now: float) -> None:
    """The one rule for a gate that said no — rejected by a person, or expired
    (fail closed): its card is ``blocked`` whatever its status (a done or
    cancelled card stays so). The lease is revoked, the card's other pending
    gates are withdrawn and a pending handoff is void, so no agent operator can
    put work on the card again; only a person's move (to ready or backlog) does."""
    if card.status in ("done", "cancelled"):
        return
    key = ids.fmt(ids.GATE, gate.id)
    why = f"{key} expired unanswered" if gate.status == "expired" else f"{key} was rejected"
    withdraw_pending(card, now, why)
    if card.status == "handoff":
        offer = records.scalar('SELECT "id" FROM "handoff" WHERE "card_id" = ? ORDER BY "id" DESC LIMIT 1', (card.id,))
        events.emit(
            SYSTEM,
            "handoff_void",
            card.id,
            handoff=ids.fmt(ids.HANDOFF, offer) if offer else None,
            to=card.handoff_to,
            reason=why,
        )
    move(card, "blocked", "gate_expired" if gate.status == "expired" else "gate_answered")
    what = "expired unanswered" if gate.status == "expired" else "rejected" + (f": {gate.note}" if gate.note else "")
    card.blocked_reason = f"{GATE_BLOCK}{key} {what}"
    clear_lease(card)
    card.handoff_to = card.paused_reason = card.monitor_due = None
    touch(card, now)


def gate_blocked(card: Card) -> Conflict | None:
    """The refusal for any agent operator on a card a gate blocked (None: it is not)."""
    if card.status != "blocked" or not (card.blocked_reason or "").startswith(GATE_BLOCK):
        return None
    key = ids.fmt(ids.CARD, card.id)
    return Conflict(
        f"{key} is blocked: {card.blocked_reason}",
        f"do not work on it; only a person puts it back to work: `loopx card move {key} --to ready` (or `--to backlog`)",
        code="gate_blocked",
        data={"card": card_view(card).to_json()},
    )
