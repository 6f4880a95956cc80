"""The runner's row on the board (runners.py): one live runner per agent, a
stale one taken over, a replaced one fenced off, and a person's control
honoured only through its signed event. The runner processes themselves are
tests/runner; these are the operators, on a frozen clock."""

from __future__ import annotations

import pytest

from loopx_core.ops import runners
from loopx_core.rules.liveness import host_name
from loopx_core.shapes.errors import Conflict, Forbidden
from tests.conftest import person, person_ok

DEAD_PID = 2**22 + 12345  # above Linux's pid_max: no such process


class Ops:
    """The runners operators on the board, each on a freshly opened store (the
    in-process CLI calls in between re-point the models at their own connection)."""

    def __init__(self, board):
        self.board = board

    def __getattr__(self, name):
        fn = getattr(runners, name)

        def call(*args, **kw):
            store = self.board.store()
            try:
                return fn(store, *args, **kw)
            finally:
                store.close()

        return call


@pytest.fixture
def store(team):
    return Ops(team)


def test_one_live_runner_per_agent_and_a_stale_one_is_taken_over(team, store, clock):
    first = store.start("a1", "r-one", "shell", DEAD_PID, "elsewhere")
    assert first.state == "asleep" and first.live(clock.now)
    with pytest.raises(Conflict) as refused:
        store.start("a1", "r-two", "shell", 4242, "here")
    assert refused.value.code == "runner_running" and "elsewhere" in refused.value.message
    clock.advance(runners.STALE - 1)
    with pytest.raises(Conflict):
        store.start("a1", "r-two", "shell", 4242, "here")
    clock.advance(1)  # silent for STALE seconds: gone
    second = store.start("a1", "r-two", "shell", 4242, "here")
    assert second.runner_id == "r-two"
    took = [e for e in team.ok("events")["events"] if e["kind"] == "runner_started"][-1]["data"]["took_over"]
    assert took == {"runner": "r-one", "pid": DEAD_PID, "host": "elsewhere", "heartbeat": "2027-01-15T08:00:00Z"}
    with pytest.raises(Conflict) as fenced:  # the old one wakes up: it may not write any more
        store.set_state("a1", "r-one", "running", card=None)
    assert fenced.value.code == "runner_replaced"
    assert store.beat("a1", "r-one") is False and store.beat("a1", "r-two") is True


def test_a_dead_process_on_this_host_is_taken_over_at_once(team, store):
    store.start("a1", "r-one", "shell", DEAD_PID, host_name())
    assert store.start("a1", "r-two", "shell", 4242, host_name()).runner_id == "r-two"


def test_runner_list_calls_a_dead_process_on_this_host_gone_at_once(team, store):
    """The rule that lets a runner take over at once (above) is the one
    `runner list` and the board show: its heartbeat is fresh, its process gone."""
    store.start("a1", "r-one", "shell", DEAD_PID, host_name())
    assert team.ok("runner", "list")["runners"][0]["state"] == "gone"
    assert store.get_runner("a1").live(runners.clock.now()) is False


def test_states_are_events_and_the_heartbeat_is_not(team, store):
    store.start("a1", "r", "shell", DEAD_PID, "h")
    before = len(team.ok("events")["events"])
    store.set_state("a1", "r", "waiting", card=None, gate=None, detail="waiting")
    store.set_state("a1", "r", "waiting", card=None, gate=None, detail="waiting")  # no change: no event
    store.beat("a1", "r", seen_seq=7)
    started, decided = store.start_turn("a1", "r", None, "t1", "turn 1")
    assert started.state == "running" and decided.control == "run"
    found = team.ok("events")["events"][before:]
    assert [(e["actor"], e["kind"]) for e in found] == [("runner:a1", "runner_state"), ("runner:a1", "turn_started")]
    assert found[1]["data"]["turn"] == 1
    listed = team.ok("runner", "list")["runners"]
    assert [(r["agent"], r["state"], r["turn"], r["seen_seq"]) for r in listed] == [("a1", "running", 1, 7)]
    store.exited("a1", "r", "SIGTERM received", turn=None, released=[])
    assert team.ok("runner", "list")["runners"][0]["state"] == "stopped"


def test_a_runner_silent_too_long_is_listed_as_gone(team, store, clock):
    store.start("a1", "r", "shell", DEAD_PID, "elsewhere")
    clock.advance(runners.STALE + 1)
    assert team.ok("runner", "list")["runners"][0]["state"] == "gone"


def test_only_a_person_controls_a_runner_and_only_their_signature_counts(team, store, tester):
    with pytest.raises(Forbidden):
        store.control("a1", "pause", "human:tester")  # a name is not a key
    assert store.control_of("a1").control == "run"
    store.control("a1", "pause", tester)
    decided = store.control_of("a1")
    assert decided.control == "pause" and decided.by == "human:tester" and decided.problem is None
    assert store.control_of("a2").control == "run"  # another agent's runner is not touched
    store.control("a1", "stop", tester)
    with pytest.raises(Conflict) as stopped:
        store.start("a1", "r", "shell", DEAD_PID, "h")
    assert stopped.value.code == "runner_stopped"
    person_ok(team, "runner", "resume", "a1")
    assert store.control_of("a1").control == "run"
    assert store.start("a1", "r", "shell", DEAD_PID, "h").control.control == "run"
    assert team.ok("verify")["verify"]["ok"]


def test_an_altered_control_pauses_the_runner_instead_of_lifting_anything(team, store, tester):
    store.control("a1", "pause", tester)
    store.control("a1", "resume", tester)
    newest = [e for e in team.ok("events")["events"] if e["kind"] == "runner_resumed"][-1]["seq"]
    raw = team.store()
    try:
        raw.run(
            lambda: raw.execute(
                "UPDATE event SET data = ? WHERE seq = ?", ('{"agent":"a1","control":"resume","x":1}', newest)
            )
        )
    finally:
        raw.close()
    decided = store.control_of("a1")
    assert decided.control == "pause" and "not a valid signed decision" in decided.problem


def test_controls_name_a_registered_agent(team):
    assert person(team, "runner", "pause", "nobody").code == 4
    assert person(team, "runner", "pause", "bad id!").code == 3


def test_no_turn_starts_once_a_pause_or_stop_is_recorded(team, store, tester):
    """The turn's start reads the control in its own transaction: a pause or a
    stop recorded after the runner last looked still refuses it, writes
    nothing, and says what the runner obeys now; a resume lets it start."""
    store.start("a1", "r", "shell", DEAD_PID, "h")
    for what in ("pause", "stop"):
        store.control("a1", what, tester)
        before = team.ok("events")["events"]
        started, decided = store.start_turn("a1", "r", None, "t1", "turn 1")
        assert started is None and decided.control == what and decided.by == "human:tester"
        assert team.ok("events")["events"] == before and team.ok("runner", "list")["runners"][0]["turn"] == 0
    store.control("a1", "resume", tester)
    started, decided = store.start_turn("a1", "r", None, "t1", "turn 1")
    assert started.turn == 1 and decided.control == "run"
    assert team.ok("events")["events"][-1]["kind"] == "turn_started"


def test_a_runner_starts_reading_the_board_at_its_own_start(team, store, tester):
    store.control("a1", "pause", tester)
    view = store.start("a1", "r", "shell", DEAD_PID, "h")
    started = [e for e in team.ok("events")["events"] if e["kind"] == "runner_started"][-1]
    assert view.seen_seq == started["seq"] and view.control.control == "pause"
