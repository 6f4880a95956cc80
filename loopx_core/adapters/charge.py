"""Charging a turn's transcript: the model calls no earlier charge of the
session covered, priced at the board's prices, through the ``charge_usage``
operator (``ops/charge.py``). The Stop hook and ``loopx run`` both charge
through ``charge_transcript``, so each model call is charged exactly once.
"""

from __future__ import annotations

from ..ops import charge


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
    extra = {"session": session, "transcript": path, "through": marker, "calls": len(calls), "runtime": runtime, "usage": usage, "parts": parts, "counted": totals}
    if unpriced:
        extra["unpriced"] = unpriced
        note(
            f"no price for {', '.join(unpriced)}: its usage is charged $0 — "
            f"`loopx price set {unpriced[0]} --input $ --output $` (dollars per million tokens)"
        )
    summary = f"usage: {tokens_in + tokens_out:,} tokens ({tokens_in:,} in, {tokens_out:,} out) over {len(calls)} model call(s), measured by {by}"
    if usd:
        summary += f", ${usd:.4f}"
    evidence, _, created = charge.charge_usage(store, card_id, agent, turn_id_for(runtime, session, marker), tokens_in, tokens_out, usd, extra, summary)
    return evidence if created else None


def subagent_transcripts(runtime: str, path: str) -> list[str]:
    """The transcripts of the session's subagents, whose model calls its own
    transcript does not hold. Claude Code (the Task/Agent tool): beside the
    session's, ``<session>/subagents/*.jsonl`` next to ``<session>.jsonl``
    (2.1.197 and 2.1.335). Codex 0.171 (``multi_agent_v1.spawn_agent``, on by
    default): a rollout of its own in the sessions tree, whose first line
    (``session_meta``) names the session that spawned it (``codex_subagents``)."""
    import os

    if runtime == "codex":
        return codex_subagents(path)
    folder = os.path.join(os.path.splitext(path)[0], "subagents")
    try:
        names = sorted(n for n in os.listdir(folder) if n.endswith(".jsonl"))
    except OSError:
        return []
    return [os.path.join(folder, n) for n in names if os.path.isfile(os.path.join(folder, n))]


CODEX_META_BYTES = 1 << 20  # a rollout's first line (session_meta, with the base instructions: ~22 KB on 0.171)
CODEX_SCANNED = 2000  # rollouts looked at for one session's subagents, at most (the newest)


def codex_meta(path: str) -> dict | None:
    """A Codex rollout's ``session_meta`` payload (its first line), or None."""
    import json

    try:
        with open(path, "rb") as fh:
            head = fh.read(64 * 1024)  # the line is ~22 KB: a rollout of many MB is not read whole
            while b"\n" not in head and len(head) < CODEX_META_BYTES:
                more = fh.read(64 * 1024)
                if not more:
                    break
                head += more
    except OSError:
        return None
    line = head.split(b"\n", 1)[0]
    try:
        entry = json.loads(line)
    except ValueError:
        return None
    payload = entry.get("payload") if isinstance(entry, dict) and entry.get("type") == "session_meta" else None
    return payload if isinstance(payload, dict) else None


def codex_subagents(path: str) -> list[str]:
    """The rollouts of the subagents a Codex session spawned, at any depth: each
    one's ``session_meta`` has ``session_id`` = the session's own id (0.171: the
    root thread; ``id`` is the subagent's thread, ``source.subagent.thread_spawn``
    names its parent). Rollouts live in ``sessions/YYYY/MM/DD/rollout-<local
    time>-<thread id>.jsonl``: a subagent's is in the session's day folder or a
    later one, named no earlier than the session's own."""
    import os

    meta = codex_meta(path)
    own = meta.get("id") if meta else None
    if not isinstance(own, str) or not own:
        return []
    day = os.path.dirname(path)
    name = os.path.basename(path)
    stamp = name[len("rollout-"):len("rollout-") + 19] if name.startswith("rollout-") else ""
    parts = day.split(os.sep)[-3:]
    days = [day]
    if len(parts) == 3 and all(p.isdigit() for p in parts):
        base = os.path.dirname(os.path.dirname(os.path.dirname(day)))
        days = [d for d in _day_folders(base) if d.split(os.sep)[-3:] >= parts]
    candidates = []
    for folder in days:
        try:
            names = os.listdir(folder)
        except OSError:
            continue
        candidates += [os.path.join(folder, n) for n in names if n.startswith("rollout-") and n.endswith(".jsonl") and n[len("rollout-"):len("rollout-") + 19] >= stamp]
    candidates = sorted(c for c in candidates if c != path)[-CODEX_SCANNED:]
    found = []
    for candidate in candidates:
        child = codex_meta(candidate)
        if child and child.get("session_id") == own and child.get("id") != own and os.path.isfile(candidate):
            found.append(candidate)
    return found


def _day_folders(base: str) -> list[str]:
    import os

    out: list[str] = []
    for level in (0, 1, 2):
        parents = [base] if level == 0 else out
        out = []
        for parent in parents:
            try:
                out += sorted(os.path.join(parent, n) for n in os.listdir(parent) if n.isdigit())
            except OSError:
                continue
    return out


def charge_subagents(store, agent: str, runtime: str, session: str, path: str, card_id: int | None, note, by: str, *, lagging: bool = False) -> list:
    """Charge the calls of the session's subagent transcripts no charge covered
    yet to ``card_id`` — the card of the turn that started them. Each is its own
    session (``SESSION/subagents/NAME``) for the boundary and the call ids.
    ``lagging``: read each as if its last call were not written yet (a test's
    fault point, ``rules/faults.py``)."""
    import os

    from . import transcript

    out = []
    for sub in subagent_transcripts(runtime, path):
        try:
            turn = transcript.read(runtime, sub)
        except OSError:
            continue
        if lagging:
            turn = transcript.before_last_call(turn)
        turn = turn._replace(prompt_index=None)  # a subagent's task is not a person's prompt: every call of it counts
        evidence = charge_transcript(store, agent, runtime, f"{session}/subagents/{os.path.basename(sub)}", sub, turn, card_id, note, by=f"{by} (subagent)")
        if evidence is not None:
            out.append(evidence)
    return out
