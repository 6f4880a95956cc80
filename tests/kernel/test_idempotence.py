"""Retries are safe: --turn-id on writeback, --op-id on any operator."""

from __future__ import annotations

import pytest

from .conftest import card, events, held, kinds, refused, worked


@pytest.fixture
def turn(team):
    team.ok("card", "add", "one")
    held(team, "LX-1", "a1")
    return team


def test_a_retried_turn_id_returns_the_first_evidence_and_adds_nothing(turn):
    first = worked(turn, "LX-1", "a1", "step one", "--turn-id", "t-1", "--tokens", "100", "--todo-add", "x")
    n = len(events(turn))
    again = worked(turn, "LX-1", "a1", "step one", "--turn-id", "t-1", "--tokens", "100", "--todo-add", "x")
    assert again["evidence"] == first["evidence"]
    assert len(events(turn)) == n
    c = card(turn, "LX-1")
    assert c["evidence_count"] == 1 and c["quota"]["tokens"]["used"] == 100 and len(c["todos"]) == 1


def test_a_turn_id_reused_for_a_different_payload_is_a_conflict(turn):
    worked(turn, "LX-1", "a1", "step one", "--turn-id", "t-1")
    err = refused(turn, 5, "writeback", "LX-1", "--summary", "something else", "--turn-id", "t-1", agent="a1")
    assert err["code"] == "turn_conflict" and err["evidence"]["summary"] == "step one"
    refused(turn, 5, "writeback", "LX-1", "--summary", "step one", "--turn-id", "t-1", "--tokens", "5", agent="a1")


def test_the_same_turn_id_from_an_input_document_and_flags_is_one_turn(turn):
    worked(turn, "LX-1", "a1", "same", "--turn-id", "t-9", "--next", "n")
    doc = '{"summary": "same", "turn_id": "t-9", "next": "n"}'
    again = turn.ok("writeback", "LX-1", "--input", "-", agent="a1", stdin=doc)
    assert again["evidence"]["id"] == "E-1"


def test_op_id_on_claim_replays_the_result_and_exit_code(team):
    team.ok("card", "add", "deploy", "--needs", "deploy:prod")
    first = team.cli("claim", "LX-1", "--op-id", "op-claim-1", agent="a2")
    assert first.code == 6
    n = len(events(team))
    again = team.cli("claim", "LX-1", "--op-id", "op-claim-1", agent="a2")
    assert again.code == 6 and again.data == first.data
    assert len(events(team)) == n
    op_events = [e for e in events(team) if e["op_id"] == "op-claim-1"]
    assert [e["kind"] for e in op_events] == ["claimed"]
    team.ok("card", "add", "other")
    err = refused(team, 5, "claim", "LX-2", "--op-id", "op-claim-1", agent="a2")
    assert err["code"] == "op_conflict"


def test_op_id_on_card_add_creates_one_card(team):
    first = team.ok("card", "add", "once", "--op-id", "add-1")
    again = team.ok("card", "add", "once", "--op-id", "add-1")
    assert again == first
    assert [c["id"] for c in team.ok("card", "list")["cards"]] == ["LX-1"]
    refused(team, 5, "card", "add", "twice", "--op-id", "add-1")
    refused(team, 5, "claim", "LX-1", "--op-id", "add-1", agent="a1")  # another operator


def test_op_id_on_gate_ask_replays_the_pending_answer(turn):
    turn.ok("card", "add", "two")
    held(turn, "LX-2", "a2")
    first = turn.cli(
        "gate", "ask", "LX-2", "--question", "push?", "--scope", "git:push", "--op-id", "ask-1", agent="a2"
    )
    assert first.code == 6
    again = turn.cli(
        "gate", "ask", "LX-2", "--question", "push?", "--scope", "git:push", "--op-id", "ask-1", agent="a2"
    )
    assert again.code == 6 and again.data == first.data
    assert len(turn.ok("gate", "list")["gates"]) == 1
    refused(turn, 5, "gate", "ask", "LX-2", "--question", "deploy?", "--op-id", "ask-1", agent="a2")
    ok = turn.cli("gate", "ask", "LX-1", "--question", "push?", "--scope", "git:push", "--op-id", "ask-2", agent="a1")
    assert ok.code == 0
    assert (
        turn.cli(
            "gate", "ask", "LX-1", "--question", "push?", "--scope", "git:push", "--op-id", "ask-2", agent="a1"
        ).code
        == 0
    )


def test_op_id_on_other_operators(turn):
    worked(turn, "LX-1", "a1", "w", "--op-id", "wb-1")
    worked(turn, "LX-1", "a1", "w", "--op-id", "wb-1")
    assert card(turn, "LX-1")["evidence_count"] == 1
    done = turn.ok("done", "LX-1", "--summary", "d", "--op-id", "done-1", agent="a1")
    assert turn.ok("done", "LX-1", "--summary", "d", "--op-id", "done-1", agent="a1") == done
    assert kinds(turn, "LX-1").count("done") == 1
    turn.ok("card", "add", "two")
    moved = turn.ok("card", "move", "LX-2", "--to", "backlog", "--op-id", "mv-1")
    assert turn.ok("card", "move", "LX-2", "--to", "backlog", "--op-id", "mv-1") == moved


def test_a_failed_operation_does_not_use_up_its_op_id(team):
    team.ok("card", "add", "one")
    held(team, "LX-1", "a1")
    refused(team, 5, "claim", "LX-1", "--op-id", "try-1", agent="a2")
    team.ok("release", "LX-1", agent="a1")
    assert team.ok("claim", "LX-1", "--op-id", "try-1", agent="a2")["lease"]["holder"] == "a2"


def test_a_malformed_op_id_is_invalid(team):
    refused(team, 3, "card", "add", "x", "--op-id", "has spaces")
    refused(team, 3, "card", "add", "x", "--op-id", "o" * 129)
