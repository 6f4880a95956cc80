"""The runner reading what Claude Code and Codex really print: a turn's live
usage from the stream (Claude Code) or the rollout (Codex) stops a turn that
would spend the card's budget or window, and the usage measured from the
transcript is charged exactly once — also when the Stop hook charged part of
it first. The binaries here replay streams captured from the real ones
(fake_runtime.py says how); the runner, the board and the hook are real."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests.conftest import person_ok

from .conftest import alive

FAKE = Path(__file__).resolve().parent / "fake_runtime.py"
CLAUDE_TOKENS = (1200 + 50 + 1000 + 40, 1300 + 0 + 1200 + 15)  # what the fixture's transcript says each call used
CODEX_TOKENS = (2200 + 40, 2500 + 15)


@pytest.fixture
def fake(tmp_path):
    """(the fake binary for a runtime, the environment the person starts the runner with)."""
    bins = tmp_path / "bin"
    bins.mkdir()
    home = tmp_path / "home"
    home.mkdir()

    def make(kind: str) -> str:
        path = bins / kind
        path.write_text(f'#!/bin/sh\nexec {sys.executable} {FAKE} {kind} "$@"\n')
        path.chmod(0o755)
        return str(path)

    return make, {"HOME": str(home), "CODEX_HOME": str(home / ".codex")}


def configure(board, **config) -> None:
    (board.root / ".fake.json").write_text(json.dumps(config))


def charges(watch) -> list[int]:
    return [e.data["tokens"] for e in watch.events("usage_charged")]


def test_a_claude_turn_runs_headless_with_the_packet_and_its_usage_is_charged_once(team, watch, fake):
    make, env = fake
    team.ok("card", "add", "with claude", "--next", "write the form")
    configure(team, writeback=True)
    proc = watch.run(
        "a1",
        "--turns",
        "1",
        "--bin",
        make("claude"),
        runtime="claude-code",
        rest=["--permission-mode", "acceptEdits"],
        env=env,
    )
    assert watch.ended(proc) == 0
    args = json.loads((team.root / ".fake-args.json").read_text())
    identity = json.dumps({"env": {"LOOPX_AGENT": "a1"}})  # over the agent the checkout's local settings name
    assert args[0] == "-p" and args[2:] == [
        "--allowedTools",
        "mcp__loopx",  # headless Claude Code would deny the loopx tools (README's acceptEdits command wrote nothing)
        "--output-format",
        "stream-json",
        "--verbose",
        "--settings",
        identity,
        "--permission-mode",
        "acceptEdits",
    ]
    assert (
        "write the form" in args[1] and "# LX-1: with claude" in args[1] and "agent `a1`" in args[1]
    )  # the continuation packet
    assert f"`loopx` is {Path(sys.executable).with_name('loopx')}" in args[1]  # for a shell that resets PATH (Codex's)
    assert charges(watch) == [sum(CLAUDE_TOKENS)]
    measured = [e for e in watch.evidence() if e["source"] == "hook"]
    assert len(measured) == 1 and "loopx run" in measured[0]["summary"] and measured[0]["extra"]["calls"] == 2
    assert team.ok("card", "show", "LX-1")["card"]["quota"]["tokens"]["used"] == sum(CLAUDE_TOKENS)
    assert watch.events("turn_finished")[0].data["outcome"] == "finished"


def test_what_the_stop_hook_charged_is_not_charged_again(team, watch, fake):
    make, env = fake
    team.ok("card", "add", "with claude", "--next", "go")
    # The Stop hook runs while only the first call has reached the transcript (it is written asynchronously).
    transcript = (
        (Path(__file__).resolve().parent / "fixtures" / "claude-2.1.197.transcript.jsonl").read_text().splitlines()
    )
    first_call = next(i for i, line in enumerate(transcript) if json.loads(line).get("type") == "assistant") + 1
    configure(team, writeback=True, stop_hook_after=first_call)
    proc = watch.run("a1", "--turns", "1", "--bin", make("claude"), runtime="claude-code", env=env)
    assert watch.ended(proc) == 0
    assert charges(watch) == [CLAUDE_TOKENS[0], CLAUDE_TOKENS[1]]  # the hook's, then the runner's: each call once
    sources = [e["summary"].rsplit("measured by ", 1)[1] for e in watch.evidence() if e["source"] == "hook"]
    assert sources == ["the claude-code stop hook", "loopx run (claude-code)"]
    assert team.ok("card", "show", "LX-1")["card"]["quota"]["tokens"]["used"] == sum(CLAUDE_TOKENS)
    # With the whole transcript there at Stop, the hook charges all of it and the runner nothing.
    configure(team, writeback=True, stop_hook_after=len(transcript))
    proc = watch.run("a1", "--turns", "1", "--bin", make("claude"), runtime="claude-code", env=env)
    assert watch.ended(proc) == 0
    assert charges(watch)[2:] == [sum(CLAUDE_TOKENS)]


def test_a_claude_turn_that_would_spend_the_budget_is_stopped_mid_turn(team, watch, fake):
    make, env = fake
    person_ok(team, "card", "add", "rationed", "--max-tokens", "3000")
    configure(team, hang_after=3)  # the second model call's event, then it would go on
    proc = watch.run("a1", "--turns", "1", "--bin", make("claude"), runtime="claude-code", env=env)
    pid = int(
        watch.until(
            "the fake claude runs", lambda: (team.root / ".fake.pid").exists() and (team.root / ".fake.pid").read_text()
        )
    )
    assert watch.ended(proc) == 0
    assert not alive(pid)
    finished = watch.events("turn_finished")[0].data
    assert finished["outcome"] == "stopped" and "tokens would be spent" in finished["reason"]
    failed = [e for e in watch.evidence() if e["source"] == "runner"]
    assert len(failed) == 1 and "tokens would be spent" in failed[0]["summary"]
    assert charges(watch) == [sum(CLAUDE_TOKENS)]  # what it used is charged: the turn that crosses is the last
    card = team.ok("card", "show", "LX-1")["card"]
    assert card["status"] == "paused" and card["paused_reason"] == "budget"


def test_a_card_window_stops_a_turn_mid_way_too(team, watch, fake):
    make, env = fake
    team.ok("card", "add", "windowed")
    person_ok(team, "card", "window", "LX-1", "--every", "1h", "--tokens", "3000")
    configure(team, hang_after=3)
    proc = watch.run("a1", "--turns", "1", "--bin", make("claude"), runtime="claude-code", env=env)
    assert watch.ended(proc) == 0
    assert "tokens would be spent" in watch.events("turn_finished")[0].data["reason"]
    card = team.ok("card", "show", "LX-1")["card"]
    assert card["status"] == "paused" and card["paused_reason"] == "window" and card["wake_at"]


def test_without_a_transcript_the_streams_own_usage_is_charged(team, watch, fake):
    make, env = fake
    team.ok("card", "add", "with claude")
    configure(team, writeback=True, no_transcript=True)
    proc = watch.run("a1", "--turns", "1", "--bin", make("claude"), runtime="claude-code", env=env)
    assert watch.ended(proc) == 0
    measured = [e for e in watch.evidence() if e["source"] == "hook"]
    assert len(measured) == 1 and measured[0]["extra"]["from"] == "stream"
    assert charges(watch) == [1200 + 50 + 1000 + 1 + 1300 + 1200 + 1]  # the stream's partial output counts


def test_a_codex_turn_is_followed_through_its_rollout_and_charged_once(team, watch, fake):
    make, env = fake
    team.ok("card", "add", "with codex", "--next", "fix the test")
    configure(team, writeback=True)
    proc = watch.run(
        "a1", "--turns", "1", "--bin", make("codex"), runtime="codex", rest=["--skip-git-repo-check"], env=env
    )
    assert watch.ended(proc) == 0
    args = json.loads((team.root / ".fake-args.json").read_text())
    assert args[:3] == ["exec", "--json", "--skip-git-repo-check"] and "fix the test" in args[-1]
    assert charges(watch) == [sum(CODEX_TOKENS)]
    assert watch.events("turn_finished")[0].data["outcome"] == "finished"


def test_a_codex_turn_that_would_spend_the_budget_is_stopped_from_its_rollout(team, watch, fake):
    make, env = fake
    person_ok(team, "card", "add", "rationed", "--max-tokens", "2000")
    configure(team, hang_after=4)  # after its first model call the rollout holds its usage
    proc = watch.run("a1", "--turns", "1", "--bin", make("codex"), runtime="codex", env=env)
    assert watch.ended(proc) == 0
    finished = watch.events("turn_finished")[0].data
    assert finished["outcome"] == "stopped" and "tokens would be spent" in finished["reason"]
    assert charges(watch) == [CODEX_TOKENS[0]]
    assert team.ok("card", "show", "LX-1")["card"]["paused_reason"] == "budget"
    assert not alive(int((team.root / ".fake.pid").read_text()))


def test_a_failed_turns_record_says_its_last_step_and_keeps_the_raw_stream(team, watch, fake):
    """#39: a Claude Code turn stopped after its tool call wrote no evidence: its
    record says what it did last as a person reads it (never a raw stream-json
    line), and the raw output is kept whole in .loopx/turns/, named with its hash."""
    import hashlib

    make, env = fake
    team.ok("card", "add", "stalls")
    configure(team, hang_after=1)  # the tool call, then nothing until killed
    proc = watch.run(
        "a1", "--turns", "1", "--turn-limit", "3s", "--bin", make("claude"), runtime="claude-code", env=env
    )
    assert watch.ended(proc) == 0
    (failed,) = [e for e in watch.evidence() if e["source"] == "runner"]
    assert "turn time limit" in failed["summary"]
    assert failed["summary"].endswith("Last called Bash: $ echo hello > out.txt · description: x")
    assert '{"type"' not in failed["summary"]
    kept = failed["extra"]["output"]
    path = team.root / kept["path"]
    assert kept["path"].startswith(".loopx/turns/LX-1-") and path.is_file()
    raw = path.read_bytes()
    assert kept["sha256"] == hashlib.sha256(raw).hexdigest() and kept["size"] == len(raw)
    assert b'"type":"assistant"' in raw and b'"name":"Bash"' in raw  # the stream as the runtime printed it
