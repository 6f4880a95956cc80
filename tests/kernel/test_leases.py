"""Leases and zombies (DESIGN §4): an expired lease is reaped lazily by whoever
reads the card next, and the agent that lost it can no longer write."""

from __future__ import annotations

import pytest

from .conftest import card, events, held, kinds, refused, worked


@pytest.fixture
def expired(team, clock):
    """a1 claimed LX-1 for 2 minutes, wrote once, then went silent past its expiry."""
    team.ok("card", "add", "one")
    held(team, "LX-1", "a1", "--lease", "2m")
    worked(team, "LX-1", "a1", "started", "--todo-add", "x")  # renews: expires at T0 + 2m
    clock.advance(121)
    return team


def test_an_expired_lease_is_reaped_lazily_by_a_read(expired):
    before = kinds(expired, "LX-1")
    assert "lease_expired" not in before  # nothing happens until someone reads the card
    c = card(expired, "LX-1")
    assert c["status"] == "ready" and c["lease"] is None and c["owner"] is None
    ev = events(expired, "LX-1")[-1]
    assert ev["kind"] == "lease_expired" and ev["actor"] == "system"
    assert ev["data"] == {"holder": "a1", "token": 1}
    card(expired, "LX-1")
    assert kinds(expired, "LX-1").count("lease_expired") == 1  # reaped once


def test_a_lease_is_live_until_its_expiry(team, clock):
    team.ok("card", "add", "one")
    held(team, "LX-1", "a1", "--lease", "2m")
    clock.advance(119)
    assert card(team, "LX-1")["status"] == "active"
    refused(team, 5, "claim", "LX-1", agent="a2")
    assert team.cli("next", "--claim", agent="a2").code == 9


def test_the_zombie_cannot_write_while_the_new_claimant_works(expired):
    taken = expired.ok("next", "--claim", agent="a2")
    assert taken["card"]["id"] == "LX-1" and taken["lease"] == {**taken["lease"], "holder": "a2", "token": 2}
    for argv in (
        ["writeback", "LX-1", "--summary", "back from the dead"],
        ["heartbeat", "LX-1"],
        ["done", "LX-1", "--summary", "finished it"],
        ["release", "LX-1"],
        ["gate", "ask", "LX-1", "--question", "?"],
        ["monitor", "LX-1", "--every", "5m"],
        ["handoff", "LX-1", "--to", "a2", "--summary", "s"],
    ):
        err = refused(expired, 5, *argv, agent="a1")
        assert err["code"] == "not_holder" and "a2" in err["message"], (argv, err)
        assert err["card"]["lease"]["holder"] == "a2"  # the JSON says the current state
    # The new claimant is unaffected.
    assert worked(expired, "LX-1", "a2", "carrying on", "--todo-add", "y")["card"]["lease"]["holder"] == "a2"


def test_the_expired_agent_is_refused_even_before_anyone_reclaims(expired):
    n = len(events(expired))
    res = expired.cli("writeback", "LX-1", "--summary", "late", agent="a1")
    assert res.code == 5 and res.data["error"]["code"] == "not_holder"
    assert "claim it first" in res.data["error"]["hint"]
    c = card(expired, "LX-1")
    assert c["status"] == "ready" and c["evidence_count"] == 1
    assert kinds(expired)[n:] == ["lease_expired"]  # the refused write added nothing


def test_the_expired_agent_can_claim_again_with_a_new_token(expired):
    again = expired.ok("claim", "LX-1", agent="a1")
    assert again["lease"]["token"] == 2


def test_a_stale_lease_token_is_refused(team):
    team.ok("card", "add", "one")
    first = held(team, "LX-1", "a1")["lease"]["token"]
    team.ok("release", "LX-1", agent="a1")
    second = held(team, "LX-1", "a1")["lease"]["token"]
    assert second == first + 1
    for argv in (
        ["writeback", "LX-1", "--summary", "from the old turn"],
        ["heartbeat", "LX-1"],
        ["gate", "ask", "LX-1", "--question", "q"],
        ["release", "LX-1"],
        ["done", "LX-1", "--summary", "d"],
    ):
        err = refused(team, 5, *argv, "--lease-token", str(first), agent="a1")
        assert err["code"] == "stale_lease" and str(second) in err["message"], argv
    assert (
        team.ok("writeback", "LX-1", "--summary", "current", "--lease-token", str(second), agent="a1")["evidence"]["id"]
        == "E-1"
    )


def test_a_card_waiting_on_a_human_keeps_its_lease(team, clock):
    team.ok("card", "add", "one")
    held(team, "LX-1", "a1", "--lease", "1m")
    team.cli("gate", "ask", "LX-1", "--question", "?", agent="a1")
    clock.advance(86400)
    c = card(team, "LX-1")
    assert c["status"] == "waiting" and c["lease"]["holder"] == "a1"


def test_next_reaps_every_expired_lease_so_zombie_cards_are_claimable(team, clock):
    team.ok("agent", "add", "a3")
    for title in ("one", "two"):
        team.ok("card", "add", title)
    held(team, "LX-1", "a1", "--lease", "1m")
    held(team, "LX-2", "a2", "--lease", "1m")
    clock.advance(61)
    got = {team.ok("next", "--claim", agent="a3")["card"]["id"]}
    team.ok("agent", "add", "a4")
    got.add(team.ok("next", "--claim", agent="a4")["card"]["id"])
    assert got == {"LX-1", "LX-2"}
    assert kinds(team).count("lease_expired") == 2
