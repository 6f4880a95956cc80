"""The agent's turn: claim, next (work/wait/accept/paused/idle), heartbeat, release, monitor."""

from __future__ import annotations

from .conftest import card, events, held, kinds, refused, worked

NEXT_KEYS = {"action", "card", "lease", "gate", "handoff", "wake_at", "reason"}


def test_claim_leases_a_ready_card(team):
    team.ok("card", "add", "one")
    res = team.cli("claim", "LX-1", "--lease", "10m", agent="a1")
    assert res.code == 0 and NEXT_KEYS <= set(res.data)
    assert res.data["action"] == "work" and res.data["claimed"] is True
    lease = res.data["lease"]
    assert lease == {"holder": "a1", "token": 1, "expires_at": "2027-01-15T08:10:00Z"}
    c = res.data["card"]
    assert c["status"] == "active" and c["owner"] == "a1" and c["lease"] == lease
    ev = events(team, "LX-1")[-1]
    assert ev["kind"] == "claimed" and ev["actor"] == "agent:a1" and ev["data"]["token"] == 1


def test_claiming_your_own_card_again_resumes_it(team):
    team.ok("card", "add", "one")
    held(team, "LX-1", "a1")
    again = team.ok("claim", "LX-1", agent="a1")
    assert again["action"] == "work" and again["lease"]["token"] == 1
    assert kinds(team, "LX-1").count("claimed") == 1


def test_claim_of_a_held_card_names_the_holder_and_expiry(team):
    team.ok("card", "add", "one")
    held(team, "LX-1", "a1", "--lease", "15m")
    err = refused(team, 5, "claim", "LX-1", agent="a2")
    assert err["code"] == "not_ready"
    assert "a1" in err["message"] and "2027-01-15T08:15:00Z" in err["message"]
    assert err["card"]["lease"]["holder"] == "a1"


def test_claim_of_a_card_that_is_not_ready(team):
    team.ok("card", "add", "parked", "--backlog")
    team.ok("card", "add", "blocked", "--after", "LX-1")
    assert "backlog" in refused(team, 5, "claim", "LX-1", agent="a1")["message"]
    assert "blocked" in refused(team, 5, "claim", "LX-2", agent="a1")["message"]
    refused(team, 4, "claim", "LX-3", agent="a1")
    refused(team, 3, "claim", "H-1", agent="a1")
    refused(team, 3, "claim", "LX-1", "--lease", "forever", agent="a1")


def test_claim_of_a_card_assigned_to_another_agent_is_forbidden(team):
    team.ok("card", "add", "one", "--owner", "a1")
    err = refused(team, 10, "claim", "LX-1", agent="a2")
    assert "a1" in err["message"] and "loopx card assign" in err["hint"]


def test_claim_opens_a_permission_gate_for_a_missing_scope(team):
    team.ok("card", "add", "deploy", "--needs", "deploy:prod", "--needs", "git:push")
    res = team.cli("claim", "LX-1", agent="a1")  # a1 may push, not deploy
    assert res.code == 6 and res.data["action"] == "wait"
    gate = res.data["gate"]
    assert gate["scope"] == "deploy:prod" and gate["status"] == "pending" and gate["kind"] == "permission"
    assert "a1" in gate["question"] and "deploy:prod" in gate["question"]
    assert [g["scope"] for g in team.ok("gate", "list", "--pending")["gates"]] == ["deploy:prod"]
    assert res.data["card"]["status"] == "waiting"


# -- next ---------------------------------------------------------------------


def test_next_idle_without_claim_and_with_an_empty_board(team):
    res = team.cli("next", agent="a1")
    assert res.code == 9 and res.data["action"] == "idle" and res.data["card"] is None
    assert "--claim" in res.data["reason"]
    res = team.cli("next", "--claim", agent="a1")
    assert res.code == 9 and res.data["action"] == "idle"
    assert set(res.data) >= NEXT_KEYS and res.data["lease"] is None and res.data["gate"] is None


def test_next_claim_takes_priority_then_age(team, clock):
    team.ok("card", "add", "old low", "--priority", "3")
    clock.advance(60)
    team.ok("card", "add", "new urgent", "--priority", "0")
    clock.advance(60)
    team.ok("card", "add", "newer low", "--priority", "3")
    clock.advance(60)
    team.ok("card", "add", "normal")  # priority 2
    team.ok("agent", "add", "a3")
    team.ok("agent", "add", "a4")
    taken = [team.ok("next", "--claim", agent=a)["card"]["title"] for a in ("a1", "a2", "a3", "a4")]
    assert taken == ["new urgent", "normal", "old low", "newer low"]
    again = team.ok("next", "--claim", agent="a1")  # it resumes its card, takes no other
    assert again["reason"] == "resume" and again["card"]["title"] == "new urgent"


def test_next_work_resumes_the_held_card_and_renews_its_lease(team, clock):
    team.ok("card", "add", "one", "--next", "start here")
    held(team, "LX-1", "a1", "--lease", "10m")
    clock.advance(9 * 60)
    res = team.cli("next", agent="a1")
    assert res.code == 0 and res.data["action"] == "work" and res.data["reason"] == "resume"
    assert res.data["card"]["next"] == "start here"
    assert res.data["lease"]["expires_at"] == "2027-01-15T08:19:00Z"


def test_next_wait_while_a_gate_is_pending(team):
    team.ok("card", "add", "one")
    held(team, "LX-1", "a2")
    team.cli("gate", "ask", "LX-1", "--question", "which db?", "--option", "sqlite", "--option", "pg", agent="a2")
    res = team.cli("next", "--claim", agent="a2")
    assert res.code == 6 and res.data["action"] == "wait"
    assert res.data["gate"]["id"] == "G-1" and res.data["gate"]["options"] == ["sqlite", "pg"]
    assert res.data["card"]["id"] == "LX-1"


def test_next_accept_when_a_handoff_awaits(team):
    team.ok("card", "add", "one")
    team.ok("card", "add", "two")
    held(team, "LX-1", "a1")
    team.ok("handoff", "LX-1", "--to", "a2", "--summary", "over to you", agent="a1")
    res = team.cli("next", "--claim", agent="a2")  # accept comes before claiming more
    assert res.code == 0 and res.data["action"] == "accept"
    assert res.data["card"]["id"] == "LX-1" and res.data["handoff"]["to"] == "a2"
    assert card(team, "LX-2")["status"] == "ready"


def test_next_paused_by_the_token_window_says_when_it_reopens(team, clock):
    team.ok("agent", "add", "w", "--tokens", "1000", "--window", "1h")
    team.ok("card", "add", "one")
    team.ok("card", "add", "two")
    held(team, "LX-1", "w")
    worked(team, "LX-1", "w", "big turn", "--tokens", "600", "--todo-add", "x")
    clock.advance(600)
    worked(team, "LX-1", "w", "bigger turn", "--tokens", "500", "--todo-add", "y")
    res = team.cli("next", "--claim", agent="w")
    assert res.code == 8 and res.data["action"] == "paused" and res.data["reason"] == "token_window"
    # 1100 spent; the window reopens when the first 600 age out: T0 + 1h.
    assert res.data["wake_at"] == "2027-01-15T09:00:00Z"
    clock.advance(3000 + 1)  # T0 + 1h + 1s
    assert team.cli("next", "--claim", agent="w").data["action"] == "work"


def test_next_paused_by_no_progress(team):
    team.ok("card", "add", "one")
    held(team, "LX-1", "a1")
    for i in range(3):
        out = worked(team, "LX-1", "a1", f"thinking {i}")
    assert out["card"]["status"] == "paused" and out["card"]["paused_reason"] == "no_progress"
    res = team.cli("next", "--claim", agent="a1")
    assert res.code == 8 and res.data["action"] == "paused" and res.data["reason"] == "no_progress"


def test_next_rejects_bad_flags(team):
    refused(team, 3, "next", "--lease", "0s", agent="a1")
    refused(team, 3, "next", "--lease", "2y", agent="a1")
    refused(team, 2, "next", "--claim", "yes", agent="a1")


# -- heartbeat / release --------------------------------------------------------


def test_heartbeat_renews_the_lease(team, clock):
    team.ok("card", "add", "one")
    held(team, "LX-1", "a1", "--lease", "5m")
    clock.advance(240)
    c = team.ok("heartbeat", "LX-1", agent="a1")["card"]
    assert c["lease"]["expires_at"] == "2027-01-15T08:09:00Z"
    assert kinds(team, "LX-1")[-1] == "heartbeat"
    clock.advance(299)
    assert card(team, "LX-1")["status"] == "active"  # renewed: not reaped at the old expiry


def test_heartbeat_refusals(team):
    team.ok("card", "add", "one")
    refused(team, 5, "heartbeat", "LX-1", agent="a1")  # not claimed
    held(team, "LX-1", "a1")
    err = refused(team, 5, "heartbeat", "LX-1", agent="a2")
    assert "a1" in err["message"]
    refused(team, 5, "heartbeat", "LX-1", "--lease-token", "7", agent="a1")


def test_release_returns_the_card_to_ready(team):
    team.ok("card", "add", "one")
    held(team, "LX-1", "a1")
    team.cli("gate", "ask", "LX-1", "--question", "?", agent="a1")
    c = team.ok("release", "LX-1", agent="a1")["card"]
    assert c["status"] == "ready" and c["lease"] is None
    assert team.cli("gate", "status", "G-1").data["gate"]["status"] == "withdrawn"
    refused(team, 5, "release", "LX-1", agent="a1")
    assert team.ok("claim", "LX-1", agent="a2")["lease"]["token"] == 2  # the fence grows


def test_release_by_someone_else_is_refused(team):
    team.ok("card", "add", "one")
    held(team, "LX-1", "a1")
    refused(team, 5, "release", "LX-1", agent="a2")


# -- monitor ------------------------------------------------------------------


def test_monitor_sleeps_until_due_and_next_wakes_it(team, clock):
    team.ok("card", "add", "watch the deploy")
    held(team, "LX-1", "a1")
    c = team.ok("monitor", "LX-1", "--every", "10m", agent="a1")["card"]
    assert c["status"] == "monitoring" and c["monitor_due"] == "2027-01-15T08:10:00Z"
    assert c["lease"]["expires_at"] is None  # it does not run out while the card sleeps
    early = team.cli("next", agent="a1")
    assert early.code == 9 and early.data["action"] == "idle" and early.data["wake_at"] == "2027-01-15T08:10:00Z"
    clock.advance(3600)  # well past the default lease: a sleeping card is not reaped
    due = team.cli("next", agent="a1")
    assert due.code == 0 and due.data["action"] == "work" and due.data["reason"] == "monitor_due"
    assert due.data["card"]["status"] == "active" and due.data["lease"]["holder"] == "a1"
    assert "monitor_due" in kinds(team, "LX-1")


def test_monitor_refusals(team):
    team.ok("card", "add", "one")
    refused(team, 5, "monitor", "LX-1", "--every", "5m", agent="a1")
    held(team, "LX-1", "a1")
    refused(team, 3, "monitor", "LX-1", "--every", "never", agent="a1")
    refused(team, 5, "monitor", "LX-1", "--every", "5m", agent="a2")
    refused(team, 2, "monitor", "LX-1", agent="a1")
