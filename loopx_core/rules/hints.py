"""Next steps said the same way wherever LoopX suggests them: the command that
gets an agent its next card (`agent add`, `card add`, a lost claim, the hooks),
what to do about a paused card (the refusals and `next`)."""

from __future__ import annotations

from . import ids


def budget_hint(card_id: int) -> str:
    return f"a person must raise its budget: `loopx card budget {ids.fmt(ids.CARD, card_id)} --add-turns N` (or `+` on the board)"


def paused_hint(card) -> str:
    """What to do about a paused card (for refusals and ``next``)."""
    if card.paused_reason == "window" and card.wake_at is not None:
        from . import clock  # (datetime: only for this text)

        return f"its window is spent; it resumes by itself at {clock.iso(card.wake_at)} (`loopx next` says when)"
    return budget_hint(card.id)


def take_work(agent: str = "ID") -> str:
    return f"`loopx next --agent {agent} --claim`"
