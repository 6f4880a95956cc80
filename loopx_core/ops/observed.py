"""What the watcher writes and reads on the board (``watch/ingest.py`` calls
these inside its own transactions): observed artifacts on the card an agent
holds, where each stream was read up to, and the keys of what was handled."""

from __future__ import annotations

from typing import NamedTuple

from ..rules import clock, holding
from ..store import events
from ..store.models import Agent, Card, Event, IngestSeen, IngestStream, Observed
from . import leases

TYPE_CHECKING = False  # (annotations only: typing is not imported on the cold path; checkers read this as typing's)
if TYPE_CHECKING:
    from ..store.base import Store


class StreamMark(NamedTuple):
    """How far a JSONL stream was read, and what its bytes were there."""

    inode: int | None
    offset: int
    lines: int
    head: str | None
    tail: str | None


def seen_keys() -> set[str]:
    return {k for (k,) in IngestSeen.select(IngestSeen.key).tuples()}


def stream_mark(path: str) -> StreamMark | None:
    row = IngestStream.get_or_none(IngestStream.path == path)
    return StreamMark(row.inode, row.offset, row.lines, row.head, row.tail) if row is not None else None


def save_stream_mark(path: str, mark: StreamMark, before: StreamMark | None, now: float) -> None:
    values = mark._asdict()
    if before is None:
        IngestStream.insert(path=path, updated_at=now, **values).on_conflict(
            conflict_target=[IngestStream.path], update=dict(values, updated_at=now)
        ).execute()
    elif mark != before:
        IngestStream.update(updated_at=now, **values).where(IngestStream.path == path).execute()


def card_exists(card_id: int) -> bool:
    return Card.select(Card.id).where(Card.id == card_id).exists()


def lease_start(card_id: int) -> float:
    """When the card's holder took it (its claim or accepted handoff)."""
    row = (
        Event.select(Event.at)
        .where((Event.card == card_id) & Event.kind.in_(("claimed", "handoff_accepted")))
        .order_by(Event.seq.desc())
        .first()
    )
    return row.at if row else 0.0


def holding_since(agent: str) -> tuple[int, float] | None:
    """The agent's card (``holding``'s rule) and when its lease began."""
    card = leases.held_card(agent, clock.now())
    return (card.id, lease_start(card.id)) if card is not None else None


def record_observed(agent: str, card_id: int, show: str, size: int, sha: str) -> bool:
    """Record that ``show`` changed on ``agent``'s card; False when the agent no
    longer holds it or the file is as last recorded."""
    card = Card.get_or_none(Card.id == card_id)
    if card is None or card.lease_holder != agent or card.status not in holding.HELD:
        return False
    last = (
        Observed.select()
        .where((Observed.card == card_id) & (Observed.path == show))
        .order_by(Observed.id.desc())
        .first()
    )
    if last is not None and last.size == size and last.sha256 == sha:
        return False
    row = Observed.create(card=card_id, agent=agent, path=show, size=size, sha256=sha, created_at=clock.now())
    events.emit("system", "artifact_observed", card_id, agent=agent, path=show, size=size, sha256=sha, observed=row.id)
    return True


def agent_folders(store: Store) -> list[tuple[str, str]]:
    """(agent, folder) for every registered agent's watch folders."""
    with store.read():
        return [(a.id, w) for a in Agent.select(Agent.id, Agent.watch).order_by(Agent.id) for w in (a.watch or [])]


def is_seen(store: Store, key: str) -> bool:
    """Was this key (a document's content, a refusal) handled before, here or by another watcher?"""
    p = store.db.param
    return store.db.execute_sql(f"SELECT 1 FROM ingest_seen WHERE key = {p}", (key,)).fetchone() is not None


def mark_seen(store: Store, key: str, outcome: str, path: str, line: int | None, card: int | None) -> None:
    """Record a handled key. Plain SQL on this hot path (one per document): peewee's
    query building costs more than the statement. ON CONFLICT DO NOTHING: SQLite and PostgreSQL alike."""
    p = store.db.param
    store.db.execute_sql(
        f"INSERT INTO ingest_seen (key, outcome, path, line, card, created_at) VALUES ({p}, {p}, {p}, {p}, {p}, {p}) ON CONFLICT DO NOTHING",
        (key, outcome, path, line, card, clock.now()),
    )


def refused_count(path: str) -> int:
    """How many refusals of ``path`` (a stream, as shown) the board holds."""
    return IngestSeen.select().where((IngestSeen.path == path) & (IngestSeen.outcome == "refused")).count()


def ingest_error(card: int | None, **data: object) -> None:
    """A document the watcher refused, on the board once (an ``ingest_error`` event)."""
    events.emit("system", "ingest_error", card, **data)
