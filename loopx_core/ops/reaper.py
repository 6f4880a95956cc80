"""Housekeeping with no daemon: any transaction that reads a card first reaps
its expired lease and fails its overdue gates (closed: expiry is a rejection)."""

from __future__ import annotations

from ..rules import clock, ids
from ..rules.holding import DUE_SQL
from ..shapes.errors import Conflict
from ..store import events, records
from ..store.records import Card, Gate
from ..store.rows import card_row, card_view, touch
from . import quota

SYSTEM = "system"
GATE_BLOCK = "gate "  # how a blocked_reason starts when a gate said no


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
        events.emit(SYSTEM, "handoff_void", card.id, handoff=ids.fmt(ids.HANDOFF, offer) if offer else None, to=card.handoff_to, reason=why)
    card.status = "blocked"
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


def reap_card(card: Card, now: float | None = None) -> Card:
    now = clock.now() if now is None else now
    overdue = Gate.where("""WHERE "card_id" = ? AND "status" = 'pending' AND "deadline" <= ? ORDER BY "id" """, (card.id, now))
    for gate in overdue:
        gate.status, gate.answer, gate.answered_by, gate.answered_at = "expired", "rejected", "system:deadline", now
        gate.save()
        events.emit(SYSTEM, "gate_expired", card.id, gate=ids.fmt(ids.GATE, gate.id))
    if overdue:
        block_on_gate(card, overdue[0], now)
    if card.status == "active" and card.lease_expires is not None and card.lease_expires <= now:
        holder, token = card.lease_holder, card.lease_token
        card.status = "ready"
        clear_lease(card)
        events.emit(SYSTEM, "lease_expired", card.id, holder=holder, token=token)
        quota.hold(card)
        touch(card, now)
    if card.status == "paused" and card.paused_reason == "window" and card.wake_at is not None and card.wake_at <= now:
        status = quota.settle(card, now)  # its window refilled: it goes back to work by itself
        if status is not None:
            events.emit(SYSTEM, "resumed", card.id, reason="window", status=status)
        touch(card, now)
    return card


def load_card(card_id: int) -> Card:
    """The card, locked for this transaction, with lazy housekeeping applied."""
    return reap_card(card_row(card_id))


def reap_due(now: float | None = None, agent: str | None = None) -> None:
    """Reap every card with an expired lease or an overdue gate (optionally one agent's)."""
    now = clock.now() if now is None else now
    mine, who = ("", ()) if agent is None else (' AND "lease_holder" = ?', (agent,))
    card_ids = {c for (c,) in records.rows(f"""SELECT "id" FROM "card" WHERE "status" = 'active' AND "lease_expires" <= ?{mine}""", (now, *who))}
    refilled = f"""SELECT "id" FROM "card" WHERE "status" = 'paused' AND "paused_reason" = 'window' AND "wake_at" <= ?{mine}"""
    card_ids.update(c for (c,) in records.rows(refilled, (now, *who)))
    asked = "" if agent is None else ' AND "agent" = ?'
    card_ids.update(c for (c,) in records.rows(f"""SELECT "card_id" FROM "gate" WHERE "status" = 'pending' AND "deadline" <= ?{asked}""", (now, *who)))
    for card_id in sorted(card_ids):
        reap_card(card_row(card_id), now)


def has_due(now: float | None = None) -> bool:
    """A cheap read-only probe, so read commands only take the write lock when
    needed. The same SQL (``holding.DUE_SQL``) tells the peewee-free list reader
    to leave the read to the kernel."""
    now = clock.now() if now is None else now
    return bool(records.rows(DUE_SQL, (now, now, now)))


def next_due() -> float | None:
    """The next time the board changes by the clock alone — a lease running out,
    a gate's deadline, a spent window refilling — or None. A sleeping runner
    wakes then: none of these writes an event until someone reads the card."""
    times = [
        records.scalar("""SELECT MIN("lease_expires") FROM "card" WHERE "status" = 'active'"""),
        records.scalar("""SELECT MIN("deadline") FROM "gate" WHERE "status" = 'pending'"""),
        records.scalar("""SELECT MIN("wake_at") FROM "card" WHERE "status" = 'paused' AND "paused_reason" = 'window'"""),
    ]
    found = [t for t in times if t is not None]
    return min(found) if found else None
