"""An evidence row — a turn's report, or usage a hook or the runner measured —
and which of its sources are no report of the agent's work. Shared by
``writeback``, ``charge`` (usage), ``done`` (``no evidence yet``) and the
Stop hook's ``turns``. It imports no verb."""

from __future__ import annotations

from ..store.records import Card, Evidence

SOURCES = ("cli", "file", "hook", "mcp", "verify", "runner")
# Evidence that is not an agent's report of its work: usage measured from a
# transcript (``hook``) and a turn the runner recorded as failed (``runner``).
MEASURED = "hook"  # usage a hook (or the runner) measured from a transcript: ``charge``
NOT_REPORTS = (MEASURED, "runner")


def add_evidence(
    card: Card,
    agent: str,
    *,
    now: float,
    summary: str,
    source: str,
    payload_hash: str,
    turn_id: str | None = None,
    artifacts: list | None = None,
    next_action: str | None = None,
    todos_added: list | None = None,
    todos_done: list | None = None,
    tokens_in: int = 0,
    tokens_out: int = 0,
    tokens: int | None = None,
    usd: float = 0.0,
    extra: dict | None = None,
    unverified: bool = False,
) -> Evidence:
    """Insert one evidence row on ``card`` — a writeback, or usage the hook or
    the runner measured (``charge.charge_usage``) — and return it. What the
    row does to the card (quota, todos, stalls) is the caller's."""
    return Evidence.create(
        card_id=card.id,
        agent=agent,
        turn_id=turn_id,
        summary=summary,
        artifacts=artifacts or [],
        next_action=next_action,
        todos_added=todos_added or [],
        todos_done=todos_done or [],
        tokens_in=tokens_in,
        tokens_out=tokens_out,
        tokens=tokens_in + tokens_out if tokens is None else tokens,
        usd=usd,
        source=source,
        extra=extra,
        payload_hash=payload_hash,
        created_at=now,
        unverified=unverified,
    )
