"""Charging a turn's transcript: the model calls no earlier charge of the
session covered, priced at the board's prices, through the ``charge_usage``
operator (``ops/charge.py``). The Stop hook and ``loopx run`` both charge
through ``charge_transcript``, so each model call is charged exactly once.
"""

from __future__ import annotations

from ..ops import charge

TYPE_CHECKING = False  # (annotations only: typing is not imported on the cold path; checkers read this as typing's)
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

    from ..runtimes import Call
    from ..runtimes.transcript import Turn
    from ..shapes.values import EvidenceView
    from ..store.backends import Store


def turn_id_for(runtime: str, session: str, marker: str) -> str:
    """The evidence turn id of a charge covering ``session`` up to ``marker``
    (the same whoever charges it: the Stop hook or the runner)."""
    from .. import runtimes

    prefix = runtimes.module(runtime).CHARGE_PREFIX
    turn_id = f"{prefix}:{session}:{marker}"
    if len(turn_id) > 128 or not turn_id[0].isalnum():
        import hashlib

        turn_id = f"{prefix}:" + hashlib.sha256(f"{session}:{marker}".encode()).hexdigest()[:48]
    return turn_id


def price_calls(store: Store, calls: Iterable[Call]) -> tuple[float, list[str]]:
    """Dollars for ``calls`` at the board's prices, and the models without one."""
    from ..rules import prices

    table = prices.load(store)
    usd, unpriced = 0.0, list[str]()
    for call in calls:
        price = prices.lookup(table, call.model)
        if price is None:
            name = call.model or "an unnamed model"
            if name not in unpriced:
                unpriced.append(name)
            continue
        usd += prices.cost(price, call.parts)
    return round(usd, 6), unpriced


def charge_transcript(
    store: Store,
    agent: str,
    runtime: str,
    session: str,
    path: str,
    turn: Turn | None,
    card_id: int | None,
    note: Callable[[str], None],
    by: str,
) -> EvidenceView | None:
    """Charge ``card_id`` for the model calls of ``turn`` (a transcript read by
    ``transcript.read``) that no earlier charge of this session covered.
    ``note(text)`` reports what a person should know; ``by`` says who measured
    it. Returns the evidence created, or None when there was nothing new."""
    from ..runtimes import transcript

    if turn is None or not turn.calls:
        return None
    through, counted = charge.previous_through(store, agent, session, path)
    calls, marker = transcript.uncharged(turn, through, counted)
    if not calls or marker is None:
        return None
    if card_id is None:
        note(f"{len(calls)} model call(s) not charged: agent {agent} holds no card")
        return None
    tokens_in = sum(c.tokens_in for c in calls)
    tokens_out = sum(c.tokens_out for c in calls)
    usage: dict = {}
    parts: dict = {}  # by price kind (input, output, cache_read, cache_write): what `card show` and the board break down
    for c in calls:
        for k, v in c.detail.items():
            usage[k] = usage.get(k, 0) + v
        for k, v in c.parts.items():
            parts[k] = parts.get(k, 0) + v
    usd, unpriced = price_calls(store, calls)
    # What each call has been charged in all, by kind: a later charge adds only what it grew by (idempotent by call id).
    totals = {c.identity: {k: counted.get(c.identity, {}).get(k, 0) + v for k, v in c.parts.items()} for c in calls}
    extra = {
        "session": session,
        "transcript": path,
        "through": marker,
        "calls": len(calls),
        "runtime": runtime,
        "usage": usage,
        "parts": parts,
        "counted": totals,
    }
    if unpriced:
        extra["unpriced"] = unpriced
        note(
            f"no price for {', '.join(unpriced)}: its usage is charged $0 — "
            f"`loopx price set {unpriced[0]} --input $ --output $` (dollars per million tokens)"
        )
    summary = f"usage: {tokens_in + tokens_out:,} tokens ({tokens_in:,} in, {tokens_out:,} out) over {len(calls)} model call(s), measured by {by}"
    if usd:
        summary += f", ${usd:.4f}"
    evidence, _, created = charge.charge_usage(
        store, card_id, agent, turn_id_for(runtime, session, marker), tokens_in, tokens_out, usd, extra, summary
    )
    return evidence if created else None


def charge_subagents(
    store: Store,
    agent: str,
    runtime: str,
    session: str,
    path: str,
    card_id: int | None,
    note: Callable[[str], None],
    by: str,
    *,
    lagging: bool = False,
) -> list[EvidenceView]:
    """Charge the calls of the session's subagent transcripts no charge covered
    yet to ``card_id`` — the card of the turn that started them. Each is its own
    session (``SESSION/subagents/NAME``) for the boundary and the call ids.
    ``lagging``: read each as if its last call were not written yet (a test's
    fault point, ``rules/faults.py``)."""
    import os

    from .. import runtimes
    from ..runtimes import transcript

    out = []
    for sub in runtimes.module(runtime).subagent_transcripts(path):
        try:
            turn = transcript.read(runtime, sub)
        except OSError:
            continue
        if lagging:
            turn = transcript.before_last_call(turn)
        turn = turn._replace(prompt_index=None)  # a subagent's task is not a person's prompt: every call of it counts
        evidence = charge_transcript(
            store,
            agent,
            runtime,
            f"{session}/subagents/{os.path.basename(sub)}",
            sub,
            turn,
            card_id,
            note,
            by=f"{by} (subagent)",
        )
        if evidence is not None:
            out.append(evidence)
    return out
