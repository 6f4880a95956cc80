"""A runtime's specifics live in one place (#41): its module in
``loopx_core/runtimes/`` (``claude_code.py``, ``codex.py``, ``shell.py``),
named by the registry (``runtimes/__init__.py``). Everywhere else the code asks
the runtime's module — it never decides by a runtime's name: no comparison
with one (``runtime == "codex"``), no table keyed by them, no list of them
(``choices=["claude-code", "codex"]``). A third runtime is then a module and a
name, and no branch elsewhere forgets it."""

from __future__ import annotations

import ast
from pathlib import Path

from loopx_core import runtimes

REPO = Path(__file__).resolve().parent.parent
HOME = REPO / "loopx_core" / "runtimes"  # the one place


def _named(node) -> bool:
    return isinstance(node, ast.Constant) and node.value in runtimes.NAMES


def _names_in(node) -> int:
    return sum(_named(e) for e in node.elts) if isinstance(node, (ast.Tuple, ast.List, ast.Set)) else 0


def scattered(source: str) -> list[int]:
    """The lines of ``source`` that decide by a runtime's name: a comparison
    with one (or with a collection holding one), a ``match`` case on one, a
    table keyed by two or more, a literal list of two or more. (One name as a
    key is a word as often as a runtime: ``{"shell": "bash"}``.)"""
    lines = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Compare):
            hit = any(_named(part) or _names_in(part) for part in (node.left, *node.comparators))
        elif isinstance(node, ast.MatchValue):
            hit = _named(node.value)
        elif isinstance(node, ast.Dict):
            hit = sum(key is not None and _named(key) for key in node.keys) >= 2
        else:
            hit = _names_in(node) >= 2
        if hit:
            lines.append(node.lineno)
    return sorted(set(lines))


def test_no_module_outside_the_runtimes_decides_by_a_runtimes_name():
    found = {}
    for package in ("loopx_core", "loopx_tui"):
        for path in sorted((REPO / package).rglob("*.py")):
            if HOME in path.parents:
                continue
            lines = scattered(path.read_text(encoding="utf-8"))
            if lines:
                found[str(path.relative_to(REPO))] = lines
    assert not found, (
        f"a runtime's specifics outside loopx_core/runtimes/ (ask its module instead: runtimes.module(name)): {found}"
    )


def test_every_runtime_the_registry_names_has_its_module():
    """Each name is a module providing what the registry's docstring lists for it."""
    for name in runtimes.NAMES:
        module = runtimes.module(name)
        assert module.NAME == name and module.TITLE
        assert runtimes.make(name, ["x"]).name == name
    for name in runtimes.HOOKED:
        module = runtimes.module(name)
        for provided in (
            "read_transcript",
            "subagent_transcripts",
            "CHARGE_PREFIX",
            "SETTINGS_FILE",
            "write_settings",
            "expected_last_message",
            "approved",
            "continue_turn",
            "session_env",
            "unasked_permission",
            "ANSWERS_WITH_INPUT",
            "QUESTION_TOOL",
        ):
            assert hasattr(module, provided), f"{module.__name__} has no {provided}"


def test_a_scattered_branch_is_caught():
    """It bites: the shapes the old code had (hooks' branches, the transcript
    readers' table, the verb table's choices), and not a name as plain data."""
    assert scattered('if hook.runtime == "claude-code" and approvers:\n    pass\n') == [1]
    assert scattered('x = "cc" if runtime == "claude-code" else "cx"\n') == [1]
    assert scattered('if runtime in ("codex", "other"):\n    pass\n') == [1]
    assert scattered('READERS = {"claude-code": read_claude, "codex": read_codex}\n') == [1]
    assert scattered('arg("--for", choices=["claude-code", "codex"])\n') == [1]
    assert scattered('match runtime:\n    case "shell":\n        pass\n') == [2]
    assert scattered('AgentSpec("codex-1", "codex")\ndata = {"shell": shell}\n') == []
