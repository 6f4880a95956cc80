"""How statuses group into the board's columns (shared by the text board and the TUI)."""

from __future__ import annotations

STATUS_COLUMNS: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("ready", "Ready", ("ready", "backlog")),
    ("active", "Active", ("active", "monitoring", "handoff")),
    ("needs_you", "Needs you", ("waiting", "paused")),
    ("blocked", "Blocked", ("blocked",)),
    ("done", "Done", ("done", "cancelled")),
)

COLUMN_OF = {status: key for key, _, statuses in STATUS_COLUMNS for status in statuses}
