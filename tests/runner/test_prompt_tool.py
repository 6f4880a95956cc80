"""#29: a Claude Code turn of ``loopx run`` names the loopx MCP server's
permission prompt tool where ``init --for claude-code`` set that server up —
headless, Claude Code then asks the person (a gate) what it would ask at its
own screen, and offers the model its question tool. The real binaries:
tests/e2e/test_turns.py."""

from __future__ import annotations

import json

from loopx_core.runtimes.claude_code import Command as ClaudeCode

FLAG = ["--permission-prompt-tool", "mcp__loopx__permission_prompt"]


def test_the_prompt_tool_is_named_only_where_the_loopx_server_is_and_never_over_the_persons(tmp_path):
    turn = ClaudeCode(["--permission-mode", "acceptEdits"], agent="a1")
    assert "--permission-prompt-tool" not in turn.argv("go", tmp_path)  # no .mcp.json: no such tool to name
    (tmp_path / ".mcp.json").write_text(json.dumps({"mcpServers": {"other": {"command": "/bin/true"}}}))
    assert "--permission-prompt-tool" not in turn.argv("go", tmp_path)
    (tmp_path / ".mcp.json").write_text(
        json.dumps({"mcpServers": {"loopx": {"command": "/usr/bin/loopx", "args": ["mcp"]}}})
    )
    argv = turn.argv("go", tmp_path)
    at = argv.index("--permission-prompt-tool")
    assert argv[at : at + 2] == FLAG and argv[-2:] == [
        "--permission-mode",
        "acceptEdits",
    ]  # the person's arguments come last
    own = ClaudeCode(["--permission-prompt-tool", "mcp__mine__ask"], agent="a1").argv("go", tmp_path)
    assert (
        own.count("--permission-prompt-tool") == 1 and own[-1] == "mcp__mine__ask"
    )  # the person's own prompt tool wins
