"""A runner survives itself: SIGTERM lets the turn finish (or abandons it after
the grace time, and says which) and gives the card back; a SIGKILLed runner's
turn dies with it and its card is taken over by another runner once the lease
runs out, nothing lost or doubled; a restarted runner resumes; one runner per
agent; a turn past its time limit is stopped, all of it. Real processes, real
signals."""

from __future__ import annotations

import json
import os
import signal

from .conftest import alive, plan


def hung_pid(watch, agent: str) -> int:
    path = watch.board.root / f".hang-{agent}.pid"
    return int(watch.until(f"{agent}'s turn hangs", lambda: path.exists() and path.read_text().strip() or None))


def test_sigterm_lets_the_turn_finish_then_releases_the_card(team, watch):
    team.ok("card", "add", "job", "--next", "step 1")
    plan(team, {2: "slow:2"})
    proc = watch.run("a1", "--grace", "60s")
    watch.until("turn 2 runs", lambda: watch.turns_started("a1") == 2)
    watch.signal(proc, signal.SIGTERM)
    assert watch.ended(proc) == 0
    assert [e["summary"] for e in watch.evidence()] == ["did step 1", "did step 2"]
    assert watch.events("turn_finished")[-1].data["outcome"] == "finished"
    exited = watch.events("runner_exited")[0].data
    assert exited["why"] == "SIGTERM received" and exited["turn"] == "finished" and exited["released"] == ["LX-1"]
    card = team.ok("card", "show", "LX-1")["card"]
    assert card["status"] == "ready" and card["lease"] is None and card["next"] == "step 3"
    assert watch.runner("a1").state == "stopped" and watch.turns_started() == 2


def test_sigterm_abandons_a_turn_that_does_not_finish_in_time_and_says_so(team, watch):
    team.ok("card", "add", "job", "--next", "step 1")
    plan(team, {2: "hang"})
    proc = watch.run("a1", "--grace", "1s")
    pid = hung_pid(watch, "a1")
    watch.signal(proc, signal.SIGTERM)
    assert watch.ended(proc) == 0
    watch.until("the abandoned turn's process is gone", lambda: not alive(pid))
    finished = watch.events("turn_finished")[-1].data
    assert finished["outcome"] == "abandoned" and "SIGTERM" in finished["reason"] and finished["evidence"] is False
    assert watch.events("runner_exited")[0].data["turn"] == "abandoned"
    failed = watch.evidence()[-1]
    assert failed["source"] == "runner" and failed["extra"]["outcome"] == "abandoned"  # recorded, never silently
    card = team.ok("card", "show", "LX-1")["card"]
    assert card["status"] == "ready" and card["lease"] is None and card["next"] == "step 2"


def test_a_sigkilled_runners_card_is_taken_over_after_its_lease_nothing_lost_or_doubled(team, watch):
    team.ok("card", "add", "job", "--next", "step 1")
    plan(team, agents={"a1": {2: "hang"}})
    doomed = watch.run("a1", "--lease", "3s")
    pid = hung_pid(watch, "a1")  # a1 is in the middle of turn 2
    doomed.expected_exit = True
    watch.signal(doomed, signal.SIGKILL)
    watch.ended(doomed)
    watch.until("the turn died with its runner", lambda: not alive(pid))
    heir = watch.run(
        "a2", "--turns", "2"
    )  # (its own lease the default: a slow turn on a loaded machine must not outlive it)
    assert watch.ended(heir) == 0
    evidence = watch.evidence()
    assert [(e["agent"], e["summary"]) for e in evidence] == [
        ("a1", "did step 1"),
        ("a2", "did step 2"),
        ("a2", "did step 3"),
    ]
    expired = watch.events("lease_expired")
    assert [(e.data["holder"], e.data["token"]) for e in expired] == [("a1", 1)]
    claims = [(e.data["agent"], e.data["token"]) for e in watch.events("claimed")]
    assert claims == [("a1", 1), ("a2", 2)]
    first_of_heir = [e for e in watch.events("turn_started") if e.actor == "runner:a2"][0]
    assert first_of_heir.seq > expired[0].seq  # only once the lease had run out
    # The killed runner's row says what it was doing; a new runner for a1 takes it over at once.
    assert watch.runner("a1").state == "running"
    again = watch.run("a1", "--turns", "1")
    watch.until("a1's new runner took the old one over", lambda: len(watch.events("runner_started")) == 3)
    took = [e for e in watch.events("runner_started") if e.actor == "runner:a1"][-1].data["took_over"]
    assert took["pid"] == doomed.pid
    watch.signal(again)
    assert watch.ended(again) == 0


def test_a_restarted_runner_resumes_the_card_it_held(team, watch):
    team.ok("card", "add", "job", "--next", "step 1")
    plan(team, agents={"a1": {2: "slow:600"}})
    first = watch.run("a1")
    watch.until("turn 2 runs", lambda: watch.turns_started("a1") == 2)
    first.expected_exit = True
    watch.signal(first, signal.SIGKILL)
    watch.ended(first)
    plan(team)  # the next try of step 2 goes through
    second = watch.run("a1", "--turns", "2")
    assert watch.ended(second) == 0
    assert [e["summary"] for e in watch.evidence()] == ["did step 1", "did step 2", "did step 3"]
    assert [e.data["agent"] for e in watch.events("claimed")] == ["a1"]  # resumed under the same lease
    assert watch.events("lease_expired") == []


def test_a_second_runner_for_the_same_agent_is_refused(team, watch):
    first = watch.run("a1")
    watch.until(
        "the first runner sleeps", lambda: (r := watch.runner("a1")) and r.state == "asleep" and r.detail != "starting"
    )
    before = len(watch.events())
    second = watch.run("a1", "--json")
    second.expected_exit = True
    assert watch.ended(second) == 5
    log = [line for line in watch.logs.joinpath("a1-1.log").read_text().splitlines() if line.startswith("{")]
    error = json.loads(log[-1])["error"]
    assert error["code"] == "runner_running" and str(first.pid) in error["message"]
    assert len(watch.events()) == before and len(watch.events("runner_started")) == 1
    watch.signal(first)
    assert watch.ended(first) == 0


def test_a_turn_past_its_time_limit_is_stopped_with_everything_it_started(team, watch):
    team.ok("card", "add", "job", "--next", "step 1")
    plan(team, {1: "hang"})
    proc = watch.run("a1", "--turn-limit", "4s", "--turns", "1")
    assert watch.ended(proc) == 0
    assert not alive(int((team.root / ".hang-a1.pid").read_text()))
    finished = watch.events("turn_finished")[0].data
    assert finished["outcome"] == "stopped" and "time limit" in finished["reason"]
    failed = watch.evidence()[0]
    assert failed["source"] == "runner" and "time limit" in failed["summary"]


def daemon_pid(watch, agent: str) -> int:
    path = watch.board.root / f".daemon-{agent}.pid"
    return int(
        watch.until(f"{agent}'s turn started its helper", lambda: path.exists() and path.read_text().strip() or None)
    )


def test_a_turns_helper_that_left_its_process_group_ends_with_the_turn(team, watch):
    """A sandbox helper that double-forked and setsid'd out of the turn's group
    (Claude Code's socat bridge does; issue #44) is killed when the turn ends."""
    team.ok("card", "add", "job", "--next", "step 1")
    plan(team, {1: "daemon"})
    proc = watch.run("a1", "--turns", "1")
    helper = daemon_pid(watch, "a1")
    try:
        assert watch.ended(proc) == 0
        assert [e["summary"] for e in watch.evidence()] == ["did step 1"]
        watch.until("the turn's helper is gone", lambda: not alive(helper))
    finally:
        if alive(helper):
            os.kill(helper, signal.SIGKILL)


def test_a_sigkilled_runner_leaves_nothing_of_its_turn_running(team, watch):
    """The runner SIGKILLed mid-turn: the turn and the helper it started out of
    its group both end (the turn's keeper gets SIGTERM from the kernel)."""
    team.ok("card", "add", "job", "--next", "step 1")
    plan(team, {1: "daemon-hang"})
    doomed = watch.run("a1")
    helper, turn = daemon_pid(watch, "a1"), hung_pid(watch, "a1")
    try:
        doomed.expected_exit = True
        watch.signal(doomed, signal.SIGKILL)
        watch.ended(doomed)
        watch.until("the turn died with its runner", lambda: not alive(turn))
        watch.until("so did the helper it started", lambda: not alive(helper))
    finally:
        for pid in (helper, turn):
            if alive(pid):
                os.kill(pid, signal.SIGKILL)
