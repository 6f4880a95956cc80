"""Did a turn report? One rule, asked by the runner after each turn
(``wrote_since``) and by the Stop hook before a turn ends (``stop_check``):
the agent's own report — a writeback (not usage measured from a transcript,
not a failed turn the runner recorded, not an inbox document that only names
it) — or a handoff it made (DESIGN §10 "Runners", "One rule: did a turn
report?"). The two differ only in *since when*: the runner marks the board's
last evidence and handoff before it starts the turn; the hook knows only
times (the turn's last prompt in the transcript, else the session's previous
turn) — tests/adapters/test_turn_rule.py holds them to the same answers.

And the runner's other reads around a turn (what it may still spend, a
card's state, the cards to release when it stops, the events that woke it),
and the hooks' bookkeeping notes (``note``): the runner and the hooks call
these operators, never the models or the event log.
"""

from __future__ import annotations

from typing import NamedTuple

from ..rules import clock
from ..store import events
from ..store.models import Agent, Card, Event, Evidence, Handoff
from ..store.orm import peewee as pw
from . import leases, quota
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


def _reported(agent: str, evidence_since, handoff_since) -> bool:
    """THE rule: since the given marks (conditions on the rows), did ``agent``
    report — its own evidence that is a report (``NOT_REPORTS`` excluded, and
    no unverified inbox document), or a handoff it made? ``handoff_since``
    None: handoffs are not looked at."""
    reports = (Evidence.agent == agent) & Evidence.source.not_in(NOT_REPORTS) & (Evidence.unverified == False)  # noqa: E712
    if Evidence.select(Evidence.id).where(reports & evidence_since).exists():
        return True
    return handoff_since is not None and Handoff.select(Handoff.id).where((Handoff.from_agent == agent) & handoff_since).exists()


def wrote_since(store, agent: str, since: Marks) -> bool:
    """The runner's check after a turn: a report since the marks taken before it began."""
    with store.read():
        return _reported(agent, Evidence.id > since.evidence, Handoff.id > since.handoff)


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


HOOK_NOTES = ("session_started", "turn_ended")


def note(store, agent: str, kind: str, card_id: int | None, **data) -> None:
    """The hooks' bookkeeping on the board: a session started, a turn ended (the
    Stop hook's "since when" reads them back, ``_session_mark``)."""
    if kind not in HOOK_NOTES:
        raise ValueError(f"not a hook's note: {kind}")
    store.run(lambda: events.emit(f"agent:{agent}", kind, card_id, **data))


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
    """The Stop hook's check: did the agent report (``_reported``) during this
    turn — since ``started_at`` (the turn's last prompt), else since the
    session's previous turn, else ever on its card? None when it holds no card
    it could write back to."""
    with store.read():
        card = leases.held_card(agent, clock.now(), ("active", "waiting"))
        if card is None:
            return None
        since = started_at if started_at is not None else _session_mark(agent, session)
        if since is not None:
            wrote = _reported(agent, Evidence.created_at >= since, Handoff.created_at >= since)
        else:
            wrote = _reported(agent, Evidence.card == card.id, None)
        return StopCheck(card.id, card.title, wrote)


# -- the runner's reads around a turn (runner/loop.py calls operators, never the models) --

def room(store, card_id: int, agent: str) -> tuple[float | None, float | None]:
    """Tokens and dollars the card may still spend this turn (its budget, its
    window, the agent's window): None where nothing limits it."""
    now = clock.now()
    with store.read():
        card = Card.get_by_id(card_id)
        agent_row = Agent.get_by_id(agent)
        tokens, usd = [], []
        if card.max_tokens is not None:
            tokens.append(card.max_tokens - card.used_tokens)
        if card.max_usd is not None:
            usd.append(card.max_usd - card.used_usd)
        for window, (used, _) in ((quota.card_window(card), quota.card_window_state(card, now)), (quota.agent_window(agent_row), quota.agent_window_state(agent_row, now))):
            if window is not None and window.tokens is not None:
                tokens.append(window.tokens - used["tokens"])
            if window is not None and window.usd is not None:
                usd.append(window.usd - used["usd"])
    return (min(tokens) if tokens else None, min(usd) if usd else None)


def card_state(store, card_id: int) -> tuple[str, str | None]:
    """A card's status and lease holder, now."""
    with store.read():
        row = Card.get_by_id(card_id)
        return row.status, row.lease_holder


def active_cards(store, agent: str) -> list[tuple[int, int | None]]:
    """The agent's active cards and their lease tokens (what a stopping runner releases)."""
    with store.read():
        return [(c.id, c.lease_token) for c in Card.select(Card.id, Card.lease_token).where((Card.lease_holder == agent) & (Card.status == "active"))]


def events_after(store, seq: int) -> list:
    """The board's events after ``seq`` (what woke a sleeping runner)."""
    with store.read():
        return events.since(seq)

