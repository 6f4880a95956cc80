"""A runner keeps one card's loop moving across many turns and separate runs,
each turn starting from the packet the last one left; it waits for a person's
answer, sleeps through a spent window and wakes when it refills, and records a
turn that wrote nothing (DESIGN §10 "Runners"). Real runner processes driving
the `shell` runtime with a plain script (agent_turn.py)."""

from __future__ import annotations

from loopx_core.rules import clock
from tests.conftest import person_ok

from .conftest import plan


def test_twenty_turns_across_three_runs_each_starting_from_the_last_packet(team, watch):
    team.ok("card", "add", "a long job", "--next", "step 1")
    for run, turns in enumerate((7, 7, 6)):
        proc = watch.run("a1", "--turns", str(turns))
        assert watch.ended(proc) == 0
        assert watch.turns_started("a1") == sum((7, 7, 6)[: run + 1])
    evidence = watch.evidence()
    assert [e["summary"] for e in evidence] == [f"did step {n}" for n in range(1, 21)]  # none lost, none doubled
    assert [e["artifacts"][0]["path"] for e in evidence] == [f"out/step-{n}.txt" for n in range(1, 21)]
    assert len({e["turn_id"] for e in evidence}) == 20 and all(
        e["agent"] == "a1" and e["source"] == "cli" for e in evidence
    )
    card = team.ok("card", "show", "LX-1")["card"]
    assert card["next"] == "step 21" and card["quota"]["turns"]["used"] == 20
    assert card["status"] == "ready" and card["lease"] is None  # each run gave it back when it stopped
    finished = watch.events("turn_finished")
    assert [e.data["outcome"] for e in finished] == ["finished"] * 20 and all(e.data["evidence"] for e in finished)
    assert [e.data["turn"] for e in watch.events("turn_started")] == list(range(1, 21))  # numbered across runs
    exits = watch.events("runner_exited")
    assert len(exits) == 3 and all(e.data["released"] == ["LX-1"] for e in exits)
    assert team.ok("verify")["verify"]["ok"]


def test_a_gate_mid_way_waits_for_the_person_and_the_loop_goes_on(team, watch):
    team.ok("card", "add", "needs a yes", "--next", "step 1")
    plan(team, {3: "gate"})
    proc = watch.run("a1", "--turns", "5")
    row = watch.until(
        "the runner waits on G-1", lambda: (r := watch.runner("a1")) and r.state == "waiting" and r.gate == 1 and r
    )
    assert row.card == 1 and watch.turns_started("a1") == 3
    # Nothing starts while the person has not answered, whatever else happens on the board.
    mark = watch.seq()
    team.ok("card", "add", "unrelated", "--owner", "a2")
    watch.until("the runner looked at the board again", lambda: watch.seen("a1", mark + 1))
    assert watch.turns_started("a1") == 3 and watch.runner("a1").state == "waiting"
    person_ok(team, "gate", "answer", "G-1", "approve")
    assert watch.ended(proc) == 0
    summaries = [e["summary"] for e in watch.evidence()]
    assert summaries == ["did step 1", "did step 2", "asked about step 3", "did step 4", "did step 5"]
    answered = watch.events("gate_answered")[0].seq
    fourth = watch.events("turn_started")[3]
    assert fourth.seq > answered and fourth.data["turn"] == 4


def test_a_spent_window_pauses_the_card_and_the_runner_resumes_it_after_the_refill(team, watch):
    team.ok("card", "add", "rationed", "--next", "step 1")
    # One turn per 8 s: the first turn's own writeback spends the window, however
    # long the turn took (with two turns per window, two slow turns on a loaded
    # machine outlasted it and the card never paused). 8 s: the runner looks again
    # well before the refill (with 3 s it had refilled first, and it never slept).
    person_ok(team, "card", "window", "LX-1", "--every", "8s", "--turns", "1")
    proc = watch.run("a1", "--turns", "2")
    paused = watch.until("the card pauses for its window", lambda: watch.events("paused"))[0]
    assert paused.data["reason"] == "window" and paused.data["wake_at"]
    wake_at = watch.card().wake_at
    assert watch.ended(proc) == 0  # the second turn ran: nobody raised anything
    # The runner slept until the refill (its row said so, between the first and second turns).
    first_turn, second_turn = watch.events("turn_started")[0:2]
    asleep = [
        e
        for e in watch.events("runner_state")
        if e.data["state"] == "asleep" and first_turn.seq < e.seq < second_turn.seq
    ]
    assert [e.data["wake_at"] for e in asleep] == [paused.data["wake_at"]] and paused.data["wake_at"] == clock.iso(
        wake_at
    )
    resumed = watch.events("resumed")
    assert [(e.actor, e.data["reason"]) for e in resumed] == [("system", "window")]
    assert second_turn.at >= wake_at and second_turn.seq > resumed[0].seq
    assert [e["summary"] for e in watch.evidence()] == ["did step 1", "did step 2"]


def test_a_turn_that_writes_nothing_is_recorded_and_three_of_them_pause_the_card(team, watch):
    team.ok("card", "add", "flaky", "--next", "step 1")
    plan(team, {1: "silent"})
    proc = watch.run("a1")
    watch.until("the card pauses for making no progress", lambda: watch.card().status == "paused")
    card = team.ok("card", "show", "LX-1")["card"]
    assert card["paused_reason"] == "no_progress" and card["quota"]["turns"]["used"] == 3
    failed = [e for e in watch.evidence() if e["source"] == "runner"]
    assert len(failed) == 3
    for e in failed:
        tail = e["extra"]["tail"]
        assert "boom" in tail and "something" in tail and "\x1b" not in tail and "\x07" not in tail  # sanitised
        assert e["extra"]["exit_code"] == 3 and e["extra"]["failed_turn"] is True
        assert "\x1b" not in e["summary"] and "wrote no evidence" in e["summary"]
    assert [e.data["outcome"] for e in watch.events("turn_finished")] == ["failed"] * 3
    row = watch.until(
        "the runner sleeps on the paused card", lambda: (r := watch.runner("a1")) and r.state == "asleep" and r
    )
    assert "no_progress" in row.detail
    assert team.cli("done", "LX-1", "--summary", "no", agent="a1").code != 0  # failed turns are not evidence of work
    watch.signal(proc)
    assert watch.ended(proc) == 0
