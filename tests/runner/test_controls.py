"""A person pauses, resumes and stops an agent's runner — a signed decision —
and the runner obeys only that: an agent cannot pause or stop a runner, nor
lift a pause, through the CLI (its identity, no key), by editing the runner's
row in SQL, or by writing a control event it cannot sign."""

from __future__ import annotations

import json

from tests.conftest import NO_KEY, person_ok
from tests.security.conftest import sql

from .conftest import plan


def busy(team, watch):
    """a1's runner going through quick turns on LX-1."""
    team.ok("card", "add", "job", "--next", "step 1")
    plan(team, {n: "slow:0.2" for n in range(1, 200)})
    proc = watch.run("a1")
    watch.until("a1's runner works", lambda: watch.turns_started("a1") >= 2)
    return proc


def paused(watch):
    return watch.until("a1's runner is paused", lambda: (r := watch.runner("a1")) and r.state == "paused" and r)


def still(team, watch, agent: str) -> None:
    """Make the runner look at the board (a change it must consider) and wait until it has."""
    mark = watch.seq()
    team.ok("card", "add", "something else happened", "--owner", "a2")
    watch.until(f"{agent}'s runner looked at the board again", lambda: watch.seen(agent, mark + 1))


def test_a_person_pauses_resumes_and_stops_a_runner(team, watch):
    proc = busy(team, watch)
    out = person_ok(team, "runner", "pause", "a1")
    assert out["runner"]["control"]["control"] == "pause" and out["runner"]["control"]["by"] == "human:tester"
    row = paused(watch)
    assert row.detail == "paused by human:tester"
    turns = watch.turns_started("a1")
    still(team, watch, "a1")
    assert watch.turns_started("a1") == turns  # no turn starts while paused
    listed = {r["agent"]: r for r in team.ok("runner", "list")["runners"]}
    assert listed["a1"]["state"] == "paused" and listed["a1"]["control"] == {
        "control": "pause",
        "by": "human:tester",
        "seq": listed["a1"]["control"]["seq"],
        "problem": None,
    }
    person_ok(team, "runner", "resume", "a1")
    watch.until("turns start again", lambda: watch.turns_started("a1") > turns)
    person_ok(team, "runner", "stop", "a1")
    assert watch.ended(proc) == 0
    exited = watch.events("runner_exited")[0].data
    assert exited["why"] == "stopped by human:tester" and exited["released"] == ["LX-1"]
    assert team.ok("card", "show", "LX-1")["card"]["status"] == "ready"
    again = watch.run("a1", "--json")  # a stop stands until a person lifts it
    again.expected_exit = True
    assert watch.ended(again) == 5
    error = json.loads(
        [line for line in watch.logs.joinpath("a1-1.log").read_text().splitlines() if line.startswith("{")][-1]
    )["error"]
    assert error["code"] == "runner_stopped" and "loopx runner resume a1" in error["hint"]
    person_ok(team, "runner", "resume", "a1")
    assert watch.ended(watch.run("a1", "--turns", "1")) == 0
    kinds = [e.kind for e in watch.events() if e.kind.startswith("runner_") and e.actor.startswith("human:")]
    assert kinds == ["runner_paused", "runner_resumed", "runner_stopped", "runner_resumed"]
    assert all(e.signed for e in watch.events() if e.actor.startswith("human:"))
    assert team.ok("verify")["verify"]["ok"]


def test_an_agent_cannot_pause_stop_or_resume_a_runner_through_the_cli(team, watch):
    proc = busy(team, watch)
    before = len(watch.events())
    for verb in ("pause", "stop", "resume"):
        res = team.cli("runner", verb, "a1", agent="a1")
        assert res.code == 10 and res.data["error"]["code"] == "person_only"
        cold = team.spawn("--json", "runner", verb, "a1", env=NO_KEY)  # no agent identity, but no key either
        assert cold.returncode == 10, cold.stdout + cold.stderr
    assert not [e for e in watch.events() if e.kind in ("runner_paused", "runner_resumed", "runner_stopped")]
    assert watch.runner("a1").state == "running" or watch.turns_started("a1") > 2
    assert len([e for e in watch.events()[before:] if e.actor.startswith("human:")]) == 0
    watch.signal(proc)
    assert watch.ended(proc) == 0


def test_a_pause_lifted_in_the_database_lifts_nothing(team, watch):
    proc = busy(team, watch)
    person_ok(team, "runner", "pause", "a1")
    paused(watch)
    turns = watch.turns_started("a1")
    # The agent (same OS user, the database's own client) edits the runner's row …
    sql(team, "UPDATE runner SET control = NULL, control_seq = NULL, state = 'running', detail = NULL")
    still(team, watch, "a1")
    assert watch.turns_started("a1") == turns and watch.runner("a1").state == "paused"  # … and it is put back
    # … or writes a control event it cannot sign: the runner stays paused and says why.
    sql(
        team,
        """INSERT INTO event (seq, at, actor, kind, data) SELECT max(seq) + 1, 2000000000, 'human:tester', 'runner_resumed', '{"agent":"a1","control":"resume"}' FROM event""",
    )
    row = watch.until(
        "the runner says the newest control is not honoured",
        lambda: (r := watch.runner("a1")) and "not a valid signed decision" in (r.detail or "") and r,
    )
    assert row.state == "paused"
    still(team, watch, "a1")
    assert watch.turns_started("a1") == turns
    assert team.cli("verify").code == 11
    listed = {r["agent"]: r for r in team.ok("runner", "list")["runners"]}
    assert listed["a1"]["control"]["control"] == "pause" and listed["a1"]["control"]["problem"]
    watch.signal(proc)
    assert watch.ended(proc) == 0


def test_a_pause_written_in_the_database_pauses_nothing(team, watch):
    proc = busy(team, watch)
    sql(team, "UPDATE runner SET control = 'pause', state = 'paused'")
    turns = watch.turns_started("a1")
    watch.until("turns go on", lambda: watch.turns_started("a1") > turns + 1)
    assert team.cli("verify").code == 11  # the row names a control no signed decision made
    watch.signal(proc)
    assert watch.ended(proc) == 0


def test_a_budget_rewritten_with_its_hash_starts_no_turn(team, watch):
    """The thorough attacker rewrites the person's budget event with a
    recomputed hash (which passes the cheap per-turn check) and the card row:
    the runner's strict check before each turn catches the signature."""
    from loopx_core.authority import chain
    from tests.security.conftest import sql_rows

    person_ok(team, "card", "add", "small", "--max-turns", "2", "--next", "step 1")
    person_ok(
        team, "card", "add", "later", "--owner", "a2"
    )  # (the rewritten event is not the head this machine saw: the witness would stop the runner first)
    seq, at, actor, card, kind, data, op_id, key = sql_rows(
        team, "SELECT seq, at, actor, card, kind, data, op_id, key FROM event WHERE kind = 'card_added' AND card = 1"
    )[0]
    doc = json.loads(data)
    doc["max_turns"] = 500
    text = chain.data_text(doc)
    prev = sql_rows(team, f"SELECT prev FROM event WHERE seq = {seq}")[0][0]
    sql(
        team,
        f"UPDATE event SET data = '{text}', hash = '{chain.event_hash(prev, seq, at, actor, card, kind, text, op_id, key)}' WHERE seq = {seq}",
    )
    sql(team, "UPDATE card SET max_turns = 500 WHERE id = 1")
    proc = watch.run("a1")
    watch.until("the card is held back", lambda: watch.card().paused_reason == "budget_unverified")
    watch.until(
        "the runner sleeps on it",
        lambda: (r := watch.runner("a1")) and r.state == "asleep" and "budget_unverified" in (r.detail or ""),
    )
    assert watch.turns_started("a1") == 0
    watch.signal(proc)
    assert watch.ended(proc) == 0
