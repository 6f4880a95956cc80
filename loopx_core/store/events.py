"""The event log: every change appends one row in the same transaction.

Rows are hash-chained (``chain.py``); an event whose actor is a person
(``human:…``) is signed with that person's key — ``emit`` takes a
``keys.Person`` for those and refuses a bare ``human:`` string, so there is no
way to write a person's decision without their key.
"""

from __future__ import annotations

import contextlib
from contextvars import ContextVar

from ..authority import chain
from ..rules import clock
from ..shapes.errors import Forbidden, UsageError
from ..shapes.values import EventView
from . import records
from .records import Event

TYPE_CHECKING = False  # (annotations only: typing is not imported on the cold path; checkers read this as typing's)
if TYPE_CHECKING:
    from collections.abc import Iterator

    from ..authority.keys import Answers
    from .columns import EventColumns

# The --op-id of the operation being run in this context (thread, task),
# stamped on its first event.
_op_id: ContextVar[str | None] = ContextVar("loopx_op_id", default=None)

HEAD_SQL = 'SELECT "seq", "hash" FROM "event" ORDER BY "seq" DESC LIMIT 1'
INSERT_SQL = 'INSERT INTO "event" ("seq", "at", "actor", "card", "kind", "data", "op_id", "prev", "hash", "key", "sig") VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)'


@contextlib.contextmanager
def stamping(op_id: str) -> Iterator[None]:
    """Stamp ``op_id`` on the first event emitted inside the block."""
    token = _op_id.set(op_id)
    try:
        yield
    finally:
        _op_id.reset(token)


def emit(actor: str | Answers, kind: str, card: int | None = None, /, **data: object) -> int:
    """Append one event (inside the caller's write transaction); returns its seq.
    ``actor`` is an actor string, or a ``keys.Person`` (or a device answering for one) whose key signs it."""
    signer = None if isinstance(actor, str) else actor
    name = actor if isinstance(actor, str) else actor.actor
    if signer is None and name.startswith("human:"):
        raise Forbidden(
            "a person's decision must be signed with their key",
            "unlock your key: run this as the person, not as an agent",
        )
    at = clock.now()
    if not clock.in_range(at):
        raise UsageError(
            f"the clock says {at!r}, which is not a time LoopX can record",
            "fix the system clock (or LOOPX_NOW on a test board)",
            code="bad_time",
        )
    op_id = _op_id.get()
    if op_id is not None:
        _op_id.set(None)
    records.current().before_append()  # (a card-local write on PostgreSQL waits here for the log)
    head = records.rows(HEAD_SQL)
    if head:
        seq, prev = head[0][0] + 1, head[0][1]
    else:
        seq, prev = 1, chain.genesis(records.scalar("""SELECT "value" FROM "setting" WHERE "key" = 'board_uid'"""))
    attests = getattr(signer, "attests", None)  # a device's signer: what its assertion decided (authority/devices)
    if attests is not None:
        data = {**data, "phone": attests}
    text = chain.data_text(data)
    key = signer.fingerprint if signer is not None else None
    digest = chain.event_hash(prev, seq, at, name, card, kind, text, op_id, key)
    sig = signer.sign(chain.signed_message(digest)) if signer is not None else None
    records.execute(INSERT_SQL, (seq, at, name, card, kind, text, op_id, prev, digest, key, sig))
    return seq


def view(row: EventColumns) -> EventView:
    return EventView(
        seq=row.seq,
        at=row.at,
        actor=row.actor,
        card=row.card,
        kind=row.kind,
        data=row.data or {},
        op_id=row.op_id,
        signed=row.sig is not None,
    )


def since(seq: int = 0, *, card: int | None = None, limit: int | None = None) -> list[EventView]:
    conditions = [('"card" = ?', (card,))] if card is not None else []
    return [view(row) for row in Event.page(seq, conditions, limit)]


def latest(card: int, limit: int) -> list[EventView]:
    rows = Event.where('WHERE "card" = ? ORDER BY "seq" DESC LIMIT ?', (card, limit))
    return [view(row) for row in reversed(rows)]
