"""The continuation packet an agent reads at the start of a turn (≈1,500 tokens max)."""

from __future__ import annotations

from ..rules import clock, ids
from ..store.backends import Store
from .cards import card_detail

MAX_CHARS = 5600  # ~1,400 tokens at ~4 characters a token
EVIDENCE_SHOWN = 3
TODOS_SHOWN = 15


def _clip(text: str | None, n: int) -> str:
    text = (text or "").strip().replace("\r", "")
    return text if len(text) <= n else text[: n - 1].rstrip() + "…"


def build(store: Store, card_id: int) -> dict:
    detail = card_detail(store, card_id, event_limit=0, evidence_limit=EVIDENCE_SHOWN * 4)
    # Usage charged by a hook is bookkeeping, not what a turn reported: keep it out.
    reported = [e for e in detail.evidence if e.source != "hook"][-EVIDENCE_SHOWN:]
    card = detail.card
    open_todos = list(card.open_todos)
    gates = [g for g in detail.gates if g.status == "pending"] + [g for g in detail.gates if g.status != "pending"][-3:]
    handoff = detail.handoffs[-1] if detail.handoffs else None
    return {
        "card": ids.fmt(ids.CARD, card.id),
        "title": card.title,
        "status": card.status,
        "owner": card.owner,
        "objective": _clip(card.body, 1200),
        "board_objective": _clip(store.setting("objective"), 300),
        "authority": {"needs": list(card.needs)},
        "lease": card.lease.to_json() if card.lease else None,
        "quota": card.quota.to_json(),
        "paused_reason": card.paused_reason,
        "wake_at": clock.iso(card.wake_at),
        "window": card.window.to_json() if card.window else None,
        "blocked_reason": card.blocked_reason,
        "next": card.next_action,
        "todos": [t.to_json() for t in open_todos[:TODOS_SHOWN]],
        "todos_more": max(0, len(open_todos) - TODOS_SHOWN),
        "todos_done": sum(1 for t in card.todos if t.done),
        "evidence": [
            {
                "summary": _clip(e.summary, 400),
                "agent": e.agent,
                "at": clock.iso(e.created_at),
                "artifacts": [a.path for a in e.artifacts][:8],
                **({"unverified": True} if e.unverified else {}),
                **({"failed": True} if e.source == "runner" else {}),
            }
            for e in reported
        ],
        "gates": [
            {
                "id": g.key,
                "status": g.status,
                "question": _clip(g.question, 200),
                "scope": g.scope,
                "choice": g.choice,
                "text": _clip(g.text, 1000) or None,
                "note": _clip(g.note, 200) or None,
            }
            for g in gates
        ],
        "handoff": None
        if handoff is None
        else {
            "id": handoff.key,
            "from": handoff.from_agent,
            "to": handoff.to_agent,
            "summary": _clip(handoff.packet.get("summary"), 600),
            "pending": handoff.packet.get("pending", [])[:10],
            "digest": handoff.digest,
            "accepted": handoff.accepted_at is not None,
        },
        "verify": card.verify,
        "workspace": _workspace(store, card_id),
    }


def _workspace(store: Store, card_id: int) -> dict | None:
    """Where the card's code is (issue #26): its open worktree and branch, as last recorded."""
    from .workspaces import open_path

    if open_path(store, card_id) is None:
        return None
    from .workspaces import lookup

    ws = lookup(store, card_id)
    if ws is None:  # (found open just now, and rows are never deleted)
        return None
    return {"path": ws.path, "branch": ws.branch, "base": ws.base, "head": ws.head, "wip": ws.wip}


CLI, TOOLS = "cli", "tools"  # how the reader records its turn: the `loopx` CLI, or the loopx MCP server's tools


def to_markdown(ctx: dict, via: str = CLI) -> str:
    """The packet as Markdown. ``via``: how its reader writes back and finishes —
    ``TOOLS`` for a Claude Code or Codex turn, whose sandboxed shell cannot
    write the board (its `loopx writeback`/`done` exit 12; issue #39)."""
    key = ctx["card"]
    lines = [f"# {key}: {ctx['title']}", f"status **{ctx['status']}** · owner {ctx['owner'] or '—'}"]
    if ctx["lease"]:
        lines[-1] += f" · lease {ctx['lease']['token']} until {ctx['lease']['expires_at'] or 'a human answers'}"
    q = ctx["quota"]
    parts = []
    for name in ("turns", "tokens", "usd"):
        used, limit = q[name]["used"], q[name]["limit"]
        if limit is not None or used:
            parts.append(f"{name} {used:g}/{limit:g}" if limit is not None else f"{name} {used:g}")
    if parts:
        lines.append(
            "quota: " + ", ".join(parts) + (f" — **paused: {ctx['paused_reason']}**" if ctx["paused_reason"] else "")
        )
    if ctx["board_objective"]:
        lines.append(f"board objective: {ctx['board_objective']}")
    if ctx["objective"]:
        lines += ["", "## Objective", ctx["objective"]]
    if ctx["authority"]["needs"]:
        lines += ["", "## Authority", "needs: " + ", ".join(f"`{s}`" for s in ctx["authority"]["needs"])]
    if ctx.get("workspace"):
        ws = ctx["workspace"]
        lines += [
            "",
            "## Workspace",
            f"work in `{ws['path']}` (branch `{ws['branch']}`, from `{ws['base']}`): edit and commit there; LoopX records the branch, HEAD and uncommitted work after every turn",
        ]
    lines += ["", "## Next action", ctx["next"] or "(none recorded — decide one and write it back with --next)"]
    lines += ["", f"## Todos ({len(ctx['todos']) + ctx['todos_more']} open, {ctx['todos_done']} done)"]
    lines += [f"- [ ] {t['id']}. {t['text']}" for t in ctx["todos"]] or ["(none)"]
    if ctx["todos_more"]:
        lines.append(f"- … {ctx['todos_more']} more (`loopx card show {key}`)")
    if ctx["evidence"]:
        lines += ["", "## Last evidence"]
        for e in ctx["evidence"]:
            arts = f" — artifacts: {', '.join(e['artifacts'])}" if e["artifacts"] else ""
            who = f"{e['agent']} (unverified: from the inbox)" if e.get("unverified") else e["agent"]
            if e.get("failed"):
                who += " (a failed turn, recorded by the runner)"
            lines.append(f"- {e['at']} {who}: {e['summary']}{arts}")
    if ctx["gates"]:
        lines += ["", "## Gates"]
        for g in ctx["gates"]:
            scope = f" `{g['scope']}`" if g["scope"] else ""
            note = f" — {g['note']}" if g["note"] else ""
            lines.append(f"- {g['id']} **{g['status']}**{scope}: {g['question']}{note}")
            if g["choice"]:
                lines.append(f"  - the person chose: **{g['choice']}**")
            if g["text"]:
                lines.append(f"  - the person answered: {g['text']}")
    if ctx["handoff"]:
        h = ctx["handoff"]
        lines += [
            "",
            f"## Last handoff {h['id']} ({h['from'] or 'human'} → {h['to']}{', accepted' if h['accepted'] else ''})",
            h["summary"],
        ]
        lines += [f"- pending: {p}" for p in h["pending"]]
        lines.append(f"digest `{h['digest'][:16]}…`")
    lines += ["", "## This turn", _turn_hint(ctx, via)]
    text = "\n".join(lines)
    return text if len(text) <= MAX_CHARS else text[: MAX_CHARS - 40].rstrip() + f"\n… (truncated; `loopx log {key}`)"


def _turn_hint(ctx: dict, via: str = CLI) -> str:
    key = ctx["card"]
    status = ctx["status"]
    if status == "handoff":
        return f"accept it first: `loopx accept {key}`"
    if status == "waiting":
        pending = [g["id"] for g in ctx["gates"] if g["status"] == "pending"]
        return f"wait for the human: `loopx gate status {pending[0] if pending else 'G-…'}`"
    if status == "paused" and ctx.get("wake_at"):
        return f"paused — its window is spent until {ctx['wake_at']}; it resumes by itself; stop here"
    if status == "paused":
        return "paused — a human must raise the budget; stop here"
    if status == "blocked":
        return f"blocked ({ctx.get('blocked_reason') or 'see the card'}) — do not work on it; only a person puts it back (`loopx card move {key} --to ready`)"
    commit = ", commit it in your workspace (`done` refuses uncommitted work)" if ctx.get("workspace") else ""
    if via == TOOLS:
        return (
            f"do the next action{commit}, then call the loopx MCP tool `writeback` (card {key}, summary, "
            f"artifacts: files you made, next); when the card is finished, the tool `done` (card {key}, summary) — "
            "your shell's `loopx` cannot write the board from the sandbox"
        )
    return f'do the next action{commit}, then `loopx writeback {key} --summary "…" [--artifact PATH] [--next "…"]`; finish with `loopx done {key} --summary "…"`'
