"""Registering agents and their token windows."""

from __future__ import annotations

import os

from . import clock, events
from .errors import Forbidden, InvalidInput
from .models import Agent, Evidence
from .orm import peewee as pw
from .rows import agent_row, agent_view
from .values import AgentView


def add_agent(store, data: dict, person) -> tuple[AgentView, bool]:
    """Register (or update) an agent — a person's decision, signed with their key
    (``person``: a ``keys.Person``); its scopes count only through that signed
    event (authority.py). Returns the agent and whether anything changed."""
    if not hasattr(person, "sign"):
        raise Forbidden("only a person can register agents or change their scopes", "a person runs `loopx agent add` with their key")
    if (data.get("tokens") is None) != (data.get("window") is None):
        raise InvalidInput("--tokens and --window go together", "e.g. `--tokens 2000000 --window 5h`")
    watch = [os.path.abspath(os.path.expanduser(w)) for w in data.get("watch") or []]
    fields = {
        "runtime": data.get("runtime"),
        "capabilities": sorted(set(data.get("can") or [])),
        "watch": watch,
        "token_limit": data.get("tokens"),
        "window_seconds": data.get("window"),
    }

    def body():
        now = clock.now()
        row = Agent.get_or_none(Agent.id == data["id"])
        if row is None:
            row = Agent.create(id=data["id"], created_at=now, **fields)
            row.decided_seq = events.emit(person, "agent_added", None, agent=row.id, **fields)
            row.save()
            return agent_view(row), True
        if all(getattr(row, k) == v for k, v in fields.items()) and row.decided_seq is not None:
            return agent_view(row), False
        for key, value in fields.items():
            setattr(row, key, value)
        row.decided_seq = events.emit(person, "agent_updated", None, agent=row.id, **fields)
        row.save()
        return agent_view(row), True

    return store.run(body)


def list_agents(store) -> list[AgentView]:
    with store.read():
        return [agent_view(r) for r in Agent.select().order_by(Agent.id)]


def get_agent(store, agent_id: str) -> AgentView:
    with store.read():
        return agent_view(agent_row(agent_id))


def window_state(agent: Agent, now: float) -> tuple[int, float | None]:
    """Tokens spent in the agent's rolling window, and when it reopens if spent."""
    if not agent.token_limit or not agent.window_seconds:
        return 0, None
    start = now - agent.window_seconds
    rows = list(
        Evidence.select(Evidence.created_at, Evidence.tokens)
        .where((Evidence.agent == agent.id) & (Evidence.created_at > start) & (Evidence.tokens > 0))
        .order_by(Evidence.created_at)
        .tuples()
    )
    used = sum(t for _, t in rows)
    if used < agent.token_limit:
        return used, None
    # The window reopens once enough of the oldest spending has aged out.
    remaining = used
    for at, tokens in rows:
        remaining -= tokens
        if remaining < agent.token_limit:
            return used, at + agent.window_seconds
    return used, now + agent.window_seconds  # pragma: no cover - loop always returns


def total_tokens(agent_id: str) -> int:
    return int(Evidence.select(pw.fn.SUM(Evidence.tokens)).where(Evidence.agent == agent_id).scalar() or 0)
