"""Charging a turn to a card and deciding whether it must pause."""

from __future__ import annotations

from .models import Card


def charge(card: Card, tokens: int, usd: float) -> None:
    card.used_turns += 1
    card.used_tokens += tokens
    card.used_usd = round(card.used_usd + usd, 6)


def pause_reason(card: Card, stall_limit: int) -> str | None:
    from .cards import over_budget

    if over_budget(card):
        return "budget"
    if stall_limit > 0 and card.stalls >= stall_limit:
        return "no_progress"
    return None


BUDGET_DECISIONS = ("card_added", "budget_raised")


def enforce_signed(store, card: Card) -> None:
    """Hold ``card`` to the budget a person signed (SECURITY.md): limits edited
    in the database are put back to the signed ones; a budget whose signed
    decision is missing or altered pauses the card until a person sets it again."""
    if card.budget_seq is None:
        return  # an agent's own card: its limits are its own
    row = store.trust().decision_row(store.query, card.budget_seq, BUDGET_DECISIONS)
    data = row.payload() if row is not None and row.card == card.id else None
    if data is None or "max_turns" not in data:
        if card.paused_reason != "budget_unverified":
            from . import events

            if card.status in ("active", "waiting", "ready"):
                card.status = "paused"
            card.paused_reason = "budget_unverified"
            events.emit("system", "paused", card.id, reason="budget_unverified")
        return
    card.max_turns, card.max_tokens, card.max_usd = data["max_turns"], data["max_tokens"], data["max_usd"]
