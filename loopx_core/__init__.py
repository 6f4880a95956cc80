"""LoopX state kernel: store, verified operators, ingestion and the agent CLI.

This package never imports Textual. Agent-facing paths (``next``, ``writeback``,
hooks) import only what they use, so a cold process stays cheap.
"""

__version__ = "0.1.0"
