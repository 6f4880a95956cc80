"""#29: the runtimes' own questions join the person's queue — Claude Code's
question tool (AskUserQuestion) at its PreToolUse, its permission prompt
through the loopx MCP server, its Notification hook — fed the shapes the
bundled types declare (``sdk-tools.d.ts`` AskUserQuestionInput, ``sdk.d.ts``
NotificationHookInput). The real binaries: tests/e2e/test_turns.py."""

from __future__ import annotations

import json
import threading

from tests.adapters.test_hooks_claude import stop
from tests.kernel.test_notify import deliver, told  # noqa: F401  (a fixture)
from tests.polling import until

QUESTIONS = [
    {
        "question": "Which date parser should I use?",
        "header": "Parser",
        "multiSelect": False,
        "options": [
            {"label": "dateutil", "description": "third-party"},
            {"label": "stdlib", "description": "datetime.strptime"},
        ],
    },
    {
        "question": "Which formats must it read?",
        "header": "Formats",
        "multiSelect": True,
        "options": [
            {"label": "ISO 8601", "description": "2026-12-06"},
            {"label": "RFC 2822", "description": "Sun, 06 Dec"},
        ],
    },
]


def asking(board, questions=QUESTIONS) -> dict:
    data = stop(board)
    data.pop("stop_hook_active", None)
    data.update(
        hook_event_name="PreToolUse",
        tool_name="AskUserQuestion",
        tool_use_id="toolu_29",
        tool_input={"questions": questions},
    )
    return data


def pending(board) -> list[dict]:
    return board.cli("gate", "list", "--pending").data["gates"]


def test_the_question_tool_becomes_gates_offering_its_options_and_the_persons_answers_reach_the_model(hooks, working):
    assert (
        hooks.run("claude-code", "question", asking(working)).stdout == ""
    )  # a person at their own terminal: Claude Code's dialog
    assert pending(working) == []
    results: list = []
    waiting = threading.Thread(
        target=lambda: results.append(
            hooks.spawn("claude-code", "question", asking(working), env={"LOOPX_TURN_ID": "turn-29"})
        )
    )
    waiting.start()
    until(lambda: len(pending(working)) == 2, timeout=60, what="a gate per question")
    first, second = pending(working)
    assert (
        first["options"] == ["dateutil", "stdlib"] and "[Parser] Which date parser should I use?" in first["question"]
    )
    assert second["options"] == ["ISO 8601", "RFC 2822"] and "several may apply" in second["question"]
    assert first["card"] == "LX-1" and first["agent"] == "a2" and first["scope"] is None
    working.ok("gate", "answer", "G-1", "--choose", "2", tty=True)  # by its number
    working.ok("gate", "answer", "G-2", "--text", "ISO 8601, RFC 2822", tty=True)  # a multi-select: the person's words
    waiting.join(timeout=60)
    out = results[0].out["hookSpecificOutput"]
    assert out["hookEventName"] == "PreToolUse" and out["permissionDecision"] == "allow"
    assert out["updatedInput"]["questions"] == QUESTIONS  # the input, with the answers filled in
    assert out["updatedInput"]["answers"] == {
        "Which date parser should I use?": "stdlib",
        "Which formats must it read?": "ISO 8601, RFC 2822",
    }


def test_a_question_refused_or_unanswered_is_a_deny_the_model_reads(hooks, working, monkeypatch):
    from loopx_core.adapters import hooks as hook_module

    from ..security.conftest import sql

    monkeypatch.setattr(hook_module, "PERMISSION_WAIT", 0.6)
    monkeypatch.setenv("LOOPX_TURN_ID", "turn-29")
    one = asking(working, QUESTIONS[:1])
    unanswered = hooks.run("claude-code", "question", one).out["hookSpecificOutput"]
    assert unanswered["permissionDecision"] == "deny" and "G-1 waits for them" in unanswered["permissionDecisionReason"]
    # An answer written into the database (no person's signature) is no answer.
    sql(working, "UPDATE gate SET status = 'approved', answer = 'dateutil', answered_by = 'human:tester' WHERE id = 1")
    assert hooks.run("claude-code", "question", one).out["hookSpecificOutput"]["permissionDecision"] == "deny"
    sql(working, "UPDATE gate SET status = 'pending', answer = NULL, answered_by = NULL WHERE id = 1")
    # A real hook process waits; the person says no meanwhile; the model reads why.
    other = asking(working, [dict(QUESTIONS[0], question="May I rewrite the parser from scratch?")])
    results: list = []
    waiting = threading.Thread(
        target=lambda: results.append(hooks.spawn("claude-code", "question", other, env={"LOOPX_TURN_ID": "turn-29"}))
    )
    waiting.start()
    until(lambda: len(pending(working)) == 3, timeout=60, what="the gate the hook waits on")
    working.ok("gate", "answer", "G-3", "reject", "--note", "ask me at the desk", tty=True)
    waiting.join(timeout=60)
    said = results[0].out["hookSpecificOutput"]
    assert (
        said["permissionDecision"] == "deny"
        and "the person said no (G-3 rejected: ask me at the desk)" in said["permissionDecisionReason"]
    )
    assert hooks.run("claude-code", "question", one, agent="a1").stdout == ""  # no card: nobody to ask on


def test_claude_codes_permission_prompt_tool_asks_the_person_over_mcp(working):
    """``--permission-prompt-tool mcp__loopx__permission_prompt``: a real ``loopx mcp`` process,
    the tool listed to Claude Code alone, asking the person only in a runner's turn, answering in
    the shape Claude Code parses (one text block of JSON: ``{"behavior": "allow", "updatedInput"}``
    or ``{"behavior": "deny", "message"}``)."""
    import os
    import subprocess
    import sys

    def server(client: str, **env):
        full = {k: v for k, v in os.environ.items() if not k.startswith("LOOPX_")}
        full.update(LOOPX_DB=working.url, LOOPX_AGENT="a2", **env)
        proc = subprocess.Popen(
            [sys.executable, "-m", "loopx_core", "mcp"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            cwd=working.root,
            env=full,
            text=True,
        )
        ask(
            proc,
            0,
            "initialize",
            {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": client, "version": "2.1.197"}},
        )
        json.loads(proc.stdout.readline())
        return proc

    def ask(proc, msg_id: int, method: str, params: dict) -> None:
        proc.stdin.write(json.dumps({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params}) + "\n")
        proc.stdin.flush()

    def answer(proc) -> dict:
        return json.loads(json.loads(proc.stdout.readline())["result"]["content"][0]["text"])

    def listed(proc) -> list[str]:
        ask(proc, 1, "tools/list", {})
        return [t["name"] for t in json.loads(proc.stdout.readline())["result"]["tools"]]

    asked = {
        "tool_name": "Bash",
        "input": {"command": "rm -rf build", "description": "clean"},
        "tool_use_id": "toolu_1",
    }
    codex = server("codex-mcp-client", LOOPX_TURN_ID="turn-29")
    assert "permission_prompt" not in listed(codex)  # another runtime never sees it
    codex.stdin.close()
    codex.wait(timeout=30)
    own = server("claude-code")  # a person's own session (no runner): denied at once, nobody asked
    assert "permission_prompt" in listed(own)
    ask(own, 2, "tools/call", {"name": "permission_prompt", "arguments": asked})
    assert answer(own)["behavior"] == "deny" and pending(working) == []
    own.stdin.close()
    own.wait(timeout=30)
    proc = server("claude-code", LOOPX_TURN_ID="turn-29")
    try:
        ask(proc, 2, "tools/call", {"name": "permission_prompt", "arguments": asked})
        until(lambda: len(pending(working)) == 1, timeout=60, what="the prompt's gate")
        assert (
            "asks to use Bash" in pending(working)[0]["question"] and "rm -rf build" in pending(working)[0]["question"]
        )
        working.ok("gate", "answer", "G-1", "approve", tty=True)
        assert answer(proc) == {"behavior": "allow", "updatedInput": asked["input"]}
        ask(proc, 3, "tools/call", {"name": "permission_prompt", "arguments": {"tool_name": "Bash"}})  # no input
        assert answer(proc)["behavior"] == "deny"
    finally:
        proc.stdin.close()
        proc.wait(timeout=30)


def notice(board, kind: str, message: str) -> dict:
    data = stop(board)
    data.pop("stop_hook_active", None)
    data.update(hook_event_name="Notification", notification_type=kind, message=message, title="Claude Code")
    return data


def test_claude_codes_notification_reaches_the_persons_notification_command_once(hooks, working, told):  # noqa: F811
    """Claude Code runs Notification only in its interactive screen (the permission dialog,
    idle for a minute: 2.1.197 and 2.1.335 call it from their UI alone, never under `-p`), so
    the payload is the one ``sdk.d.ts`` declares."""
    res = hooks.spawn(
        "claude-code",
        "notification",
        notice(working, "permission_prompt", "Claude needs your permission to use \x1b[2JBash"),
    )
    assert (res.code, res.stdout, res.stderr) == (0, "", "")
    hooks.run(
        "claude-code", "notification", notice(working, "permission_prompt", "Claude needs your permission to use Bash")
    )  # again: told once
    hooks.run("claude-code", "notification", notice(working, "idle_prompt", "Claude is waiting for your input"))
    sent = deliver(working)
    assert [(n.key, ok) for n, ok, _ in sent] == [
        ("runtime:a2:permission_prompt", True),
        ("runtime:a2:idle_prompt", True),
    ]
    first, second = told()
    assert first["argv"] == [
        "Claude Code (a2) needs you",
        "Claude needs your permission to use Bash (LX-1)",
    ]  # terminal-safe
    assert first["stdin"]["kind"] == "runtime_notice" and first["stdin"]["card"] == "LX-1"
    assert second["argv"][1].startswith("Claude is waiting for your input")
    assert hooks.run("claude-code", "notification", notice(working, "idle_prompt", "x"), agent=None).stdout == ""


def test_codex_is_never_left_to_its_automatic_reviewer_when_nobody_can_be_asked(hooks, working, monkeypatch):
    """Codex's PermissionRequest (``--approve-for-me``): an agent holding no card is denied, not
    handed to Codex's reviewer model; Codex refuses ``updatedInput`` in this answer, so none is sent."""
    data = stop(working)
    data.pop("stop_hook_active", None)
    data.update(
        hook_event_name="PermissionRequest",
        tool_name="Bash",
        tool_input={"command": "touch /outside", "description": "write outside"},
        turn_id="t-1",
        model="gpt-5.1-codex",
    )
    monkeypatch.setenv("LOOPX_TURN_ID", "turn-29")
    said = hooks.run("codex", "permission-request", data, agent="a1").out["hookSpecificOutput"]["decision"]
    assert said == {
        "behavior": "deny",
        "message": "LoopX: agent a1 holds no card to ask the person on; take your card first",
    }
