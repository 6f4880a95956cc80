"""``loopx agent add|list|show``: the board's agents and their scopes."""

from __future__ import annotations

import json

from ..rules.hints import take_work
from . import (
    Context,
    Outcome,
    agent_id,
    drop_none,
    flag_words,
    more_text,
    page_limit,
    render,
    validate,
)


def cmd_agent_add(ctx: Context) -> Outcome:
    from ..ops.agents import add_agent

    a = ctx.args
    ctx.refuse_agent("register agents or change their scopes")
    from ..rules.given_paths import check_target

    for folder in a.watch or ():
        check_target(folder, "the watch folder", "give --watch a folder (it may not exist yet)", want="folder")
    data = validate(
        "agent",
        drop_none(
            {
                "id": a.id,
                "runtime": a.runtime,
                "can": a.can,
                "watch": a.watch,
                "tokens": a.tokens,
                "usd": a.usd,
                "turns": a.turns,
                "window": a.window,
            }
        ),
    )
    agent, changed = add_agent(ctx.store, data, ctx.person("register agents or change their scopes"))
    verb = "registered" if changed else "unchanged:"
    caps = ", ".join(agent.capabilities) or "no scopes"
    return Outcome(
        {"agent": agent.to_json()},
        0,
        f"{verb} agent {agent.id} ({caps})\nnext: it takes a card with {take_work(agent.id)}",
    )


def cmd_agent_list(ctx: Context) -> Outcome:
    from ..ops.agents import agent_page

    after = agent_id(ctx.args.after) if ctx.args.after is not None else ""
    views, cursor = agent_page(ctx.store, limit=page_limit(ctx.args.limit), after=after)
    agents = [a.to_json() for a in views]
    lines = [
        f"{a['id']:<16} {a['runtime'] or '-':<12} {', '.join(a['capabilities']) or '-':<24} window {render.window_text(a['window'])}"
        for a in agents
    ]
    text = "\n".join(lines) or "no agents yet → `loopx agent add ID --can SCOPE`"
    return Outcome(
        {"agents": agents, "next_after": cursor},
        0,
        text + more_text(["agent", "list", *flag_words(ctx.args, "limit")], "--after", cursor),
    )


def cmd_agent_show(ctx: Context) -> Outcome:
    from ..ops.agents import get_agent

    agent = get_agent(ctx.store, agent_id(ctx.args.id)).to_json()
    return Outcome({"agent": agent}, 0, json.dumps(agent, indent=2))
