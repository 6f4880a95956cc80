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
