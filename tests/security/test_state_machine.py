"""Slipping past a decision or a budget through the state machine itself (issue
#11): a rejected gate bypassed through a handoff, an expired one likewise, a
budget overrun through writebacks while a gate is pending, and a spent budget
laundered through a reassign. Every agent step is a real ``loopx`` process."""

from __future__ import annotations

from tests.conftest import person, person_ok

from .conftest import agent_run


def status(board, key: str = "LX-1") -> dict:
    return board.ok("card", "show", key)["card"]


def test_a_rejected_gate_cannot_be_bypassed_through_a_handoff(team):
    team.ok("card", "add", "deploy", "--needs", "deploy:prod")
    assert agent_run(team, "a2", "claim", "LX-1")[0] == 6  # a permission gate: the card waits
    assert agent_run(team, "a2", "writeback", "LX-1", "--summary", "built the release")[0] == 0
    assert agent_run(team, "a2", "handoff", "LX-1", "--to", "a1", "--summary", "deploy it")[0] == 0
    assert person(team, "gate", "answer", "G-1", "reject", "--note", "no deploys today").code == 0
    for argv in (
        ["accept", "LX-1"],
        ["writeback", "LX-1", "--summary", "deployed"],
        ["done", "LX-1", "--summary", "shipped"],
        ["claim", "LX-1"],
    ):
        code, out = agent_run(team, "a1", *argv)
        assert code == 5, (argv, out)
        err = out["error"]
        assert err["code"] == "gate_blocked" and err["card"]["status"] == "blocked"
        assert "loopx card move LX-1 --to ready" in err["hint"]
    assert agent_run(team, "a1", "next", "--claim")[0] == 9
    c = status(team)
    assert c["status"] == "blocked" and c["evidence_count"] == 1 and c["lease"] is None
    kinds = [e["kind"] for e in team.ok("events", "--card", "LX-1")["events"]]
    assert "handoff_accepted" not in kinds and "done" not in kinds
    # Only a person puts it back; then the deploy needs a person's yes again.
    person_ok(team, "card", "move", "LX-1", "--to", "ready")
    assert agent_run(team, "a1", "claim", "LX-1")[0] == 6


def test_an_expired_gate_cannot_be_bypassed_through_a_handoff(team, clock):
    team.ok("card", "add", "deploy")
    assert agent_run(team, "a2", "claim", "LX-1")[0] == 0
    assert (
        agent_run(
            team, "a2", "gate", "ask", "LX-1", "--question", "deploy?", "--scope", "deploy:prod", "--deadline", "10m"
        )[0]
        == 6
    )
    assert agent_run(team, "a2", "handoff", "LX-1", "--to", "a1", "--summary", "yours")[0] == 0
    clock.advance(11 * 60)  # nobody answered: expiry is a rejection
    code, out = agent_run(team, "a1", "accept", "LX-1")
    assert code == 5 and out["error"]["code"] == "gate_blocked" and "expired" in out["error"]["message"]
    assert agent_run(team, "a1", "writeback", "LX-1", "--summary", "deployed")[0] == 5
    assert status(team)["status"] == "blocked"


def test_writebacks_while_a_gate_is_pending_cannot_overrun_the_budget(team):
    team.ok("card", "add", "one", "--max-turns", "2")
    assert agent_run(team, "a2", "claim", "LX-1")[0] == 0
    assert agent_run(team, "a2", "writeback", "LX-1", "--summary", "turn 1")[0] == 0
    assert agent_run(team, "a2", "gate", "ask", "LX-1", "--question", "push?", "--scope", "git:push")[0] == 6
    code, out = agent_run(team, "a2", "writeback", "LX-1", "--summary", "turn 2")
    assert code == 0 and out["card"]["status"] == "paused" and out["card"]["paused_reason"] == "budget"
    for n in (3, 4, 5):
        code, out = agent_run(team, "a2", "writeback", "LX-1", "--summary", f"turn {n}")
        assert code == 8 and out["error"]["card"]["quota"]["turns"] == {"used": 2, "limit": 2}
    person_ok(team, "gate", "answer", "G-1", "approve")
    c = status(team)
    assert c["status"] == "paused" and c["quota"]["turns"]["used"] == 2
    code, out = agent_run(team, "a2", "next")
    assert code == 8 and out["reason"] == "budget"
    assert agent_run(team, "a2", "writeback", "LX-1", "--summary", "after the approval")[0] == 8


def test_a_spent_budget_is_not_laundered_through_a_reassign(team):
    team.ok("card", "add", "one", "--max-turns", "1")
    assert agent_run(team, "a2", "claim", "LX-1")[0] == 0
    assert agent_run(team, "a2", "writeback", "LX-1", "--summary", "the last turn")[0] == 0
    person_ok(team, "card", "assign", "LX-1", "--to", "a1")
    code, out = agent_run(team, "a1", "accept", "LX-1")
    assert code == 0 and out["card"]["status"] == "paused"
    assert agent_run(team, "a1", "writeback", "LX-1", "--summary", "turn 2 of 1")[0] == 8
    person_ok(team, "card", "unassign", "LX-1")
    assert agent_run(team, "a2", "claim", "LX-1")[0] == 5
    assert status(team)["quota"]["turns"] == {"used": 1, "limit": 1}
