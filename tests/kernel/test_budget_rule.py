"""A card never runs past its budget: the turn that crosses a limit is the last
one charged, whatever status the card is in and whichever operator would put
it back to work; the agent's token window likewise (DESIGN §4 "The budget rule", §5 "Quota")."""

from __future__ import annotations

from tests.conftest import person, person_ok

from .conftest import card, held, kinds, refused, worked


def ask(board, agent, key="LX-1", scope="deploy:prod"):
    return board.cli("gate", "ask", key, "--question", "may I?", "--scope", scope, agent=agent)


def turns(c: dict) -> tuple:
    return c["quota"]["turns"]["used"], c["quota"]["turns"]["limit"]


def paused_refusal(board, *argv, agent):
    err = refused(board, 8, *argv, agent=agent)
    assert err["card"]["status"] == "paused" and err["card"]["paused_reason"] == "budget"
    assert "loopx card budget LX-1" in err["hint"]
    return err


def test_a_writeback_on_a_waiting_card_pauses_it_at_the_limit(team):
    """The issue's sequence: --max-turns 2, one writeback, gate ask, then more writebacks."""
    team.ok("card", "add", "one", "--max-turns", "2")
    held(team, "LX-1", "a2")
    worked(team, "LX-1", "a2", "turn 1")
    assert ask(team, "a2").code == 6
    out = worked(team, "LX-1", "a2", "turn 2, while the person decides")
    c = out["card"]
    assert c["status"] == "paused" and c["paused_reason"] == "budget" and turns(c) == (2, 2)
    assert c["pending_gate"] == "G-1" and c["lease"]["holder"] == "a2"  # the question still stands
    paused_refusal(team, "writeback", "LX-1", "--summary", "turn 3", agent="a2")
    paused_refusal(team, "done", "LX-1", "--summary", "finished", agent="a2")
    nxt = team.cli("next", agent="a2")
    assert nxt.code == 8 and nxt.data["action"] == "paused" and nxt.data["reason"] == "budget"


def test_approving_the_gate_of_an_exhausted_card_does_not_resume_it(team):
    team.ok("card", "add", "one", "--max-turns", "1")
    held(team, "LX-1", "a2")
    ask(team, "a2")
    worked(team, "LX-1", "a2", "the last turn")
    c = person_ok(team, "gate", "answer", "G-1", "approve")["card"]
    assert c["status"] == "paused" and c["paused_reason"] == "budget" and c["pending_gate"] is None
    paused_refusal(team, "writeback", "LX-1", "--summary", "one more", agent="a2")
    assert team.cli("next", agent="a2").data["reason"] == "budget"


def test_raising_the_budget_resumes_to_waiting_while_a_gate_is_pending(team):
    team.ok("card", "add", "one", "--max-turns", "1")
    held(team, "LX-1", "a2")
    ask(team, "a2")
    worked(team, "LX-1", "a2", "the last turn")
    c = person_ok(team, "card", "budget", "LX-1", "--add-turns", "2")["card"]
    assert c["status"] == "waiting" and c["lease"]["holder"] == "a2" and c["lease"]["expires_at"] is None
    assert [e for e in team.ok("events")["events"] if e["kind"] == "budget_raised"][-1]["data"]["resumed"] == "waiting"
    assert team.cli("next", agent="a2").data["action"] == "wait"
    c = person_ok(team, "gate", "answer", "G-1", "approve")["card"]
    assert c["status"] == "active"


def test_raising_the_budget_resumes_to_active_for_its_holder(team, clock):
    team.ok("card", "add", "one", "--max-turns", "1")
    held(team, "LX-1", "a2")
    assert worked(team, "LX-1", "a2", "the last turn")["card"]["status"] == "paused"
    clock.advance(3600)
    c = person_ok(team, "card", "budget", "LX-1", "--add-turns", "1")["card"]
    assert c["status"] == "active" and c["lease"]["expires_at"] == "2027-01-15T09:30:00Z"


def test_a_reassigned_exhausted_card_is_accepted_paused(team):
    team.ok("card", "add", "one", "--max-turns", "1")
    held(team, "LX-1", "a2")
    worked(team, "LX-1", "a2", "the last turn")
    assert person_ok(team, "card", "assign", "LX-1", "--to", "a1")["card"]["status"] == "handoff"
    out = team.ok("accept", "LX-1", agent="a1")
    c = out["card"]
    assert c["status"] == "paused" and c["paused_reason"] == "budget" and c["lease"]["holder"] == "a1"
    assert turns(c) == (1, 1)
    nxt = team.cli("next", agent="a1")
    assert nxt.code == 8 and nxt.data["action"] == "paused" and nxt.data["card"]["id"] == "LX-1"
    paused_refusal(team, "writeback", "LX-1", "--summary", "turn 2 of 1", agent="a1")


def test_an_unassigned_exhausted_card_goes_back_to_the_pool_paused(team):
    team.ok("card", "add", "one", "--max-turns", "1")
    held(team, "LX-1", "a2")
    worked(team, "LX-1", "a2", "the last turn")
    c = person_ok(team, "card", "unassign", "LX-1")["card"]
    assert c["status"] == "paused" and c["lease"] is None and c["paused_reason"] == "budget"
    err = refused(team, 5, "claim", "LX-1", agent="a1")
    assert "loopx card budget LX-1" in err["hint"]
    assert team.cli("next", "--claim", agent="a1").code == 9
    c = person_ok(team, "card", "budget", "LX-1", "--add-turns", "1")["card"]
    assert c["status"] == "ready"
    assert team.ok("claim", "LX-1", agent="a1")["action"] == "work"


def test_a_person_cannot_move_an_exhausted_card_to_ready_from_any_status(team):
    team.ok("card", "add", "one", "--max-turns", "1")
    held(team, "LX-1", "a2")
    ask(team, "a2")
    worked(team, "LX-1", "a2", "the last turn")
    person_ok(team, "gate", "answer", "G-1", "reject")
    assert card(team, "LX-1")["status"] == "blocked"
    err = refused(team, 5, "card", "move", "LX-1", "--to", "ready", as_person=True)
    assert "budget is spent" in err["message"] and "loopx card budget LX-1" in err["hint"]
    person_ok(team, "card", "move", "LX-1", "--to", "backlog")
    refused(team, 5, "card", "move", "LX-1", "--to", "ready", as_person=True)
    person_ok(team, "card", "budget", "LX-1", "--add-turns", "1")
    assert person_ok(team, "card", "move", "LX-1", "--to", "ready")["card"]["status"] == "ready"


def test_a_hook_charge_that_crosses_a_limit_pauses_a_waiting_or_released_card(team):
    from loopx_core.ops.charge import charge_usage

    team.ok("card", "add", "waits", "--max-tokens", "1000")
    team.ok("card", "add", "released", "--max-tokens", "1000")
    held(team, "LX-1", "a2")
    ask(team, "a2")
    held(team, "LX-2", "a1")
    worked(team, "LX-2", "a1", "a step")
    team.ok("release", "LX-2", agent="a1")
    store = team.store()
    try:
        _, c, _ = charge_usage(store, 1, "a2", "t-1", 900, 200, 0.0, {}, "measured")
        assert c.status == "paused" and c.paused_reason == "budget"
        _, c, _ = charge_usage(store, 2, "a1", "t-2", 900, 200, 0.0, {}, "measured")
        assert c.status == "paused" and c.lease is None
    finally:
        store.close()
    assert team.cli("next", "--claim", agent="a1").code == 9  # the released card is not claimable


def test_a_writeback_crossing_the_token_limit_while_waiting_pauses(team):
    team.ok("card", "add", "one", "--max-tokens", "1000")
    held(team, "LX-1", "a2")
    ask(team, "a2")
    c = worked(team, "LX-1", "a2", "big turn", "--tokens", "1500")["card"]
    assert c["status"] == "paused" and c["quota"]["tokens"] == {"used": 1500, "limit": 1000}
    assert kinds(team, "LX-1")[-1] == "paused"


# -- the agent's token window -----------------------------------------------------------


def spent_window(team, clock):
    team.ok("agent", "add", "w", "--tokens", "1000", "--window", "1h")
    team.ok("card", "add", "one")
    team.ok("card", "add", "two")
    held(team, "LX-1", "w")
    worked(team, "LX-1", "w", "the turn that spends the window", "--tokens", "1200", "--todo-add", "x")


def test_a_spent_token_window_refuses_claim_accept_and_writeback(team, clock):
    spent_window(team, clock)
    for argv in (["claim", "LX-2"], ["writeback", "LX-1", "--summary", "one more"]):
        err = refused(team, 8, *argv, agent="w")
        assert err["code"] == "token_window" and err["wake_at"] == "2027-01-15T09:00:00Z"
    held(team, "LX-2", "a2")
    team.ok("handoff", "LX-2", "--to", "w", "--summary", "yours", agent="a2")
    err = refused(team, 8, "accept", "LX-2", agent="w")
    assert err["code"] == "token_window"
    clock.advance(3601)  # the window reopens
    assert team.ok("accept", "LX-2", agent="w")["card"]["status"] == "active"
    worked(team, "LX-2", "w", "fresh window")


def test_a_retried_writeback_is_still_answered_when_the_window_is_spent(team, clock):
    team.ok("agent", "add", "w", "--tokens", "1000", "--window", "1h")
    team.ok("card", "add", "one")
    held(team, "LX-1", "w")
    first = worked(team, "LX-1", "w", "big", "--tokens", "1200", "--turn-id", "t1")
    again = worked(team, "LX-1", "w", "big", "--tokens", "1200", "--turn-id", "t1")
    assert again["evidence"]["id"] == first["evidence"]["id"]


def test_person_helper_is_a_terminal_without_an_agent(team):
    """The helper every human action in these tests goes through."""
    team.ok("card", "add", "one", "--max-turns", "1")
    assert person(team, "card", "budget", "LX-1", "--add-turns", "1").code == 0
    assert person(team, "card", "budget", "LX-1", "--add-turns", "1", agent="a1").code == 10
