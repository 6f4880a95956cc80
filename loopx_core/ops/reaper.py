"""The clock's moves, with no daemon: a transaction that reads a card first
reaps what the clock alone made due on it (``rules/lifecycle.DUE``: an expired
lease, an overdue gate — failed closed: expiry is a rejection — a spent window
refilled). An operator reads its card as ``reap_card(card_row(id))``: the
row, locked for the transaction, then the clock's moves on it — two steps,
named where they happen (a read that reaps hid the write inside a "load")."""

from __future__ import annotations

from ..rules import clock, ids
from ..rules.lifecycle import (
    DUE,
    DUE_SQL,
    GATE,
    LEASE,
    WINDOW,
    due_sql,
    due_where,
    is_due,
    next_sql,
)
from ..store import events, records
from ..store.records import Card, Gate
from ..store.rows import card_row, touch
from . import quota
from .lifecycle import SYSTEM, block_on_gate, clear_lease, move


def reap_card(card: Card, now: float | None = None) -> Card:
    """Apply what the clock alone made due on ``card`` (inside the caller's
    write transaction); returns the same card."""
    now = clock.now() if now is None else now
    overdue = Gate.where(f'WHERE "card_id" = ? AND {due_where(GATE)} ORDER BY "id"', (card.id, now))
    for gate in overdue:
        gate.status, gate.answer, gate.answered_by, gate.answered_at = "expired", "rejected", "system:deadline", now
        gate.save()
        events.emit(SYSTEM, "gate_expired", card.id, gate=ids.fmt(ids.GATE, gate.id))
    if overdue:
        block_on_gate(card, overdue[0], now)
    if is_due(LEASE, card, now):
        holder, token = card.lease_holder, card.lease_token
        move(card, "ready", "lease_expired")
        clear_lease(card)
        events.emit(SYSTEM, "lease_expired", card.id, holder=holder, token=token)
        quota.hold(card)
        touch(card, now)
    if is_due(WINDOW, card, now):
        status = quota.settle(card, now)  # its window refilled: it goes back to work by itself
        if status is not None:
            events.emit(SYSTEM, "resumed", card.id, reason="window", status=status)
        touch(card, now)
    return card


def reap_due(now: float | None = None, agent: str | None = None) -> None:
    """Reap every card the clock made due (optionally one agent's)."""
    now = clock.now() if now is None else now
    mine = agent is not None
    card_ids: set[int] = set()
    for due in DUE:
        card_ids.update(
            c for (c,) in records.rows(due_sql(due, f'"{due.card}"', mine=mine), (now, agent) if mine else (now,))
        )
    for card_id in sorted(card_ids):
        reap_card(card_row(card_id), now)


def has_due(now: float | None = None) -> bool:
    """A cheap read-only probe, so read commands only take the write lock when
    needed. The same SQL (``lifecycle.DUE_SQL``) tells the peewee-free list
    reader to leave the read to the kernel."""
    now = clock.now() if now is None else now
    return bool(records.rows(DUE_SQL, (now,) * len(DUE)))


def next_due() -> float | None:
    """The next time the board changes by the clock alone — a lease running out,
    a gate's deadline, a spent window refilling — or None. A sleeping runner
    wakes then: none of these writes an event until someone reads the card."""
    found = [t for t in (records.scalar(next_sql(due)) for due in DUE) if t is not None]
    return min(found) if found else None
