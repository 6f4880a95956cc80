"""``loopx run`` driving the real Claude Code binary (and Codex), turn after
turn, against the scripted model on 127.0.0.1.

Real runner processes (the installed ``loopx run``, started the way README
says, as the person, with the runtime's binary given by ``--bin``); each turn
a separate ``claude -p`` session whose "model" is ``Agent`` below: it reads the
prompt the runner gave (the card's continuation packet), does the step its next
action names through the real ``loopx`` MCP server, and writes the following
step back — so the board is the loop's only memory. A person answers gates
with their signed key (``answer_as_person``). The tests wait on the board
(``Watch.until``, a deadline) and assert on its final state and event log.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import threading
from dataclasses import dataclass, field

import pytest

from tests.conftest import Board
from tests.runner.conftest import Watch, alive

from . import runtimes
from .harness import LOOPX, answer_as_person, as_person, claude_env, codex_env, codex_model_args
from .model_server import Call, Say

pytestmark = pytest.mark.slow

AGENT = "cc1"
CLAUDE = "claude-sdk"  # Claude Code 2.1.335 (waits for its MCP servers before the first request)


@dataclass
class SessionSeen:
    turn_id: str
    step: int
    prompt: str
    calls: int = 0


@dataclass
class Agent:
    """The scripted model as an agent: each session does the step its prompt's
    next action names. ``plan``: step → ``work`` (default) | ``gate`` (ask a
    person, then write back) | ``hang`` (the first session at that step gets no answer
    from the model until ``release``, then works)."""

    plan: dict = field(default_factory=dict)
    sessions: list = field(default_factory=list)
    hung: threading.Event = field(default_factory=threading.Event)
    release: threading.Event = field(default_factory=threading.Event)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def __call__(self, request):
        prompt = runner_prompt(request)
        turn_id = re.search(r"--turn-id (\S+)", prompt).group(1)
        card = re.search(r"working through LoopX on (LX-\d+)", prompt).group(1)
        step = int(re.search(r"## Next action\n+step (\d+)", prompt).group(1))
        with self.lock:
            seen = next((s for s in self.sessions if s.turn_id == turn_id), None)
            if seen is None:
                seen = SessionSeen(turn_id, step, prompt)
                self.sessions.append(seen)
            stage, seen.calls = seen.calls, seen.calls + 1
        action = self.plan.get(step, "work")
        todo = re.search(r"- \[ \] (\d+)\. after step", prompt)
        done = [int(todo.group(1))] if todo else []

        def writeback(summary):
            return Call("mcp__loopx__writeback", {
                "card": card, "summary": summary, "turn_id": turn_id, "next": f"step {step + 1}",
                "todos_added": [f"after step {step}: check it"], "todos_done": done,
            })

        if action == "hang" and stage == 0 and not self.hung.is_set():
            self.hung.set()
            self.release.wait(120)
            return writeback(f"did step {step}")  # (a killed runtime never receives it)
        if action == "gate":
            if stage == 0:
                return Call("mcp__loopx__gate_ask", {"card": card, "question": f"may I go on after step {step}?"})
            if stage == 1:
                return writeback(f"asked about step {step}")
            return Say("Waiting for a person.")
        if stage == 0:
            return writeback(f"did step {step}")
        return Say(f"Step {step} done.")


def runner_prompt(request) -> str:
    """The prompt ``loopx run`` gave this session (the user message that holds it)."""
    for text in _texts(request.body.get("messages") or request.body.get("input") or []):
        if "working through LoopX on" in text:
            return text
    raise AssertionError("no runner prompt in the request")


def _texts(value):
    if isinstance(value, str):
        yield value
    elif isinstance(value, list):
        for item in value:
            yield from _texts(item)
    elif isinstance(value, dict):
        for key in ("content", "text"):
            if key in value:
                yield from _texts(value[key])


class Runners(Watch):
    """tests/runner's ``Watch`` on the e2e project: a runner is the installed
    ``loopx run`` in the person's environment plus what the runtime needs to
    reach the scripted model (its URL; a PATH without loopx), started with the
    arguments README gives."""

    def __init__(self, project, model, monkeypatch, tmp_path):
        super().__init__(Board(project.root, monkeypatch), tmp_path)
        self.project, self.model = project, model

    def claude(self, agent: str, *args: str) -> subprocess.Popen:
        argv = [str(LOOPX), "run", "--agent", agent, "--runtime", "claude-code", "--bin", str(runtimes.binary(CLAUDE)), *args, "--", "--permission-mode", "acceptEdits"]
        return self.start(agent, argv, claude_env(self.project, self.model))

    def codex(self, agent: str, *args: str) -> subprocess.Popen:
        argv = [str(LOOPX), "run", "--agent", agent, "--runtime", "codex", "--bin", str(runtimes.binary("codex")), *args, "--", "--sandbox", "workspace-write", *codex_model_args(self.model)]
        return self.start(agent, argv, codex_env(self.project))

    def explain(self) -> str:
        return super().explain() + "\n--- model server\n" + self.model.log()

    def state(self, agent: str, state: str, **fields):
        """Wait until ``agent``'s runner row is in ``state`` (and has ``fields``); the row."""

        def check():
            row = self.runner(agent)
            return row if row is not None and row.state == state and all(getattr(row, k) == v for k, v in fields.items()) else None

        return self.until(f"{agent}'s runner is {state} {fields or ''}", check)

    def awaited(self, what: str, event: threading.Event) -> None:
        """Wait for a thread event of the scripted model (a session reached a step)."""
        self.until(what, event.is_set)


class _Report:
    """What a failing test shows (tests/e2e/conftest.py prints the project's sessions)."""

    runtime = "loopx run"

    def __init__(self, watch):
        self.watch = watch

    def explain(self) -> str:
        return self.watch.explain()


@pytest.fixture
def agent(model):
    a = Agent()
    model.max_requests = 2000  # many sessions through one server
    model.script([a] * 1000)
    yield a
    a.release.set()


@pytest.fixture
def runners(project, model, monkeypatch, tmp_path):
    """Runners on a project set up for Claude Code and ``AGENT`` (README's ``init``)."""
    project.init("claude-code", AGENT)
    w = Runners(project, model, monkeypatch, tmp_path)
    project.sessions.append(_Report(w))
    yield w
    w.close()


def board_log(project) -> list[dict]:
    """The board's event log, as ``loopx export`` gives it."""
    return project.loopx("export").data["events"]


def kinds(events, kind: str, actor: str | None = None) -> list[dict]:
    return [e for e in events if e["kind"] == kind and (actor is None or e["actor"] == actor)]


def model_tokens(model) -> int:
    """The tokens the scripted model said its answers used."""
    return sum(u.input + u.output + u.cache_read + u.cache_write for u in model.usage_reported)


def children(pid: int) -> list[int]:
    found = []
    for task in os.listdir(f"/proc/{pid}/task"):
        with open(f"/proc/{pid}/task/{task}/children") as fh:
            found += [int(c) for c in fh.read().split()]
    return found


def test_twenty_turns_each_session_from_the_last_packet_and_a_gate_a_person_answers(project, model, agent, runners):
    """One runner, 20 separate Claude Code sessions of one card: each starts from the
    packet the one before left (its next action and todos); at step 10 the agent asks
    a person, the runner waits, the person answers with their key, the loop goes on."""
    card = project.card("a long job", "--next", "step 1")
    agent.plan = {10: "gate"}
    proc = runners.claude(AGENT, "--turns", "20")
    row = runners.state(AGENT, "waiting", gate=1)
    assert row.card == 1 and runners.turns_started(AGENT) == 10
    assert answer_as_person(project, "G-1")["status"] == "approved"
    assert runners.ended(proc, 600) == 0
    assert not model.problems

    # Each session began from the packet the last one left.
    assert [s.step for s in agent.sessions] == list(range(1, 21))
    for before, after in zip(agent.sessions, agent.sessions[1:]):
        assert f"after step {before.step}: check it" in after.prompt  # the todo it added
        assert f"after step {before.step - 1}: check it" not in after.prompt  # the todo it closed
    events = board_log(project)
    started = kinds(events, "turn_started", f"runner:{AGENT}")
    assert [e["data"]["turn_id"] for e in started] == [s.turn_id for s in agent.sessions]  # one session per turn, in order

    written = [e for e in project.evidence(card) if e["source"] == "mcp"]
    assert [e["summary"] for e in written] == [f"did step {n}" for n in range(1, 10)] + ["asked about step 10"] + [f"did step {n}" for n in range(11, 21)]
    assert [e["turn_id"] for e in written] == [s.turn_id for s in agent.sessions]  # each under its turn's id, none lost, none doubled
    shown = project.show(card)
    assert shown["next"] == "step 21" and shown["status"] == "ready" and shown["lease"] is None
    assert [t["text"] for t in shown["todos"] if not t["done"]] == ["after step 20: check it"]
    assert shown["quota"]["turns"]["used"] == 20
    assert shown["quota"]["tokens"]["used"] == model_tokens(model)  # every model call charged exactly once

    answered = kinds(events, "gate_answered")
    assert len(answered) == 1 and answered[0]["actor"].startswith("human:") and answered[0]["signed"]
    assert started[9]["seq"] < answered[0]["seq"] < started[10]["seq"]  # turn 11 only once the person had answered
    assert [e["data"]["outcome"] for e in kinds(events, "turn_finished")] == ["finished"] * 20
    exited = kinds(events, "runner_exited")
    assert len(exited) == 1 and exited[0]["data"]["released"] == [card]
    assert project.loopx("verify").data["verify"]["ok"]


def test_a_spent_window_pauses_the_card_and_the_runner_resumes_it_after_the_refill(project, model, agent, runners):
    """One turn per 10 s (long enough that a loaded machine still finishes a turn
    within it): the turn's writeback spends the window, the card pauses until the
    refill, the runner sleeps until then and the next turn starts by itself."""
    card = project.card("rationed", "--next", "step 1")
    as_person(project, "card", "window", card, "--every", "10s", "--turns", "1")
    proc = runners.claude(AGENT, "--turns", "2")
    assert runners.ended(proc, 300) == 0
    assert not model.problems

    events = board_log(project)
    paused = kinds(events, "paused")
    assert [e["data"]["reason"] for e in paused] == ["window", "window"]  # after each turn
    wake_at = paused[0]["data"]["wake_at"]
    first, second = kinds(events, "turn_started")
    asleep = [e for e in kinds(events, "runner_state", f"runner:{AGENT}") if e["data"]["state"] == "asleep" and first["seq"] < e["seq"] < second["seq"]]
    assert [e["data"]["wake_at"] for e in asleep] == [wake_at]  # it slept until the refill, once
    resumed = kinds(events, "resumed")
    assert resumed[0]["actor"] == "system" and resumed[0]["data"]["reason"] == "window"  # by itself, no person
    assert asleep[0]["seq"] < resumed[0]["seq"] < second["seq"] and second["at"] >= wake_at
    assert [e["summary"] for e in project.evidence(card) if e["source"] == "mcp"] == ["did step 1", "did step 2"]
    assert [e["data"]["outcome"] for e in kinds(events, "turn_finished")] == ["finished"] * 2
    shown = project.show(card)
    assert shown["quota"]["turns"]["used"] == 2 and shown["quota"]["tokens"]["used"] == model_tokens(model)


def test_a_sigkilled_runners_card_is_taken_over_after_its_lease_nothing_lost_or_doubled(project, model, agent, runners):
    as_person(project, "agent", "add", "cc2")
    card = project.card("job", "--next", "step 1")
    agent.plan = {2: "hang"}  # the first session of step 2 waits on the model, mid-turn
    doomed = runners.claude(AGENT, "--lease", "3s")
    runners.awaited("turn 2 is in the middle of a model call", agent.hung)
    turn = children(doomed.pid)
    assert len(turn) == 1 and alive(turn[0])  # the runtime, its own process group
    doomed.expected_exit = True
    doomed.send_signal(signal.SIGKILL)
    runners.ended(doomed)
    runners.until("the turn died with its runner", lambda: not alive(turn[0]))
    charged_before = model_tokens(model)
    heir = runners.claude("cc2", "--lease", "3s", "--turns", "2")
    assert runners.ended(heir, 300) == 0

    events = board_log(project)
    written = [(e["agent"], e["summary"]) for e in project.evidence(card) if e["source"] == "mcp"]
    assert written == [(AGENT, "did step 1"), ("cc2", "did step 2"), ("cc2", "did step 3")]
    expired = kinds(events, "lease_expired")
    assert [(e["data"]["holder"], e["data"]["token"]) for e in expired] == [(AGENT, 1)]
    assert [(e["data"]["agent"], e["data"]["token"]) for e in kinds(events, "claimed")] == [(AGENT, 1), ("cc2", 2)]
    first_of_heir = kinds(events, "turn_started", "runner:cc2")[0]
    assert first_of_heir["seq"] > expired[0]["seq"]  # only once the lease had run out
    shown = project.show(card)
    assert shown["quota"]["turns"]["used"] == 3  # the killed turn wrote nothing and was charged nothing
    assert shown["quota"]["tokens"]["used"] == model_tokens(model) > charged_before
    assert shown["next"] == "step 4" and shown["status"] == "ready"


def test_sigterm_lets_the_turn_finish_then_releases_the_card(project, model, agent, runners):
    card = project.card("job", "--next", "step 1")
    agent.plan = {2: "hang"}
    proc = runners.claude(AGENT, "--grace", "60s")
    runners.awaited("turn 2 is in the middle of a model call", agent.hung)
    proc.send_signal(signal.SIGTERM)
    row = runners.until("the runner says it is stopping", lambda: (r := runners.runner(AGENT)) and "SIGTERM" in (r.detail or "") and r)
    assert row.state == "running" and row.card == 1
    agent.release.set()  # the model answers: the turn writes back and ends
    assert runners.ended(proc, 120) == 0

    events = board_log(project)
    exited = kinds(events, "runner_exited")
    assert len(exited) == 1 and exited[0]["data"]["why"] == "SIGTERM received"
    assert exited[0]["data"]["turn"] == "finished" and exited[0]["data"]["released"] == [card]
    assert [e["data"]["outcome"] for e in kinds(events, "turn_finished")] == ["finished", "finished"]
    assert kinds(events, "released")[-1]["card"] == card
    shown = project.show(card)
    assert shown["status"] == "ready" and shown["lease"] is None and shown["next"] == "step 3"
    assert [e["summary"] for e in project.evidence(card) if e["source"] == "mcp"] == ["did step 1", "did step 2"]
    assert runners.runner(AGENT).state == "stopped" and runners.turns_started() == 2


def test_a_codex_runner_drives_turns_each_from_the_last_packet(project, model, agent, tmp_path, monkeypatch):
    """The same loop on Codex 0.171 (``codex exec --json``): three sessions, each from
    the packet the last one left, usage charged once from its rollout."""
    project.init("codex", "cx1")
    runners = Runners(project, model, monkeypatch, tmp_path)
    project.sessions.append(_Report(runners))
    try:
        card = project.card("with codex", "--next", "step 1")
        proc = runners.codex("cx1", "--turns", "3")
        assert runners.ended(proc, 300) == 0
    finally:
        runners.close()
    assert not model.problems
    assert [s.step for s in agent.sessions] == [1, 2, 3]
    assert "after step 2: check it" in agent.sessions[2].prompt
    events = board_log(project)
    assert [e["data"]["turn_id"] for e in kinds(events, "turn_started")] == [s.turn_id for s in agent.sessions]
    assert [e["summary"] for e in project.evidence(card) if e["source"] == "mcp"] == ["did step 1", "did step 2", "did step 3"]
    assert [e["data"]["outcome"] for e in kinds(events, "turn_finished")] == ["finished"] * 3
    shown = project.show(card)
    assert shown["next"] == "step 4" and shown["quota"]["turns"]["used"] == 3
    assert shown["quota"]["tokens"]["used"] == model_tokens(model)  # OpenAI counts cached input inside input (none here)
