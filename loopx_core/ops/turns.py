"""Did a turn report? One rule, asked by the runner after each turn
(``wrote_since``) and by the Stop hook before a turn ends (``stop_check``):
the agent's own report — a writeback (not usage measured from a transcript,
not a failed turn the runner recorded, not an inbox document that only names
it) — or a handoff it made (DESIGN §10 "Runners", "After the turn": did a turn
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

import json
from collections import namedtuple

from ..rules import clock
from ..store import events, records
from ..store.records import Agent, Card
from . import leases, quota
from .evidence import MEASURED, NOT_REPORTS

TYPE_CHECKING = False  # (annotations only: typing is not imported on the cold path; checkers read this as typing's)
if TYPE_CHECKING:
    from ..shapes.values import CardView
    from ..store.base import Store

# collections.namedtuple, not typing's: the Stop hook imports this module on every turn end.

Marks = namedtuple("Marks", "evidence handoff")
Marks.__doc__ = "Where the board's evidence and handoffs stood when a turn began."


def marks(store: Store) -> Marks:
    with store.read():
        return Marks(
            int(records.scalar('SELECT MAX("id") FROM "evidence"') or 0),
            int(records.scalar('SELECT MAX("id") FROM "handoff"') or 0),
        )


_NOT_REPORTS = ", ".join("?" * len(NOT_REPORTS))


def _reported(agent: str, evidence_since: tuple, handoff_since: tuple | None) -> bool:
    """THE rule: since the given marks (``(condition, params)`` on the rows), did
    ``agent`` report — its own evidence that is a report (``NOT_REPORTS``
    excluded, and no unverified inbox document), or a handoff it made?
    ``handoff_since`` None: handoffs are not looked at."""
    condition, params = evidence_since
    if records.exists(
        f'SELECT "id" FROM "evidence" WHERE "agent" = ? AND "source" NOT IN ({_NOT_REPORTS}) AND "unverified" = ? AND {condition}',
        (agent, *NOT_REPORTS, False, *params),
    ):
        return True
    if handoff_since is None:
        return False
    condition, params = handoff_since
    return records.exists(f'SELECT "id" FROM "handoff" WHERE "from_agent" = ? AND {condition}', (agent, *params))


def wrote_since(store: Store, agent: str, since: Marks) -> bool:
    """The runner's check after a turn: a report since the marks taken before it began."""
    with store.read():
        return _reported(agent, ('"id" > ?', (since.evidence,)), ('"id" > ?', (since.handoff,)))


def charged_card(store: Store, agent: str, started_at: float | None) -> int | None:
    """The card a turn's measured usage is charged to: the agent's card
    (``holding``'s rule), else — it released its card during the turn — the
    card of its last report since the turn began."""
    with store.read():
        card = leases.held_card(agent, clock.now())
        if card is not None:
            return card.id
        if started_at is None:
            return None
        found = records.rows(
            'SELECT "card_id" FROM "evidence" WHERE "agent" = ? AND "source" != ? AND "created_at" >= ? ORDER BY "id" DESC LIMIT 1',
            (agent, MEASURED, started_at),
        )
        return found[0][0] if found else None


HOOK_NOTES = ("session_started", "turn_ended")  # a session's marks (``_session_mark``)
NOTICES = ("runtime_notice",)  # a runtime wants its person (the Notification hook; ops/notify delivers it)


def note(store: Store, agent: str, kind: str, card_id: int | None, **data: object) -> None:
    """The hooks' bookkeeping on the board: a session started, a turn ended (the
    Stop hook's "since when" reads them back, ``_session_mark``)."""
    if kind not in HOOK_NOTES + NOTICES:
        raise ValueError(f"not a hook's note: {kind}")
    store.run(lambda: events.emit(f"agent:{agent}", kind, card_id, **data), card=card_id)


StopCheck = namedtuple("StopCheck", "card title wrote")
StopCheck.__doc__ = "The Stop hook's question about a turn: on the agent's card, did it report?"


def _session_mark(agent: str, session: object) -> float | None:
    """The end of this session's previous turn or its start (events the hook wrote)."""
    found = records.rows(
        'SELECT "at", "data" FROM "event" WHERE "actor" = ? AND "kind" IN (?, ?) ORDER BY "seq" DESC LIMIT 50',
        (f"agent:{agent}", *HOOK_NOTES),
    )
    for at, data in found:
        if (json.loads(data) if data else {}).get("session") == session:
            return at
    return None


def stop_check(store: Store, agent: str, session: object, started_at: float | None) -> StopCheck | None:
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
            wrote = _reported(agent, ('"created_at" >= ?', (since,)), ('"created_at" >= ?', (since,)))
        else:
            wrote = _reported(agent, ('"card_id" = ?', (card.id,)), None)
        return StopCheck(card.id, card.title, wrote)


# -- the runner's reads around a turn (runner/loop.py calls operators, never the models) --


def _card(card_id: int) -> Card:
    card = Card.get(card_id)
    if card is None:
        raise LookupError(f"no card {card_id}")
    return card


def room(store: Store, card_id: int, agent: str) -> tuple[float | None, float | None]:
    """Tokens and dollars the card may still spend this turn (its budget, its
    window, the agent's window): None where nothing limits it."""
    now = clock.now()
    with store.read():
        card = _card(card_id)
        agent_row = Agent.get(agent)
        if agent_row is None:
            raise LookupError(f"no agent {agent}")
        tokens, usd = [], []
        if card.max_tokens is not None:
            tokens.append(card.max_tokens - card.used_tokens)
        if card.max_usd is not None:
            usd.append(card.max_usd - card.used_usd)
        for window, (used, _) in (
            (quota.card_window(card), quota.card_window_state(card, now)),
            (quota.agent_window(agent_row), quota.agent_window_state(agent_row, now)),
        ):
            if window is not None and window.tokens is not None:
                tokens.append(window.tokens - used["tokens"])
            if window is not None and window.usd is not None:
                usd.append(window.usd - used["usd"])
    return (min(tokens) if tokens else None, min(usd) if usd else None)


def card_state(store: Store, card_id: int) -> tuple[str, str | None]:
    """A card's status and lease holder, now."""
    with store.read():
        row = _card(card_id)
        return row.status, row.lease_holder


def held_cards(store: Store, agent: str) -> list[int]:
    """The agent's active and waiting cards: what a stopping runner gives back
    (``release.release_on_stop`` keeps a card waiting on the agent's own question)."""
    with store.read():
        return [
            r[0]
            for r in records.rows(
                'SELECT "id" FROM "card" WHERE "lease_holder" = ? AND "status" IN (?, ?) ORDER BY "id"',
                (agent, "active", "waiting"),
            )
        ]


def events_after(store: Store, seq: int) -> list:
    """The board's events after ``seq`` (what woke a sleeping runner)."""
    with store.read():
        return events.since(seq)


def check_signed(store: Store, card_id: int) -> CardView:
    """The strict check a person's process runs before it starts a turn (the
    runner): the card's budget and window against the signatures of the
    decisions that set them. Returns the card; paused when one does not verify."""
    from ..rules.decisions import WINDOW_FIELDS
    from ..store.rows import card_row, card_view, touch
    from .reaper import reap_card

    def body() -> CardView:
        card = reap_card(card_row(card_id))
        before = (
            card.status,
            card.max_turns,
            card.max_tokens,
            card.max_usd,
            *(getattr(card, f) for f in WINDOW_FIELDS),
        )
        quota.enforce_signed(store, card, strict=True)
        quota.enforce_signed_window(store, card, strict=True)
        if (
            card.status,
            card.max_turns,
            card.max_tokens,
            card.max_usd,
            *(getattr(card, f) for f in WINDOW_FIELDS),
        ) != before:
            touch(card, clock.now())
        return card_view(card)

    return store.run(body, card=card_id)
