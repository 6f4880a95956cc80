"""Charging a turn's measured token usage to a card (the Stop hook's operator).

Why not ``writeback(source="hook")``: a writeback is the agent's account of a
turn. It counts a turn against ``max_turns`` and a writeback without progress
counts towards the no-progress pause. The hook measures the turn *in addition*
to the agent's own writeback, so charging through writeback would count every
turn twice and push cards into ``no_progress``. This operator records the
measurement as an evidence row with source ``hook`` (DESIGN §5 lists it as an
evidence source) holding tokens in/out and the raw usage, so the same quota rules
apply — the card's token and dollar limits (``quota.pause_if_spent``: at a
limit a card that can still run goes ``paused``, reason ``budget``) and the agent's token window (``window_state``
sums evidence tokens) — but it does not count a turn, touches neither the stall
counter nor the continuation, and does not satisfy ``done``'s "at least one
writeback" (``done._precheck`` ignores hook rows).

Idempotent on ``turn_id`` (derived from the session and the last transcript entry
the charge covers): a retried Stop hook charges nothing twice. ``loopx run``
charges a turn's transcript through the same ``charge_transcript`` after the
runtime exits: the calls the Stop hook already charged are behind the
boundary it recorded, so each model call is charged exactly once, by
whichever of the two saw it first.
"""

from __future__ import annotations

from ..rules import clock, ids
from ..store import events
from ..ops import quota
from ..store.models import Evidence
from ..ops.reaper import load_card
from ..store.rows import agent_row, card_view, evidence_view, touch
from ..ops.writeback import payload_hash

SOURCE = "hook"


def charge_usage(store, card_id: int, agent: str, turn_id: str, tokens_in: int, tokens_out: int, usd: float, extra: dict, summary: str):
    """Returns (evidence, card, created)."""
    data = {"turn_id": turn_id, "tokens_in": tokens_in, "tokens_out": tokens_out, "usd": usd, "extra": extra}
    fingerprint = payload_hash(data)

    def body():
        now = clock.now()
        agent_row(agent)
        first = Evidence.get_or_none((Evidence.card == card_id) & (Evidence.turn_id == turn_id))
        if first is not None:
            return evidence_view(first), card_view(load_card(card_id)), False
        card = load_card(card_id)
        tokens = tokens_in + tokens_out
        row = Evidence.create(
            card=card.id,
            agent=agent,
            turn_id=turn_id,
            summary=summary,
            artifacts=[],
            next_action=None,
            todos_added=[],
            todos_done=[],
            tokens_in=tokens_in,
            tokens_out=tokens_out,
            tokens=tokens,
            usd=usd,
            source=SOURCE,
            extra=extra,
            payload_hash=fingerprint,
            created_at=now,
        )
        quota.charge(card, tokens, usd, turn=False)
        events.emit(f"agent:{agent}", "usage_charged", card.id, evidence=ids.fmt(ids.EVIDENCE, row.id), tokens=tokens, tokens_in=tokens_in, tokens_out=tokens_out, usd=usd, source=SOURCE)
        quota.pause_if_spent(card)
        touch(card, now)
        return evidence_view(row), card_view(card), True

    return store.run(body)


def previous_through(agent: str, session: str, transcript: str) -> str | None:
    """The last transcript entry an earlier charge of this session covered."""
    rows = (
        Evidence.select(Evidence.extra)
        .where((Evidence.agent == agent) & (Evidence.source == SOURCE))
        .order_by(Evidence.id.desc())
        .limit(50)
    )
    for row in rows:
        extra = row.extra or {}
        if extra.get("session") == session and extra.get("transcript") == transcript:
            return extra.get("through")
    return None


def turn_id_for(runtime: str, session: str, marker: str) -> str:
    """The evidence turn id of a charge covering ``session`` up to ``marker``
    (the same whoever charges it: the Stop hook or the runner)."""
    prefix = "cc" if runtime == "claude-code" else "cx"
    turn_id = f"{prefix}:{session}:{marker}"
    if len(turn_id) > 128 or not turn_id[0].isalnum():
        import hashlib

        turn_id = f"{prefix}:" + hashlib.sha256(f"{session}:{marker}".encode()).hexdigest()[:48]
    return turn_id


def price_calls(store, calls) -> tuple[float, list[str]]:
    """Dollars for ``calls`` at the board's prices, and the models without one."""
    from ..rules import prices

    table = prices.load(store)
    usd, unpriced = 0.0, []
    for call in calls:
        price = prices.lookup(table, call.model)
        if price is None:
            name = call.model or "an unnamed model"
            if name not in unpriced:
                unpriced.append(name)
            continue
        usd += prices.cost(price, call.parts)
    return round(usd, 6), unpriced


def charge_transcript(store, agent: str, runtime: str, session: str, path: str, turn, card_id: int | None, note, by: str):
    """Charge ``card_id`` for the model calls of ``turn`` (a transcript read by
    ``transcript.read``) that no earlier charge of this session covered.
    ``note(text)`` reports what a person should know; ``by`` says who measured
    it. Returns the evidence created, or None when there was nothing new."""
    from . import transcript

    if turn is None or not turn.calls:
        return None
    with store.read():
        through = previous_through(agent, session, path)
    calls, marker = transcript.uncharged(turn, through)
    if not calls or marker is None:
        return None
    if card_id is None:
        note(f"{len(calls)} model call(s) not charged: agent {agent} holds no card")
        return None
    tokens_in = sum(c.tokens_in for c in calls)
    tokens_out = sum(c.tokens_out for c in calls)
    usage: dict = {}
    for c in calls:
        for k, v in c.detail.items():
            usage[k] = usage.get(k, 0) + v
    usd, unpriced = price_calls(store, calls)
    extra = {"session": session, "transcript": path, "through": marker, "calls": len(calls), "runtime": runtime, "usage": usage}
    if unpriced:
        extra["unpriced"] = unpriced
        note(
            f"no price for {', '.join(unpriced)}: its usage is charged $0 — "
            f"`loopx price set {unpriced[0]} --input $ --output $` (dollars per million tokens)"
        )
    summary = f"usage: {tokens_in + tokens_out:,} tokens ({tokens_in:,} in, {tokens_out:,} out) over {len(calls)} model call(s), measured by {by}"
    if usd:
        summary += f", ${usd:.4f}"
    evidence, _, created = charge_usage(store, card_id, agent, turn_id_for(runtime, session, marker), tokens_in, tokens_out, usd, extra, summary)
    return evidence if created else None
