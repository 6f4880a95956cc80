"""Registering agents and their windows (the window rule itself is quota.py's)."""

from __future__ import annotations

import os

from ..rules import clock
from ..shapes.errors import Forbidden, InvalidInput
from ..shapes.values import AgentView
from ..store import events
from ..store.models import Agent, Evidence
from ..store.orm import peewee as pw
from ..store.rows import agent_row, agent_view

TYPE_CHECKING = False  # (annotations only: typing is not imported on the cold path; checkers read this as typing's)
if TYPE_CHECKING:
    from ..authority import keys
    from ..store.base import Store


def add_agent(store: Store, data: dict, person: keys.Person | None) -> tuple[AgentView, bool]:
    """Register (or update) an agent — a person's decision, signed with their key
    (``person``: a ``keys.Person``); its scopes count only through that signed
    event (authority.py). Returns the agent and whether anything changed."""
    if person is None or not hasattr(person, "sign"):
        raise Forbidden(
            "only a person can register agents or change their scopes", "a person runs `loopx agent add` with their key"
        )
    limited = any(data.get(k) is not None for k in ("tokens", "usd", "turns"))
    if limited != (data.get("window") is not None):
        raise InvalidInput(
            "a window is a length and at least one limit: --window DUR with --tokens N, --usd X and/or --turns N",
            "e.g. `--tokens 2000000 --window 5h` or `--usd 20 --window 1d`",
        )
    watch = [os.path.abspath(os.path.expanduser(w)) for w in data.get("watch") or []]
    fields = {
        "runtime": data.get("runtime"),
        "capabilities": sorted(set(data.get("can") or [])),
        "watch": watch,
        "token_limit": data.get("tokens"),
        "window_seconds": data.get("window"),
    }
    for key, field in (("usd", "window_usd"), ("turns", "window_turns")):
        if data.get(key) is not None:  # (only when given: an older agent's signed event has no such key)
            fields[field] = data[key]

    def body() -> tuple[AgentView, bool]:
        now = clock.now()
        row = Agent.get_or_none(Agent.id == data["id"])
        if row is None:
            row = Agent.create(id=data["id"], created_at=now, **fields)
            row.decided_seq = events.emit(person, "agent_added", None, agent=row.id, **fields)
            row.save()
            return agent_view(row), True
        if (
            all(getattr(row, k) == v for k, v in fields.items())
            and all(getattr(row, f) is None for f in ("window_usd", "window_turns") if f not in fields)
            and row.decided_seq is not None
        ):
            return agent_view(row), False
        for key, value in fields.items():
            setattr(row, key, value)
        for field in ("window_usd", "window_turns"):
            if field not in fields:
                setattr(row, field, None)
        row.decided_seq = events.emit(person, "agent_updated", None, agent=row.id, **fields)
        row.save()
        return agent_view(row), True

    return store.run(body)


def list_agents(store: Store) -> list[AgentView]:
    with store.read():
        return [agent_view(r) for r in Agent.select().order_by(Agent.id)]


def find_agent(store: Store, agent_id: str) -> AgentView | None:
    with store.read():
        row = Agent.get_or_none(Agent.id == agent_id)
        return agent_view(row) if row is not None else None


def agent_page(store: Store, *, limit: int, after: str = "") -> tuple[list[AgentView], str | None]:
    """Up to ``limit`` agents with ids after ``after`` (id order), and the id to pass as ``after`` next."""
    with store.read():
        rows = list(Agent.select().where(Agent.id > after).order_by(Agent.id).limit(limit + 1))
        more = len(rows) > limit
        return [agent_view(r) for r in rows[:limit]], (rows[limit - 1].id if more else None)


def get_agent(store: Store, agent_id: str) -> AgentView:
    with store.read():
        return agent_view(agent_row(agent_id))


def total_tokens(agent_id: str) -> int:
    return int(Evidence.select(pw.fn.SUM(Evidence.tokens)).where(Evidence.agent == agent_id).scalar() or 0)
