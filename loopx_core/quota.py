"""The budget rule, in one place (DESIGN §5 "Quota", §10).

A card past one of its limits never runs another turn: the turn that crosses
a limit is the last one charged. Two kinds of caller keep that true, whatever
status the card is in:

- every path that charges a card (``writeback``, the Stop hook's usage
  charge) calls ``charge`` and then ``pause_if_spent``: a card that crossed a
  limit goes ``paused`` (reason ``budget``) — active, waiting, monitoring or
  ready alike;
- every path that makes a card workable — claim, accept, a gate's approval, a
  monitor falling due, a budget raise, an unassign, a lease running out — calls
  ``hold``: an exhausted card goes (or stays) ``paused`` instead. A person's
  move to ``ready`` is refused instead (``cards.move_card``).

The agent's token window is the same rule one level up (``require_window``):
an agent whose window is spent starts no turn — no claim, no accept, no
writeback — until it reopens.
"""

from __future__ import annotations

from . import clock, events, ids
from .errors import Paused
from .models import Agent, Card
from .rows import card_view

# A card in one of these statuses can run a turn soon: crossing a limit pauses it.
PAUSES_ON_CHARGE = ("active", "waiting", "monitoring", "ready")


def over_budget(card: Card) -> bool:
    return (
        (card.max_turns is not None and card.used_turns >= card.max_turns)
        or (card.max_tokens is not None and card.used_tokens >= card.max_tokens)
        or (card.max_usd is not None and card.used_usd >= card.max_usd - 1e-9)
    )


def charge(card: Card, tokens: int, usd: float, *, turn: bool = True) -> None:
    if turn:
        card.used_turns += 1
    card.used_tokens += tokens
    card.used_usd = round(card.used_usd + usd, 6)


def pause(card: Card, reason: str, **data) -> None:
    """Pause ``card`` (the holder keeps its lease, which does not run out while paused)."""
    card.status = "paused"
    card.paused_reason = reason
    card.lease_expires = None
    card.monitor_due = None
    events.emit("system", "paused", card.id, reason=reason, quota=card_view(card).quota.to_json(), **data)


def pause_if_spent(card: Card, stall_limit: int = 0) -> str | None:
    """After a charge: pause the card if it crossed a limit (or, with
    ``stall_limit``, made no progress that many turns in a row). Returns the reason."""
    if card.status not in PAUSES_ON_CHARGE:
        return None  # done, cancelled, blocked, backlog, handoff, paused: caught where they are made workable
    if over_budget(card):
        reason = "budget"
    elif stall_limit > 0 and card.stalls >= stall_limit:
        reason = "no_progress"
    else:
        return None
    pause(card, reason, stalls=card.stalls)
    return reason


def hold(card: Card) -> bool:
    """Call after making ``card`` workable (active, waiting, ready): an exhausted
    card goes ``paused`` (reason ``budget``) instead. Returns True when it did."""
    if not over_budget(card):
        return False
    pause(card, "budget")
    return True


def budget_hint(card_id: int) -> str:
    return f"a person must raise its budget: `loopx card budget {ids.fmt(ids.CARD, card_id)} --add-turns N` (or `+` on the board)"


def require_window(agent: Agent, now: float | None = None) -> None:
    """Refuse to start a turn for an agent whose token window is spent (exit 8)."""
    if not agent.token_limit or not agent.window_seconds:
        return
    from .agents import window_state

    used, wake_at = window_state(agent, clock.now() if now is None else now)
    if wake_at is not None:
        raise Paused(
            f"{agent.id}'s token window is spent ({used} of {agent.token_limit} tokens); it reopens at {clock.iso(wake_at)}",
            "stop for now; `loopx next` says when to start again",
            code="token_window",
            data={"wake_at": clock.iso(wake_at), "reason": "token_window"},
        )


BUDGET_DECISIONS = ("card_added", "budget_raised")


def enforce_signed(store, card: Card, *, strict: bool = False) -> None:
    """Hold ``card`` to the budget a person decided (SECURITY.md): limits edited
    in the database are put back to the decided ones; a budget whose decision
    is missing or altered pauses the card until a person sets it again.

    On an agent's own per-turn path (``strict=False``) the decision is checked
    by its content and hash — what an edit of the card row cannot fake — not by
    its signature, so the turn pays no signature check (SECURITY.md: a decision
    rewritten together with its hash is caught by ``loopx verify``, the board's
    check on open and the person's runner, which pass ``strict=True``)."""
    if card.budget_seq is None:
        return  # an agent's own card: its limits are its own
    if strict:
        row = store.trust().decision_row(store.query, card.budget_seq, BUDGET_DECISIONS)
    else:
        from .trust import event_row

        row = event_row(store.query, card.budget_seq)
        if row is not None and (row.kind not in BUDGET_DECISIONS or not row.actor.startswith("human:") or row.computed_hash() != row.hash):
            row = None
    data = row.payload() if row is not None and row.card == card.id else None
    if data is None or "max_turns" not in data:
        if card.paused_reason != "budget_unverified":
            pause(card, "budget_unverified")
        return
    card.max_turns, card.max_tokens, card.max_usd = data["max_turns"], data["max_tokens"], data["max_usd"]
