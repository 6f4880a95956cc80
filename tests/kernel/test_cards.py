"""A person's card operators: add, list, show, move, assign, unassign, budget."""

from __future__ import annotations

import pytest

from ..conftest import NO_KEY
from .conftest import card, held, kinds, refused, worked

CARD_KEYS = {
    "id",
    "title",
    "status",
    "owner",
    "needs",
    "priority",
    "next",
    "todos",
    "quota",
    "lease",
    "version",
    "paused_reason",
}


def test_card_add_prints_the_new_ready_card_in_the_documented_shape(team):
    c = team.ok(
        "card",
        "add",
        "write the parser",
        "--body",
        "all of it",
        "--needs",
        "git:push",
        "--needs",
        "git:push",
        "--priority",
        "1",
        "--next",
        "read the spec",
        "--max-turns",
        "5",
        "--max-tokens",
        "1000",
        "--max-usd",
        "2.5",
    )["card"]
    assert CARD_KEYS <= set(c)
    assert c["id"] == "LX-1" and c["status"] == "ready" and c["title"] == "write the parser"
    assert c["needs"] == ["git:push"] and c["priority"] == 1 and c["next"] == "read the spec"
    assert c["lease"] is None and c["owner"] is None and c["todos"] == [] and c["paused_reason"] is None
    assert c["quota"] == {
        "turns": {"used": 0, "limit": 5},
        "tokens": {"used": 0, "limit": 1000},
        "usd": {"used": 0.0, "limit": 2.5},
    }
    assert team.ok("card", "show", "LX-1")["card"] == c
    assert team.ok("card", "show", "lx-1")["card"]["id"] == "LX-1"
    assert kinds(team)[-1] == "card_added"


def test_card_add_after_an_open_card_is_blocked_and_backlog_parks(team):
    team.ok("card", "add", "first")
    blocked = team.ok("card", "add", "second", "--after", "LX-1")["card"]
    assert blocked["status"] == "blocked" and blocked["after"] == ["LX-1"]
    assert "LX-1" in blocked["blocked_reason"]
    assert team.ok("card", "add", "later", "--backlog")["card"]["status"] == "backlog"
    # Nobody can claim the blocked or the parked card.
    refused(team, 5, "claim", "LX-2", agent="a1")
    refused(team, 5, "claim", "LX-3", agent="a1")


def test_card_add_after_a_done_card_is_ready(team):
    team.ok("card", "add", "first")
    held(team, "LX-1", "a1")
    worked(team, "LX-1", "a1")
    team.ok("done", "LX-1", "--summary", "finished", agent="a1")
    assert team.ok("card", "add", "second", "--after", "LX-1")["card"]["status"] == "ready"


def test_finishing_a_dependency_unblocks_the_card_waiting_on_it(team):
    team.ok("card", "add", "first")
    team.ok("card", "add", "other")
    team.ok("card", "add", "second", "--after", "LX-1", "--after", "LX-2")
    for key in ("LX-1", "LX-2"):
        held(team, key, "a1")
        worked(team, key, "a1")
        team.ok("done", key, "--summary", "ok", agent="a1")
        status = card(team, "LX-3")["status"]
        assert status == ("blocked" if key == "LX-1" else "ready")
    assert kinds(team, "LX-3")[-1] == "unblocked"


def test_card_add_with_an_unknown_after_or_owner_is_not_found(team):
    team.ok("card", "add", "first")
    err = refused(team, 4, "card", "add", "x", "--after", "LX-99")
    assert "LX-99" in err["message"] and "loopx card" in err["hint"]
    err = refused(team, 4, "card", "add", "x", "--owner", "ghost")
    assert "loopx agent add ghost" in err["hint"]


@pytest.mark.parametrize(
    "argv",
    [
        ["card", "add", ""],
        ["card", "add", "   "],
        ["card", "add", "two\nlines"],
        ["card", "add", "x" * 201],
        ["card", "add", "x", "--priority", "5"],
        ["card", "add", "x", "--priority", "-1"],
        ["card", "add", "x", "--max-turns", "0"],
        ["card", "add", "x", "--max-usd", "nan"],
        ["card", "add", "x", "--max-usd", "-1"],
        ["card", "add", "x", "--needs", "NOT A SCOPE"],
        ["card", "add", "x", "--after", "G-1"],
        ["card", "add", "x", "--owner", "no spaces"],
    ],
)
def test_card_add_refuses_invalid_input(team, argv):
    refused(team, 3, *argv)


def test_card_add_flag_errors_are_usage(team):
    refused(team, 2, "card", "add", "x", "--priority", "high")
    refused(team, 2, "card", "add")
    refused(team, 2, "card", "add", "x", "--bogus")


def test_card_list_filters_by_status_and_owner(team):
    team.ok("card", "add", "one")
    team.ok("card", "add", "two", "--owner", "a2")
    team.ok("card", "add", "three", "--backlog")
    held(team, "LX-1", "a1")
    assert [c["id"] for c in team.ok("card", "list")["cards"]] == ["LX-1", "LX-2", "LX-3"]
    assert [c["id"] for c in team.ok("card", "list", "--status", "ready")["cards"]] == ["LX-2"]
    assert [c["id"] for c in team.ok("card", "list", "--owner", "a1")["cards"]] == ["LX-1"]
    assert [c["id"] for c in team.ok("card", "list", "--owner", "a2")["cards"]] == ["LX-2"]
    assert team.ok("card", "list", "--status", "done")["cards"] == []


def test_card_show_unknown_or_malformed(team):
    err = refused(team, 4, "card", "show", "LX-7")
    assert "loopx card add" in err["hint"]
    refused(team, 3, "card", "show", "G-7")
    refused(team, 3, "card", "show", "seven")


# -- move ---------------------------------------------------------------------


def test_legal_moves_by_a_person(team):
    team.ok("card", "add", "one")
    assert team.ok("card", "move", "LX-1", "--to", "backlog")["card"]["status"] == "backlog"
    assert team.ok("card", "move", "LX-1", "--to", "ready")["card"]["status"] == "ready"
    held(team, "LX-1", "a1")
    taken = team.ok("card", "move", "LX-1", "--to", "ready")["card"]
    assert taken["status"] == "ready" and taken["lease"] is None
    refused(team, 5, "writeback", "LX-1", "--summary", "late", agent="a1")  # its lease was revoked
    assert team.ok("card", "move", "LX-1", "--to", "cancelled")["card"]["status"] == "cancelled"
    assert kinds(team, "LX-1").count("card_moved") == 4


@pytest.mark.parametrize(
    "setup,to,why",
    [
        ("ready", "ready", "already"),
        ("done", "ready", "done"),
        ("done", "cancelled", "done"),
        ("active", "backlog", "working on it"),
        ("waiting", "ready", "waiting"),
        ("handoff", "backlog", "handoff"),
        ("blocked", "ready", "waiting on LX-1"),
    ],
)
def test_illegal_moves_are_conflicts(team, setup, to, why):
    team.ok("card", "add", "dep")  # LX-1
    team.ok("card", "add", "subject", *(["--after", "LX-1"] if setup == "blocked" else []))  # LX-2
    if setup in ("done", "active", "waiting", "handoff"):
        held(team, "LX-2", "a2")
    if setup == "done":
        worked(team, "LX-2", "a2")
        team.ok("done", "LX-2", "--summary", "ok", agent="a2")
    if setup == "waiting":
        assert team.cli("gate", "ask", "LX-2", "--question", "may I?", agent="a2").code == 6
    if setup == "handoff":
        team.ok("handoff", "LX-2", "--to", "a1", "--summary", "yours", agent="a2")
    assert card(team, "LX-2")["status"] == setup
    err = refused(team, 5, "card", "move", "LX-2", "--to", to)
    assert err["code"] == "illegal_move" and why in err["message"]
    assert err["card"]["status"] == setup  # the JSON says the current state


def test_move_is_a_persons_operator(team):
    team.ok("card", "add", "one")
    refused(team, 10, "card", "move", "LX-1", "--to", "backlog", agent="a1")
    refused(team, 2, "card", "move", "LX-1", "--to", "done")
    refused(team, 4, "card", "move", "LX-5", "--to", "ready")


# -- assign / unassign --------------------------------------------------------


def test_assign_a_free_card_reserves_it_for_that_agent(team):
    team.ok("card", "add", "one")
    c = team.ok("card", "assign", "LX-1", "--to", "a2")["card"]
    assert c["assignee"] == "a2" and c["owner"] == "a2" and c["status"] == "ready"
    err = refused(team, 10, "claim", "LX-1", agent="a1")
    assert "a2" in err["message"]
    assert team.cli("next", "--claim", agent="a1").code == 9
    assert team.ok("next", "--claim", agent="a2")["card"]["id"] == "LX-1"


def test_reassigning_a_held_card_builds_a_handoff_and_fences_the_old_holder(team):
    team.ok("card", "add", "one")
    held(team, "LX-1", "a1")
    worked(team, "LX-1", "a1", "half done", "--todo-add", "finish", "--next", "the other half")
    c = team.ok("card", "assign", "LX-1", "--to", "a2")["card"]
    assert c["status"] == "handoff" and c["handoff_to"] == "a2" and c["lease"] is None
    err = refused(team, 5, "writeback", "LX-1", "--summary", "still mine?", agent="a1")
    assert err["code"] == "not_holder"
    refused(team, 5, "heartbeat", "LX-1", agent="a1")
    refused(team, 5, "done", "LX-1", "--summary", "x", agent="a1")
    nxt = team.cli("next", agent="a2")
    assert nxt.code == 0 and nxt.data["action"] == "accept"
    packet = nxt.data["handoff"]["packet"]
    assert packet["from"] == "a1" and packet["to"] == "a2" and packet["next"] == "the other half"
    assert packet["pending"] == ["finish"] and "half done" in packet["summary"]
    ev = [e for e in team.ok("events")["events"] if e["kind"] == "handoff_created"][-1]
    assert ev["actor"] == "human:tester" and ev["data"]["revoked"] == "a1"
    accepted = team.ok("accept", "LX-1", "--digest", nxt.data["handoff"]["digest"], agent="a2")["card"]
    assert accepted["status"] == "active" and accepted["lease"]["holder"] == "a2" and accepted["lease"]["token"] == 2


def test_assign_refusals(team):
    team.ok("card", "add", "one")
    refused(team, 10, "card", "assign", "LX-1", "--to", "a2", agent="a1")
    refused(team, 4, "card", "assign", "LX-1", "--to", "ghost")
    refused(team, 4, "card", "assign", "LX-3", "--to", "a1")
    team.ok("card", "assign", "LX-1", "--to", "a1")
    refused(team, 5, "card", "assign", "LX-1", "--to", "a1")  # no change
    held(team, "LX-1", "a1")
    refused(team, 5, "card", "assign", "LX-1", "--to", "a1")


def test_unassign_takes_the_card_back(team):
    team.ok("card", "add", "one", "--owner", "a1")
    held(team, "LX-1", "a1")
    assert team.cli("gate", "ask", "LX-1", "--question", "ok?", agent="a1").code == 6
    c = team.ok("card", "unassign", "LX-1")["card"]
    assert c["status"] == "ready" and c["assignee"] is None and c["lease"] is None
    gate = team.cli("gate", "status", "G-1")
    assert gate.code == 7 and gate.data["gate"]["status"] == "withdrawn"  # nobody is left to act on it
    refused(team, 5, "writeback", "LX-1", "--summary", "zombie", agent="a1")
    refused(team, 5, "card", "unassign", "LX-1")  # already unassigned
    refused(team, 10, "card", "unassign", "LX-1", agent="a2")
    assert team.ok("claim", "LX-1", agent="a2")["action"] == "work"


# -- budget -------------------------------------------------------------------


def test_budget_is_for_a_person_with_their_key(team):
    team.ok("card", "add", "one", "--max-turns", "1")
    err = refused(team, 10, "card", "budget", "LX-1", "--add-turns", "2", agent="a1", tty=True)
    assert "agent" in err["message"]
    err = refused(team, 10, "card", "budget", "LX-1", "--add-turns", "2", tty=True, env=NO_KEY)
    assert "key" in err["message"] and "loopx key init" in err["hint"]
    refused(team, 3, "card", "budget", "LX-1", tty=True)  # nothing to add
    refused(team, 3, "card", "budget", "LX-1", "--add-turns", "0", tty=True)
    refused(team, 4, "card", "budget", "LX-4", "--add-turns", "1", tty=True)


def test_a_spent_budget_pauses_the_card_and_a_person_resumes_it(team):
    team.ok("card", "add", "one", "--max-turns", "2", "--max-usd", "1")
    held(team, "LX-1", "a1")
    worked(team, "LX-1", "a1", "step 1", "--usd", "0.25", "--todo-add", "a")
    out = worked(team, "LX-1", "a1", "step 2", "--usd", "0.25", "--todo-add", "b")
    c = out["card"]
    assert c["status"] == "paused" and c["paused_reason"] == "budget"
    assert c["quota"]["turns"] == {"used": 2, "limit": 2}
    assert c["lease"]["holder"] == "a1"  # still its card, but it must stop
    nxt = team.cli("next", agent="a1")
    assert nxt.code == 8 and nxt.data["action"] == "paused" and nxt.data["reason"] == "budget"
    err = refused(team, 8, "writeback", "LX-1", "--summary", "one more", agent="a1")
    assert "loopx card budget" in err["hint"]
    refused(team, 5, "card", "move", "LX-1", "--to", "ready")  # still over budget
    resumed = team.ok("card", "budget", "LX-1", "--add-turns", "3", tty=True)["card"]
    assert resumed["status"] == "active" and resumed["paused_reason"] is None
    assert resumed["quota"]["turns"]["limit"] == 5 and resumed["lease"]["holder"] == "a1"
    assert team.ok("next", agent="a1")["action"] == "work"
    ev = [e for e in team.ok("events")["events"] if e["kind"] == "budget_raised"][-1]
    assert ev["actor"] == "human:tester" and ev["data"]["resumed"] == "active"


def test_budget_raise_on_a_card_that_is_not_paused_only_raises(team):
    team.ok("card", "add", "one")
    c = team.ok("card", "budget", "LX-1", "--add-tokens", "500", "--add-usd", "1.5", tty=True)["card"]
    assert c["status"] == "ready"
    assert c["quota"]["tokens"]["limit"] == 500 and c["quota"]["usd"]["limit"] == 1.5
