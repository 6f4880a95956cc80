"""Rolling quota windows (DESIGN §4 "Windows"): a person gives a card or
an agent so much per so long; a spent card window pauses the card with the
refill time, `next` says when, and the card resumes by itself once the clock
passes it — no person needed. One rule for both (quota.window_state)."""

from __future__ import annotations

from tests.conftest import person, person_ok

from .conftest import card, held, kinds, refused, worked

HOUR = "2027-01-15T09:00:00Z"  # T0 + 1h


def test_a_spent_card_window_pauses_it_until_the_refill_and_it_resumes_by_itself(team, clock):
    team.ok("card", "add", "one")
    c = person_ok(team, "card", "window", "LX-1", "--every", "1h", "--turns", "2")["card"]
    assert c["window"] == {"seconds": 3600.0, "tokens": None, "usd": None, "turns": 2}
    held(team, "LX-1", "a1")
    worked(team, "LX-1", "a1", "turn 1", "--next", "step 2")
    clock.advance(600)
    c = worked(team, "LX-1", "a1", "turn 2", "--next", "step 3")["card"]
    assert c["status"] == "paused" and c["paused_reason"] == "window" and c["wake_at"] == HOUR
    assert c["lease"]["holder"] == "a1"  # the holder keeps it while it sleeps
    nxt = team.cli("next", agent="a1")
    assert nxt.code == 8 and nxt.data["action"] == "paused" and nxt.data["wake_at"] == HOUR
    err = refused(team, 8, "writeback", "LX-1", "--summary", "turn 3", agent="a1")
    assert "resumes by itself" in err["hint"]
    clock.advance(3000 - 1)  # one second before the refill: still asleep
    assert team.cli("next", agent="a1").data["action"] == "paused"
    clock.advance(1)
    nxt = team.ok("next", agent="a1")
    assert nxt["action"] == "work" and nxt["card"]["status"] == "active" and nxt["card"]["wake_at"] is None
    resumed = [e for e in team.ok("events", "--card", "LX-1")["events"] if e["kind"] == "resumed"]
    assert [(e["actor"], e["data"]["reason"], e["data"]["status"]) for e in resumed] == [("system", "window", "active")]
    # Only one turn of the window aged out: the next turn spends it again until turn 2 ages out.
    c = worked(team, "LX-1", "a1", "turn 3", "--next", "step 4")["card"]
    assert c["status"] == "paused" and c["wake_at"] == "2027-01-15T09:10:00Z"


def test_a_card_window_counts_tokens_and_dollars_the_hook_measured_too(team, clock):
    team.ok("card", "add", "one")
    person_ok(team, "card", "window", "LX-1", "--every", "1h", "--tokens", "1000", "--usd", "5")
    held(team, "LX-1", "a1")
    worked(team, "LX-1", "a1", "cheap", "--tokens", "400", "--usd", "1")
    assert card(team, "LX-1")["status"] == "active"
    c = worked(team, "LX-1", "a1", "dear", "--usd", "4", "--todo-add", "x")["card"]
    assert c["status"] == "paused" and c["paused_reason"] == "window" and c["wake_at"] == HOUR


def test_a_sleeping_card_taken_back_by_a_person_is_claimable_once_the_window_refills(team, clock):
    team.ok("card", "add", "one")
    person_ok(team, "card", "window", "LX-1", "--every", "1h", "--turns", "1")
    held(team, "LX-1", "a1")
    worked(team, "LX-1", "a1", "the turn")
    c = person_ok(team, "card", "unassign", "LX-1")["card"]
    assert c["status"] == "paused" and c["paused_reason"] == "window" and c["lease"] is None
    assert team.cli("next", "--claim", agent="a2").code == 9  # nobody takes a sleeping card
    clock.advance(3600)
    assert team.cli("card", "list").code == 0 and card(team, "LX-1")["status"] == "ready"  # a read resumes it
    assert team.ok("next", "--claim", agent="a2")["card"]["id"] == "LX-1"


def test_raising_the_budget_does_not_wake_a_card_whose_window_is_spent(team, clock):
    team.ok("card", "add", "one", "--max-turns", "1")
    person_ok(team, "card", "window", "LX-1", "--every", "1h", "--turns", "1")
    held(team, "LX-1", "a1")
    assert worked(team, "LX-1", "a1", "the turn")["card"]["paused_reason"] == "budget"
    c = person_ok(team, "card", "budget", "LX-1", "--add-turns", "5")["card"]
    assert c["status"] == "paused" and c["paused_reason"] == "window" and c["wake_at"] == HOUR
    c = person_ok(team, "card", "window", "LX-1", "--every", "1h", "--turns", "3")["card"]
    assert c["status"] == "active" and c["wake_at"] is None  # a wider window has room now


def test_a_window_given_to_a_card_already_over_it_pauses_it_at_once(team, clock):
    team.ok("card", "add", "one")
    held(team, "LX-1", "a1")
    worked(team, "LX-1", "a1", "one", "--tokens", "900")
    c = person_ok(team, "card", "window", "LX-1", "--every", "1h", "--tokens", "500")["card"]
    assert c["status"] == "paused" and c["paused_reason"] == "window" and c["wake_at"] == HOUR
    c = person_ok(team, "card", "window", "LX-1", "--clear")["card"]
    assert c["window"] is None and c["status"] == "active"


def test_an_agent_window_in_dollars_and_turns(team, clock):
    team.ok("agent", "add", "w", "--usd", "2", "--turns", "5", "--window", "1h")
    assert team.ok("agent", "show", "w")["agent"]["window"] == {
        "seconds": 3600.0,
        "tokens": None,
        "usd": 2.0,
        "turns": 5,
    }
    team.ok("card", "add", "one")
    team.ok("card", "add", "two")
    held(team, "LX-1", "w")
    worked(team, "LX-1", "w", "spends it", "--usd", "2.5", "--todo-add", "x")
    nxt = team.cli("next", "--claim", agent="w")
    assert (
        nxt.code == 8
        and nxt.data["reason"] == "token_window"
        and nxt.data["wake_at"] == HOUR
        and nxt.data["card"] is None
    )
    err = refused(team, 8, "claim", "LX-2", agent="w")
    assert err["code"] == "token_window" and "$2.50 of $2.00" in err["message"]
    clock.advance(3600)
    assert team.ok("next", "--claim", agent="w")["action"] == "work"  # (its lease on LX-1 ran out meanwhile)


def test_window_flags_must_come_together(team):
    err = refused(team, 3, "agent", "add", "x", "--usd", "3", as_person=True)
    assert "--window" in err["message"]
    team.ok("card", "add", "one")
    err = refused(team, 3, "card", "window", "LX-1", "--tokens", "10", as_person=True)
    assert "length" in err["message"]
    refused(team, 3, "card", "window", "LX-1", "--every", "soon", "--turns", "1", as_person=True)


def test_only_a_person_sets_a_window_and_an_edited_one_is_put_back(team, clock):
    team.ok("card", "add", "one")
    assert team.cli("card", "window", "LX-1", "--every", "1h", "--turns", "9", agent="a1").code == 10
    person_ok(team, "card", "window", "LX-1", "--every", "1h", "--turns", "1")
    held(team, "LX-1", "a1")
    store = team.store()
    try:
        from loopx_core.store.models import Card

        store.run(lambda: Card.update(window_turns=100, window_seconds=None).where(Card.id == 1).execute())
    finally:
        store.close()
    assert team.cli("verify").code == 11
    c = worked(team, "LX-1", "a1", "the turn")["card"]
    assert c["window"]["turns"] == 1 and c["status"] == "paused" and c["paused_reason"] == "window"
    assert "window_set" in kinds(team, "LX-1")


def test_the_window_decision_is_signed_and_verify_passes(team):
    team.ok("card", "add", "one")
    person_ok(team, "card", "window", "LX-1", "--every", "2h", "--usd", "3")
    ev = [e for e in team.ok("events", "--card", "LX-1")["events"] if e["kind"] == "window_set"]
    assert len(ev) == 1 and ev[0]["signed"] and ev[0]["actor"] == "human:tester"
    assert ev[0]["data"]["window_usd"] == 3.0 and ev[0]["data"]["window_seconds"] == 7200.0
    assert team.ok("verify")["verify"]["ok"]
    assert person(team, "card", "window", "LX-9", "--every", "1h", "--turns", "1").code == 4
