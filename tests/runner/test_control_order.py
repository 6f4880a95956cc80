"""A person's pause or stop acts before the runner's next turn, every time, and
a stop is never lost (issue #25): three real runners going through turns back
to back, twenty pause / resume / stop rounds through the CLI with the person's
key, judged from the order of the event log — never from how long anything
took. Every round waits on the board (a state, an exit, a turn), each wait
bounded by the generous deadline of ``Watch.until``."""

from __future__ import annotations

from loopx_core.rules.decisions import CONTROL_OF_KIND
from tests.conftest import person_ok

from .conftest import plan

AGENTS = ("a1", "a2", "a3")
ROUNDS = 20
# What a person does in a round, in turn: pause (wait until paused) then
# resume; stop; pause then stop at once; pause then resume at once.
MOVES = (("pause", "resume"), ("stop",), ("pause", "stop"), ("pause", "resume!"))


def disobeyed(events) -> list[str]:
    """Every ``turn_started`` of an agent's runner recorded after a person's
    pause or stop of it and before the resume that lifted it."""
    control: dict[str, tuple[str, int]] = {}
    found = []
    for e in events:
        if e.kind in CONTROL_OF_KIND:
            control[e.data["agent"]] = (CONTROL_OF_KIND[e.kind], e.seq)
        elif e.kind == "turn_started":
            agent = e.actor.removeprefix("runner:")
            what, seq = control.get(agent, ("resume", 0))
            if what != "resume":
                found.append(f"{agent}: turn_started at event {e.seq} after its {what} at event {seq}")
    return found


def test_no_turn_starts_after_a_pause_or_stop_and_no_stop_is_lost(team, watch):
    team.ok("agent", "add", "a3")
    for agent in AGENTS:
        team.ok("card", "add", f"job for {agent}", "--owner", agent, "--next", "step 1")
    plan(team)  # every step: work at once and write back — turns back to back
    procs = {agent: watch.run(agent) for agent in AGENTS}

    def turn_after(agent: str, seq: int) -> None:
        mine = f"runner:{agent}"
        watch.until(
            f"{agent}'s runner starts a turn after event {seq}",
            lambda: any(e.actor == mine for e in watch.events("turn_started", seq)),
        )

    def control(agent: str, what: str) -> int:
        return person_ok(team, "runner", what, agent)["runner"]["control"]["seq"]

    for n in range(ROUNDS):
        agent, moves = AGENTS[n % len(AGENTS)], MOVES[n % len(MOVES)]
        turn_after(agent, watch.seq())  # busy: its turns run back to back
        for what in moves:
            seq = control(agent, what.rstrip("!"))
            if what == "pause":
                if moves[-1] == "resume":
                    watch.until(
                        f"{agent}'s runner is paused (round {n})",
                        lambda: (r := watch.runner(agent)) and r.state == "paused",
                    )
            elif what.startswith("resume"):
                turn_after(agent, seq)
            else:  # a stop ends the runner: it exits, and the board says it stopped and why
                assert watch.ended(procs[agent]) == 0, watch.explain()
                listed = {r["agent"]: r for r in team.ok("runner", "list")["runners"]}[agent]
                assert listed["state"] == "stopped" and listed["detail"] == "stopped by human:tester"
                exits = [e for e in watch.events("runner_exited", seq) if e.actor == f"runner:{agent}"]
                assert [e.data["why"] for e in exits] == ["stopped by human:tester"]
                resumed = control(agent, "resume")
                procs[agent] = watch.run(agent)
                # (a stop recorded before the new runner's start is obeyed by refusing it: exit 5)
                watch.until(
                    f"{agent}'s new runner starts",
                    lambda: any(e.actor == f"runner:{agent}" for e in watch.events("runner_started", resumed)),
                )
    for agent in AGENTS:
        control(agent, "stop")
    for agent in AGENTS:
        assert watch.ended(procs[agent]) == 0, watch.explain()
    log = watch.events()
    assert disobeyed(log) == []
    stops = [e for e in log if e.kind == "runner_stopped"]
    assert len(stops) == ROUNDS // 2 + len(AGENTS)
    assert len([e for e in log if e.kind == "runner_exited" and e.data["why"] == "stopped by human:tester"]) == len(
        stops
    )
    assert team.ok("verify")["verify"]["ok"]


def test_a_control_recorded_during_a_turn_acts_right_after_it_even_when_the_runner_then_sleeps(team, watch):
    """a1 is paused and a2 stopped while their turn runs; after it, each would
    next wait for a person's answer to a gate (the runner sleeps). The pause
    holds (no turn until the resume); the stop ends a2's runner after its turn
    (it was lost when the runner went to sleep past the events it had not
    read); a1's runner, then waiting on its gate, is stopped while it sleeps."""
    for agent in ("a1", "a2"):
        team.ok("card", "add", f"job for {agent}", "--owner", agent, "--next", "step 1")
    plan(team, {1: "hold", 2: "gate"})
    procs = {agent: watch.run(agent) for agent in ("a1", "a2")}
    for agent in ("a1", "a2"):
        watch.until(f"{agent}'s turn is in flight", (team.root / f".held-{agent}").exists)
    pause = person_ok(team, "runner", "pause", "a1")["runner"]["control"]["seq"]
    stop = person_ok(team, "runner", "stop", "a2")["runner"]["control"]["seq"]
    (team.root / ".let-go-a2").touch()  # at once: a2's turn may end before its runner looks
    watch.until(
        "a1's row says the pause waits for the turn in flight",
        lambda: "no turn after this one" in (watch.runner("a1").detail or ""),
    )
    (team.root / ".let-go-a1").touch()
    assert watch.ended(procs["a2"]) == 0
    exited = [e for e in watch.events("runner_exited", stop) if e.actor == "runner:a2"]
    assert [(e.data["why"], e.data["turn"]) for e in exited] == [("stopped by human:tester", "finished")]
    watch.until("a1's runner is paused", lambda: (r := watch.runner("a1")) and r.state == "paused")
    outcomes = [e.data["outcome"] for e in watch.events("turn_finished", pause) if e.actor == "runner:a1"]
    assert outcomes == ["finished"], f"{team.cli('log', 'LX-1', json_out=False).out}\n{watch.explain()}"
    resume = person_ok(team, "runner", "resume", "a1")["runner"]["control"]["seq"]
    watch.until(
        "a1's runner waits on its gate",
        lambda: (r := watch.runner("a1")) and r.state == "waiting" and watch.seen("a1", resume),
    )
    stop = person_ok(team, "runner", "stop", "a1")["runner"]["control"]["seq"]
    assert watch.ended(procs["a1"]) == 0
    assert [e.data["why"] for e in watch.events("runner_exited", stop) if e.actor == "runner:a1"] == [
        "stopped by human:tester"
    ]
    assert disobeyed(watch.events()) == []
    assert [r["state"] for r in team.ok("runner", "list")["runners"]] == ["stopped", "stopped"]
