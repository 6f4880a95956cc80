"""What agents and people read: context (md and json, bounded), events --since,
log {card, evidence, observed}, and the human-readable output."""

from __future__ import annotations

import json

from .conftest import events, held, last_seq, worked


def test_context_markdown_is_the_continuation(team):
    team.ok(
        "card",
        "add",
        "parser",
        "--body",
        "Parse the config format.",
        "--needs",
        "git:push",
        "--next",
        "read the grammar",
    )
    held(team, "LX-1", "a1")
    (team.root / "grammar.ebnf").write_text("x")
    worked(
        team,
        "LX-1",
        "a1",
        "read the grammar",
        "--artifact",
        "grammar.ebnf",
        "--todo-add",
        "lexer",
        "--todo-add",
        "parser",
        "--next",
        "write the lexer",
    )
    res = team.cli("context", "LX-1", json_out=False)
    assert res.code == 0
    md = res.out
    assert md.startswith("# LX-1: parser")
    for needle in (
        "## Objective",
        "Parse the config format.",
        "`git:push`",
        "## Next action",
        "write the lexer",
        "- [ ] 1. lexer",
        "- [ ] 2. parser",
        "## Last evidence",
        "grammar.ebnf",
        "board objective: test board",
        "loopx writeback LX-1",
    ):
        assert needle in md, needle
    data = team.ok("context", "LX-1")
    assert data["markdown"].strip() == md.strip()


def test_context_json(team):
    team.ok("card", "add", "one", "--max-turns", "10")
    held(team, "LX-1", "a1")
    worked(team, "LX-1", "a1", "s1", "--todo-add", "t1")
    team.cli("gate", "ask", "LX-1", "--question", "ok?", agent="a1")
    ctx = team.ok("context", "LX-1", "--format", "json")["context"]
    assert ctx["card"] == "LX-1" and ctx["status"] == "waiting" and ctx["owner"] == "a1"
    assert ctx["lease"]["holder"] == "a1" and ctx["quota"]["turns"] == {"used": 1, "limit": 10}
    assert ctx["todos"] == [{"id": 1, "text": "t1", "done": False}]
    assert [e["summary"] for e in ctx["evidence"]] == ["s1"]
    assert ctx["gates"] == [
        {"id": "G-1", "status": "pending", "question": "ok?", "scope": None, "choice": None, "text": None, "note": None}
    ]


def test_context_stays_small_with_a_long_history(team):
    team.ok("card", "add", "long haul", "--body", "B" * 5000)
    held(team, "LX-1", "a1")
    for i in range(12):
        worked(
            team,
            "LX-1",
            "a1",
            f"turn {i}: " + "did many things " * 60,
            *[a for j in range(5) for a in ("--todo-add", f"todo {i}.{j} " + "detail " * 8)],
            "--next",
            f"step {i + 1}",
        )
    for fmt in ("md", "json"):
        res = team.cli("context", "LX-1", "--format", fmt, json_out=False)
        assert res.code == 0
        assert len(res.out) <= 6000, (fmt, len(res.out))
    ctx = team.ok("context", "LX-1", "--format", "json")["context"]
    assert ctx["todos_more"] == 60 - len(ctx["todos"]) and len(ctx["evidence"]) == 3
    assert ctx["evidence"][-1]["summary"].startswith("turn 11")  # the latest turns, not the first
    assert ctx["next"] == "step 12"
    md = team.cli("context", "LX-1", json_out=False).out
    assert "more (`loopx card show LX-1`)" in md


def test_context_of_an_unknown_card(team):
    assert team.cli("context", "LX-5").code == 4


def test_events_since_and_for_one_card(team):
    team.ok("card", "add", "one")
    mark = last_seq(team)
    team.ok("card", "add", "two")
    held(team, "LX-1", "a1")
    new = events(team, since=mark)
    assert [(e["card"], e["kind"]) for e in new] == [("LX-2", "card_added"), ("LX-1", "claimed")]
    assert all(e["seq"] > mark for e in new)
    e = new[-1]
    assert set(e) >= {"seq", "at", "actor", "card", "kind", "data", "op_id"}
    assert e["actor"] == "agent:a1" and e["at"] == "2027-01-15T08:00:00Z"
    assert [x["kind"] for x in events(team, card="LX-2")] == ["card_added"]
    assert events(team, since=last_seq(team)) == []
    seqs = [x["seq"] for x in team.ok("events")["events"]]
    assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs)
    assert team.ok("events", "--since", str(mark), "--limit", "1")["events"] == new[:1]


def test_events_refuses_a_negative_or_too_large_position(team):
    team.ok("card", "add", "one")
    for bad in ("--limit=-1", "--since=-5", f"--since={1 << 63}", "--limit=ten"):
        res = team.cli("events", bad)
        assert res.code == 2, (bad, res)
        assert res.data["error"]["code"] == "usage" and "see `loopx events --help`" in res.data["error"]["hint"]
    assert team.ok("events", "--limit=0")["events"] == []


def test_log_is_card_evidence_and_observed(team):
    team.ok("card", "add", "one")
    held(team, "LX-1", "a1")
    worked(team, "LX-1", "a1", "first")
    worked(team, "LX-1", "a1", "second")
    log = team.ok("log", "LX-1")
    assert set(log) == {"card", "evidence", "observed"}
    assert log["card"]["id"] == "LX-1"
    assert [e["summary"] for e in log["evidence"]] == ["first", "second"]
    assert log["observed"] == []
    assert team.cli("log", "LX-2").code == 4


def test_every_json_answer_is_exactly_one_object(team):
    team.ok("card", "add", "one")
    for argv in (
        ["card", "list"],
        ["agent", "list"],
        ["gate", "list"],
        ["events"],
        ["export"],
        ["next", "--agent", "a1"],
        ["where"],
    ):
        res = team.cli(*argv)
        lines = [line for line in res.out.splitlines() if line.strip()]
        assert len(lines) == 1 and isinstance(json.loads(lines[0]), dict), argv


def test_human_output_says_the_next_step(team):
    res = team.cli("card", "add", "one", json_out=False)
    assert res.code == 0 and "LX-1" in res.out and "loopx next" in res.out
    res = team.cli("next", "--claim", agent="a1", json_out=False)
    assert res.code == 0 and "work on LX-1" in res.out and "loopx writeback LX-1" in res.out
    res = team.cli("claim", "LX-1", agent="a2", json_out=False)
    assert res.code == 5 and res.out == "" and "held by a1" in res.err and "→" in res.err
    res = team.cli("card", "list", json_out=False)
    assert "LX-1" in res.out and "[active]" in res.out
    res = team.cli("board", "--text", json_out=False)
    assert res.code == 0 and "Active (1)" in res.out
