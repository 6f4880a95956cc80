"""Scopes, capabilities and grants (DESIGN §5 "Authority")."""

from __future__ import annotations

from .models import Gate, Grant
from .scopes import covers  # noqa: F401 - one definition, shared with the hook's cold reader


def has_capability(capabilities, scope: str) -> bool:
    return any(covers(c, scope) for c in capabilities or ())


def grant_for(scope: str, agent: str, card: int, now: float) -> Grant | None:
    """A standing grant (remembered answer) that covers ``scope`` for this agent and card."""
    query = Grant.select().where(
        (Grant.agent.is_null() | (Grant.agent == agent))
        & (Grant.card.is_null() | (Grant.card == card))
        & (Grant.expires_at.is_null() | (Grant.expires_at > now))
    )
    for row in query.order_by(Grant.id):
        if covers(row.scope, scope):
            return row
    return None


def approved_in_lease(scope: str, card: int, lease_token: int | None) -> Gate | None:
    """An approved gate covers its scope on that card for the rest of the lease."""
    if lease_token is None:
        return None
    return (
        Gate.select()
        .where((Gate.card == card) & (Gate.scope == scope) & (Gate.status == "approved") & (Gate.lease_token == lease_token))
        .first()
    )


def allowed(scope: str, agent_caps, agent: str, card: int, lease_token: int | None, now: float) -> str | None:
    """Who allows ``scope`` right now (``capability``, ``grant:G``, ``gate:G``) or None."""
    if has_capability(agent_caps, scope):
        return "capability"
    grant = grant_for(scope, agent, card, now)
    if grant is not None:
        return f"grant:{grant.id}"
    gate = approved_in_lease(scope, card, lease_token)
    if gate is not None:
        return f"gate:G-{gate.id}"
    return None
