"""A runtime's own "needs you" on the board (#29).

Claude Code's ``Notification`` hook (a permission dialog waiting, idle for
input) is recorded as a ``runtime_notice`` event on the agent's card. The
board says it as gates and paused cards are said: the bell and the desktop
notification (``alert``), a toast, and a mark in the card's corner until the
card's next turn or writeback (the runtime has its person again, or went on
without them). Pure: events in, marks and lines out (tests/tui/test_runtime_notice.py)."""

from __future__ import annotations

from collections.abc import Iterable, MutableMapping
from typing import NamedTuple

from loopx_core.rules.text import terminal_safe
from loopx_core.shapes.values import EventView

KIND = "runtime_notice"
# The card's next turn, or its writeback: the mark has done its work.
CLEARS = frozenset({"turn_started", "evidence_added"})
# The badge for the runtime's notification types (Claude Code's ``notification_type``).
_BADGES = {"permission_prompt": "permission", "idle_prompt": "idle", "elicitation_dialog": "question"}


class RuntimeNotice(NamedTuple):
    card: int | None  # the agent's card (None: the agent held none)
    agent: str
    title: str  # "Claude Code (dev) needs you"
    message: str  # the runtime's words, terminal-safe, one line
    badge: str  # the card's corner while the notice stands


def notice_of(event: EventView) -> RuntimeNotice | None:
    """The notice an event is, if it is one. The runtime's text is agent text:
    it goes through ``terminal_safe`` here whatever the store holds."""
    if event.kind != KIND:
        return None
    data = event.data
    agent = terminal_safe(str(data.get("agent_id") or event.actor.removeprefix("agent:") or "?"))
    who = terminal_safe(str(data.get("title") or data.get("runtime") or "the runtime"))
    message = " ".join(terminal_safe(str(data.get("message") or "")).split())[:300]
    kind = str(data.get("type") or "")
    return RuntimeNotice(event.card, agent, f"{who} ({agent}) needs you", message, "⚐ " + _BADGES.get(kind, "notice"))


def follow(marks: MutableMapping[int, str], events: Iterable[EventView]) -> list[RuntimeNotice]:
    """Apply new events to ``marks`` (card id -> badge) in order; returns the
    notices among them, oldest first."""
    arrived: list[RuntimeNotice] = []
    for event in events:
        notice = notice_of(event)
        if notice is not None:
            arrived.append(notice)
            if notice.card is not None:
                marks[notice.card] = notice.badge
        elif event.kind in CLEARS and event.card is not None:
            marks.pop(event.card, None)
    return arrived
