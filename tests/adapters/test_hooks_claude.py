"""`loopx hook claude-code …` fed the payloads Claude Code documents."""

from __future__ import annotations

import json
import time

from tests.adapters.conftest import deny_reason, payload


def bash(command: str, board) -> dict:
    return payload("claude/pre_tool_use_bash.json", CWD=str(board.root), COMMAND=command)


def write(path: str, board) -> dict:
    return payload("claude/pre_tool_use_write.json", CWD=str(board.root), PATH=path)


# -- PreToolUse ----------------------------------------------------------------------


def test_gate_opened_reused_then_allowed_once_a_human_approves(hooks, working):
    """The key path, as real processes: deny with a gate, the retry reuses it,
    a human approves, the very same call is allowed."""
    call = bash("git push origin main", working)
    first = hooks.spawn("claude-code", "pre-tool-use", call)
    assert first.code == 0, first
    reason = deny_reason(first)
    assert "`git:push`" in reason and "gate G-1 is opened" in reason and "loopx gate status G-1" in reason
    assert "G-1" in first.out["systemMessage"]
    card = working.ok("card", "show", "LX-1")["card"]
    assert card["status"] == "waiting" and card["pending_gate"] == "G-1"

    retry = hooks.spawn("claude-code", "pre-tool-use", call)
    assert "gate G-1 is still pending" in deny_reason(retry)
    gates = working.ok("gate", "list")["gates"]
    assert [(g["id"], g["scope"], g["status"]) for g in gates] == [("G-1", "git:push", "pending")]
    assert "git push origin main" in gates[0]["question"]

    hooks.answer("G-1")
    allowed = hooks.spawn("claude-code", "pre-tool-use", call)
    decision = allowed.out["hookSpecificOutput"]
    assert decision["permissionDecision"] == "allow" and "G-1" in decision["permissionDecisionReason"]
    assert allowed.stderr == ""
    # the approval covers the scope for the rest of the lease, not just that command
    assert (
        hooks.run("claude-code", "pre-tool-use", bash("git push --tags", working)).out["hookSpecificOutput"][
            "permissionDecision"
        ]
        == "allow"
    )
    assert len(working.ok("gate", "list")["gates"]) == 1


def test_safe_calls_are_decided_without_the_board(hooks, working, tmp_path):
    missing = {"LOOPX_DB": str(tmp_path / "nowhere" / "board.db")}
    for call in (
        bash("ls -la", working),
        bash("pytest -q", working),
        write(str(working.root / "src" / "a.py"), working),
        payload("claude/pre_tool_use_bash.json", CWD=str(working.root), COMMAND="cat README.md")
        | {"tool_name": "Read", "tool_input": {"file_path": "/etc/hosts"}},
    ):
        res = hooks.spawn("claude-code", "pre-tool-use", call, env=missing)
        assert (res.code, res.stdout, res.stderr) == (0, "", ""), res
    # the board being unreadable fails closed for a dangerous call, and says why
    res = hooks.spawn("claude-code", "pre-tool-use", bash("git push", working), env=missing)
    assert res.code == 0
    assert "could not read the board" in deny_reason(res)
    assert "cannot check the board" in res.stderr and "Traceback" not in res.stderr


def test_malformed_and_empty_stdin_fail_closed(hooks, working):
    """A tool call the hook cannot read is denied, with the reason, never a traceback."""
    empty = hooks.spawn("claude-code", "pre-tool-use", None, raw="")
    assert empty.code == 0 and "stdin is empty" in deny_reason(empty) and "stdin is empty" in empty.stderr
    garbled = hooks.spawn(
        "claude-code", "pre-tool-use", None, raw='{"tool_name": "Bash", "tool_input": {"command": "git push origin ma'
    )
    assert garbled.code == 0 and "not a JSON object" in deny_reason(garbled)
    harmless = hooks.spawn("claude-code", "pre-tool-use", None, raw='{"tool_name": "Read", "tool_input": {"file_pa')
    assert harmless.code == 0 and "could not read this tool call" in deny_reason(harmless)
    not_object = hooks.run("claude-code", "pre-tool-use", None, raw="[1, 2, 3]")
    assert not_object.code == 0 and "not a JSON object" in deny_reason(not_object)
    no_tool = hooks.run("claude-code", "pre-tool-use", {"hook_event_name": "PreToolUse"})
    assert no_tool.code == 0 and "no tool_name" in deny_reason(no_tool)
    for res in (empty, garbled, harmless, not_object, no_tool):
        assert "Traceback" not in res.stderr


def test_capability_allows_without_a_gate(hooks, working):
    working.ok("card", "add", "Push it")
    working.ok("next", "--claim", agent="a1")
    res = hooks.run("claude-code", "pre-tool-use", bash("git push", working), agent="a1")
    assert (res.code, res.stdout) == (0, "")  # the runtime's own permission flow goes on
    assert working.ok("gate", "list")["gates"] == []


def test_write_outside_the_project(hooks, working):
    inside = hooks.run("claude-code", "pre-tool-use", write(str(working.root / "notes.md"), working))
    assert inside.stdout == ""
    outside = hooks.run("claude-code", "pre-tool-use", write("/etc/loopx-test.conf", working))
    reason = deny_reason(outside)
    assert "`fs:write-outside`" in reason and "G-1" in reason
    assert working.ok("gate", "list")["gates"][0]["scope"] == "fs:write-outside"


def test_rm_rf_outside_the_project(hooks, working):
    assert hooks.run("claude-code", "pre-tool-use", bash("rm -rf build dist", working)).stdout == ""
    assert "`fs:delete-outside`" in deny_reason(
        hooks.run("claude-code", "pre-tool-use", bash("rm -rf ~/old-project", working))
    )


def test_rejected_gate_then_no_card(hooks, working):
    deny_reason(hooks.run("claude-code", "pre-tool-use", bash("npm publish", working)))
    hooks.answer("G-1", "reject")
    again = deny_reason(hooks.run("claude-code", "pre-tool-use", bash("npm publish", working)))
    assert "holds no card" in again and "loopx next --agent a2 --claim" in again


def test_identity_problems_deny_only_dangerous_calls(hooks, working):
    assert "LOOPX_AGENT is not set" in deny_reason(
        hooks.run("claude-code", "pre-tool-use", bash("git push", working), agent=None)
    )
    assert hooks.run("claude-code", "pre-tool-use", bash("ls", working), agent=None).stdout == ""
    assert "unknown agent 'ghost'" in deny_reason(
        hooks.run("claude-code", "pre-tool-use", bash("git push", working), agent="ghost")
    )


def test_board_rules_from_the_policy_file(hooks, working):
    """`rules` tighten and always apply; `allow` loosens, so an unsigned file's
    `allow` is ignored (and says so on stderr)."""
    folder = working.root / ".loopx"
    folder.mkdir(exist_ok=True)
    (folder / "policy.json").write_text(
        json.dumps(
            {
                "rules": [{"command": r"^make release\b", "scope": "publish:release"}],
                "allow": ["^git push origin agent/"],
            }
        )
    )
    assert "`publish:release`" in deny_reason(hooks.run("claude-code", "pre-tool-use", bash("make release", working)))
    res = hooks.run("claude-code", "pre-tool-use", bash("git push origin agent/fix", working))
    assert "`git:push`" in deny_reason(res)
    assert "were ignored" in res.stderr and "loopx policy sign" in res.stderr
    (folder / "policy.json").write_text("{oops")
    res = hooks.run("claude-code", "pre-tool-use", bash("ls", working))
    assert res.stdout == "" and "not valid JSON" in res.stderr


def test_an_agent_written_allow_everything_policy_allows_nothing(hooks, working):
    """The attack from #12: writing {"allow": [".*"]} into .loopx/policy.json
    (outside the hook's sight) must not open every door."""
    (working.root / ".loopx").mkdir(exist_ok=True)  # a PostgreSQL board has no board.db here, but may have a policy
    (working.root / ".loopx" / "policy.json").write_text(json.dumps({"allow": [".*"], "outside_ok": ["/"]}))
    assert "`git:push`" in deny_reason(hooks.run("claude-code", "pre-tool-use", bash("git push origin main", working)))
    assert "`fs:delete-outside`" in deny_reason(
        hooks.run("claude-code", "pre-tool-use", bash("rm -rf /tmp/elsewhere", working))
    )
    assert "`fs:write-outside`" in deny_reason(
        hooks.run("claude-code", "pre-tool-use", write("/etc/loopx-test.conf", working))
    )


# -- SessionStart -----------------------------------------------------------------------


def context_of(res) -> str:
    out = res.out["hookSpecificOutput"]
    assert out["hookEventName"] == "SessionStart"
    return out["additionalContext"]


def test_session_start_injects_the_continuation(hooks, working, tmp_path):
    working.ok(
        "writeback", "LX-1", "--summary", "found the bug in parse_date", "--todo-add", "cover the Z suffix", agent="a2"
    )
    env_file = tmp_path / "claude.env"
    res = hooks.spawn(
        "claude-code",
        "session-start",
        payload("claude/session_start.json", CWD=str(working.root)),
        env={"CLAUDE_ENV_FILE": str(env_file)},
    )
    assert res.code == 0 and res.stderr == ""
    text = context_of(res)
    assert "# LX-1: Fix the date parser" in text
    assert "found the bug in parse_date" in text and "cover the Z suffix" in text
    assert "loopx writeback LX-1 --agent a2" in text
    assert env_file.read_text() == "export LOOPX_AGENT=a2\n"
    events = [e["kind"] for e in working.ok("events")["events"]]
    assert "session_started" in events


def test_session_start_without_a_card_says_what_next_says(hooks, working):
    text = context_of(
        hooks.run(
            "claude-code", "session-start", payload("claude/session_start.json", CWD=str(working.root)), agent="a1"
        )
    )
    assert "You hold no card" in text and "loopx next --agent a1 --claim" in text
    text = context_of(
        hooks.run(
            "claude-code", "session-start", payload("claude/session_start.json", CWD=str(working.root)), agent="ghost"
        )
    )
    assert "unknown agent 'ghost'" in text and "loopx agent add ghost" in text


def test_session_start_for_a_waiting_card(hooks, working):
    deny_reason(hooks.run("claude-code", "pre-tool-use", bash("git push", working)))
    text = context_of(
        hooks.run("claude-code", "session-start", payload("claude/session_start.json", CWD=str(working.root)))
    )
    assert "waits for a human to answer G-1" in text


# -- Stop ---------------------------------------------------------------------------


def stop(board, transcript=None, active=False) -> dict:
    data = payload(
        "claude/stop.json", CWD=str(board.root), TRANSCRIPT=str(transcript) if transcript else "/nonexistent/t.jsonl"
    )
    data["stop_hook_active"] = active
    return data


def sent_back(result) -> str | None:
    """The reminder a Stop hook gives the model, continuing the turn: Claude Code's
    ``hookSpecificOutput.additionalContext`` (``decision: block`` would also continue,
    but is shown to the person as "Stop hook error occurred")."""
    out = (result.out or {}).get("hookSpecificOutput") or {}
    assert "decision" not in (result.out or {})
    return out.get("additionalContext") if out.get("hookEventName") == "Stop" else None


def test_stop_blocks_a_turn_without_evidence(hooks, working, transcript):
    blocked = hooks.spawn("claude-code", "stop", stop(working, transcript.path))
    assert blocked.code == 0
    assert "loopx writeback LX-1 --agent a2 --summary" in sent_back(blocked)
    # Claude continues because of the block: the next stop must not block again
    again = hooks.spawn("claude-code", "stop", stop(working, transcript.path, active=True))
    assert (again.code, again.stdout) == (0, "")
    working.ok("writeback", "LX-1", "--summary", "fixed the parser", agent="a2")
    done = hooks.spawn("claude-code", "stop", stop(working, transcript.path))
    assert (done.code, done.stdout, done.stderr) == (0, "", "")


def test_evidence_from_an_earlier_turn_does_not_count(hooks, working, transcript):
    working.ok("writeback", "LX-1", "--summary", "earlier turn", agent="a2")
    transcript.later()  # the user's prompt that started this turn came after that writeback
    assert sent_back(hooks.run("claude-code", "stop", stop(working, transcript.path)))
    # a writeback after that prompt (the clock moved on past it) counts
    working.ok("writeback", "LX-1", "--summary", "this turn", agent="a2", env={"LOOPX_NOW": str(time.time() + 300)})
    assert hooks.run("claude-code", "stop", stop(working, transcript.path)).stdout == ""


def test_stop_without_a_transcript_uses_the_session_events(hooks, working):
    hooks.run("claude-code", "session-start", payload("claude/session_start.json", CWD=str(working.root)))
    res = hooks.run("claude-code", "stop", stop(working))
    assert sent_back(res) and "cannot read the transcript" in res.stderr
    working.ok("writeback", "LX-1", "--summary", "did it", agent="a2")
    assert hooks.run("claude-code", "stop", stop(working)).stdout == ""
    # the next turn starts after that one ended
    assert sent_back(hooks.run("claude-code", "stop", stop(working)))


def test_stop_with_nothing_to_write_back_to(hooks, working, transcript):
    assert hooks.run("claude-code", "stop", stop(working, transcript.path), agent="a1").stdout == ""
    assert hooks.run("claude-code", "stop", stop(working, transcript.path), agent=None).stdout == ""
    bad = hooks.run("claude-code", "stop", None, raw="{garbage")
    assert (bad.code, bad.stdout) == (0, "")


def hook_evidence(board) -> list[dict]:
    return [e for e in board.ok("log", "LX-1")["evidence"] if e["source"] == "hook"]


def test_usage_is_charged_once_per_turn(hooks, working, transcript):
    first = hooks.spawn("claude-code", "stop", stop(working, transcript.path))
    assert sent_back(first)
    charged = hook_evidence(working)
    assert len(charged) == 1
    # turn 2 of the fixture: msg_011B (streamed twice, largest counted) + msg_011C (split in two lines)
    assert (charged[0]["usage"]["tokens_in"], charged[0]["usage"]["tokens_out"]) == (6205 + 6302, 90 + 40)
    quota = working.ok("card", "show", "LX-1")["card"]["quota"]
    assert quota["tokens"]["used"] == 12637 and quota["turns"]["used"] == 0
    # the same stop again (a retry, or stop_hook_active) charges nothing twice
    hooks.run("claude-code", "stop", stop(working, transcript.path, active=True))
    assert len(hook_evidence(working)) == 1
    # the turn goes on: only the new model calls are charged
    transcript.append()
    working.ok("writeback", "LX-1", "--summary", "fixed", agent="a2")
    assert hooks.run("claude-code", "stop", stop(working, transcript.path, active=True)).stdout == ""
    charged = hook_evidence(working)
    assert [(e["usage"]["tokens_in"], e["usage"]["tokens_out"]) for e in charged] == [(12507, 130), (6504, 30)]
    assert charged[1]["turn_id"].endswith(":a-0010")
    hooks.run("claude-code", "stop", stop(working, transcript.path))
    assert len(hook_evidence(working)) == 2
    quota = working.ok("card", "show", "LX-1")["card"]["quota"]
    assert quota["tokens"]["used"] == 12637 + 6534 and quota["turns"]["used"] == 1


def test_a_charge_is_not_a_writeback(hooks, working, transcript):
    hooks.run("claude-code", "stop", stop(working, transcript.path))
    res = working.cli("done", "LX-1", "--summary", "finished", agent="a2")
    assert res.code == 5 and res.data["error"]["code"] == "no_evidence"


def test_charges_respect_the_budget_and_the_token_window(hooks, team, transcript):
    team.ok("agent", "add", "a3", "--tokens", "10000", "--window", "5h")
    team.ok("card", "add", "Small budget", "--max-tokens", "10000")
    team.ok("next", "--claim", agent="a3")
    hooks.run("claude-code", "stop", stop(team, transcript.path), agent="a3")
    card = team.ok("card", "show", "LX-1")["card"]
    assert card["status"] == "paused" and card["paused_reason"] == "budget"
    res = team.cli("next", agent="a3")
    assert res.code == 8 and res.data["action"] == "paused" and res.data["wake_at"]


def test_the_pre_tool_use_path_stays_lean(hooks, working):
    """No pydantic, peewee, MCP SDK, textual or watchfiles on the per-call path
    (a safe call, and a retried dangerous call). On a PostgreSQL board the
    dangerous call goes through the kernel by design (the store), on libpq: no
    peewee, no psycopg (#42), and still loads nothing else."""
    import subprocess
    import sys

    deny_reason(hooks.run("claude-code", "pre-tool-use", bash("git push", working)))  # opens G-1
    probe = (
        "import io, json, sys\n"
        "sys.stdin = io.StringIO(sys.argv[1])\n"
        "from loopx_core.cli.main import main\n"
        "main(['hook', 'claude-code', 'pre-tool-use'])\n"
        "heavy = ('peewee', 'pydantic', 'mcp', 'textual', 'watchfiles', 'platformdirs', 'loopx_core.store.backends', 'typing', 'psycopg')\n"
        "sys.stderr.write(json.dumps([m for m in heavy if m in sys.modules]))\n"
    )
    kernel = ("loopx_core.store.backends", "typing") if working.backend == "postgresql" else ()
    env = {**__import__("os").environ, "LOOPX_DB": working.url, "LOOPX_AGENT": "a2"}
    for command in ("ls -la", "git push"):
        proc = subprocess.run(
            [sys.executable, "-c", probe, json.dumps(bash(command, working))],
            cwd=working.root,
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        loaded = json.loads(proc.stderr.strip().splitlines()[-1])
        allowed = kernel if command == "git push" else ()
        assert [m for m in loaded if m not in allowed] == [], (command, proc.stderr)
        assert ("deny" in proc.stdout) == (command == "git push")
    if working.backend == "sqlite":
        # Once a person approved G-1, the retry checks their signature (cryptography)
        # and nothing else it does not use: no pathlib, base64, kernel errors or verb table.
        hooks.answer("G-1")
        probe = probe.replace(
            "'psycopg')", "'psycopg', 'pathlib', 'base64', 'loopx_core.shapes.errors', 'loopx_core.shapes.verbs')"
        )
        proc = subprocess.run(
            [sys.executable, "-c", probe, json.dumps(bash("git push", working))],
            cwd=working.root,
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert '"allow"' in proc.stdout and json.loads(proc.stderr.strip().splitlines()[-1]) == [], proc.stderr


def test_usage_is_charged_in_dollars_at_the_boards_prices(hooks, working, transcript):
    # No price yet: $0, and the hook says how to add one.
    first = hooks.run("claude-code", "stop", stop(working, transcript.path))
    assert "no price for claude-sonnet-4-6" in first.stderr and "loopx price set claude-sonnet-4-6" in first.stderr
    assert working.ok("card", "show", "LX-1")["card"]["quota"]["usd"]["used"] == 0
    # A prefix prices the model; each kind of token at its own rate.
    working.ok(
        "price",
        "set",
        "claude-sonnet-4",
        "--input",
        "3",
        "--output",
        "15",
        "--cache-read",
        "0.3",
        "--cache-write",
        "3.75",
    )
    transcript.append()
    working.ok("writeback", "LX-1", "--summary", "fixed", agent="a2")
    second = hooks.run("claude-code", "stop", stop(working, transcript.path, active=True))
    assert "no price" not in second.stderr
    charged = hook_evidence(working)[-1]
    usage = working.ok("log", "LX-1")["evidence"][-1]
    assert usage["source"] == "hook"
    detail = usage["extra"]["usage"]
    expected = (
        detail["input_tokens"] * 3
        + detail["cache_creation_input_tokens"] * 3.75
        + detail["cache_read_input_tokens"] * 0.3
        + detail["output_tokens"] * 15
    ) / 1e6
    assert expected > 0 and charged["usage"]["usd"] == round(expected, 6)
    assert working.ok("card", "show", "LX-1")["card"]["quota"]["usd"]["used"] == round(expected, 6)


def test_a_dollar_budget_pauses_on_hook_measured_usage(hooks, team, transcript):
    team.ok("price", "set", "claude-sonnet-4-6", "--input", "3000", "--output", "15000")
    team.ok("card", "add", "Tiny dollar budget", "--max-usd", "1")
    team.ok("next", "--claim", agent="a2")
    hooks.run("claude-code", "stop", stop(team, transcript.path))
    card = team.ok("card", "show", "LX-1")["card"]
    assert card["status"] == "paused" and card["paused_reason"] == "budget" and card["quota"]["usd"]["used"] > 1


def test_prices_are_set_by_people_with_clear_refusals(team):
    assert team.ok("price", "list")["prices"] == {}
    bad = team.cli("price", "set", "gpt 5", "--input", "1", "--output", "2")
    assert bad.code == 3 and "not a valid model name" in bad.data["error"]["message"]
    assert team.cli("price", "set", "gpt-5", "--input", "-1", "--output", "2").code == 3
    assert team.cli("price", "set", "gpt-5", "--input", "nan", "--output", "2").code == 3
    assert team.cli("price", "set", "gpt-5", "--input", "1", "--output", "2", agent="a1").code == 10
    assert team.ok("price", "list")["prices"] == {}
    team.ok("price", "set", "gpt-5", "--input", "1.25", "--output", "10")
    assert team.ok("price", "list")["prices"] == {"gpt-5": {"input": 1.25, "output": 10.0}}
    assert team.cli("price", "remove", "gpt-4").code == 4
    team.ok("price", "remove", "gpt-5")
    assert [e["kind"] for e in team.ok("events")["events"]][-2:] == ["price_set", "price_removed"]
    assert all(e["signed"] for e in team.ok("events")["events"][-2:])


# -- every token charged (#29) ----------------------------------------------------------


def _entry(uuid: str, kind: str, **fields) -> str:
    import json

    base = {
        "sessionId": "s-29",
        "type": kind,
        "uuid": uuid,
        "timestamp": "2026-03-11T02:40:00.000Z",
        "isSidechain": kind == "assistant" and fields.pop("side", False),
    }
    return json.dumps({**base, **fields}) + "\n"


def _assistant(uuid: str, msg: str, inp: int, out: int, text: str = "Done.") -> str:
    usage = {"input_tokens": inp, "output_tokens": out, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
    return _entry(
        uuid,
        "assistant",
        requestId=f"req-{msg}",
        message={
            "id": msg,
            "role": "assistant",
            "model": "claude",
            "content": [{"type": "text", "text": text}],
            "usage": usage,
        },
    )


def test_usage_that_reached_the_transcript_after_the_stop_and_subagents_are_charged_at_session_end(
    hooks, working, tmp_path
):
    """Claude Code writes a call's partial usage first (output 1) and the rest
    may land after the last Stop read it (2.1.197: one Stop, undercharged); a
    subagent's calls are in a transcript of its own. SessionEnd charges both,
    each call once, by its id."""
    path = tmp_path / "s-29.jsonl"
    path.write_text(
        _entry("u-1", "user", message={"role": "user", "content": "Do the next step."})
        + _assistant("a-2", "msg_A", 500, 1)
    )
    payload_ = stop(working, path)
    payload_["last_assistant_message"] = "Done."
    hooks.run("claude-code", "stop", payload_)
    assert [e["usage"]["tokens"] for e in hook_evidence(working)] == [501]
    # The rest of msg_A's usage lands, and a subagent (Task tool) ran two calls.
    with path.open("a") as fh:
        fh.write(_assistant("a-3", "msg_A", 500, 80))
    subagents = tmp_path / "s-29" / "subagents"
    subagents.mkdir(parents=True)
    (subagents / "agent-1.jsonl").write_text(
        _entry("su-1", "user", message={"role": "user", "content": "Look up the parser's callers."}, isSidechain=True)
        + _assistant("sa-2", "msg_S1", 100, 20)
        + _assistant("sa-3", "msg_S2", 200, 30)
    )
    end = dict(payload_, hook_event_name="SessionEnd", reason="other")
    end.pop("stop_hook_active", None)
    res = hooks.run("claude-code", "session-end", end)
    assert (res.code, res.stdout) == (0, "")
    charged = hook_evidence(working)
    assert sorted(e["usage"]["tokens"] for e in charged) == sorted([501, 79, 350])
    assert working.ok("card", "show", "LX-1")["card"]["quota"]["tokens"]["used"] == 580 + 350
    # Again (a second SessionEnd, a late Stop): nothing twice.
    hooks.run("claude-code", "session-end", end)
    hooks.run("claude-code", "stop", dict(payload_, stop_hook_active=True))
    assert len(hook_evidence(working)) == 3
    assert working.ok("card", "show", "LX-1")["card"]["quota"]["tokens"]["used"] == 930


# -- the runtime's own question joins the queue (#29) -----------------------------------


def permission_payload(board) -> dict:
    data = stop(board)
    data.update(
        hook_event_name="PermissionRequest",
        tool_name="Bash",
        tool_input={"command": "rm -rf build", "description": "clean"},
    )
    data.pop("stop_hook_active", None)
    return data


def decision_of(result) -> dict:
    out = (result.out or {}).get("hookSpecificOutput") or {}
    assert out.get("hookEventName") == "PermissionRequest"
    return out["decision"]


def test_a_permission_request_waits_for_a_signed_approval_never_a_forged_one(hooks, working, monkeypatch):
    import threading

    from loopx_core.adapters import hooks as hook_module
    from tests.polling import until

    from ..security.conftest import sql

    monkeypatch.setattr(hook_module, "PERMISSION_WAIT", 0.6)
    assert (
        hooks.run("claude-code", "permission-request", permission_payload(working)).stdout == ""
    )  # a person at their own terminal: Claude Code's dialog
    monkeypatch.setenv("LOOPX_TURN_ID", "turn-29")  # a runner's turn: nobody at that terminal
    unanswered = decision_of(hooks.run("claude-code", "permission-request", permission_payload(working)))
    assert unanswered["behavior"] == "deny" and "G-1 waits for them" in unanswered["message"]
    gate = working.cli("gate", "status", "G-1").data["gate"]
    assert gate["status"] == "pending" and "asks to use Bash" in gate["question"] and "rm -rf build" in gate["question"]
    # The agent writes an approval into the database: it reads as pending, the runtime is told no
    # (the same question asks again: G-2).
    sql(working, "UPDATE gate SET status = 'approved', answer = 'approved', answered_by = 'human:tester' WHERE id = 1")
    assert (
        decision_of(hooks.run("claude-code", "permission-request", permission_payload(working)))["behavior"] == "deny"
    )
    sql(working, "UPDATE gate SET status = 'pending', answer = NULL, answered_by = NULL WHERE id = 1")
    assert len(working.cli("gate", "list", "--pending").data["gates"]) == 2
    # A real hook process waits; the person says no meanwhile; the runtime is told why.
    results = []
    other = permission_payload(working)
    other["tool_input"] = {"command": "rm -rf dist", "description": "clean"}
    waiting = threading.Thread(
        target=lambda: results.append(
            hooks.spawn("claude-code", "permission-request", other, env={"LOOPX_TURN_ID": "turn-29"})
        )
    )
    waiting.start()
    until(
        lambda: len(working.cli("gate", "list", "--pending").data["gates"]) == 3,
        timeout=60,
        what="the gate the hook waits on",
    )
    working.ok("gate", "answer", "G-3", "reject", "--note", "not the dist folder", tty=True)
    waiting.join(timeout=60)
    said = decision_of(results[0])
    assert said["behavior"] == "deny" and "the person said no (G-3 rejected: not the dist folder)" in said["message"]
    assert (
        hooks.run("claude-code", "permission-request", permission_payload(working), agent="a1").stdout == ""
    )  # no card: the runtime decides
