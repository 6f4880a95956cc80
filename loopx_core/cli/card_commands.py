"""``loopx card …``: adding, listing and showing cards, a person's moves of a
card (move, assign, unassign, budget, edit, window) and its tries (try, tries,
keep)."""

from __future__ import annotations

from ..rules import ids
from ..rules.hints import take_work
from ..shapes.errors import InvalidInput
from . import (
    Context,
    Outcome,
    agent_id,
    card_id,
    drop_none,
    flag_words,
    more_text,
    page_limit,
    render,
    validate,
)

TYPE_CHECKING = False  # (annotations only: typing is not imported on the cold path; checkers read this as typing's)
if TYPE_CHECKING:
    from collections.abc import Callable

    from ..authority.keys import Person
    from ..shapes.values import CardView


def cmd_card_add(ctx: Context) -> Outcome:
    from ..ops.cards import add_card
    from ..ops.idempotence import once

    a = ctx.args
    data = validate(
        "card",
        drop_none(
            {
                "title": a.title,
                "body": a.body,
                "needs": a.needs,
                "after": a.after,
                "priority": a.priority,
                "owner": a.owner,
                "next": a.next,
                "verify": a.verify,
                "max_turns": a.max_turns,
                "max_tokens": a.max_tokens,
                "max_usd": a.max_usd,
                "backlog": a.backlog,
            }
        ),
    )
    tries = a.tries
    if tries is not None:
        from ..ops.tries import MAX_TRIES

        if not 2 <= tries <= MAX_TRIES:
            raise InvalidInput(f"--tries {tries}: give a card to 2 to {MAX_TRIES} agents", "leave --tries out for one")
    caller = ctx.person("give a card to several agents") if tries else ctx.caller("add cards")

    def run() -> tuple[dict, int]:
        if not tries:
            return {"card": add_card(ctx.store, data, caller).to_json()}, 0
        from ..ops.tries import add_with_tries

        card, more = add_with_tries(ctx.store, data, caller, tries)
        return {"card": card.to_json(), "tries": [c.to_json() for c in more]}, 0

    result, code = once(ctx.store, a.op_id, "card_add", {**data, "tries": tries}, run)
    card = result["card"]
    text = f"added {render.card_line(card)}"
    for extra in result.get("tries") or []:
        text += f"\nadded {render.card_line(extra)}"
    if result.get("tries"):
        text += f"\n{len(result['tries']) + 1} tries, each its own workspace; compare them with `loopx card tries {card['id']}`, keep one with `loopx card keep CARD`"
    return Outcome(result, code, text + f"\nnext: an agent takes it with {take_work()}")


def cmd_card_try(ctx: Context) -> Outcome:
    from ..ops.idempotence import once
    from ..ops.tries import add_tries

    cid = card_id(ctx.args.card)
    agent = agent_id(ctx.args.to) if ctx.args.to else None
    actor = ctx.person("give a card to several agents")

    def run() -> tuple[dict, int]:
        return {"card": add_tries(ctx.store, cid, actor, [agent])[0].to_json()}, 0

    result, code = once(ctx.store, ctx.args.op_id, "card_try", {"card": cid, "agent": agent}, run)
    return Outcome(
        result,
        code,
        f"added {render.card_line(result['card'])}\ncompare the tries with `loopx card tries {ids.fmt(ids.CARD, cid)}`",
    )


def cmd_card_tries(ctx: Context) -> Outcome:
    from ..ops.tries import compare

    first, tries = compare(ctx.store, card_id(ctx.args.card))
    rows = [t.to_json() for t in tries]
    lines = []
    for t in rows:
        diff = t["diff"]
        size = (
            f"{diff['files']} file{'s' if diff['files'] != 1 else ''} +{diff['added']} −{diff['removed']}"
            if diff
            else "no branch"
        )
        verify = {True: "verify passed", False: "verify failed", None: "no verify"}[t["verify"]]
        q = t["quota"]
        at = f"at {t['head'][:12]}" if t.get("head") else ""
        lines.append(
            f"try {t['try']}  {t['card']}  {t['status']:<10} {t['owner'] or '—':<12} {size:<22} {verify:<14} "
            f"{q['turns']['used']} turns {q['tokens']['used']} tok ${q['usd']['used']:.2f} {at}".rstrip()
        )
    pin = f" --head {rows[0]['head'][:12]}" if rows[0].get("head") else ""
    text = (
        "\n".join(render.one_line(line) for line in lines)
        + f"\n→ keep one: `loopx card keep {rows[0]['card']}{pin}` (or the try's id and commit)"
    )
    return Outcome({"card": ids.fmt(ids.CARD, first), "tries": rows}, 0, text)


def cmd_card_keep(ctx: Context) -> Outcome:
    from ..ops.idempotence import once
    from ..ops.tries import keep

    cid = card_id(ctx.args.card)
    actor = ctx.person("keep a try")

    head = ctx.args.head.strip().lower() if ctx.args.head else None
    if head is not None and not (7 <= len(head) <= 64 and all(c in "0123456789abcdef" for c in head)):
        raise InvalidInput(
            f"--head {ctx.args.head[:70]!r} is not a commit id",
            "give the commit `loopx card tries` shows (7 hex digits or more)",
        )

    def run() -> tuple[dict, int]:
        kept, cancelled = keep(ctx.store, cid, actor, head)
        return {"card": kept.to_json(), "cancelled": [c.to_json() for c in cancelled]}, 0

    result, code = once(ctx.store, ctx.args.op_id, "card_keep", {"card": cid, **({"head": head} if head else {})}, run)
    gone = ", ".join(c["id"] for c in result["cancelled"]) or "none still open"
    return Outcome(
        result,
        code,
        f"kept {render.card_line(result['card'])}\ncancelled (workspaces archived under refs/loopx/…): {gone}",
    )


def cmd_card_list(ctx: Context) -> Outcome:
    from ..rules.columns import COLUMN_OF

    status, owner = ctx.args.status, ctx.args.owner
    if status is not None and status not in COLUMN_OF:
        raise InvalidInput(f"no status {status[:40]!r}", "one of: " + ", ".join(COLUMN_OF))
    owner = agent_id(owner) if owner is not None else None
    limit = page_limit(ctx.args.limit)
    after = card_id(ctx.args.after) if ctx.args.after is not None else 0
    if getattr(ctx.args, "json", False) and not ctx.args.full and ctx._store is None:
        location = ctx.location
        if location.backend == "sqlite":  # an agent's list between turns: no peewee (plainread.py)
            from ..store.plainread import card_page as plain_page

            found = plain_page(location.path, status, owner, limit=limit, after=after)
            if found is not None:
                return Outcome({"cards": found[0], "next_after": ids.fmt(ids.CARD, found[1])}, 0, "")
    from ..ops.cards import card_page

    views, last = card_page(ctx.store, status, owner, limit=limit, after=after)
    cursor = ids.fmt(ids.CARD, last)
    full = [c.to_json() for c in views]
    cards = full if ctx.args.full else [c.to_row() for c in views]
    text = "\n".join(render.card_line(c) for c in full) or "no cards match"
    text += more_text(["card", "list", *flag_words(ctx.args, "status", "owner", "limit", "full")], "--after", cursor)
    return Outcome({"cards": cards, "next_after": cursor}, 0, text)


def cmd_card_show(ctx: Context) -> Outcome:
    from ..ops.cards import show_card, usage_of
    from ..ops.workspace_open import last_rebuild, rebuilt_text
    from ..ops.workspaces import lookup

    cid = card_id(ctx.args.card)
    card = show_card(ctx.store, cid).to_json()
    usage = usage_of(ctx.store, cid)
    data: dict = {"card": card, "usage": usage}
    text = render.card_block(card)
    ws = lookup(ctx.store, cid)
    if ws is not None:
        rebuilt = last_rebuild(ctx.store, cid)
        data["workspace"] = {"path": ws.path, "branch": ws.branch, "state": ws.state, "rebuilt": rebuilt}
        text += f"\n  workspace {ws.state}: {ws.path} on {ws.branch}"
        if rebuilt is not None:
            text += "\n  " + render.one_line(rebuilt_text(card["id"], rebuilt))
    return Outcome(data, 0, text + render.usage_block(usage))


def _person_card_op(ctx: Context, op: str, payload: dict, fn: Callable[[Person], CardView], verb: str) -> Outcome:
    from ..ops.idempotence import once

    actor = ctx.person(verb)

    def run() -> tuple[dict, int]:
        return {"card": fn(actor).to_json()}, 0

    result, code = once(ctx.store, ctx.args.op_id, op, payload, run)
    return Outcome(result, code, f"{render.card_line(result['card'])}")


def cmd_card_move(ctx: Context) -> Outcome:
    from ..ops.cards import move_card

    cid = card_id(ctx.args.card)
    return _person_card_op(
        ctx,
        "card_move",
        {"card": cid, "to": ctx.args.to},
        lambda actor: move_card(ctx.store, cid, ctx.args.to, actor),
        "move cards",
    )


def cmd_card_assign(ctx: Context) -> Outcome:
    from ..ops.cards import assign_card

    cid = card_id(ctx.args.card)
    to = validate("next", {"agent": ctx.args.to})["agent"]
    summary = validate("text", {"text": ctx.args.summary})["text"] if ctx.args.summary else None
    out = _person_card_op(
        ctx,
        "card_assign",
        {"card": cid, "to": to, "summary": summary},
        lambda actor: assign_card(ctx.store, cid, to, actor, summary),
        "reassign cards",
    )
    if out.data["card"]["status"] == "handoff":
        out.text += f"\nhanded to {to}: it accepts with `loopx accept {out.data['card']['id']}`"
    return out


def cmd_card_unassign(ctx: Context) -> Outcome:
    from ..ops.cards import assign_card

    cid = card_id(ctx.args.card)
    return _person_card_op(
        ctx, "card_unassign", {"card": cid}, lambda actor: assign_card(ctx.store, cid, None, actor), "unassign cards"
    )


def cmd_card_budget(ctx: Context) -> Outcome:
    from ..ops.cards import budget_card

    cid = card_id(ctx.args.card)
    data = validate(
        "budget",
        drop_none({"add_turns": ctx.args.add_turns, "add_tokens": ctx.args.add_tokens, "add_usd": ctx.args.add_usd}),
    )
    return _person_card_op(
        ctx,
        "card_budget",
        {"card": cid, **data},
        lambda actor: budget_card(ctx.store, cid, data, actor),
        "change a budget",
    )


def cmd_card_edit(ctx: Context) -> Outcome:
    from ..ops.cards import edit_card

    cid = card_id(ctx.args.card)
    a = ctx.args
    data = validate("edit", drop_none({"title": a.title, "body": a.body, "next": a.next, "verify": a.verify}))
    return _person_card_op(
        ctx, "card_edit", {"card": cid, **data}, lambda actor: edit_card(ctx.store, cid, data, actor), "edit cards"
    )


def cmd_card_window(ctx: Context) -> Outcome:
    from ..ops.cards import window_card

    cid = card_id(ctx.args.card)
    a = ctx.args
    data = validate(
        "window",
        drop_none({"every": a.every, "tokens": a.tokens, "usd": a.usd, "turns": a.turns, "clear": a.clear or None}),
    )
    out = _person_card_op(
        ctx,
        "card_window",
        {"card": cid, **data},
        lambda actor: window_card(ctx.store, cid, data, actor),
        "set a card's window",
    )
    card = out.data["card"]
    if card["window"] is None:
        out.text += "\nno window"
    elif card["status"] == "paused" and card["wake_at"]:
        out.text += f"\nits window is spent: it resumes by itself at {card['wake_at']}"
    return out
