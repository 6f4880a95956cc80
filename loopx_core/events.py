"""The event log: every change appends one row in the same transaction."""

from __future__ import annotations

from . import clock, hotsql
from .models import Event
from .values import EventView

# The --op-id of the operation being run, stamped on its first event.
_op_id: str | None = None


def set_op_id(op_id: str | None) -> None:
    global _op_id
    _op_id = op_id


def emit(actor: str, kind: str, card: int | None = None, /, **data) -> int:
    global _op_id
    op_id, _op_id = _op_id, None
    row = hotsql.insert_row(Event(at=clock.now(), actor=actor, card=card, kind=kind, data=data, op_id=op_id))
    return row.seq


def view(row: Event) -> EventView:
    return EventView(seq=row.seq, at=row.at, actor=row.actor, card=row.card, kind=row.kind, data=row.data or {}, op_id=row.op_id)


def since(seq: int = 0, *, card: int | None = None, limit: int | None = None) -> list[EventView]:
    query = Event.select().where(Event.seq > seq)
    if card is not None:
        query = query.where(Event.card == card)
    query = query.order_by(Event.seq)
    if limit is not None:
        query = query.limit(limit)
    return [view(row) for row in query]


def latest(card: int, limit: int) -> list[EventView]:
    rows = list(Event.select().where(Event.card == card).order_by(Event.seq.desc()).limit(limit))
    return [view(row) for row in reversed(rows)]
