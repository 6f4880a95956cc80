"""The signed decisions added with schema v4, named once: the kernel that
honours them, ``loopx verify`` that checks them and the runner that obeys
them all read these (standard library only)."""

from __future__ import annotations

# A card's rolling window (cards.window_card): the event carries the resulting fields.
WINDOW_KINDS = ("window_set",)
WINDOW_FIELDS = ("window_seconds", "window_tokens", "window_usd", "window_turns")

# A person's control of an agent's runner (runners.control): event kind -> control.
CONTROL_OF_KIND = {"runner_paused": "pause", "runner_resumed": "resume", "runner_stopped": "stop"}
KIND_OF_CONTROL = {v: k for k, v in CONTROL_OF_KIND.items()}
RUNNER_CONTROLS = tuple(CONTROL_OF_KIND)


def signed_answer(data: dict) -> str | None:
    """The answer a ``gate_answered`` event says: the option chosen, else the person's words, else approved/rejected."""
    return data.get("choice") or data.get("text") or data.get("answer")
