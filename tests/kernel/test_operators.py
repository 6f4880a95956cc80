"""Each operator through the CLI: what succeeds, what is refused, and that a
refusal leaves the board exactly as it was."""

from __future__ import annotations

import hashlib

from ..conftest import NO_KEY
from .conftest import refused


def test_unknown_agent_and_card_name_the_command_that_creates_them(team):
    err = refused(team, 4, "next", agent="ghost")
    assert "loopx agent add ghost" in err["hint"]
    err = refused(team, 4, "claim", "LX-9", agent="a1")
    assert "loopx card add" in err["hint"]


def test_card_add_ready_blocked_and_backlog(team):
    assert team.ok("card", "add", "one")["card"]["status"] == "ready"
    blocked = team.ok("card", "add", "two", "--after", "LX-1")["card"]
    assert blocked["status"] == "blocked" and blocked["after"] == ["LX-1"]
    assert team.ok("card", "add", "three", "--backlog")["card"]["status"] == "backlog"
    refused(team, 4, "card", "add", "four", "--after", "LX-99")
    refused(team, 3, "card", "add", "   ")
    refused(team, 3, "card", "add", "x", "--priority", "9")


def test_claim_refusal_names_the_holder_and_expiry(team):
    team.ok("card", "add", "one")
    team.ok("claim", "LX-1", agent="a1")
    err = refused(team, 5, "claim", "LX-1", agent="a2")
    assert "a1" in err["message"] and "until" in err["message"]
    assert err["card"]["lease"]["holder"] == "a1"


def test_a_card_assigned_to_another_agent_is_forbidden(team):
    team.ok("card", "add", "mine", "--owner", "a1")
    refused(team, 10, "claim", "LX-1", agent="a2")
    assert team.cli("next", "--claim", agent="a2").code == 9


def test_next_claims_by_priority_then_age(team):
    team.ok("card", "add", "old low", "--priority", "3")
    team.ok("card", "add", "urgent", "--priority", "0")
    team.ok("card", "add", "new low", "--priority", "3")
    assert team.ok("next", "--claim", agent="a1")["card"]["title"] == "urgent"
    assert team.ok("next", "--claim", agent="a2")["card"]["title"] == "old low"


def test_missing_scope_opens_a_permission_gate_at_claim(team):
    team.ok("card", "add", "deploy", "--needs", "deploy:prod")
    res = team.cli("next", "--claim", agent="a2")
    assert res.code == 6 and res.data["action"] == "wait"
    assert res.data["gate"]["scope"] == "deploy:prod" and res.data["gate"]["kind"] == "permission"


def test_gate_approved_by_a_person_with_their_key_only(team):
    team.ok("card", "add", "one")
    team.ok("claim", "LX-1", agent="a2")
    ask = team.cli("gate", "ask", "LX-1", "--question", "push?", "--scope", "git:push", agent="a2")
    assert ask.code == 6 and ask.data["gate"]["status"] == "pending"
    again = team.cli("gate", "ask", "LX-1", "--question", "push?", "--scope", "git:push", agent="a2")
    assert again.data["gate"]["id"] == ask.data["gate"]["id"]  # a retry reuses the pending gate
    refused(team, 10, "gate", "answer", "G-1", "approve", agent="a2", tty=True)
    refused(team, 10, "gate", "answer", "G-1", "approve", tty=True, env=NO_KEY)
    ans = team.ok("gate", "answer", "G-1", "approve", "--remember", "agent", tty=True)
    assert ans["gate"]["answered_by"] == "human:tester" and ans["card"]["status"] == "active"
    refused(team, 5, "gate", "answer", "G-1", "reject", tty=True)
    # The remembered grant approves the same scope at once, on another card too.
    team.ok("card", "add", "two")
    team.ok("claim", "LX-2", agent="a2")
    later = team.cli("gate", "ask", "LX-2", "--question", "push again?", "--scope", "git:push", agent="a2")
    assert later.code == 0 and later.data["gate"]["answered_by"].startswith("grant:")


def test_a_rejected_gate_blocks_the_card(team):
    team.ok("card", "add", "one")
    team.ok("claim", "LX-1", agent="a2")
    team.cli("gate", "ask", "LX-1", "--question", "drop the table?", agent="a2")
    ans = team.ok("gate", "answer", "G-1", "reject", "--note", "no", tty=True)
    assert ans["card"]["status"] == "blocked" and "rejected" in ans["card"]["blocked_reason"]
    assert team.cli("gate", "status", "G-1").code == 7


def test_a_gate_deadline_fails_closed(team):
    t0 = 1_800_000_000.0
    team.ok("card", "add", "one", env={"LOOPX_NOW": str(t0)})
    team.ok("claim", "LX-1", agent="a2", env={"LOOPX_NOW": str(t0)})
    team.cli("gate", "ask", "LX-1", "--question", "ok?", "--deadline", "10m", agent="a2", env={"LOOPX_NOW": str(t0)})
    late = team.cli("gate", "status", "G-1", env={"LOOPX_NOW": str(t0 + 601)})
    assert late.code == 7 and late.data["gate"]["status"] == "expired"
    assert team.ok("card", "show", "LX-1", env={"LOOPX_NOW": str(t0 + 602)})["card"]["status"] == "blocked"


def test_writeback_records_hashed_artifacts_todos_and_quota(team):
    team.ok("card", "add", "one", "--max-tokens", "10000")
    team.ok("claim", "LX-1", agent="a1")
    (team.root / "out").mkdir()
    (team.root / "out" / "r.md").write_text("report\n")
    res = team.ok(
        "writeback",
        "LX-1",
        "--summary",
        "s",
        "--artifact",
        "out/r.md",
        "--artifact",
        "gone.txt",
        "--todo-add",
        "a",
        "--todo-add",
        "b",
        "--tokens",
        "500",
        "--usd",
        "0.5",
        agent="a1",
    )
    arts = res["evidence"]["artifacts"]
    assert arts[0] == {"path": "out/r.md", "size": 7, "sha256": hashlib.sha256(b"report\n").hexdigest()}
    assert arts[1]["missing"] is True
    card = res["card"]
    assert card["quota"]["tokens"] == {"used": 500, "limit": 10000} and card["quota"]["turns"]["used"] == 1
    assert [t["text"] for t in card["todos"]] == ["a", "b"]
    done = team.ok("writeback", "LX-1", "--summary", "t", "--todo-done", "1", agent="a1")
    assert done["card"]["todos"][0]["done"] is True
    refused(team, 3, "writeback", "LX-1", "--summary", "t", "--todo-done", "7", agent="a1")
    refused(team, 3, "writeback", "LX-1", "--summary", "t", "--artifact", "/etc/passwd", agent="a1")
    refused(team, 3, "writeback", "LX-1", "--summary", "", agent="a1")


def test_budget_pauses_and_a_person_raises_it(team):
    team.ok("card", "add", "one", "--max-turns", "1")
    team.ok("claim", "LX-1", agent="a1")
    res = team.ok("writeback", "LX-1", "--summary", "s", "--next", "go", agent="a1")
    assert res["card"]["status"] == "paused" and res["card"]["paused_reason"] == "budget"
    assert team.cli("next", agent="a1").code == 8
    refused(team, 8, "writeback", "LX-1", "--summary", "more", agent="a1")
    refused(team, 10, "card", "budget", "LX-1", "--add-turns", "2", agent="a1", tty=True)
    refused(team, 10, "card", "budget", "LX-1", "--add-turns", "2", tty=True, env=NO_KEY)
    raised = team.ok("card", "budget", "LX-1", "--add-turns", "2", tty=True)
    assert raised["card"]["status"] == "active" and raised["card"]["quota"]["turns"]["limit"] == 3


def test_three_turns_without_progress_pause_the_card(team):
    team.ok("card", "add", "one")
    team.ok("claim", "LX-1", agent="a1")
    for _ in range(2):
        assert team.ok("writeback", "LX-1", "--summary", "thinking", agent="a1")["card"]["status"] == "active"
    res = team.ok("writeback", "LX-1", "--summary", "thinking", agent="a1")
    assert res["card"]["status"] == "paused" and res["card"]["paused_reason"] == "no_progress"


def test_writeback_input_document_from_file_and_stdin(team):
    team.ok("card", "add", "one")
    team.ok("claim", "LX-1", agent="a1")
    (team.root / "ev.json").write_text('{"summary": "from a file", "next": "n1", "tokens": 3}')
    assert team.ok("writeback", "LX-1", "--input", "ev.json", agent="a1")["evidence"]["summary"] == "from a file"
    assert (
        team.ok("writeback", "LX-1", "--input", "-", stdin='{"summary": "from stdin", "next": "n2"}', agent="a1")[
            "evidence"
        ]["summary"]
        == "from stdin"
    )
    refused(team, 3, "writeback", "LX-1", "--input", "-", stdin="{not json", agent="a1")
    refused(team, 3, "writeback", "LX-1", "--input", "-", stdin='{"summary": "x", "bogus": 1}', agent="a1")
    refused(team, 3, "writeback", "LX-1", "--input", "-", stdin='{"summary": "x", "card": "LX-2"}', agent="a1")


def test_turn_ids_and_op_ids_make_retries_safe(team):
    team.ok("card", "add", "one")
    team.ok("claim", "LX-1", agent="a1")
    first = team.ok("writeback", "LX-1", "--summary", "s", "--next", "n", "--turn-id", "t-1", agent="a1")
    events = len(team.ok("events")["events"])
    again = team.ok("writeback", "LX-1", "--summary", "s", "--next", "n", "--turn-id", "t-1", agent="a1")
    assert again["evidence"]["id"] == first["evidence"]["id"]
    assert len(team.ok("events")["events"]) == events
    refused(team, 5, "writeback", "LX-1", "--summary", "different", "--turn-id", "t-1", agent="a1")
    added = team.ok("card", "add", "two", "--op-id", "op-7")
    assert team.ok("card", "add", "two", "--op-id", "op-7") == added
    refused(team, 5, "card", "add", "other", "--op-id", "op-7")


def test_monitor_sleeps_until_due(team):
    t0 = 1_800_000_000.0
    env = {"LOOPX_NOW": str(t0)}
    team.ok("card", "add", "watch CI", env=env)
    team.ok("claim", "LX-1", agent="a1", env=env)
    assert team.ok("monitor", "LX-1", "--every", "10m", agent="a1", env=env)["card"]["status"] == "monitoring"
    early = team.cli("next", agent="a1", env={"LOOPX_NOW": str(t0 + 60)})
    assert early.code == 9 and early.data["wake_at"]
    due = team.ok("next", agent="a1", env={"LOOPX_NOW": str(t0 + 601)})
    assert due["action"] == "work" and due["reason"] == "monitor_due"


def test_handoff_and_accept_with_a_verifiable_digest(team):
    team.ok("card", "add", "one")
    team.ok("claim", "LX-1", agent="a1")
    team.ok("writeback", "LX-1", "--summary", "half", "--todo-add", "finish", agent="a1")
    h = team.ok("handoff", "LX-1", "--to", "a2", "--summary", "yours now", agent="a1")["handoff"]
    assert h["packet"]["pending"] == ["finish"] and len(h["digest"]) == 64
    refused(team, 5, "writeback", "LX-1", "--summary", "zombie", agent="a1")
    assert team.cli("next", agent="a2").data["action"] == "accept"
    refused(team, 10, "accept", "LX-1", agent="a1")
    refused(team, 5, "accept", "LX-1", "--digest", "0" * 64, agent="a2")
    acc = team.ok("accept", "LX-1", "--digest", h["digest"], agent="a2")
    assert acc["card"]["owner"] == "a2" and acc["handoff"]["accepted_digest"] == h["digest"]


def test_a_person_reassigns_a_held_card_with_a_packet(team):
    team.ok("card", "add", "one")
    team.ok("claim", "LX-1", agent="a1")
    moved = team.ok("card", "assign", "LX-1", "--to", "a2")
    assert moved["card"]["status"] == "handoff" and moved["card"]["owner"] == "a2"
    refused(team, 5, "heartbeat", "LX-1", agent="a1")
    refused(team, 10, "card", "assign", "LX-1", "--to", "a1", agent="a1")


def test_moves_a_person_may_make(team):
    team.ok("card", "add", "one")
    team.ok("card", "add", "two", "--after", "LX-1")
    assert team.ok("card", "move", "LX-1", "--to", "backlog")["card"]["status"] == "backlog"
    refused(team, 5, "card", "move", "LX-2", "--to", "ready")  # its dependency is open
    refused(team, 5, "card", "move", "LX-1", "--to", "backlog")
    assert team.ok("card", "move", "LX-1", "--to", "cancelled")["card"]["status"] == "cancelled"


def test_release_returns_the_card(team):
    team.ok("card", "add", "one")
    team.ok("claim", "LX-1", agent="a1")
    assert team.ok("release", "LX-1", agent="a1")["card"]["status"] == "ready"
    refused(team, 5, "release", "LX-1", agent="a1")


def test_done_needs_evidence_no_pending_gate_and_a_passing_verify(team):
    team.ok("card", "add", "one", "--verify", "test -f built.txt")
    team.ok("claim", "LX-1", agent="a1")
    refused(team, 5, "done", "LX-1", "--summary", "x", agent="a1")
    team.ok("writeback", "LX-1", "--summary", "built", agent="a1")
    failed = team.cli("done", "LX-1", "--summary", "x", agent="a1")
    assert failed.code == 5 and failed.data["error"]["code"] == "verify_failed"
    assert team.ok("card", "show", "LX-1")["card"]["status"] == "active"
    (team.root / "built.txt").write_text("ok")
    ok = team.ok("done", "LX-1", "--summary", "x", agent="a1")
    assert ok["card"]["status"] == "done" and ok["evidence"]["extra"]["verify"]["passed"] is True


def test_done_unblocks_dependents(team):
    team.ok("card", "add", "one")
    team.ok("card", "add", "two", "--after", "LX-1")
    team.ok("claim", "LX-1", agent="a1")
    team.ok("writeback", "LX-1", "--summary", "s", agent="a1")
    team.ok("done", "LX-1", "--summary", "s", agent="a1")
    assert team.ok("card", "show", "LX-2")["card"]["status"] == "ready"


def test_an_expired_lease_is_reaped_and_the_zombie_is_refused(team):
    t0 = 1_800_000_000.0
    team.ok("card", "add", "one", env={"LOOPX_NOW": str(t0)})
    first = team.ok("claim", "LX-1", "--lease", "5m", agent="a1", env={"LOOPX_NOW": str(t0)})
    later = {"LOOPX_NOW": str(t0 + 301)}
    taken = team.ok("next", "--claim", agent="a2", env=later)
    assert taken["card"]["id"] == "LX-1" and taken["lease"]["token"] == first["lease"]["token"] + 1
    kinds = [e["kind"] for e in team.ok("events", env=later)["events"]]
    assert "lease_expired" in kinds
    refused(team, 5, "writeback", "LX-1", "--summary", "zombie", agent="a1", env=later)
    refused(
        team,
        5,
        "writeback",
        "LX-1",
        "--summary",
        "stale",
        "--lease-token",
        str(first["lease"]["token"]),
        agent="a2",
        env=later,
    )


def test_context_fits_a_turn_budget(team):
    team.ok("card", "add", "big", "--body", "objective " * 500)
    team.ok("claim", "LX-1", agent="a1")
    for i in range(8):
        team.ok(
            "writeback",
            "LX-1",
            "--summary",
            "did a lot " * 80,
            *sum((["--todo-add", f"todo {i}-{j} " * 10] for j in range(5)), []),
            agent="a1",
        )
    md = team.cli("context", "LX-1", json_out=False).out
    assert len(md) <= 6000 and "# LX-1: big" in md and "## Todos" in md
    assert team.ok("context", "LX-1", "--format", "json")["context"]["card"] == "LX-1"


def test_log_and_export_shapes(team):
    team.ok("card", "add", "one")
    log = team.ok("log", "LX-1")
    assert set(log) == {"card", "evidence", "observed"}
    export = team.ok("export")
    assert {"cards", "agents", "gates", "evidence", "handoffs", "events"} <= set(export)


def test_bare_loopx_prints_the_board_without_a_terminal(team):
    team.ok("card", "add", "visible card")
    res = team.cli(json_out=False)
    assert res.code == 0 and "visible card" in res.out and "Ready" in res.out
