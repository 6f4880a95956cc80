"""A tool call as a person reads it: the runtime's own permission question
(a gate), the last step of a turn that failed. A command as its text, a file
as its path, other fields as ``name: value`` — never JSON's escapes. One line
(a line break shows as ``⏎``), cut at ``TEXT_KEPT`` per field. Making it safe
for a terminal is the reader's job (``rules.text``, on every read).
Standard library only."""

from __future__ import annotations

import json

TEXT_KEPT = 600  # characters of one field's text the question shows


def readable(tool: str, tool_input: object) -> str:
    """What the tool would do: ``$ git add -A && git commit -m "wip"`` ·
    ``file src/app.py · old_string: … · new_string: …``."""
    return shown(tool, tool_input)[0]


def shown(tool: str, tool_input: object) -> tuple[str, bool]:
    """``readable``'s text, and whether it is the whole call (no field cut)."""
    if not isinstance(tool_input, dict):
        return _text(tool_input)
    fields = dict(tool_input)
    parts: list[tuple[str, bool]] = []
    command = fields.pop("command", None)  # (Bash, PowerShell, Monitor; Codex's exec_command: a list)
    if command is not None:
        text, whole = _text(
            " ".join(command) if isinstance(command, list) and all(isinstance(c, str) for c in command) else command
        )
        parts.append(("$ " + text, whole))
    path = fields.pop("file_path", None) or fields.pop("notebook_path", None)
    if isinstance(path, str):
        text, whole = _text(path)
        parts.append((f"file {text}", whole))
    for name, value in fields.items():
        text, whole = _text(value)
        parts.append((f"{name}: {text}", whole))
    if not parts:
        return "(no input)", True
    return " · ".join(p for p, _ in parts), all(w for _, w in parts)


def _text(value: object) -> tuple[str, bool]:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    text = text.replace("\r\n", "\n").replace("\n", " ⏎ ")
    return (text, True) if len(text) <= TEXT_KEPT else (text[: TEXT_KEPT - 1] + "…", False)
