"""``loopx demo``: a throwaway board and simulated agents at work.

The agents are separate processes (``python -m loopx_core.demo.agent``) that
go through the real operators — next, claim, writeback with real artifact
files, gate ask, handoff, accept, done — exactly as a runtime would. Nothing
here touches the UI, and nothing here imports Textual."""

from __future__ import annotations

from .runner import DemoAgents, build_demo_board

__all__ = ["DemoAgents", "build_demo_board"]
