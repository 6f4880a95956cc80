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
        watch.until(f"{agent}'s runner starts a turn after event {seq}", lambda: any(e.actor == mine for e in watch.events("turn_started", seq)))

    def control(agent: str, what: str) -> int:
        return person_ok(team, "runner", what, agent)["runner"]["control"]["seq"]

    for n in range(ROUNDS):
        agent, moves = AGENTS[n % len(AGENTS)], MOVES[n % len(MOVES)]
        turn_after(agent, watch.seq())  # busy: its turns run back to back
        for what in moves:
            seq = control(agent, what.rstrip("!"))
            if what == "pause":
                if moves[-1] == "resume":
                    watch.until(f"{agent}'s runner is paused (round {n})", lambda: (r := watch.runner(agent)) and r.state == "paused")
            elif what.startswith("resume"):
                turn_after(agent, seq)
            else:  # a stop ends the runner: it exits, and the board says it stopped and why
                assert watch.ended(procs[agent]) == 0, watch.explain()
                listed = {r["agent"]: r for r in team.ok("runner", "list")["runners"]}[agent]
                assert listed["state"] == "stopped" and listed["detail"] == "stopped by human:tester"
                exits = [e for e in watch.events("runner_exited", seq) if e.actor == f"runner:{agent}"]
                assert [e.data["why"] for e in exits] == ["stopped by human:tester"]
                control(agent, "resume")
                procs[agent] = watch.run(agent)
    for agent in AGENTS:
        control(agent, "stop")
    for agent in AGENTS:
        assert watch.ended(procs[agent]) == 0, watch.explain()
    log = watch.events()
    assert disobeyed(log) == []
    stops = [e for e in log if e.kind == "runner_stopped"]
    assert len(stops) == ROUNDS // 2 + len(AGENTS)
    assert len([e for e in log if e.kind == "runner_exited" and e.data["why"] == "stopped by human:tester"]) == len(stops)
    assert team.ok("verify")["verify"]["ok"]
