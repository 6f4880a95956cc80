"""Next steps said the same way wherever LoopX suggests them: the command that
gets an agent its next card (`agent add`, `card add`, a lost claim, the hooks),
what to do about a paused card (the refusals and `next`)."""

from __future__ import annotations

from . import ids

TYPE_CHECKING = False  # (annotations only: typing is not imported on the cold path; checkers read this as typing's)
if TYPE_CHECKING:
    from typing import Protocol

    class PausedCard(Protocol):
        """What the hint reads of a paused card (a row of either reader)."""

        @property
        def id(self) -> int: ...
        @property
        def paused_reason(self) -> str | None: ...
        @property
        def wake_at(self) -> float | None: ...


def budget_hint(card_id: int) -> str:
    return f"a person must raise its budget: `loopx card budget {ids.fmt(ids.CARD, card_id)} --add-turns N` (or `+` on the board)"


def paused_hint(card: PausedCard) -> str:
    """What to do about a paused card (for refusals and ``next``)."""
    if card.paused_reason == "window" and card.wake_at is not None:
        from . import clock  # (datetime: only for this text)

        return f"its window is spent; it resumes by itself at {clock.iso(card.wake_at)} (`loopx next` says when)"
    return budget_hint(card.id)


def take_work(agent: str = "ID") -> str:
    return f"`loopx next --agent {agent} --claim`"
