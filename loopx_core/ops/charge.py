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

import json

from ..rules import clock, ids
from ..rules.digest import payload_hash
from ..store import events, records
from ..store.records import Evidence
from ..store.rows import agent_row, card_row, card_view, evidence_view, touch
from . import quota
from .evidence import MEASURED, add_evidence
from .reaper import reap_card

TYPE_CHECKING = False  # (annotations only: typing is not imported on the cold path; checkers read this as typing's)
if TYPE_CHECKING:
    from ..shapes.values import CardView, EvidenceView
    from ..store.base import Store


def charge_usage(
    store: Store,
    card_id: int,
    agent: str,
    turn_id: str,
    tokens_in: int,
    tokens_out: int,
    usd: float,
    extra: dict,
    summary: str,
) -> tuple[EvidenceView, CardView, bool]:
    """Returns (evidence, card, created)."""
    data = {"turn_id": turn_id, "tokens_in": tokens_in, "tokens_out": tokens_out, "usd": usd, "extra": extra}
    fingerprint = payload_hash(data)

    def body() -> tuple[EvidenceView, CardView, bool]:
        now = clock.now()
        agent_row(agent)
        first = Evidence.first('WHERE "card_id" = ? AND "turn_id" = ?', (card_id, turn_id))
        if first is not None:
            return evidence_view(first), card_view(reap_card(card_row(card_id))), False
        card = reap_card(card_row(card_id))
        tokens = tokens_in + tokens_out
        row = add_evidence(
            card,
            agent,
            now=now,
            turn_id=turn_id,
            summary=summary,
            tokens_in=tokens_in,
            tokens_out=tokens_out,
            usd=usd,
            source=MEASURED,
            extra=extra,
            payload_hash=fingerprint,
        )
        quota.charge(card, tokens, usd, turn=False)
        events.emit(
            f"agent:{agent}",
            "usage_charged",
            card.id,
            evidence=ids.fmt(ids.EVIDENCE, row.id),
            tokens=tokens,
            tokens_in=tokens_in,
            tokens_out=tokens_out,
            usd=usd,
            source=MEASURED,
            used=quota.totals(card),
        )
        quota.pause_if_spent(card)
        touch(card, now)
        return evidence_view(row), card_view(card), True

    return store.run(body, card=card_id)


def previous_through(store: Store, agent: str, session: str, transcript: str) -> tuple[str | None, dict[str, dict]]:
    """The last transcript entry an earlier charge of this session covered, and
    what the session's charges counted for each model call so far (its id ->
    the largest usage by kind any charge covered: a call whose usage grew after
    it was charged — Claude Code writes a call's partial usage first, and the
    rest may land after a hook read it — is charged the difference)."""
    through: str | None = None
    counted: dict[str, dict] = {}
    with store.read():
        rows = records.rows(
            'SELECT "extra" FROM "evidence" WHERE "agent" = ? AND "source" = ? ORDER BY "id" DESC LIMIT 50',
            (agent, MEASURED),
        )
        for (text,) in rows:
            extra = json.loads(text) if text else {}
            if extra.get("session") != session or extra.get("transcript") != transcript:
                continue
            if through is None:
                through = extra.get("through")
            for identity, parts in (extra.get("counted") or {}).items():
                mine = counted.setdefault(identity, {})
                for kind, n in parts.items():
                    mine[kind] = max(mine.get(kind, 0), n)
    return through, counted
