"""Every token charged (#29), hook by hook: a Stop that reads the transcript
before its last call was written (``LOOPX_FAULT=transcript-lag``), and a
Codex subagent's rollout, found by the session it names. On the real binaries:
tests/e2e/test_charging.py."""

from __future__ import annotations

import json
import shutil

from tests.adapters.conftest import FIXTURES, payload

SESSION = "b5f6c1c2-1111-2222-3333-444455556666"
LAG = {"LOOPX_FAULT": "transcript-lag"}


def hook_charges(board) -> list[dict]:
    return [e for e in board.ok("log", "LX-1")["evidence"] if e["source"] == "hook"]


def used(board) -> int:
    return board.ok("card", "show", "LX-1")["card"]["quota"]["tokens"]["used"]


def _entry(uuid: str, kind: str, **fields) -> str:
    return (
        json.dumps(
            {"sessionId": "s-lag", "type": kind, "uuid": uuid, "timestamp": "2026-03-11T02:40:00.000Z", **fields}
        )
        + "\n"
    )


def _assistant(uuid: str, msg: str, inp: int, out: int, text: str) -> str:
    usage = {"input_tokens": inp, "output_tokens": out, "cache_creation_input_tokens": 7, "cache_read_input_tokens": 11}
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


def test_a_stop_that_reads_before_the_last_call_is_written_charges_it_later_never_twice(hooks, working, tmp_path):
    path = tmp_path / "s-lag.jsonl"
    path.write_text(
        _entry("u-1", "user", message={"role": "user", "content": "Do the next step."})
        + _assistant("a-2", "msg_A", 500, 40, "Looking.")
        + _assistant("a-3", "msg_B", 600, 50, "Done.")
    )
    stop = payload("claude/stop.json", CWD=str(working.root), TRANSCRIPT=str(path))
    stop.update(stop_hook_active=True, last_assistant_message="Done.")
    hooks.spawn("claude-code", "stop", stop, env=LAG)
    assert [e["usage"]["tokens"] for e in hook_charges(working)] == [500 + 40 + 18]  # msg_B not seen: the lag
    hooks.spawn("claude-code", "stop", stop, env=LAG)  # a Stop again, still lagging: nothing new, nothing twice
    assert len(hook_charges(working)) == 1
    end = dict(stop, hook_event_name="SessionEnd", reason="other")
    end.pop("stop_hook_active")
    hooks.spawn("claude-code", "session-end", end, env=LAG)  # SessionEnd never lags
    assert sorted(e["usage"]["tokens"] for e in hook_charges(working)) == [558, 668]
    hooks.spawn("claude-code", "stop", stop)  # a late Stop that sees everything
    assert used(working) == 558 + 668 and len(hook_charges(working)) == 2


def _rollout(
    folder, stamp: str, thread: str, session: str, calls: list[tuple[int, int]], parent: str | None = None
) -> str:
    """A Codex 0.171 rollout: ``session_meta`` (a subagent's names the session and its parent thread), then its calls."""
    folder.mkdir(parents=True, exist_ok=True)
    meta = {"id": thread, "session_id": session, "cli_version": "0.171.0", "source": "exec"}
    if parent:
        meta.update(
            parent_thread_id=parent, source={"subagent": {"thread_spawn": {"parent_thread_id": parent, "depth": 1}}}
        )
    lines = [
        {"timestamp": "2026-12-06T04:05:57.000Z", "type": "session_meta", "payload": meta},
        {"timestamp": "2026-12-06T04:05:57.100Z", "type": "turn_context", "payload": {"model": "gpt-5.1-codex"}},
    ]
    for inp, out in calls:
        info = {
            "last_token_usage": {
                "input_tokens": inp,
                "cached_input_tokens": 0,
                "output_tokens": out,
                "reasoning_output_tokens": 0,
            }
        }
        lines.append(
            {
                "timestamp": "2026-12-06T04:05:58.000Z",
                "type": "event_msg",
                "payload": {"type": "token_count", "info": info},
            }
        )
    path = folder / f"rollout-{stamp}-{thread}.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return str(path)


def test_a_codex_subagents_rollout_is_charged_with_its_sessions_stop_and_no_one_elses(hooks, working, tmp_path):
    sessions = tmp_path / "codex" / "sessions"
    today = sessions / "2026" / "12" / "06"
    today.mkdir(parents=True)
    parent = today / f"rollout-2026-12-06T04-05-56-{SESSION}.jsonl"
    shutil.copy(FIXTURES / "codex" / "rollout.jsonl", parent)  # its session_meta id is SESSION
    _rollout(today, "2026-12-06T04-05-57", "child-1", SESSION, [(300, 30), (400, 40)], parent=SESSION)
    _rollout(
        sessions / "2026" / "12" / "07", "2026-12-07T00-00-01", "grandchild", SESSION, [(50, 5)], parent="child-1"
    )  # past midnight, depth 2
    _rollout(today, "2026-12-06T04-05-58", "stranger", "another-session", [(9000, 900)], parent="someone")
    _rollout(
        sessions / "2026" / "12" / "05", "2026-12-05T23-00-00", "before", SESSION, [(7000, 700)], parent=SESSION
    )  # older than the session: never its
    stop = payload("codex/stop.json", CWD=str(working.root), SESSION=SESSION, TRANSCRIPT=str(parent))
    hooks.spawn("codex", "stop", stop)
    charges = hook_charges(working)
    subagents = sorted(e["usage"]["tokens"] for e in charges if "(subagent)" in e["summary"])
    assert subagents == [55, 770]
    assert used(working) == (9500 + 9800 + 60 + 40) + 770 + 55
    stop["stop_hook_active"] = True
    hooks.spawn("codex", "stop", stop)  # again: nothing twice
    assert len(hook_charges(working)) == len(charges)
