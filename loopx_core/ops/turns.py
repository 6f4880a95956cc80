"""Did a turn leave evidence? The runner's check after each turn (DESIGN §10
"Runners"): an agent's own report — a writeback (not usage measured from a
transcript, not a failed turn the runner recorded, not an inbox document that
only names it) — or a handoff it made. The Stop hook's check (``stop_check``)
is older and looser: any evidence but measured usage counts."""

from __future__ import annotations

from typing import NamedTuple

from ..rules import clock
from ..store.models import Event, Evidence, Handoff
from ..store.orm import peewee as pw
from . import leases
from .writeback import NOT_REPORTS


class Marks(NamedTuple):
    """Where the board's evidence and handoffs stood when a turn began."""

    evidence: int
    handoff: int


def marks(store) -> Marks:
    with store.read():
        return Marks(
            int(Evidence.select(pw.fn.MAX(Evidence.id)).scalar() or 0),
            int(Handoff.select(pw.fn.MAX(Handoff.id)).scalar() or 0),
        )


def wrote_since(store, agent: str, since: Marks) -> bool:
    with store.read():
        return (
            Evidence.select(Evidence.id).where((Evidence.id > since.evidence) & (Evidence.agent == agent) & Evidence.source.not_in(NOT_REPORTS) & (Evidence.unverified == False)).exists()  # noqa: E712
            or Handoff.select(Handoff.id).where((Handoff.id > since.handoff) & (Handoff.from_agent == agent)).exists()
        )


def charged_card(store, agent: str, started_at: float | None) -> int | None:
    """The card a turn's measured usage is charged to: the agent's card
    (``holding``'s rule), else — it released its card during the turn — the
    card of its last report since the turn began."""
    from .charge import SOURCE

    with store.read():
        card = leases.held_card(agent, clock.now())
        if card is not None:
            return card.id
        if started_at is None:
            return None
        last = (
            Evidence.select(Evidence.card)
            .where((Evidence.agent == agent) & (Evidence.source != SOURCE) & (Evidence.created_at >= started_at))
            .order_by(Evidence.id.desc())
            .first()
        )
        return last.card_id if last else None


class StopCheck(NamedTuple):
    """The Stop hook's question about a turn: on the agent's card, did it report?"""

    card: int
    title: str
    wrote: bool


def _session_mark(agent: str, session) -> float | None:
    """The end of this session's previous turn or its start (events the hook wrote)."""
    rows = (
        Event.select(Event.at, Event.data)
        .where((Event.actor == f"agent:{agent}") & Event.kind.in_(("turn_ended", "session_started")))
        .order_by(Event.seq.desc())
        .limit(50)
    )
    for row in rows:
        if (row.data or {}).get("session") == session:
            return row.at
    return None


def stop_check(store, agent: str, session, started_at: float | None) -> StopCheck | None:
    """Did the agent write evidence (or hand off) during this turn — since
    ``started_at`` (the turn's last prompt), else since the session's previous
    turn? None when it holds no card it could write back to."""
    from .charge import SOURCE

    with store.read():
        card = leases.held_card(agent, clock.now(), ("active", "waiting"))
        if card is None:
            return None
        since = started_at if started_at is not None else _session_mark(agent, session)
        query = Evidence.select(Evidence.id).where((Evidence.agent == agent) & (Evidence.source != SOURCE))
        if since is not None:
            wrote = query.where(Evidence.created_at >= since).exists()
            wrote = wrote or Handoff.select(Handoff.id).where((Handoff.from_agent == agent) & (Handoff.created_at >= since)).exists()
        else:
            wrote = query.where(Evidence.card == card.id).exists()
        return StopCheck(card.id, card.title, bool(wrote))
