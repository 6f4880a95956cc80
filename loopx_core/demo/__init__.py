"""``loopx demo``: a throwaway board and simulated agents at work.

Real runners (``loopx run``) drive the agents; each turn is a stand-in
runtime (``python -m loopx_core.demo.agent``) that goes through the real
operators — writeback with real artifact files, gate ask, handoff, done —
exactly as a runtime would. Nothing here touches the UI, and nothing here
imports Textual."""

from __future__ import annotations

from .runner import DemoAgents, build_demo_board

__all__ = ["DemoAgents", "build_demo_board"]
