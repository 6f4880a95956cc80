"""Reading usage and the turn's start from runtime transcripts."""

from __future__ import annotations

from loopx_core.adapters import transcript
from tests.adapters.conftest import FIXTURES


def test_claude_transcript():
    turn = transcript.read_claude(str(FIXTURES / "claude" / "transcript.jsonl"))
    assert turn.started_at == transcript.parse_time("2026-03-11T02:40:00.000Z")
    assert turn.markers[turn.prompt_index] == "u-0003"  # tool results and snapshots are not prompts
    calls, through = transcript.uncharged(turn, None)
    assert [(c.identity, c.tokens_in, c.tokens_out) for c in calls] == [("msg_011B:req_011B", 6205, 90), ("msg_011C:req_011C", 6302, 40)]
    assert through == "a-0008"
    assert transcript.uncharged(turn, "a-0008")[0] == []


def test_claude_transcript_meta_entries_are_not_prompts(tmp_path):
    path = tmp_path / "t.jsonl"
    path.write_text((FIXTURES / "claude" / "transcript.jsonl").read_text() + (FIXTURES / "claude" / "transcript_continued.jsonl").read_text() + '{"type":"assistant","message":{"id":"x"')
    turn = transcript.read_claude(str(path))
    assert turn.markers[turn.prompt_index] == "u-0003"  # the isMeta stop-hook feedback does not start a turn
    calls, through = transcript.uncharged(turn, "a-0008")
    assert [(c.tokens_in, c.tokens_out) for c in calls] == [(6504, 30)] and through == "a-0010"


def test_codex_rollout():
    turn = transcript.read_codex(str(FIXTURES / "codex" / "rollout.jsonl"))
    assert turn.started_at == transcript.parse_time("2026-03-11T02:40:00.000Z")
    calls, _ = transcript.uncharged(turn, None)
    assert [(c.tokens_in, c.tokens_out) for c in calls] == [(9500, 60), (9800, 40)]
