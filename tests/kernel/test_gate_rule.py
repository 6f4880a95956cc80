"""A gate that said no — rejected by a person, or expired (fail closed) — blocks
its card whatever status the card is in, and no agent operator puts work on
it again until a person moves it (DESIGN §4, §5 "gate answer")."""

from __future__ import annotations

import pytest

from tests.conftest import person, person_ok

from .conftest import card, held, kinds, refused, worked


def ask(board, agent, *extra, key="LX-1"):
    return board.cli("gate", "ask", key, "--question", "deploy to prod?", "--scope", "deploy:prod", *extra, agent=agent)


def blocked_refusal(board, *argv, agent):
    """An agent verb on a gate-blocked card: exit 5, the card's state, the person's command."""
    err = refused(board, 5, *argv, agent=agent)
    assert err["code"] == "gate_blocked", err
    assert err["card"]["status"] == "blocked" and err["card"]["lease"] is None
    assert "loopx card move LX-1 --to ready" in err["hint"]
    return err


@pytest.fixture
def handed(team):
    """a2 asks a deploy gate on LX-1, then hands the card to a1 while it is pending."""
    team.ok("card", "add", "deploy", "--max-turns", "10")
    held(team, "LX-1", "a2")
    worked(team, "LX-1", "a2", "built the release")
    assert ask(team, "a2").code == 6
    team.ok("handoff", "LX-1", "--to", "a1", "--summary", "over to you", agent="a2")
    assert card(team, "LX-1")["status"] == "handoff"
    return team


def test_a_rejection_during_a_handoff_blocks_the_card_and_voids_the_packet(handed):
    res = person(handed, "gate", "answer", "G-1", "reject", "--note", "not today")
    assert res.code == 0
    c = res.data["card"]
    assert c["status"] == "blocked" and c["lease"] is None and c["handoff_to"] is None
    assert c["blocked_reason"] == "gate G-1 rejected: not today"
    assert kinds(handed, "LX-1")[-2:] == ["gate_answered", "handoff_void"]
    # The receiver cannot take it, nor work on it, nor finish it.
    err = blocked_refusal(handed, "accept", "LX-1", agent="a1")
    assert "G-1 rejected" in err["message"]
    blocked_refusal(handed, "writeback", "LX-1", "--summary", "deployed anyway", agent="a1")
    blocked_refusal(handed, "done", "LX-1", "--summary", "shipped", agent="a1")
    blocked_refusal(handed, "claim", "LX-1", agent="a1")
    assert handed.cli("next", "--claim", agent="a1").code == 9
    assert handed.cli("next", "--claim", agent="a2").code == 9


def test_an_expiry_during_a_handoff_blocks_the_card_too(handed, clock):
    handed.ok("card", "add", "other")
    # a fresh handoff with a deadline: LX-2 held by a2, gate with 10 minutes, handed to a1
    held(handed, "LX-2", "a2")
    assert ask(handed, "a2", "--deadline", "10m", key="LX-2").code == 6
    handed.ok("handoff", "LX-2", "--to", "a1", "--summary", "yours", agent="a2")
    clock.advance(11 * 60)
    err = refused(handed, 5, "accept", "LX-2", agent="a1")
    assert err["code"] == "gate_blocked" and "expired unanswered" in err["message"]
    assert "loopx card move LX-2 --to ready" in err["hint"]
    c = card(handed, "LX-2")
    assert c["status"] == "blocked" and c["blocked_reason"] == "gate G-2 expired unanswered"
    assert "gate_expired" in kinds(handed, "LX-2") and "handoff_void" in kinds(handed, "LX-2")


def test_every_agent_verb_is_refused_on_a_card_a_rejection_blocked(team):
    team.ok("card", "add", "deploy")
    held(team, "LX-1", "a2")
    worked(team, "LX-1", "a2", "ready to deploy")
    ask(team, "a2")
    person_ok(team, "gate", "answer", "G-1", "reject")
    for who in ("a2", "a1"):
        blocked_refusal(team, "writeback", "LX-1", "--summary", "s", agent=who)
        blocked_refusal(team, "done", "LX-1", "--summary", "s", agent=who)
        blocked_refusal(team, "gate", "ask", "LX-1", "--question", "again?", agent=who)
        blocked_refusal(team, "heartbeat", "LX-1", agent=who)
        blocked_refusal(team, "monitor", "LX-1", "--every", "5m", agent=who)
        blocked_refusal(team, "release", "LX-1", agent=who)
        blocked_refusal(team, "handoff", "LX-1", "--to", "a1" if who == "a2" else "a2", "--summary", "s", agent=who)
        blocked_refusal(team, "accept", "LX-1", agent=who)
        blocked_refusal(team, "claim", "LX-1", agent=who)


def test_a_rejection_blocks_a_paused_card_and_a_budget_raise_does_not_unblock_it(team):
    team.ok("card", "add", "deploy", "--max-turns", "1")
    held(team, "LX-1", "a2")
    ask(team, "a2")
    assert worked(team, "LX-1", "a2", "the turn that spends the budget")["card"]["status"] == "paused"
    c = person_ok(team, "gate", "answer", "G-1", "reject")["card"]
    assert c["status"] == "blocked" and c["paused_reason"] is None and c["lease"] is None
    c = person_ok(team, "card", "budget", "LX-1", "--add-turns", "5")["card"]
    assert c["status"] == "blocked"
    blocked_refusal(team, "claim", "LX-1", agent="a2")


def test_rejecting_one_gate_withdraws_the_others(team):
    team.ok("card", "add", "deploy")
    held(team, "LX-1", "a2")
    ask(team, "a2")
    assert team.cli("gate", "ask", "LX-1", "--question", "which region?", agent="a2").code == 6
    person_ok(team, "gate", "answer", "G-2", "reject")
    st = team.cli("gate", "status", "G-1")
    assert st.code == 7 and st.data["gate"]["status"] == "withdrawn"
    err = refused(team, 5, "gate", "answer", "G-1", "approve", as_person=True)
    assert err["code"] == "already_answered"


def test_a_person_moving_the_card_puts_it_back_in_play(handed):
    person_ok(handed, "gate", "answer", "G-1", "reject")
    moved = person_ok(handed, "card", "move", "LX-1", "--to", "ready")["card"]
    assert moved["status"] == "ready" and moved["blocked_reason"] is None
    assert handed.ok("claim", "LX-1", agent="a1")["action"] == "work"
    again = ask(handed, "a1")  # the rejection granted nothing: a person decides again
    assert again.code == 6 and again.data["gate"]["id"] == "G-2"


def test_an_approval_during_a_handoff_leaves_the_offer_standing(handed):
    c = person_ok(handed, "gate", "answer", "G-1", "approve")["card"]
    assert c["status"] == "handoff" and c["handoff_to"] == "a1"
    c = handed.ok("accept", "LX-1", agent="a1")["card"]
    assert c["status"] == "active" and c["lease"]["holder"] == "a1"
