"""``loopx run`` driving the real Claude Code binary against the scripted model.

Real runner processes (``loopx run --agent … --runtime claude-code --bin …``)
start real ``claude -p`` sessions; the runtime reaches the scripted model on
127.0.0.1 through the environment the runner passes on (the runner's own,
without the person's key). The "model" is a ``Brain``: it reads each session's
packet (the prompt the runner built) and does what the card's next action
says, so what carries over between sessions is only what the board kept.

Assertions are on the board's final state and the event log (``loopx --json``),
never on log text; waits poll the board with a deadline.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import threading

import pytest

from ..runner.conftest import Watch
from . import model_server, runtimes
from .harness import (
    LOOPX,
    Project,
    answer_as_person,
    as_person,
    claude_env,
    codex_env,
    codex_model_args,
)
from .model_server import Call, Say, Usage

pytestmark = [pytest.mark.slow]

DEADLINE = 120.0  # seconds for one awaited state of the board (a shared, loaded machine)
NEXT = re.compile(r"## Next action\\n(.*?)\\n")
TODO = re.compile(r"- \[ \] (\d+)\. (.*?)\\n")
STEP = re.compile(r"do step (\d+)")


# -- the model's side -----------------------------------------------------------------------------


class Brain:
    """The scripted model across sessions: at a session's first request it reads
    the packet, does the step the next action names, closes the open todos, adds
    one, and writes back the step after; then it ends the turn. ``special``
    overrides what it does in a given step (``step → function(request, n)``)."""

    def __init__(self, card: str):
        self.card = card
        self.firsts: list[str] = []  # each session's first request, as the binary sent it
        self.special: dict = {}  # step → what the session does first instead of writing back
        self.follow_up: dict = {}  # tool → what comes after a call of it (its result in the request)
        self.last: Call | None = None

    def __call__(self, request):
        reply = self._reply(request)
        self.last = reply if isinstance(reply, Call) else None
        return reply

    def _reply(self, request):
        text = request.text()
        if request.last_tool_result() is None:  # a session starts: its prompt is the packet
            self.firsts.append(text)
            n = self.step_of(text)
            if n in self.special:
                return self.special[n](request, n)
            return self.writeback(n)
        if self.last is not None and self.last.tool in self.follow_up:
            return self.follow_up[self.last.tool](request)
        return Say("Turn done.")

    @staticmethod
    def step_of(text: str) -> int:
        found = NEXT.search(text)
        step = STEP.search(found.group(1)) if found else None
        return int(step.group(1)) if step else 0

    def writeback(self, n: int, summary: str = "", next: str = "") -> Call:
        """What session ``len(firsts)`` writes back: closes the todos its packet showed, adds its own."""
        open_todos = [int(i) for i, _ in TODO.findall(self.firsts[-1])]
        return Call(
            "mcp__loopx__writeback",
            dict(
                card=self.card,
                summary=summary or f"did step {n}",
                next=next or f"do step {n + 1}",
                todos_added=[f"todo of session {len(self.firsts)}"],
                todos_done=open_todos,
            ),
        )


def scripted(model, brain: Brain, steps: int = 400) -> None:
    """Every agent-loop request answered by ``brain`` (side calls are not steps)."""
    model.script([brain] * steps)


# -- the person's side ------------------------------------------------------------------------------


class Runners(Watch):
    """``loopx run`` processes started as the person starts them, and the board read back
    (waiting with the runner suite's ``Watch.until`` / ``Watch.ended``)."""

    def __init__(self, project: Project, model, tmp_path):
        self.project = project
        self.model = model
        self.procs: list[tuple[subprocess.Popen, object]] = []
        self.logs = tmp_path / "runner-logs"
        self.logs.mkdir(exist_ok=True)

    def start(
        self, agent: str, *args: str, binary: str = "claude-code", mode: str = "bypassPermissions"
    ) -> subprocess.Popen:
        """``mode``: Claude Code's permission mode (README's runner command says ``acceptEdits``)."""
        env = claude_env(self.project, self.model)  # what the runtime needs reaches it through the runner
        argv = [
            str(LOOPX),
            "run",
            "--agent",
            agent,
            "--runtime",
            "claude-code",
            "--bin",
            str(runtimes.binary(binary)),
            "--turn-limit",
            "90s",
            *args,
            "--",
            "--permission-mode",
            mode,
        ]
        return self.spawn(agent, argv, env, self.project.root)

    def codex(self, agent: str, *args: str) -> subprocess.Popen:
        """README's Codex runner command, with the scripted model as its model provider."""
        argv = [
            str(LOOPX),
            "run",
            "--agent",
            agent,
            "--runtime",
            "codex",
            "--bin",
            str(runtimes.binary("codex")),
            "--turn-limit",
            "90s",
            *args,
            "--",
            "--sandbox",
            "workspace-write",
            *codex_model_args(self.model),
        ]
        return self.spawn(agent, argv, codex_env(self.project), self.project.root)

    def close(self) -> None:
        for proc, _ in self.procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait(timeout=30)

    def explain(self) -> str:
        runners = "\n".join(
            f"--- {log.name} (exit {proc.poll()})\n{log.read_text(errors='replace')[-6000:]}"
            for proc, log in self.procs
        )
        return f"{runners}\n--- model server\n{self.model.log()[-6000:]}"

    # -- the board, as ``loopx --json`` shows it ------------------------------------------------------
    def events(self, kind: str | None = None) -> list[dict]:
        found = self.project.loopx("export").data["events"]  # the whole log (`events` pages by 1,000 at most)
        return [e for e in found if kind is None or e["kind"] == kind]

    def runner(self, agent: str) -> dict | None:
        return next((r for r in self.project.loopx("runner", "list").data["runners"] if r["agent"] == agent), None)


@pytest.fixture
def runners(project, model, tmp_path, monkeypatch):
    monkeypatch.setattr(model_server, "MAX_REQUESTS", 400)  # a runner's many sessions share one server
    r = Runners(project, model, tmp_path)
    yield r
    r.close()


def summaries(project: Project, card: str, source: str = "mcp") -> list[str]:
    return [e["summary"] for e in project.evidence(card) if e["source"] == source]


def set_up(project: Project, agent: str = "cc1") -> str:
    project.init("claude-code", agent)
    return project.card("Count to twenty", "--next", "do step 1")


def sessions_alive(model) -> list[int]:
    """Processes of this test's runtime sessions that can reach the model or the board:
    Claude Code and the ``loopx`` hooks and MCP server it started (their environment
    points at this test's model server). Not the sandbox's ``socat`` bridge: it is a
    child of Claude Code that outlives a SIGKILLed runner's turn (PITFALLS), and can
    only forward to Claude Code's own proxy, which died with it."""
    mark = f"ANTHROPIC_BASE_URL={model.url}\0".encode()
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/environ", "rb") as fh:
                ours = mark in fh.read() + b"\0"
            with open(f"/proc/{entry}/stat") as fh:
                name, rest = fh.read().split("(", 1)[1].rsplit(")", 1)
        except OSError:
            continue
        if ours and rest.split()[0] != "Z" and name != "socat":
            found.append(int(entry))
    return found


def charged_as_reported(project: Project, model, card: str, left_out: int = 0) -> None:
    """Every model call of the card's sessions charged once: the card's tokens are
    what the scripted model reported (minus ``left_out``: calls no session saw)."""
    reported = sum(u.input + u.cache_write + u.cache_read + u.output for u in model.usage_reported) - left_out
    charges = [e for e in project.evidence(card) if e["source"] == "hook"]
    assert project.show(card)["quota"]["tokens"]["used"] == reported
    assert sum(e["usage"]["tokens"] for e in charges) == reported


# -- 1 + 2. many sessions of one card, each from the packet the last one left; a gate mid-way --------


def test_a_runner_drives_twenty_sessions_from_packet_to_packet_through_a_gate_a_person_answers(project, model, runners):
    card = set_up(project)
    remote = project.with_remote()
    # the card's turns run in its workspace, where the main checkout (and this bare
    # remote inside it) is read-only to the sandbox: the person lets it be written
    settings = json.loads((project.root / ".claude" / "settings.json").read_text())
    settings["sandbox"]["filesystem"]["allowWrite"] = [str(remote)]
    (project.root / ".claude" / "settings.json").write_text(json.dumps(settings))
    brain = Brain(card)
    asked = threading.Event()

    def push(request, n):  # step 8 needs a push: the hook turns it into a gate
        return Call("Bash", {"command": "git push origin main", "description": "publish"})

    def after_push(request):
        result = request.last_tool_result() or ""
        n = Brain.step_of(brain.firsts[-1])
        if "G-1" in result:  # denied: say so on the card, and try again next session
            asked.set()
            return brain.writeback(n, summary=f"asked a person to push at step {n}", next=f"do step {n}")
        return brain.writeback(n)

    brain.special[8] = push
    brain.follow_up = {"Bash": after_push}
    scripted(model, brain)
    proc = runners.start("cc1", "--turns", "20")
    row = runners.until(
        "the runner waits on the gate", lambda: (r := runners.runner("cc1")) and r["state"] == "waiting" and r
    )
    assert row["gate"] == "G-1" and row["card"] == card
    assert not project.pushed()
    waited = runners.events("turn_started")
    answer_as_person(project, "G-1")
    assert runners.ended(proc, timeout=600) == 0, runners.explain()
    assert not model.problems, runners.explain()

    # the board: twenty steps done, one asked, one push, nothing doubled
    expected = (
        [f"did step {n}" for n in range(1, 8)]
        + ["asked a person to push at step 8"]
        + [f"did step {n}" for n in range(8, 20)]
    )
    assert summaries(project, card) == expected
    assert project.pushed()
    gate = project.gate("G-1")
    assert gate["status"] == "approved" and gate["answered_by"].startswith("human") and gate["scope"] == "git:push"
    assert len(project.gates()) == 1
    shown = project.show(card)
    assert shown["next"] == "do step 20" and shown["status"] == "ready" and shown["lease"] is None
    assert len([t for t in shown["todos"] if not t["done"]]) == 1

    # each session started from the packet the last one left
    assert len(brain.firsts) == 20
    assert [Brain.step_of(first) for first in brain.firsts] == list(range(1, 9)) + list(range(8, 20))
    for session, first in enumerate(brain.firsts[1:], start=2):
        assert "- [ ] " in first and f"todo of session {session - 1}\\n" in first  # the todo the last session added
        assert f"todo of session {session - 2}\\n" not in first  # and the one it closed

    # the event log: one claim held across the sessions; no turn while the person had not answered
    events = runners.events()
    started = [e for e in events if e["kind"] == "turn_started"]
    finished = [e for e in events if e["kind"] == "turn_finished"]
    assert [e["data"]["turn"] for e in started] == list(range(1, 21))
    assert [e["data"]["outcome"] for e in finished] == ["finished"] * 20 and all(
        e["data"]["evidence"] for e in finished
    )
    assert [e["data"]["agent"] for e in events if e["kind"] == "claimed"] == ["cc1"]
    answered = next(e for e in events if e["kind"] == "gate_answered")
    assert len(waited) == 8 and all(e["seq"] > answered["seq"] for e in started[8:])
    exited = [e for e in events if e["kind"] == "runner_exited"]
    assert len(exited) == 1 and "20 turn" in exited[0]["data"]["why"] and exited[0]["data"]["released"] == [card]
    charged_as_reported(project, model, card)


# -- 4. a runner SIGKILLed mid-turn; another agent's runner takes the card over after the lease --------


def test_a_sigkilled_runners_card_is_taken_over_after_its_lease_nothing_lost_or_doubled(project, model, runners):
    card = set_up(project)
    as_person(project, "agent", "add", "cc9")
    brain = Brain(card)
    hanging, release = threading.Event(), threading.Event()
    unseen = Usage(input=1, output=1)  # the reply nobody received: never charged

    def hang(request, n):  # cc1's second session waits on the model … and its runner is killed
        del brain.special[2]
        hanging.set()
        release.wait(DEADLINE)
        return Say("(too late)", usage=unseen)

    brain.special[2] = hang
    scripted(model, brain)
    doomed = runners.start("cc1", "--lease", "3s")
    runners.until("cc1's second turn is in flight", hanging.is_set)
    doomed.expected_exit = True
    doomed.kill()
    runners.ended(doomed)
    runners.until("the session died with its runner", lambda: not sessions_alive(model))
    release.set()
    heir = runners.start(
        "cc9", "--turns", "2"
    )  # (its own lease the default: a slow session on a loaded machine must not outlive it)
    assert runners.ended(heir) == 0

    written = [(e["agent"], e["summary"]) for e in project.evidence(card) if e["source"] in ("mcp", "runner")]
    assert written == [("cc1", "did step 1"), ("cc9", "did step 2"), ("cc9", "did step 3")]
    events = runners.events()
    expired = [e for e in events if e["kind"] == "lease_expired"]
    assert [(e["data"]["holder"], e["data"]["token"]) for e in expired] == [("cc1", 1)]
    assert [(e["data"]["agent"], e["data"]["token"]) for e in events if e["kind"] == "claimed"] == [
        ("cc1", 1),
        ("cc9", 2),
    ]
    heirs = [e for e in events if e["kind"] == "turn_started" and e["actor"] == "runner:cc9"]
    assert len(heirs) == 2 and heirs[0]["seq"] > expired[0]["seq"]  # only once the lease had run out
    assert [e["data"]["outcome"] for e in events if e["kind"] == "turn_finished"] == [
        "finished"
    ] * 3  # the killed turn: no record
    shown = project.show(card)
    assert shown["next"] == "do step 4" and shown["lease"] is None and shown["quota"]["turns"]["used"] == 3
    assert (
        Brain.step_of(brain.firsts[2]) == 2 and "todo of session 1\\n" in brain.firsts[2]
    )  # the heir started where cc1 left it
    charged_as_reported(project, model, card, left_out=unseen.input + unseen.output)


# -- 5. SIGTERM: the turn in flight finishes, the card is released ------------------------------------


def test_sigterm_lets_the_turn_in_flight_finish_then_releases_the_card(project, model, runners):
    card = set_up(project, "cc1")
    brain = Brain(card)
    in_flight, go_on = threading.Event(), threading.Event()

    def slow(request, n):  # the second session is mid-turn when the runner gets SIGTERM
        del brain.special[2]
        in_flight.set()
        go_on.wait(DEADLINE)
        return brain.writeback(n)

    brain.special[2] = slow
    scripted(model, brain)
    proc = runners.start("cc1", "--grace", "60s", binary="claude-sdk", mode="acceptEdits")  # README's command
    runners.until("the second turn is in flight", in_flight.is_set)
    proc.send_signal(signal.SIGTERM)
    row = runners.until(
        "the runner's row says it is stopping",
        lambda: (r := runners.runner("cc1")) and "SIGTERM" in (r["detail"] or "") and r,
    )
    assert row["state"] == "running" and row["card"] == card  # the turn goes on meanwhile
    go_on.set()
    assert runners.ended(proc) == 0
    assert not sessions_alive(model)

    assert summaries(project, card) == ["did step 1", "did step 2"]
    events = runners.events()
    assert len([e for e in events if e["kind"] == "turn_started"]) == 2  # no turn after the signal
    assert [e["data"]["outcome"] for e in events if e["kind"] == "turn_finished"] == ["finished", "finished"]
    exited = [e["data"] for e in events if e["kind"] == "runner_exited"]
    assert (
        len(exited) == 1
        and exited[0]["why"] == "SIGTERM received"
        and exited[0]["turn"] == "finished"
        and exited[0]["released"] == [card]
    )
    released = [e for e in events if e["kind"] == "released"]
    assert len(released) == 1 and released[0]["seq"] < next(e["seq"] for e in events if e["kind"] == "runner_exited")
    shown = project.show(card)
    assert shown["status"] == "ready" and shown["lease"] is None and shown["next"] == "do step 3"
    assert runners.runner("cc1")["state"] == "stopped"
    charged_as_reported(project, model, card)


# -- 5b. a stop while Claude Code's own permission question waits: no question left behind ----------


@pytest.mark.parametrize("binary", ["claude-code", "claude-sdk"])
def test_a_stop_withdraws_claude_codes_pending_permission_question_and_gives_the_card_back(
    project, model, runners, binary
):
    """#39: the person stops (`loopx runner stop`) a runner whose Claude Code turn waits on its
    own permission question (2.1.197: through the permission prompt tool `loopx run` names;
    2.1.335: its PermissionRequest hook). The gate is withdrawn (an event), the lease released,
    the card ready: nothing pending that no turn waits on, nothing blocked."""
    project.init("claude-code", "cc1", sandbox=False)  # (in its sandbox 2.1.197 runs the command without asking)
    card = project.card("Make a file", "--next", "do step 1")
    brain = Brain(card)
    brain.special[1] = lambda request, n: Call("Bash", {"command": "touch made-it.txt", "description": "make a file"})
    scripted(model, brain)
    proc = runners.start("cc1", "--grace", "3s", binary=binary, mode="default")
    gate = runners.until(
        "Claude Code asks its own question",
        lambda: next(
            (g for g in project.gates() if g["status"] == "pending" and "asks to use Bash" in g["question"]), None
        ),
    )
    assert project.show(card)["status"] == "waiting"
    as_person(project, "runner", "stop", "cc1")
    assert runners.ended(proc) == 0
    assert not sessions_alive(model)

    withdrawn = project.gate(gate["id"])
    assert withdrawn["status"] == "withdrawn" and withdrawn["answered_by"] == "system"
    shown = project.show(card)
    assert shown["status"] == "ready" and shown["lease"] is None and shown["pending_gate"] is None
    assert [g for g in project.gates() if g["status"] == "pending"] == []
    events = runners.events()
    said = [e for e in events if e["kind"] == "gate_withdrawn"]
    assert len(said) == 1 and "the runner stopped (stopped by human:" in said[0]["data"]["reason"]
    exited = [e["data"] for e in events if e["kind"] == "runner_exited"]
    assert exited[0]["released"] == [card]
    assert not (project.root / "made-it.txt").exists()
    assert (
        withdrawn["kind"] == "runtime"
    )  # (the runtime's own question: an agent's own question keeps its card waiting)


# -- 3. a spent window pauses the card; the runner resumes it after the refill --------------------------


def test_a_spent_window_pauses_the_card_and_the_runner_resumes_it_after_the_refill(project, model, runners):
    card = set_up(project)
    as_person(project, "card", "window", card, "--every", "12s", "--turns", "1")  # longer than one session
    brain = Brain(card)
    scripted(model, brain)
    proc = runners.start("cc1", "--turns", "2", mode="acceptEdits")  # README's command
    assert runners.ended(proc) == 0

    assert summaries(project, card) == ["did step 1", "did step 2"]
    events = runners.events()
    paused = [e for e in events if e["kind"] == "paused"]
    assert [e["data"]["reason"] for e in paused] == ["window", "window"]  # after each turn: one per 12 s
    assert paused[0]["data"]["wake_at"]
    asleep = [
        e
        for e in events
        if e["kind"] == "runner_state" and e["data"].get("state") == "asleep" and e["seq"] > paused[0]["seq"]
    ]
    assert asleep and asleep[0]["data"]["wake_at"] == paused[0]["data"]["wake_at"]  # it slept until the refill
    resumed = [e for e in events if e["kind"] == "resumed"]
    assert [(e["actor"], e["data"]["reason"]) for e in resumed] == [("system", "window")]
    second = [e for e in events if e["kind"] == "turn_started"][1]
    assert second["seq"] > resumed[0]["seq"] and second["at"] >= paused[0]["data"]["wake_at"]
    assert Brain.step_of(brain.firsts[1]) == 2


# -- the same loop on Codex ------------------------------------------------------------------------


def test_a_codex_runner_drives_sessions_from_packet_to_packet(project, model, runners):
    """Codex 0.171 (``codex exec --json``), README's runner command: three sessions, each
    from the packet the last one left, every model call charged once."""
    project.init("codex", "cx1")
    card = project.card("Count to three", "--next", "do step 1")
    brain = Brain(card)
    scripted(model, brain)
    proc = runners.codex("cx1", "--turns", "3")
    assert runners.ended(proc) == 0
    assert not model.problems, runners.explain()

    assert summaries(project, card) == ["did step 1", "did step 2", "did step 3"]
    assert [Brain.step_of(first) for first in brain.firsts] == [1, 2, 3]
    assert "todo of session 2\\n" in brain.firsts[2] and "todo of session 1\\n" not in brain.firsts[2]
    events = runners.events()
    assert [e["data"]["outcome"] for e in events if e["kind"] == "turn_finished"] == ["finished"] * 3
    shown = project.show(card)
    assert shown["next"] == "do step 4" and shown["quota"]["turns"]["used"] == 3
    # OpenAI counts cached input inside input_tokens (none here)
    assert shown["quota"]["tokens"]["used"] == sum(u.input + u.cache_read + u.output for u in model.usage_reported)


def test_a_codex_runner_for_another_agent_than_the_checkouts_is_refused(project, model, runners):
    """Codex's hooks and MCP server name init's agent in .codex/config.toml: a runner
    for another agent there would act as init's agent. Refused, the board unchanged."""
    project.init("codex", "cx1")
    project.card("Count to three", "--next", "do step 1")
    as_person(project, "agent", "add", "cx2")
    before = runners.events()
    proc = runners.codex("cx2")
    proc.expected_exit = True
    assert runners.ended(proc) == 2
    assert runners.events() == before and runners.runner("cx2") is None
    assert "set up for agent cx1" in runners.explain()
