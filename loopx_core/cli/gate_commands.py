"""``loopx gate ask|status|list|answer``: an agent asks, a person answers."""

from __future__ import annotations

import time

from ..rules import ids
from ..shapes import errors
from ..shapes.errors import InvalidInput
from . import (
    Context,
    Outcome,
    agent_card_op,
    card_id,
    drop_none,
    flag_words,
    gate_id,
    more_text,
    page_limit,
    render,
    validate,
)

TYPE_CHECKING = False  # (annotations only; checkers read this as typing's)
if TYPE_CHECKING:
    from ..store.backends import Store


def _gate_code(g: dict) -> int:
    return {"approved": 0, "pending": errors.WAITING}.get(g["status"], errors.REJECTED)


def _wait_for(store: Store, gid: int, seconds: float) -> dict:
    from ..ops.gates import status

    deadline = time.monotonic() + seconds
    gate = status(store, gid).to_json()
    while gate["status"] == "pending" and time.monotonic() < deadline:
        time.sleep(min(0.25, max(0.0, deadline - time.monotonic())))
        gate = status(store, gid).to_json()
    return gate


def cmd_gate_ask(ctx: Context) -> Outcome:
    from ..ops.gates import ask

    a = ctx.args
    data = validate(
        "gate_ask",
        drop_none(
            {"question": a.question, "scope": a.scope, "options": a.option, "deadline": a.deadline, "wait": a.wait}
        ),
    )

    def fn(agent: str, cid: int) -> tuple[dict, int, str]:
        gate, card, created = ask(ctx.store, cid, agent, data, a.lease_token)
        g = gate.to_json()
        return {"gate": g, "card": card.to_json()}, _gate_code(g), ""

    out = agent_card_op(ctx, "gate_ask", {"data": data}, fn)
    g = out.data["gate"]
    if data.get("wait") and g["status"] == "pending":
        g = _wait_for(ctx.store, ids.parse(ids.GATE, g["id"]), data["wait"])
        out.data["gate"], out.code = g, _gate_code(g)
    if g["status"] == "approved":
        out.text = f"{g['id']} approved by {g['answered_by']} → go ahead"
    elif g["status"] == "pending":
        out.text = f"{g['id']} pending: a human must answer it\n→ wait with `loopx gate status {g['id']}` (exit 6 while pending) or `loopx gate ask … --wait`"
    else:
        out.text = (
            f"{g['id']} {g['status']} by {g['answered_by']}"
            + (f": {g['note']}" if g["note"] else "")
            + "\n→ do not proceed; `loopx next` says what to do"
        )
    return out


def cmd_gate_status(ctx: Context) -> Outcome:
    gid = gate_id(ctx.args.gate)
    g = None
    if ctx._store is None and ctx.location.backend == "sqlite":  # an agent polling its gate: no peewee (plainread.py)
        from ..store.plainread import gate_status as plain_status

        g = plain_status(ctx.location.path, gid)
    if g is None:
        from ..ops.gates import status

        g = status(ctx.store, gid).to_json()
    out = Outcome({"gate": g}, _gate_code(g), render.gate_line(g))
    if g.get("kind") == "merge" and g.get("status") == "pending":
        _merge_facts(ctx, gid, out)
    return out


def _merge_facts(ctx: Context, gid: int, out: Outcome) -> None:
    """A pending merge gate: the commits it pinned and its files, the ground ones first and marked."""
    from ..ops.merges import gate_diff, plan_of
    from ..store.records import Gate
    from ..workspace.git import GitError

    with ctx.store.read():
        row = Gate.get(gid)
        assert row is not None  # (its status was just read)
        plan = plan_of(row)
    try:
        diff = gate_diff(ctx.store, row)
    except GitError as err:
        out.text += f"\ncannot read its diff: {err.message}"
        diff = None
    out.data["merge"] = {
        "base": plan.base,
        "branch": plan.branch,
        "head": plan.head,
        "base_commit": plan.base_commit,
        "ground": list(plan.ground),
        "files": [
            {"path": f.path, "added": f.added, "removed": f.removed, "ground": f.path in plan.ground}
            for f in (diff.files if diff else ())
        ],
        "more": diff.more if diff else 0,
    }
    lines = [f"merges {plan.branch} at {plan.head[:12]} into {plan.base} at {(plan.base_commit or '?')[:12]}"]
    if plan.ground:
        lines.append(
            f"! changes the repository's ground ({len(plan.ground)} file(s)): approving takes the second key, --confirm-ground"
        )
    for f in diff.files if diff else ():
        mark = "! ground " if f.path in plan.ground else "  "
        counts = "binary" if f.added is None else f"+{f.added} -{f.removed}"
        lines.append(f"{mark}{render.one_line(f.path)}  {counts}")
    if diff is not None and diff.more:
        lines.append(f"… and {diff.more} more file(s) not listed")
    out.text += "\n" + "\n".join(lines)


def cmd_gate_list(ctx: Context) -> Outcome:
    from ..ops.gates import gate_page

    cid = card_id(ctx.args.card) if ctx.args.card else None
    after = gate_id(ctx.args.after) if ctx.args.after is not None else 0
    views, last = gate_page(ctx.store, ctx.args.pending, cid, limit=page_limit(ctx.args.limit), after=after)
    gates = [g.to_json() for g in views]
    cursor = ids.fmt(ids.GATE, last)
    text = "\n".join(render.gate_line(g) for g in gates) or "no gates"
    text += more_text(["gate", "list", *flag_words(ctx.args, "pending", "card", "limit")], "--after", cursor)
    return Outcome({"gates": gates, "next_after": cursor}, 0, text)


def cmd_gate_answer(ctx: Context) -> Outcome:
    from ..ops.gates import answer
    from ..ops.idempotence import once

    a = ctx.args
    ctx.refuse_agent("answer a gate")
    gid = gate_id(a.gate)
    decision = a.decision or ("approve" if a.choose is not None or a.text is not None else None)
    if decision is None:
        raise InvalidInput(
            f"say how you answer {a.gate}",
            f"`loopx gate answer {a.gate} approve`, `reject --note WHY`, `--choose OPTION` or `--text ANSWER`",
        )
    data = validate(
        "gate_answer",
        drop_none(
            {
                "decision": decision,
                "note": a.note,
                "remember": a.remember,
                "for_seconds": a.for_,
                "choice": a.choose,
                "text": a.text,
            }
        ),
    )
    actor = ctx.person("answer a gate")

    def run() -> tuple[dict, int]:
        gate, card = answer(
            ctx.store,
            gid,
            data["decision"],
            actor,
            data.get("note"),
            data.get("remember"),
            data.get("for_seconds"),
            data.get("choice"),
            data.get("text"),
            second_key=bool(a.confirm_ground),
        )
        return {"gate": gate.to_json(), "card": card.to_json()}, 0

    result, code = once(
        ctx.store,
        a.op_id,
        "gate_answer",
        {"gate": gid, **data, **({"second_key": True} if a.confirm_ground else {})},
        run,
    )
    g, c = result["gate"], result["card"]
    said = f" ({g['answer']})" if g["answer"] not in (g["status"], None) else ""
    text = f"{g['id']} {g['status']}{said} by {g['answered_by']}; {c['id']} is now {c['status']}"
    if g["kind"] == "merge" and g["status"] == "approved":
        text += " (merged)" if c["status"] == "done" else f"\n{render.one_line(c['next'] or '')}"
    return Outcome(result, code, text)
