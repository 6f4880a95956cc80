"""What the board says to the person in passing: toasts.

Every toast is also remembered (``said``: tests and the curious read it). While
a gate dialog is on screen, toasts wait until it is answered: nothing covers
the question (at 80×24 a toast would). The app, the actions and the gate
queue all say things through one ``Toasts``; it knows nothing of them, only
how to show a toast (``notify``) and whether to hold it (``holding``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from textual.notifications import SeverityLevel

SAID_KEPT = 200  # toasts remembered: a day in a tmux pane must not grow without bound
HELD_KEPT = 5  # toasts held behind a gate dialog: the latest few are worth reading after it


class Toasts:
    def __init__(self, notify: Callable[..., Any], holding: Callable[[], bool]):
        self._notify = notify  # App.notify
        self._holding = holding  # a gate dialog is on screen
        self.said: list[tuple[str, str]] = []  # (severity, message), oldest first
        self._held: list[tuple[str, str, SeverityLevel, float]] = []

    def say(
        self, message: str, *, title: str = "", severity: SeverityLevel = "information", timeout: float | None = None
    ) -> None:
        self.said.append((severity, message))
        del self.said[:-SAID_KEPT]
        timeout = timeout if timeout is not None else (8 if severity == "error" else 4)
        if self._holding():
            self._held.append((message, title, severity, timeout))
            del self._held[:-HELD_KEPT]
            return
        self._notify(message, title=title, severity=severity, timeout=timeout)

    def refuse(self, message: str, hint: str = "") -> None:
        """A refusal: red, with what to do about it."""
        self.say(message + (f"\n→ {hint}" if hint else ""), title="Refused", severity="error")

    def release(self) -> None:
        """The gate dialog closed: the toasts held behind it are shown now."""
        held, self._held = self._held, []
        for message, title, severity, timeout in held:
            self._notify(message, title=title, severity=severity, timeout=timeout)
