"""Every shell-running tool and event reaches the check, and the hook fails
closed: payloads shaped like Claude Code 2.1.335's and Codex 0.171's (see
fixtures/README.md), fed to `loopx hook …` in-process or as a real process."""

from __future__ import annotations

import json
import os
import threading

import pytest

from loopx_core.adapters import hooks as hook_module
from loopx_core.adapters import policy
from tests.adapters.conftest import deny_reason, payload


def gates(board) -> list:
    return [(g["id"], g["scope"], g["status"]) for g in board.ok("gate", "list")["gates"]]


def test_monitor_commands_are_checked(hooks, working):
    call = payload(
        "claude/pre_tool_use_monitor.json",
        CWD=str(working.root),
        COMMAND="tail -f build.log | grep -q done && git push",
    )
    reason = deny_reason(hooks.run("claude-code", "pre-tool-use", call))
    assert "`git:push`" in reason and "G-1" in reason


def test_powershell_commands_are_checked(hooks, working):
    call = payload("claude/pre_tool_use_powershell.json", CWD=str(working.root), COMMAND="& 'git' push origin main")
    assert "`git:push`" in deny_reason(hooks.run("claude-code", "pre-tool-use", call))


def test_skill_shell_commands_are_checked_and_answered_as_their_event(hooks, working):
    call = payload("claude/pre_skill_shell_command.json", CWD=str(working.root), COMMAND="npm publish --access public")
    res = hooks.spawn("claude-code", "pre-skill-shell-command", call)
    out = res.out["hookSpecificOutput"]
    assert res.code == 0 and out["hookEventName"] == "PreSkillShellCommand"
    assert out["permissionDecision"] == "deny" and "`publish:npm`" in out["permissionDecisionReason"]
    ground = payload(
        "claude/pre_skill_shell_command.json", CWD=str(working.root), COMMAND="sqlite3 .loopx/board.db .dump"
    )
    out = hooks.run("claude-code", "pre-skill-shell-command", ground).out["hookSpecificOutput"]
    assert out["hookEventName"] == "PreSkillShellCommand" and out["permissionDecision"] == "deny"
    assert (
        hooks.run(
            "claude-code",
            "pre-skill-shell-command",
            payload("claude/pre_skill_shell_command.json", CWD=str(working.root), COMMAND="git log -1"),
        ).stdout
        == ""
    )


def test_init_registers_the_skill_event_for_claude_code_only(board):
    board.ok("init", "--for", "claude-code", "--agent", "cc1")
    settings = json.loads((board.root / ".claude" / "settings.json").read_text())
    [group] = settings["hooks"]["PreSkillShellCommand"]
    assert group["hooks"][0]["command"].endswith("hook claude-code pre-skill-shell-command")
    board.ok("init", "--for", "codex", "--agent", "cx1")
    assert "PreSkillShellCommand" not in (board.root / ".codex" / "config.toml").read_text()


def test_codex_interactive_sessions_need_a_scope(hooks, working):
    """Codex's write_stdin types into an exec_command session with no
    PreToolUse of its own, and the hook cannot see whether a terminal was asked
    for: starting a shell or an interpreter with no program needs
    `shell:interactive`."""
    for command in ("bash", "python3 -i", "node", "sqlite3 notes.db"):
        call = payload("codex/pre_tool_use_bash.json", CWD=str(working.root), COMMAND=command, SESSION="s")
        assert "`shell:interactive`" in deny_reason(hooks.run("codex", "pre-tool-use", call)), command
    assert (
        hooks.run(
            "codex",
            "pre-tool-use",
            payload("codex/pre_tool_use_bash.json", CWD=str(working.root), COMMAND="python3 -m pytest -q", SESSION="s"),
        ).stdout
        == ""
    )


def test_ground_is_refused_without_a_gate(hooks, working):
    """No scope can allow LoopX's own ground: the denial says so and opens no
    gate a person could approve by mistake; an agent holding every scope is
    refused the same."""
    working.ok("agent", "add", "root", "--can", "shell:*", "--can", "fs:*", "--can", "git:*", "--can", "deploy:*")
    working.ok("card", "add", "Another")
    working.ok("next", "--claim", agent="root")
    for agent in ("a2", "root"):
        res = hooks.run(
            "claude-code",
            "pre-tool-use",
            payload(
                "claude/pre_tool_use_bash.json",
                CWD=str(working.root),
                COMMAND="sqlite3 .loopx/board.db \"update gate set status='approved'\"",
            ),
            agent=agent,
        )
        reason = deny_reason(res)
        assert "never lets an agent do this" in reason and "only LoopX itself may touch it" in reason
    edit = payload(
        "claude/pre_tool_use_edit.json", CWD=str(working.root), PATH=str(working.root / ".claude" / "settings.json")
    )
    assert "Claude Code's settings" in deny_reason(hooks.run("claude-code", "pre-tool-use", edit))
    assert gates(working) == []


def test_unreadable_or_hostile_payloads_are_denied(hooks, working):
    deep = '{"tool_name": "Bash", "tool_input": {"command": "ls", "x": ' + "[" * 100_000 + "]" * 100_000 + "}}"
    res = hooks.spawn("claude-code", "pre-tool-use", None, raw=deep)
    assert res.code == 0 and "nested too deeply" in deny_reason(res) and "Traceback" not in res.stderr
    huge = json.dumps(
        {
            "tool_name": "Write",
            "tool_input": {"file_path": str(working.root / "a.txt"), "content": "x" * (hook_module.MAX_PAYLOAD + 10)},
        }
    )
    res = hooks.run("claude-code", "pre-tool-use", None, raw=huge)
    assert "larger than 8 MB" in deny_reason(res)
    long_command = payload(
        "claude/pre_tool_use_bash.json", CWD=str(working.root), COMMAND="echo " + "x" * policy.MAX_COMMAND
    )
    assert "characters long" in deny_reason(hooks.run("claude-code", "pre-tool-use", long_command))
    odd = payload("claude/pre_tool_use_bash.json", CWD=str(working.root), COMMAND="git push \ud800\x1b[31m")
    res = hooks.spawn("claude-code", "pre-tool-use", odd)
    assert res.stdout.isascii() and "`git:push`" in deny_reason(res)


def test_an_internal_error_denies_the_call(hooks, working, monkeypatch):
    def broken(*args, **kwargs):
        raise ZeroDivisionError("boom")

    monkeypatch.setattr(policy, "classify", broken)
    res = hooks.run(
        "claude-code", "pre-tool-use", payload("claude/pre_tool_use_bash.json", CWD=str(working.root), COMMAND="ls")
    )
    assert "internal error: ZeroDivisionError" in deny_reason(res) and "boom" in res.stderr


def test_a_check_that_runs_out_of_time_denies_the_call(hooks, working, monkeypatch):
    """The hook answers before the runtime's own timeout: the deadline
    interrupts a check that does not end (here: one that waits forever)."""
    monkeypatch.setitem(hook_module.DEADLINES, "pre-tool-use", 0.5)
    never = threading.Event()
    monkeypatch.setattr(policy, "classify", lambda *a, **k: never.wait())
    res = hooks.run(
        "claude-code", "pre-tool-use", payload("claude/pre_tool_use_bash.json", CWD=str(working.root), COMMAND="ls")
    )
    assert "could not check this call in time" in deny_reason(res)


@pytest.mark.parametrize("special", ["/dev/zero", "fifo"])
def test_stop_never_reads_a_transcript_that_does_not_end(hooks, working, tmp_path, special):
    """`transcript_path=/dev/zero` hung the Stop hook: only regular files are read."""
    path = special
    if special == "fifo":
        path = str(tmp_path / "transcript.fifo")
        os.mkfifo(path)
    stop = payload("claude/stop.json", CWD=str(working.root), TRANSCRIPT=path)
    res = hooks.spawn("claude-code", "stop", stop)
    assert res.code == 0 and "not a regular file" in res.stderr
    assert (
        "wrote no evidence" in res.out["hookSpecificOutput"]["additionalContext"]
    )  # the evidence check still ran (Claude Code: Stop continues with additionalContext)
