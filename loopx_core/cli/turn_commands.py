"""The agent's turn: ``loopx next``, ``claim``, ``heartbeat``, ``writeback``,
``monitor``, ``handoff``, ``accept``, ``release``, ``done`` and ``context`` (the
continuation packet). Agents run these every turn, in a fresh process: the cold
path (``tests/adapters/test_cold_path.py``) — every heavier import is inside the
handler that needs it."""

from __future__ import annotations

import json

from ..rules import ids
from ..shapes import errors
from ..shapes.errors import InvalidInput, UsageError
from . import Context, Outcome, agent_card_op, card_id, drop_none, render, validate

NEXT_CODES = {"work": 0, "accept": 0, "wait": errors.WAITING, "paused": errors.PAUSED, "idle": errors.NOTHING}


def _next_text(r: dict) -> str:
    card = r["card"]
    action = r["action"]
    if action == "work":
        key = card["id"]
        head = f'work on {key} "{card["title"]}" ({render.lease_text(r["lease"])})'
        if card["next"]:
            head += f"\nnext: {card['next']}"
        if r.get("workspace"):
            head += f"\nworkspace: {r['workspace']['path']} (branch {r['workspace']['branch']}) — work and commit there"
        return head + f"\n→ `loopx context {key}` for the continuation; then `loopx writeback {key} --summary …`"
    if action == "wait":
        g = r["gate"]
        if g is None:  # a card row that waits on no gate: say so, do not guess one
            return f"wait: {card['id']} is waiting ({r['reason']})\n→ stop for now; a person can check the board with `loopx verify`"
        return f"wait: {g['id']} on {card['id']} is pending ({g['question']})\n→ `loopx gate status {g['id']}` until a human answers"
    if action == "accept":
        return (
            f"accept: {card['id']} was handed to you\n→ `loopx context {card['id']}`, then `loopx accept {card['id']}`"
        )
    if action == "paused":
        if card is None:
            return f"paused: your window is spent; it reopens at {r['wake_at']}"
        if r["wake_at"]:
            return f"paused: {card['id']} ({r['reason']}) — its window refills at {r['wake_at']} and it resumes by itself; stop for now"
        return f"paused: {card['id']} ({r['reason']}) — a human must raise its budget; stop for now"
    wake = f"; a monitored card is due at {r['wake_at']}" if r["wake_at"] else ""
    g = r["gate"]
    if g and g["status"] in ("rejected", "expired"):
        note = f": {g['note']}" if g["note"] else ""
        then = (
            "no ready card to take either"
            if r["reason"].endswith("no ready card")
            else "take other work with `loopx next --claim`"
        )
        return (
            f"idle: {g['id']} on {card['id']} was {g['status']} by {g['answered_by']}{note}\n"
            f"→ do not do it; {card['id']} is blocked until a person moves it; {then}{wake}"
        )
    return f"idle: {r['reason']}{wake}"


def cmd_next(ctx: Context) -> Outcome:
    from ..ops.claims import next_turn
    from ..ops.idempotence import once

    data = validate("next", {"agent": ctx.agent(), "lease": ctx.args.lease, "claim": ctx.args.claim})

    def run() -> tuple[dict, int]:
        result = next_turn(ctx.store, data["agent"], claim=data["claim"], lease_seconds=data["lease"])
        return result.to_json(), NEXT_CODES[result.action]

    result, code = once(ctx.store, ctx.args.op_id, "next", data, run)
    warnings = _workspace_of(ctx, result, data["agent"], ctx.args.in_project)
    return Outcome(result, code, _next_text(result), warnings)


def cmd_claim(ctx: Context) -> Outcome:
    from ..ops.claims import claim
    from ..ops.idempotence import once

    data = validate("next", {"agent": ctx.agent(), "lease": ctx.args.lease})
    cid = card_id(ctx.args.card)
    from ..ops.workspace_open import before_claim

    early = before_claim(ctx.store, cid, data["agent"], ctx.args.in_project)  # refused with nothing written, or made

    def run() -> tuple[dict, int]:
        result = claim(ctx.store, cid, data["agent"], data["lease"])
        return result.to_json(), NEXT_CODES[result.action]

    result, code = once(ctx.store, ctx.args.op_id, "claim", {"card": cid, **data}, run)
    warnings = early or _workspace_of(ctx, result, data["agent"], ctx.args.in_project)
    return Outcome(result, code, "claimed: " + _next_text(result), warnings)


def _workspace_of(ctx: Context, result: dict, agent: str, in_project: bool) -> list[str]:
    from ..ops.workspace_open import name_in

    return name_in(ctx.store, result, agent, in_project)


def cmd_heartbeat(ctx: Context) -> Outcome:
    from ..ops.claims import heartbeat

    def fn(agent: str, cid: int) -> tuple[dict, int, str]:
        card = heartbeat(ctx.store, cid, agent, ctx.args.lease_token).to_json()
        return {"card": card}, 0, f"{card['id']}: {render.lease_text(card['lease'])}"

    return agent_card_op(ctx, "heartbeat", {}, fn)


def _read_input(source: str) -> dict:
    from .reading import EVIDENCE_MAX, read_text

    raw = read_text(source, EVIDENCE_MAX, "--input", "pass a readable UTF-8 JSON file (at most 1 MiB), or - for stdin")
    try:
        doc = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise InvalidInput(
            f"--input is not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}",
            "an evidence document is one JSON object",
        ) from None
    except (ValueError, RecursionError) as exc:  # an integer of thousands of digits, nesting too deep
        raise InvalidInput(
            f"--input is not a usable JSON document: {str(exc)[:120]}", "an evidence document is one flat JSON object"
        ) from None
    if not isinstance(doc, dict):
        raise InvalidInput("--input must be a JSON object", 'e.g. {"summary": "…", "artifacts": ["out/report.md"]}')
    return doc


def evidence_from_args(ctx: Context, agent: str, cid: int) -> dict:
    a = ctx.args
    if a.input:
        doc = _read_input(a.input)
        for key, mine in (("card", ids.key(ids.CARD, cid)), ("agent", agent)):
            if key in doc:
                theirs = doc.pop(key)
                if str(theirs).upper() != mine.upper():
                    raise InvalidInput(
                        f"--input names {key} {theirs!r} but the command is for {mine}",
                        f"drop {key!r} from the document or fix it",
                    )
        if a.release:
            doc.setdefault("release", True)
        if a.turn_id:
            doc.setdefault("turn_id", a.turn_id)
        return validate("evidence", doc)
    if a.summary is None:
        raise UsageError(
            "--summary is required (or --input FILE)", 'e.g. `loopx writeback LX-3 --summary "what this turn did"`'
        )
    todo_done = []
    for ref in a.todo_done:
        todo_done.append(int(ref) if ref.isascii() and ref.isdigit() and len(ref) <= 18 else ref)
    return validate(
        "evidence",
        drop_none(
            {
                "summary": a.summary,
                "artifacts": a.artifact,
                "next": a.next,
                "todos_added": a.todo_add,
                "todos_done": todo_done,
                "tokens": a.tokens,
                "usd": a.usd,
                "turn_id": a.turn_id,
                "release": a.release,
            }
        ),
    )


def cmd_writeback(ctx: Context) -> Outcome:
    from ..ops.turn_report import record
    from ..ops.workspaces import capture

    agent = ctx.agent()
    cid = card_id(ctx.args.card)
    data = evidence_from_args(ctx, agent, cid)
    code_state = capture(ctx.store, cid)  # before --op-id's transaction: git never runs under the write lock
    result, code, replayed = record(
        ctx.store,
        cid,
        agent,
        data,
        lease_token=ctx.args.lease_token,
        op_id=ctx.args.op_id,
        source="cli",
        code=code_state,
    )
    if replayed:
        return Outcome(result, code, "(replayed) " + json.dumps(result)[:300], result.get("warnings"))
    ev, cj = result["evidence"], result["card"]
    text = f"{'recorded' if result['created'] else 'already recorded'} {ev['id']} on {cj['id']}"
    if ev["artifacts"]:
        text += f" with {len(ev['artifacts'])} artifact(s)"
    if cj["status"] == "paused" and cj["wake_at"]:
        text += (
            f"\n{cj['id']} is now paused ({cj['paused_reason']}): stop here; it resumes by itself at {cj['wake_at']}"
        )
    elif cj["status"] == "paused":
        text += f"\n{cj['id']} is now paused ({cj['paused_reason']}): stop here; a human must raise its budget"
    elif cj["status"] == "ready":
        text += f"\nreleased {cj['id']}"
    else:
        q = render.quota_line(cj["quota"])
        text += (f" · {q}" if q else "") + f"\nnext: keep going, or `loopx done {cj['id']} --summary …`"
    return Outcome(result, code, text, result["warnings"])


def cmd_monitor(ctx: Context) -> Outcome:
    from ..ops.claims import monitor

    every = validate("monitor", {"every": ctx.args.every})["every"]

    def fn(agent: str, cid: int) -> tuple[dict, int, str]:
        card = monitor(ctx.store, cid, agent, every, ctx.args.lease_token).to_json()
        return {"card": card}, 0, f"{card['id']} monitoring; `loopx next` returns it at {card['monitor_due']}"

    return agent_card_op(ctx, "monitor", {"every": every}, fn)


def cmd_handoff(ctx: Context) -> Outcome:
    from ..ops.handoffs import handoff
    from ..ops.workspaces import capture

    a = ctx.args
    data = validate("handoff", {"to": a.to, "summary": a.summary, "done": a.done, "pending": a.pending})
    code = capture(ctx.store, card_id(a.card))  # before --op-id's transaction: git never runs under the write lock

    def fn(agent: str, cid: int) -> tuple[dict, int, str]:
        h, card = handoff(ctx.store, cid, agent, data, a.lease_token, code=code)
        hj = h.to_json()
        return (
            {"handoff": hj, "card": card.to_json()},
            0,
            f"{hj['id']}: {hj['card']} handed to {hj['to']} (digest {hj['digest'][:12]}…)\n→ {hj['to']} runs `loopx accept {hj['card']}`",
        )

    return agent_card_op(ctx, "handoff", {"data": data}, fn)


def cmd_accept(ctx: Context) -> Outcome:
    from ..ops.handoffs import accept

    def fn(agent: str, cid: int) -> tuple[dict, int, str]:
        h, card = accept(ctx.store, cid, agent, ctx.args.digest)
        cj = card.to_json()
        then = (
            f"it is paused ({cj['paused_reason']}): stop here; a human must raise its budget"
            if cj["status"] == "paused"
            else f"`loopx context {cj['id']}`"
        )
        return (
            {"handoff": h.to_json(), "card": cj},
            0,
            f"accepted {cj['id']} ({render.lease_text(cj['lease'])})\n→ {then}",
        )

    return agent_card_op(ctx, "accept", {"digest": ctx.args.digest}, fn)


def cmd_release(ctx: Context) -> Outcome:
    from ..ops.release import release

    def fn(agent: str, cid: int) -> tuple[dict, int, str]:
        card = release(ctx.store, cid, agent, ctx.args.lease_token).to_json()
        return {"card": card}, 0, f"released {card['id']} → ready"

    return agent_card_op(ctx, "release", {}, fn)


def cmd_done(ctx: Context) -> Outcome:
    from ..ops.done import done

    data = validate("done", drop_none({"summary": ctx.args.summary, "verify_timeout": ctx.args.verify_timeout}))

    def fn(agent: str, cid: int) -> tuple[dict, int, str]:
        from ..adapters.hooks import vet_verify

        card, evidence = done(
            ctx.store,
            cid,
            agent,
            data["summary"],
            ctx.args.lease_token,
            data.get("verify_timeout"),
            vet=lambda command: vet_verify(ctx.store, agent, command),
        )
        cj = card.to_json()
        verified = " (verify passed)" if evidence.source == "verify" else ""
        text = f"done {cj['id']}{verified}"
        asked = (
            ctx.store.query("SELECT kind FROM gate WHERE id = ?", (card.pending_gate,))
            if cj["status"] == "waiting" and card.pending_gate
            else []
        )
        if asked and asked[0][0] == "vanished":
            text = (  # commits recorded on the card are on neither its base nor its branch (authority/work.py)
                f"{cj['id']} is not finished: commits recorded on it are on neither its base nor its branch; a person decides whether it "
                f"finishes without them (gate {cj['pending_gate']}). Once they approve, run `loopx done {cj['id']}` again"
            )
        elif cj["status"] == "waiting":  # its branch is the person's to merge (ops/merges)
            text = f"{cj['id']} finished{verified}; its branch waits for a person to merge it (gate {cj.get('pending_gate') or 'pending'}); you cannot merge it yourself"
        still_open = [t for t in cj["todos"] if not t["done"]]
        if still_open:
            text += f"\nnote: {len(still_open)} todo{'s' if len(still_open) != 1 else ''} still open: " + "; ".join(
                f"{t['id']}. {render.one_line(t['text'])}" for t in still_open[:5]
            )
            text += "\n  (close them with `writeback --todo-done ID` next time, or add follow-up cards)"
        return {"card": cj, "evidence": evidence.to_json()}, 0, text + "\n→ `loopx next --claim` for the next card"

    return agent_card_op(ctx, "done", {"summary": data["summary"]}, fn, atomic=False)


def cmd_context(ctx: Context) -> Outcome:
    from ..ops.context import build, to_markdown

    built = build(ctx.store, card_id(ctx.args.card))
    if ctx.args.format == "json":
        return Outcome({"context": built}, 0, json.dumps(built, indent=2))
    return Outcome({"context": built, "markdown": to_markdown(built)}, 0, to_markdown(built))
