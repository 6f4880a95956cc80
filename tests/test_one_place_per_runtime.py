"""A runtime's specifics live in one place (#41): its module in
``loopx_core/runtimes/`` (``claude_code.py``, ``codex.py``, ``shell.py``),
named by the registry (``runtimes/__init__.py``). Everywhere else the code asks
the runtime's module — it never decides by a runtime's name: no comparison
with one (``runtime == "codex"``), no table keyed by them, no list of them
(``choices=["claude-code", "codex"]``) — nor holds what only a runtime knows:
its tools' names, its executable, package and environment marks, its
permission prompt tool (the registry's ``HOOK_TOOLS``, its module's
``BINARY``, ``PACKAGE``, ``ENV_MARKS``, ``PERMISSION_PROMPT``). A third
runtime is then a module and a name, and no branch elsewhere forgets it."""

from __future__ import annotations

import ast
from pathlib import Path

from loopx_core import runtimes
from loopx_core.runtimes import base

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


def vocabulary() -> tuple[set[str], set[str], set[str]]:
    """What only a runtime knows, as words: (every one, the unmistakable ones,
    its MCP tools' names). Its tools' names (``HOOK_TOOLS``) and executable
    (``BINARY``) may be another word too ("Edit", "codex"): only two of them
    together are a runtime's list. Its package, environment marks and prompt
    tool as the runtime calls it are its own wherever they stand; the MCP
    tool it is listed to (``PERMISSION_PROMPT``) is its own as a tool listing."""
    words, own, tools_listed = set(), set(), set()
    for tools in runtimes.HOOK_TOOLS.values():
        words.update(tools.shell, tools.powershell, tools.files, tools.patch, tools.search)
    for name in runtimes.HOOKED:
        module = runtimes.module(name)
        own.update({module.PACKAGE, *module.ENV_MARKS})
        if hasattr(module, "PERMISSION_PROMPT"):
            own.add(module.PROMPT_TOOL)
            tools_listed.add(module.PERMISSION_PROMPT["name"])
        words.add(module.BINARY)
    return words | own, own, tools_listed


def _word(node: ast.AST) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, (str, bytes)):
        return node.value.decode("utf-8", "replace") if isinstance(node.value, bytes) else node.value
    return None


def held(source: str, words: set[str], own: set[str], listed: set[str]) -> list[int]:
    """The lines of ``source`` that hold a runtime's vocabulary: a literal
    list, set or table of two or more of its words (``SHELL_TOOLS``,
    ``RUNTIME_NAMES``), one of its unmistakable words (a package, an
    environment mark, its prompt tool) anywhere, or an MCP tool listing
    (``name`` and ``inputSchema``) of a runtime's tool."""
    lines = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
            hit = sum(_word(e) in words for e in node.elts) >= 2
        elif isinstance(node, ast.Dict):
            fields = {_word(k): v for k, v in zip(node.keys, node.values, strict=True) if k is not None}
            hit = sum(key in words for key in fields) >= 2 or (
                "inputSchema" in fields and _word(fields.get("name", ast.Constant(None))) in listed
            )
        else:
            hit = _word(node) in own
        if hit:
            lines.append(node.lineno)
    return sorted(set(lines))


def _outside(check) -> dict[str, list[int]]:
    found = {}
    for package in ("loopx_core", "loopx_tui"):
        for path in sorted((REPO / package).rglob("*.py")):
            if HOME in path.parents:
                continue
            lines = check(path.read_text(encoding="utf-8"))
            if lines:
                found[str(path.relative_to(REPO))] = lines
    return found


def test_no_module_outside_the_runtimes_decides_by_a_runtimes_name():
    found = _outside(scattered)
    assert not found, (
        f"a runtime's specifics outside loopx_core/runtimes/ (ask its module instead: runtimes.module(name)): {found}"
    )


def test_no_module_outside_the_runtimes_holds_what_a_runtime_knows():
    """A runtime's tools, processes and prompt tool are its module's (the cold
    hook's tools: the registry's ``HOOK_TOOLS``); the policy, the unlock and
    the MCP server derive theirs from there."""
    words, own, listed = vocabulary()
    found = _outside(lambda source: held(source, words, own, listed))
    assert not found, (
        f"a runtime's vocabulary outside loopx_core/runtimes/ (derive it from runtimes.HOOK_TOOLS or its module): {found}"
    )


def test_the_instructions_init_writes_are_the_runtimes():
    """What ``init --for`` tells a hooked runtime's agent in its instructions
    file is ``runtimes/base.instructions`` (with the headless prompt,
    ``base.prompt``), not text of ``adapters/setup``'s."""
    heading = "## LoopX (agent "
    assert base.instructions("a1", True).startswith(heading) and base.instructions("a1", False).startswith(heading)
    found = _outside(
        lambda source: sorted({n.lineno for n in ast.walk(ast.parse(source)) if (_word(n) or "").startswith(heading)})
    )
    assert not found, f"an agent's instructions outside loopx_core/runtimes/: {found}"


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
            "BINARY",
            "PACKAGE",
            "ENV_MARKS",
        ):
            assert hasattr(module, provided), f"{module.__name__} has no {provided}"
        if getattr(module, "PROMPT_CLIENT", None) is not None:
            assert module.PERMISSION_PROMPT["name"] and module.PROMPT_TOOL.endswith(module.PERMISSION_PROMPT["name"])
    assert set(runtimes.HOOK_TOOLS) == set(runtimes.HOOKED), "each hooked runtime's tools, and only theirs"


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


def test_a_runtimes_vocabulary_elsewhere_is_caught():
    """It bites on the shapes the old code had (the policy's tool sets, the
    unlock's runtime names and marks, the MCP server's prompt tool), and not
    on one tool's name used as a word."""
    vocab = vocabulary()
    assert held('SHELL_TOOLS = frozenset({"Bash", "Monitor", "exec_command"})\n', *vocab) == [1]
    assert held('FILE_TOOLS = {"Write": "file_path", "Edit": "file_path"}\n', *vocab) == [1]
    assert held('RUNTIME_NAMES = ("claude", "codex")\n', *vocab) == [1]
    assert held('AGENT_MARKS = (b"LOOPX_AGENT=", b"CLAUDECODE=")\n', *vocab) == [1]
    assert held('if b"@openai/codex" in raw:\n    pass\n', *vocab) == [1]
    assert held('PROMPT_TOOL = {"name": "permission_prompt", "inputSchema": {}}\n', *vocab) == [1]
    assert held('tools = ["--permission-prompt-tool", "mcp__loopx__permission_prompt"]\n', *vocab) == [1]
    assert held('needs = classify("Bash", {"command": command})\nBinding("e", "edit_card", "Edit")\n', *vocab) == []
    assert held('BADGES = {"permission_prompt": "permission", "idle_prompt": "idle"}\n', *vocab) == []
