"""#39: what a person reads of a tool call and of a turn's last step: text,
never JSON's escapes nor a raw stream-json line (rules/tool_text.py,
each runtime's ``Command.last_step``), over the streams the real runtimes printed
(tests/runner/fixtures)."""

from __future__ import annotations

from pathlib import Path

from loopx_core.rules.tool_text import TEXT_KEPT, readable
from loopx_core.runtimes import make

FIXTURES = Path(__file__).resolve().parent.parent / "runner" / "fixtures"


def test_a_command_reads_as_its_text():
    assert (
        readable("Bash", {"command": 'grep -n "a\\tb" x.py\nmake test', "description": "find it"})
        == '$ grep -n "a\\tb" x.py ⏎ make test · description: find it'
    )
    assert readable("exec_command", {"command": ["git", "status"]}) == "$ git status"
    assert (
        readable("Edit", {"file_path": "src/app.py", "old_string": "a", "new_string": "b"})
        == "file src/app.py · old_string: a · new_string: b"
    )
    assert readable("mcp__x__y", {"n": 3, "tags": ["a", "é"]}) == 'n: 3 · tags: ["a", "é"]'
    assert len(readable("Bash", {"command": "x" * 5000})) == len("$ ") + TEXT_KEPT


def lines(name: str, upto: int | None = None) -> str:
    return "\n".join((FIXTURES / name).read_text().splitlines()[:upto])


def test_a_claude_codes_last_step_is_read_from_its_stream():
    last_step = make("claude-code", []).last_step
    assert last_step(lines("claude-2.1.197.stream.jsonl", 2)) == "called Bash: $ echo hello > out.txt · description: x"
    assert last_step(lines("claude-2.1.197.stream.jsonl")) == "said: All done."
    cut = lines("claude-2.1.197.stream.jsonl", 2)[40:]  # a tail cut mid-way through its first line
    assert last_step(cut) == "called Bash: $ echo hello > out.txt · description: x"
    assert last_step(lines("claude-2.1.197.stream.jsonl", 1)) is None  # only the init: nothing a person needs


def test_a_codexs_last_step_is_read_from_its_events():
    last_step = make("codex", []).last_step
    assert last_step(lines("codex-0.171.0.stream.jsonl", 5)) == "ran: $ /bin/bash -lc 'echo hello > out.txt'"
    assert last_step(lines("codex-0.171.0.stream.jsonl")) == "said: All done."
    assert last_step(lines("codex-0.171.0.stream.jsonl", 2)).startswith(
        "error: Model metadata for `gpt-5.1-codex` not found"
    )


def test_a_shell_agents_last_line_is_itself():
    last_step = make("shell", ["./turn.sh"]).last_step
    assert last_step("step 1\nTraceback: boom\n\n") == "Traceback: boom"
