"""Reading usage and the turn's start from runtime transcripts."""

from __future__ import annotations

from loopx_core.runtimes import claude_code, codex, transcript
from tests.adapters.conftest import FIXTURES


def test_claude_transcript():
    turn = claude_code.read_transcript(str(FIXTURES / "claude" / "transcript.jsonl"))
    assert turn.started_at == transcript.parse_time("2026-03-11T02:40:00.000Z")
    assert turn.markers[turn.prompt_index] == "u-0003"  # tool results and snapshots are not prompts
    calls, through = transcript.uncharged(turn, None)
    assert [(c.identity, c.tokens_in, c.tokens_out) for c in calls] == [
        ("msg_011B:req_011B", 6205, 90),
        ("msg_011C:req_011C", 6302, 40),
    ]
    assert through == "a-0008"
    assert transcript.uncharged(turn, "a-0008")[0] == []


def test_claude_transcript_meta_entries_are_not_prompts(tmp_path):
    path = tmp_path / "t.jsonl"
    path.write_text(
        (FIXTURES / "claude" / "transcript.jsonl").read_text()
        + (FIXTURES / "claude" / "transcript_continued.jsonl").read_text()
        + '{"type":"assistant","message":{"id":"x"'
    )
    turn = claude_code.read_transcript(str(path))
    assert turn.markers[turn.prompt_index] == "u-0003"  # the isMeta stop-hook feedback does not start a turn
    calls, through = transcript.uncharged(turn, "a-0008")
    assert [(c.tokens_in, c.tokens_out) for c in calls] == [(6504, 30)] and through == "a-0010"


def test_codex_rollout():
    turn = codex.read_transcript(str(FIXTURES / "codex" / "rollout.jsonl"))
    assert turn.started_at == transcript.parse_time("2026-03-11T02:40:00.000Z")
    calls, _ = transcript.uncharged(turn, None)
    assert [(c.tokens_in, c.tokens_out) for c in calls] == [(9500, 60), (9800, 40)]


# -- transcripts the real binaries wrote (tests/e2e/make_transcripts.py) ----------------------

REAL = FIXTURES / "real"


def _entries(name: str) -> list[dict]:
    import json

    return [json.loads(line) for line in (REAL / name).read_text().splitlines()]


def test_claude_background_task_notices_are_not_prompts():
    for name in ("claude-2.1.197.jsonl", "claude-2.1.335.jsonl"):
        entries = _entries(name)
        notices = [i for i, e in enumerate(entries) if (e.get("origin") or {}).get("kind") == "task-notification"]
        assert notices, name  # the binary wrote one after the turn
        turn = claude_code.read_transcript(str(REAL / name))
        prompt = entries[turn.prompt_index]
        assert prompt["message"]["content"] == "Do the next step of your card.", name
        assert turn.prompt_index < notices[0]
        # every model call of the session counts once, the ones after the notice included
        calls, _ = transcript.uncharged(turn, None)
        answered = {e["message"]["id"] for e in entries if e.get("type") == "assistant" and e["message"].get("usage")}
        assert len(calls) == len(answered) >= 5, (
            name
        )  # next, bash, writeback, "Turn done.", "Saw the background notice."…


def test_codex_0171_rollout_prompt_and_calls():
    entries = _entries("codex-0.171.0.jsonl")
    assert not any(e["type"] == "event_msg" and e["payload"].get("type") == "user_message" for e in entries)
    turn = codex.read_transcript(str(REAL / "codex-0.171.0.jsonl"))
    prompt = entries[turn.prompt_index]["payload"]
    assert prompt["type"] == "item_completed" and prompt["item"]["type"] == "UserMessage"
    # the prompt comes after the instructions and the session-start context, before any model call
    assert all(pos > turn.prompt_index for pos, _ in turn.calls)
    calls, _ = transcript.uncharged(turn, None)
    counts = [
        e
        for e in entries
        if e["type"] == "event_msg" and e["payload"].get("type") == "token_count" and e["payload"].get("info")
    ]
    assert len(calls) == len(counts) and all(c.tokens_in == 100 and c.tokens_out == 20 for c in calls)
    # a Stop hook's feedback (a HookPrompt item) does not start a new turn
    hook_prompts = [
        i
        for i, e in enumerate(entries)
        if e["type"] == "event_msg" and (e["payload"].get("item") or {}).get("type") == "HookPrompt"
    ]
    assert all(i > turn.prompt_index for i in hook_prompts)
