"""`loopx hook codex …` fed the payloads Codex's hook schemas define."""

from __future__ import annotations

import shutil

from tests.adapters.conftest import FIXTURES, deny_reason, payload

SESSION = "b5f6c1c2-1111-2222-3333-444455556666"


def bash(command: str, board) -> dict:
    return payload("codex/pre_tool_use_bash.json", CWD=str(board.root), COMMAND=command, SESSION=SESSION)


def test_deny_then_allow_in_codex_format(hooks, working):
    first = hooks.spawn("codex", "pre-tool-use", bash("git push origin main", working))
    assert first.code == 0
    reason = deny_reason(first)  # hookSpecificOutput.permissionDecision "deny" with a reason
    assert "gate G-1 is opened" in reason and "loopx gate status G-1" in reason
    assert "G-1" in deny_reason(hooks.run("codex", "pre-tool-use", bash("git push origin main", working)))
    hooks.answer("G-1")
    allowed = hooks.spawn("codex", "pre-tool-use", bash("git push origin main", working))
    # Codex rejects permissionDecision "allow" without updatedInput: an allowed call prints nothing
    assert (allowed.code, allowed.stdout, allowed.stderr) == (0, "", "")
    assert hooks.run("codex", "pre-tool-use", bash("cargo test", working)).stdout == ""


def test_apply_patch_outside_the_project(hooks, working):
    inside = "*** Begin Patch\n*** Add File: docs/notes.md\n+hello\n*** End Patch\n"
    outside = "*** Begin Patch\n*** Update File: /etc/hosts\n@@\n-a\n+b\n*** End Patch\n"
    call = lambda patch: payload("codex/pre_tool_use_apply_patch.json", CWD=str(working.root), PATCH=patch)
    assert hooks.run("codex", "pre-tool-use", call(inside)).stdout == ""
    reason = deny_reason(hooks.run("codex", "pre-tool-use", call(outside)))
    assert "`fs:write-outside`" in reason and "apply_patch Update File: /etc/hosts" in reason


def test_session_start_context(hooks, working):
    res = hooks.spawn(
        "codex", "session-start", payload("codex/session_start.json", CWD=str(working.root), SESSION=SESSION)
    )
    out = res.out["hookSpecificOutput"]
    assert out["hookEventName"] == "SessionStart"
    assert "# LX-1: Fix the date parser" in out["additionalContext"]
    assert set(out) == {"hookEventName", "additionalContext"}  # Codex rejects unknown fields
    assert "loopx writeback LX-1 --agent a2" in out["additionalContext"]


def test_stop_blocks_and_charges_the_rollout_usage(hooks, working, tmp_path):
    rollout = tmp_path / "rollout-2026-03-11T02-29-59-b5f6c1c2.jsonl"
    shutil.copy(FIXTURES / "codex" / "rollout.jsonl", rollout)
    stop = payload("codex/stop.json", CWD=str(working.root), SESSION=SESSION, TRANSCRIPT=str(rollout))
    res = hooks.spawn("codex", "stop", stop)
    assert res.code == 0 and res.out["decision"] == "block"
    assert "loopx writeback LX-1 --agent a2" in res.out["reason"]
    charged = [e for e in working.ok("log", "LX-1")["evidence"] if e["source"] == "hook"]
    # the two token_count events after the last user_message (turn 2)
    assert [(e["usage"]["tokens_in"], e["usage"]["tokens_out"]) for e in charged] == [(9500 + 9800, 60 + 40)]
    assert charged[0]["turn_id"].startswith("cx:")
    stop["stop_hook_active"] = True
    assert hooks.run("codex", "stop", stop).stdout == ""
    assert len([e for e in working.ok("log", "LX-1")["evidence"] if e["source"] == "hook"]) == 1
    # a null transcript_path (allowed by the schema) still checks evidence
    stop.update(stop_hook_active=False, transcript_path=None)
    working.ok("writeback", "LX-1", "--summary", "renamed", agent="a2")
    assert hooks.run("codex", "stop", stop).stdout == ""


def test_codex_usage_is_priced_with_cached_input_at_the_cache_rate(hooks, working, tmp_path):
    working.ok("price", "set", "gpt-5.1-codex", "--input", "1.25", "--output", "10", "--cache-read", "0.125")
    rollout = tmp_path / "rollout-2026-03-11T02-29-59-b5f6c1c2.jsonl"
    shutil.copy(FIXTURES / "codex" / "rollout.jsonl", rollout)
    res = hooks.spawn(
        "codex", "stop", payload("codex/stop.json", CWD=str(working.root), SESSION=SESSION, TRANSCRIPT=str(rollout))
    )
    assert res.code == 0 and "no price" not in res.stderr
    charged = [e for e in working.ok("log", "LX-1")["evidence"] if e["source"] == "hook"]
    # turn 2: 9500 in (8000 cached) + 60 out, then 9800 in (9000 cached) + 40 out
    expected = ((1500 + 800) * 1.25 + (8000 + 9000) * 0.125 + (60 + 40) * 10) / 1e6
    assert charged[0]["usage"]["usd"] == round(expected, 6)
