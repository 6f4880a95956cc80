"""Telling the person a gate is waiting when they may be looking elsewhere.

A terminal bell on every new gate (tmux marks the window; most terminals
flash or beep), and a desktop notification while the board's terminal does
not have focus, where one can be sent (``notify-send`` on Linux with a
desktop session, ``osascript`` on macOS). Both can be switched off:
``LOOPX_BELL=0``, ``LOOPX_DESKTOP_NOTIFY=0``, or from the command palette.
The notification runs in its own process and never waits."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from typing import TYPE_CHECKING

from loopx_core.shapes.values import CardView, GateView

if TYPE_CHECKING:
    from textual.app import App


def _switch(name: str) -> bool:
    return os.environ.get(name, "1").strip().lower() not in ("0", "no", "off", "false")


def desktop_command() -> list[str] | None:
    """The program that shows a desktop notification here, or None."""
    if sys.platform == "darwin" and shutil.which("osascript"):
        return ["osascript"]
    if (
        os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY") or os.environ.get("DBUS_SESSION_BUS_ADDRESS")
    ) and shutil.which("notify-send"):
        return ["notify-send"]
    return None


class GateAlert:
    def __init__(
        self, app: App, *, bell: bool | None = None, desktop: bool | None = None, command: list[str] | None = None
    ):
        self.app = app
        self.bell = _switch("LOOPX_BELL") if bell is None else bell
        self.desktop = _switch("LOOPX_DESKTOP_NOTIFY") if desktop is None else desktop
        self.command = command if command is not None else desktop_command()
        self.bells = 0
        self.sent: list[subprocess.Popen] = []  # desktop notifications started (tests wait on them)

    @property
    def desktop_available(self) -> bool:
        return self.command is not None

    def gate_arrived(self, gate: GateView, card: CardView | None) -> None:
        if self.bell:
            self.bells += 1
            self.app.bell()
        if self.desktop and self.command is not None and not self.app.app_focus:
            self._send(
                f"LoopX: {gate.key} needs you",
                f"{gate.agent} on {card.key if card else 'a card'}: {gate.question}"[:200],
            )

    def runtime_wants(self, title: str, message: str) -> None:
        """A runtime's own "needs you" (notices.py): said as a gate is."""
        if self.bell:
            self.bells += 1
            self.app.bell()
        if self.desktop and self.command is not None and not self.app.app_focus:
            self._send(f"LoopX: {title}"[:120], message[:200])

    def _send(self, title: str, body: str) -> None:
        command = self.command
        if command is None:
            return
        if command[0] == "osascript":
            quote = lambda s: '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'  # noqa: E731
            argv = ["osascript", "-e", f"display notification {quote(body)} with title {quote(title)}"]
        else:
            argv = [*command, "--app-name=LoopX", title, body]
        try:
            proc = subprocess.Popen(
                argv,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                start_new_session=True,
            )
        except OSError:
            self.command = None  # gone since start: stop trying
            return
        self.sent = [p for p in self.sent if p.poll() is None] + [proc]
