"""A day with agents (issue #39): the real, pinned Claude Code and Codex
binaries with their sandbox on and a shell agent, set up exactly as README's
"A day with agents" tells a person (README.md), each take a
card from claim to the person's merge.

The person: ``loopx init --for claude-code``, ``loopx init --for codex``,
``loopx agent add`` for the shell agent, a card each (with a verify command:
the card's tests), three ``loopx run`` runners — README's commands — and,
when each card waits on its ``git:merge`` gate, their signed answer. Each
agent, in its card's workspace: edits, a commit (``git add -A``), a writeback
naming an artifact it made there, and its own finish as its packet tells it —
the loopx MCP tools ``writeback`` and ``done`` from Claude Code's and Codex's
sandbox, ``docs/examples/turn.sh`` (README's example turn) for the shell.
At the end every branch is merged on the base and every artifact's recorded
hash is the workspace file's.

The person's board (the real Textual app, headless in the test process,
``board_watch.py``) is open on the same board all along, and at each
checkpoint says what ``loopx runner list`` says of each runner (one liveness
rule): a runner waiting a minute on its card's merge gate is alive and
waiting; an idle runner killed with ``kill -9`` is gone within the liveness
window; a runner the person stops while its Claude Code turn asks a question
leaves no question pending and its card ready.

Also here, each the test that failed before its fix (#39):
- item 1: a sandboxed Claude Code turn finishes its card with the MCP ``done``
  tool; its verify command (the agent's own code) runs confined — it cannot
  write the main checkout nor read the person's key folder;
- item 7: ``git add -A`` in a workspace from inside Claude Code's sandbox.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import shutil
import subprocess
import time
import uuid
from pathlib import Path

import pytest

from loopx_core.rules.liveness import STALE

from . import runtimes
from .board_watch import board_open
from .harness import (
    LOOPX,
    Project,
    answer_as_person,
    as_person,
    claude_env,
    codex_env,
    codex_model_args,
)
from .model_server import Call, Say, ScriptedModel

pytestmark = [pytest.mark.slow]

REPO = Path(__file__).resolve().parents[2]
TURN_SH = REPO / "docs" / "examples" / "turn.sh"  # README's example turn for a shell agent
DEADLINE = float(os.environ.get("LOOPX_E2E_DAY_DEADLINE", "240"))  # one runner's whole day, on a loaded 2-core machine
GATE_WAIT = 62.0  # s the person lets a question wait: longer than the liveness window twice over
GIT_ID = "-c user.name={a} -c user.email={a}@localhost"


@pytest.fixture
def day(installed_runtimes):
    """A git project outside /tmp (Codex's sandbox makes /tmp writable) with a first commit on main."""
    base = Path.home().resolve() / ".cache" / "loopx-e2e" / f"day-{uuid.uuid4().hex[:10]}"
    project = Project(base / "project")
    (project.root / "README.txt").write_text("a day with agents\n")
    project.git("checkout", "-q", "-b", "main")
    project.git("add", "README.txt")
    project.git("commit", "-q", "-m", "first")
    yield project
    project.close()
    shutil.rmtree(base, ignore_errors=True)


# -- the model's side: a plan per session, step n answered after n tool results ----------------------


def _tool_results(request) -> int:
    if request.wire == "anthropic":
        return sum(
            1
            for m in request.body.get("messages") or []
            if m.get("role") == "user" and isinstance(m.get("content"), list)
            for b in m["content"]
            if isinstance(b, dict) and b.get("type") == "tool_result"
        )
    return sum(
        1
        for item in request.body.get("input") or []
        if isinstance(item, dict)
        and item.get("type") in ("function_call_output", "custom_tool_call_output", "mcp_tool_call_output")
    )


def plan(steps: list):
    """Each session does ``steps`` in order (a step after each tool result), then says it is done."""

    def reply(request):
        n = _tool_results(request)
        return steps[n] if n < len(steps) else Say("Done.")

    return reply


def agent_plan(shell, agent: str, card: str, verify_ok: str = "ok") -> list:
    """A sandboxed agent's one turn, as its packet tells it: edit, commit, write back naming
    an artifact made in its workspace, finish with the MCP ``done`` tool."""
    return [
        shell(
            f"mkdir -p {agent} && printf '{verify_ok}\\n' > {agent}/result.txt && echo '{agent} was here' > {agent}/notes.txt && git add -A && "
            f"git {GIT_ID.format(a=agent)} commit -qm '{agent}: the work' && echo committed"
        ),
        Call(
            "mcp__loopx__writeback",
            {
                "card": card,
                "summary": f"{agent} wrote its result and notes",
                "artifacts": [f"{agent}/notes.txt"],
                "next": "finish",
            },
        ),
        Call("mcp__loopx__done", {"card": card, "summary": f"{agent} finished"}),
    ]


def bash(command: str) -> Call:
    return Call("Bash", {"command": command, "description": "work"})


def exec_command(command: str) -> Call:
    return Call("exec_command", {"cmd": command})


# -- the person's side -------------------------------------------------------------------------------


class Runners:
    """``loopx run`` processes as the person starts them (README's commands), each one's log kept."""

    def __init__(self, project: Project, logs: Path):
        self.project, self.logs, self.procs = project, logs, []
        self.models: dict = {}  # the scripted models, by runtime: what each said, for a failure

    def spawn(self, agent: str, argv: list, env: dict) -> subprocess.Popen:
        log = self.logs / f"runner-{agent}.log"
        with open(log, "wb") as fh:
            proc = subprocess.Popen(
                argv, cwd=self.project.root, env=env, stdout=fh, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL
            )
        self.procs.append((proc, log))
        return proc

    def claude(self, agent: str, model: ScriptedModel, mode: str = "acceptEdits") -> subprocess.Popen:
        """README's Claude Code runner (``mode``: its permission mode, README's acceptEdits)."""
        return self.spawn(
            agent,
            [
                str(LOOPX),
                "run",
                "--agent",
                agent,
                "--runtime",
                "claude-code",
                "--bin",
                str(runtimes.binary("claude-code")),
                "--turns",
                "1",
                "--",
                "--permission-mode",
                mode,
            ],
            claude_env(self.project, model),
        )

    def codex(self, agent: str, model: ScriptedModel) -> subprocess.Popen:
        return self.spawn(
            agent,
            [
                str(LOOPX),
                "run",
                "--agent",
                agent,
                "--runtime",
                "codex",
                "--bin",
                str(runtimes.binary("codex")),
                "--turns",
                "1",
                "--",
                "--sandbox",
                "workspace-write",
                *codex_model_args(model),
            ],
            codex_env(self.project),
        )

    def shell(self, agent: str, turns: int | None = 1) -> subprocess.Popen:
        """README's shell runner (``turns``: how many it runs; None: until it is stopped)."""
        env = self.project.env(
            PATH=f"{LOOPX.parent}{os.pathsep}{os.environ.get('PATH', '/usr/bin:/bin')}"
        )  # loopx on the PATH, as installed
        limit = ["--turns", str(turns)] if turns else []
        return self.spawn(
            agent, [str(LOOPX), "run", "--agent", agent, "--runtime", "shell", *limit, "--", str(TURN_SH)], env
        )

    def ended(self, proc: subprocess.Popen) -> int:
        try:
            return proc.wait(timeout=DEADLINE)
        except subprocess.TimeoutExpired:
            pytest.fail(f"a runner did not end within {DEADLINE} s\n{self.explain()}")

    def until(self, what: str, predicate):
        """Wait for ``predicate()`` to be truthy (its value is returned), polling the board;
        a runner that ended meanwhile fails the test at once."""
        deadline = time.monotonic() + DEADLINE
        while time.monotonic() < deadline:
            found = predicate()
            if found:
                return found
            ended = [log.name for proc, log in self.procs if proc.poll() not in (None, 0)]
            if ended:
                pytest.fail(f"waiting for {what}: {', '.join(ended)} ended\n{self.explain()}")
            time.sleep(0.25)
        pytest.fail(f"waiting for {what}: not within {DEADLINE} s\n{self.explain()}")

    def close(self) -> None:
        """Runners still running (a failed test) get the person's SIGTERM, so each ends its
        turn's whole process group (a SIGKILLed runner leaves Claude Code's socat behind)."""
        for proc, _ in self.procs:
            if proc.poll() is None:
                proc.terminate()
        for proc, _ in self.procs:
            try:
                proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=30)

    def explain(self) -> str:
        gates = json.dumps(self.project.loopx("gate", "list", check=False).data.get("gates"), indent=1)[-3000:]
        runners = "\n".join(
            f"--- {log.name} (exit {proc.poll()})\n{log.read_text(errors='replace')[-5000:]}"
            for proc, log in self.procs
        )
        models = "\n".join(f"--- {name}'s model\n{model.log()[-4000:]}" for name, model in self.models.items())
        servers = "\n".join(f"--- {log}\n{log.read_text(errors='replace')[-3000:]}" for log in self._mcp_logs())
        return f"{runners}\n--- gates\n{gates}\n{models}\n--- the loopx MCP servers' logs (Claude Code's)\n{servers or '(none)'}"

    def _mcp_logs(self) -> list[Path]:
        """What Claude Code kept of its MCP connections (``mcp-logs-*``: each call, how it
        ended; under its cache folder, XDG_CACHE_HOME when set, in a folder named after the
        session's working directory, which holds this test's HOME's name)."""
        home = Path(self.project.home)
        caches = {home / ".cache", Path(os.environ.get("XDG_CACHE_HOME") or home / ".cache")}
        return sorted(log for cache in caches for log in cache.glob(f"claude-cli-nodejs/*{home.name}*/mcp-logs-*/*"))[
            -6:
        ]


@pytest.fixture
def runners(day, tmp_path):
    r = Runners(day, tmp_path)
    yield r
    r.close()


def question_on(project: Project, card: str) -> dict | None:
    """The runtime's pending question (a permission it asks the person for) on ``card``."""
    found = [
        g for g in project.loopx("gate", "list", "--pending", "--card", card).data["gates"] if g["kind"] == "runtime"
    ]  # (a runtime's own question: kind runtime)
    return found[0] if found else None


def merge_gate(project: Project, card: str) -> dict:
    found = [g for g in project.loopx("gate", "list", "--card", card).data["gates"] if g["status"] == "pending"]
    assert len(found) == 1 and found[0]["scope"] == "git:merge", found
    return found[0]


def workspace_of(project: Project, card: str) -> Path:
    return Path(project.loopx("context", card, "--format", "json").data["context"]["workspace"]["path"])


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


# -- the day --------------------------------------------------------------------------------------------


async def test_a_day_three_agents_each_take_a_card_from_claim_to_the_persons_merge(day, runners):
    project = day
    project.init("claude-code", "cc1")  # README: init --for claude-code (makes the board and the person's key)
    project.init("codex", "cx1")  # and --for codex in the same checkout
    as_person(project, "agent", "add", "sh1", "--runtime", "shell")
    as_person(project, "agent", "add", "cc2", "--runtime", "claude-code")  # its runner is stopped mid-question
    as_person(project, "agent", "add", "sh2", "--runtime", "shell")  # no card: its runner idles, then is killed
    cards = {  # each with its tests (the verify command), set by the person
        "cc1": project.card(
            "Claude's part",
            "--owner",
            "cc1",
            "--next",
            "write cc1/result.txt",
            "--verify",
            "grep -qx ok cc1/result.txt",
        ),
        "cx1": project.card(
            "Codex's part", "--owner", "cx1", "--next", "write cx1/result.txt", "--verify", "grep -qx ok cx1/result.txt"
        ),
        "sh1": project.card(
            "The shell agent's part",
            "--owner",
            "sh1",
            "--next",
            "note the plan",
            "--verify",
            "grep -q 'note the plan' NOTES.md",
        ),
    }
    stopped_card = project.card("Claude's second part", "--owner", "cc2", "--next", "write cc2/result.txt")
    with ScriptedModel() as claude_model, ScriptedModel() as codex_model, ScriptedModel() as stopped_model:
        claude_model.script([plan(agent_plan(bash, "cc1", cards["cc1"]))] * 40)
        codex_model.script([plan(agent_plan(exec_command, "cx1", cards["cx1"]))] * 40)
        stopped_model.script(
            [plan(agent_plan(bash, "cc2", stopped_card)[:1])] * 10
        )  # asks to run its commit, then is stopped
        runners.models = {"claude": claude_model, "codex": codex_model, "claude cc2": stopped_model}
        async with board_open(project, runners.explain) as board:  # the person's board, open all day
            procs = {"cc1": runners.claude("cc1", claude_model), "cx1": runners.codex("cx1", codex_model)}
            waiter = runners.shell("sh1", turns=None)  # runs until stopped: it waits on its card's merge gate meanwhile
            stopped, killed = runners.claude("cc2", stopped_model), runners.shell("sh2")
            # a gate: Claude Code (README's acceptEdits) asks the person before its commit runs
            asked = await board.until(
                "Claude Code asks the person to run its commit", lambda: question_on(project, cards["cc1"]), DEADLINE
            )
            assert "git add -A" in asked["question"] and asked["agent"] == "cc1"
            assert answer_as_person(project, asked["id"])["status"] == "approved"
            other = await board.until(
                "cc2's Claude Code asks too", lambda: question_on(project, stopped_card), DEADLINE
            )
            # sh1's card waits on the person's merge, and so does its runner — for a minute: the
            # board shows it alive and waiting all along (heartbeats are no events), as `runner list` does
            assert await board.agree("sh1", lambda s: s == "waiting", timeout=DEADLINE) == "waiting"
            await board.hold_alive(["cc1", "cx1", "cc2", "sh1", "sh2"], GATE_WAIT, waiting="sh1")
            assert await board.agree("sh1", lambda s: s == "waiting") == "waiting"
            assert await board.agree("sh2", lambda s: s not in ("gone", "stopped")), board.shown()
            assert "gone" not in board.header(), board.header()
            # `kill -9` of an idle runner: gone on the board within the liveness window, as in `runner list`
            assert await board.gone_after_kill("sh2", killed) < STALE
            assert "1 gone" in board.header(), board.header()
            # cc1 and cx1 finish their turns first: the stops below meet no turn of theirs (one run
            # that stopped cc2 mid-way through cc1's turn saw cc1's Bash end "Connection closed")
            for agent, proc in procs.items():
                await board.until(f"{agent}'s runner ends", lambda proc=proc: proc.poll() is not None, DEADLINE)
                assert proc.returncode == 0, f"{agent}\n{runners.explain()}"
            # the person stops sh1's runner: its card still waits on their merge (no runtime's question)
            as_person(project, "runner", "stop", "sh1")
            await board.until("sh1's runner ends", lambda: waiter.poll() is not None, DEADLINE)
            assert waiter.returncode == 0, runners.explain()
            assert await board.agree("sh1", lambda s: s == "stopped") == "stopped"
            merge_gate(project, cards["sh1"])
            # and cc2's, while its Claude Code turn's question is pending: the question
            # is withdrawn, its card released; the board and `runner list` say stopped
            as_person(project, "runner", "stop", "cc2")
            await board.until("cc2's runner ends", lambda: stopped.poll() is not None, DEADLINE)
            assert stopped.returncode == 0, runners.explain()
            assert project.gate(other["id"])["status"] != "pending" and question_on(project, stopped_card) is None
            left = project.show(stopped_card)
            assert left["status"] == "ready" and not left.get("lease"), left
            assert await board.agree("cc2", lambda s: s == "stopped") == "stopped"
        said = {"claude": claude_model.log()[-4000:], "codex": codex_model.log()[-4000:]}
        assert not claude_model.problems and not codex_model.problems, said

    # each agent finished its own card: verify passed, its branch waits for the person
    why = runners.explain()
    workspaces, artifacts = {}, {}
    for agent, card in cards.items():
        shown = project.show(card)
        assert shown["status"] == "waiting", (agent, shown, why)
        evidence = project.evidence(card)
        assert any(e["source"] == "verify" and e["extra"]["verify"]["passed"] for e in evidence), (agent, evidence, why)
        named = [a for e in evidence for a in e["artifacts"]]
        assert len(named) == 1, (agent, named)
        workspaces[agent], artifacts[agent] = workspace_of(project, card), named[0]
        # the artifact's hash is the workspace file's
        assert artifacts[agent]["sha256"] == sha256(workspaces[agent] / artifacts[agent]["path"]), (agent, named)

    # the person's merge: their signed yes on each git:merge gate. A gate pins its
    # branch and its base: once an earlier card merged, main moved, so the answer
    # is refused and the card asks again with the new diff — read, then approved
    for agent, card in cards.items():
        gate = merge_gate(project, card)
        try:
            answered = answer_as_person(project, gate["id"])
        except AssertionError as refused:
            assert '"merge_moved"' in str(refused), refused
            again = merge_gate(project, card)
            assert again["id"] != gate["id"], again
            answered = answer_as_person(project, again["id"])
        assert answered["status"] == "approved"
        assert project.show(card)["status"] == "done", agent

    # merged on the base: each agent's commit, and its artifact as it was in the workspace
    log = project.git("log", "--format=%an %s", "main")
    for agent in cards:
        assert f"{agent} " in log, log
        path = artifacts[agent]["path"]
        merged = subprocess.run(
            ["git", "show", f"main:{path}"], cwd=project.root, capture_output=True, check=True
        ).stdout
        assert hashlib.sha256(merged).hexdigest() == artifacts[agent]["sha256"], agent
    assert "- note the plan" in project.git("show", "main:NOTES.md")


# -- #39 item 1: a sandboxed Claude Code turn finishes its card; its verify runs confined ------------


def _writes_file(path: str, text: str) -> str:
    """A shell command writing ``text`` to ``path`` through base64 (no hook reads what it says)."""
    return f"echo {base64.b64encode(text.encode()).decode()} | base64 -d > {path}"


def test_a_sandboxed_claude_turn_finishes_with_done_and_its_verify_runs_confined(day, runners):
    project = day
    project.init("claude-code", "cc1")
    card = project.card(
        "Tested work", "--owner", "cc1", "--next", "write check.sh", "--verify", "sh check.sh"
    )  # the person's verify runs the agent's code
    escaped, home_escaped = project.root / "escaped.txt", project.home / "escaped.txt"
    check = (  # the agent's "tests": try to get out, then pass
        f"cat {project.key_dir}/key.json > leaked.txt 2>/dev/null\n"
        f"echo out > {escaped}\n"
        f"echo out > {home_escaped}\n"
        "exit 0\n"
    )
    steps = [
        bash(
            _writes_file("check.sh", check)
            + f" && git add -A && git {GIT_ID.format(a='cc1')} commit -qm 'cc1: tests' && echo committed"
        ),
        Call("mcp__loopx__writeback", {"card": card, "summary": "wrote its tests", "artifacts": ["check.sh"]}),
        Call("mcp__loopx__done", {"card": card, "summary": "tested"}),
    ]
    with ScriptedModel() as model:
        model.script([plan(steps)] * 20)
        runners.models = {"claude": model}
        proc = runners.claude(
            "cc1", model, mode="bypassPermissions"
        )  # the worst case: only LoopX and the sandbox stand in the way
        assert runners.ended(proc) == 0, runners.explain()
        finished = [
            r.last_tool_result() for r in model.agent_requests() if "[unknown_tool]" in (r.last_tool_result() or "")
        ]
    why = runners.explain()
    assert not finished, why
    shown = project.show(card)
    assert shown["status"] == "waiting" and shown["pending_gate"], (
        shown,
        why,
    )  # finished: its branch waits for the person
    verified = [e["extra"]["verify"] for e in project.evidence(card) if e["source"] == "verify"]
    assert len(verified) == 1 and verified[0]["passed"], verified
    # the agent's code ran, confined: nothing outside the workspace written, the key not read
    ws = workspace_of(project, card)
    assert (ws / "check.sh").is_file()
    assert not escaped.exists() and not home_escaped.exists(), verified
    assert not (ws / "leaked.txt").exists() or (ws / "leaked.txt").read_text() == "", verified
    assert "Read-only file system" in verified[0]["output"] or "Permission denied" in verified[0]["output"], verified


# -- #39 item 7: `git add -A` in a workspace inside Claude Code's sandbox ---------------------------


@pytest.mark.parametrize("binary", ["claude-code", "claude-sdk"])
def test_git_add_all_works_in_a_workspace_inside_claudes_sandbox(day, binary, monkeypatch):
    from loopx_core import runtimes as runner_runtimes

    project = day
    project.init("claude-code", "a1")
    card = project.card("Add a file", "--owner", "a1")
    claimed = project.loopx("next", "--claim", agent="a1").data  # the card's workspace is made at its claim
    ws = Path(claimed["workspace"]["path"])
    steps = [
        bash(
            f"echo x > b.txt && git add -A && git {GIT_ID.format(a='a1')} commit -qm 'a1 adds b.txt' && git status --porcelain && echo committed"
        ),
        Say("Done."),
    ]
    with ScriptedModel() as model:
        model.script(steps)
        env = claude_env(project, model)
        turn = runner_runtimes.make(
            "claude-code", ["--permission-mode", "bypassPermissions"], str(runtimes.binary(binary)), "a1"
        )
        monkeypatch.setenv("HOME", env["HOME"])  # the runner's environment is the person's
        argv = turn.argv("Do the next step of your card.", str(ws))
        env.update(turn.environ(str(ws)))  # as the runner starts the turn
        proc = subprocess.run(
            argv, cwd=ws, env=env, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL
        )
        said = "\n".join(str(r.last_tool_result()) for r in model.agent_requests()[1:])
    assert said.strip().endswith("committed"), (
        f"{said}\n--- stderr\n{proc.stderr[-2000:]}"
    )  # nothing left out of the commit
    assert project.git("show", "--format=", "--name-only", f"loopx/{card}").split() == ["b.txt"]
    assert (
        "/.bashrc" not in (project.root / ".git" / "info" / "exclude").read_text()
    )  # the person's repository: as it was
