"""docs/ARCHITECTURE.md's "Where things go" answers "I want to change X — which
file?": every file and every name it points at is there, so the table cannot
quietly send a newcomer to a module that moved."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
# Where a path in the table is read from: the repository, or one of the packages.
BASES = (REPO, REPO / "loopx_core", REPO / "loopx_tui")
TASKS = (
    "a verb",
    "an MCP tool",
    "a rule",
    "an event kind",
    "a gate kind",
    "a migration",
    "a runtime",
    "a key on the board",
    "a screen or a dialog",
    "a bench",
)
CODE = re.compile(r"`([^`]+)`")
FILE = re.compile(r"^[\w./-]*\w/[\w./-]*\.(?:py|md|tcss|toml)$|^[\w-]+/$|^[\w]+/[\w/]+/$")
NAME = re.compile(r"^((?:[\w]+/)+[\w]+)\.([A-Za-z_]\w*)")  # ops/gate_rows.open_gate(...)


def section() -> str:
    text = (REPO / "docs" / "ARCHITECTURE.md").read_text(encoding="utf-8")
    start = text.index("\n## Where things go")
    end = text.find("\n## ", start + 1)
    return text[start : end if end != -1 else len(text)]


def _found(relative: str) -> Path | None:
    return next((base / relative for base in BASES if (base / relative).exists()), None)


def missing(table: str) -> list[str]:
    """The files and the module names the table points at that are not there."""
    gone = []
    for token in CODE.findall(table):
        token = token.split(" ")[0]
        if "<" in token:
            continue  # a pattern (`cli/<group>_commands.py`), not a file
        name = NAME.match(token)
        if name is not None and not token.endswith((".py", ".md", ".tcss", ".toml")):
            module, attr = name.groups()
            path = _found(module + ".py")
            if path is None:
                gone.append(f"{token}: no {module}.py")
            elif not re.search(
                rf"^\s*(?:def|class|async def)\s+{attr}\b|^\s*{attr}\s*[:=]", path.read_text(encoding="utf-8"), re.M
            ):
                gone.append(f"{token}: {module}.py defines no {attr}")
        elif FILE.match(token) and _found(token) is None:
            gone.append(f"{token}: no such file or folder")
    return gone


def test_where_things_go_names_the_common_changes():
    table = section()
    absent = [task for task in TASKS if f"\n| {task}" not in table]
    assert not absent, f"docs/ARCHITECTURE.md's 'Where things go' has no row for: {absent}"


def test_every_file_and_name_it_points_at_is_there():
    assert not missing(section()), (
        "docs/ARCHITECTURE.md's 'Where things go' points at what is not there:\n" + "\n".join(missing(section()))
    )


def test_a_moved_file_or_a_renamed_name_is_caught():
    """It bites: the table as it would read after a module moved, or a name in it was renamed."""
    row = "| a gate kind | `ops/gate_rows.open_gate(...)` | `loopx_tui/modals/gate.py`, `cli/gate_commands.py` | `tests/tui/test_gates.py` |"
    assert missing(row) == []
    assert missing(row.replace("open_gate", "open_the_gate")) == [
        "ops/gate_rows.open_the_gate(...): ops/gate_rows.py defines no open_the_gate"
    ]
    assert missing(row.replace("cli/gate_commands.py", "cli/gates.py")) == ["cli/gates.py: no such file or folder"]
