"""A turn started in a card's workspace, with the runtime's sandbox on, by the
real Claude Code (2.1.197, 2.1.335) and Codex (0.171) binaries, each started
with the exact command line the runner builds (``runtimes/``) — issue
#26, "the workspace boundary".

The workspace is a linked git worktree on ``loopx/LX-1``; a second card's
branch (``loopx/LX-2``) and workspace, LoopX's own ref (``refs/loopx/…``) and
the base branch (``main``) sit beside it. The scripted model commits in the
workspace (that must land on ``loopx/LX-1``), then tries to write everything
else with a python one-liner that names no path a hook could read (the path
in base64): only the sandbox stands in the way of those, and each must leave
its target as it was.

The projects live outside /tmp: Codex's workspace-write sandbox makes /tmp
writable, so a main checkout under it would be writable whatever LoopX asks.
"""

from __future__ import annotations

import base64
import shutil
import subprocess
import uuid
from pathlib import Path

import pytest

from loopx_core import runtimes as runner_runtimes

from . import runtimes
from .harness import (
    ALL,
    LOOPX,
    Project,
    claude_env,
    codex_env,
    codex_model_args,
    run_kept,
)
from .model_server import Call, Say, ScriptedModel

TIMEOUT = 120


def _python_writes(path, text: str) -> str:
    """A one-liner writing ``text`` to ``path`` (base64: no hook can read the path)."""
    encoded = base64.b64encode(str(path).encode()).decode()
    return (
        "python3 -c \"import base64, os; p = base64.b64decode('" + encoded + "').decode(); "
        "os.makedirs(os.path.dirname(p), exist_ok=True); open(p, 'w').write(" + text + ')"; echo exit=$?'
    )


@pytest.fixture
def outside_tmp(installed_runtimes):
    # Outside the checkout as well as /tmp: in a clone whose LoopX is installed from
    # that clone (CI), a project under .cache/ is inside "the installed LoopX",
    # which the hook refuses every write into.
    base = Path.home().resolve() / ".cache" / "loopx-e2e" / f"ws-{uuid.uuid4().hex[:10]}"
    project = Project(base / "project")
    yield project
    project.close()
    shutil.rmtree(base, ignore_errors=True)


def _own_head(common) -> str:
    """Python code (inside the sandbox) reading the workspace branch's new commit."""
    encoded = base64.b64encode(str(common / "refs" / "heads" / "loopx" / "LX-1").encode()).decode()
    return "open(base64.b64decode('" + encoded + "').decode()).read()"


@pytest.mark.parametrize("runtime", ALL, ids=str)
def test_a_sandboxed_turn_in_a_workspace_commits_there_and_writes_nothing_else(outside_tmp, runtime, monkeypatch):
    project = outside_tmp
    project.init(runtime.setup, "a1")
    project.with_remote()
    root, common = project.root, project.root / ".git"
    ws = root.parent / "workspaces" / "LX-1"
    other = root.parent / "workspaces" / "LX-2"
    project.git("worktree", "add", "-q", "-b", "loopx/LX-1", str(ws), "main")
    project.git("worktree", "add", "-q", "-b", "loopx/LX-2", str(other), "main")
    project.git("update-ref", "refs/loopx/LX-1/wip/t1", "main")
    project.git(
        "pack-refs", "--all"
    )  # every ref only in packed-refs: no loose file a sandbox could keep read-only, until LoopX makes one
    base = project.git("rev-parse", "main").strip()
    head = _own_head(common)
    steps = [
        runtime.shell(
            "echo work > work.txt && git add work.txt && git -c user.name=a1 -c user.email=a1@localhost commit -qm 'the agent commits' && echo committed"
        ),
        runtime.shell(_python_writes(root / "pwn.txt", "'main checkout'")),
        runtime.shell(_python_writes(common / "refs" / "heads" / "main", head)),
        runtime.shell(_python_writes(common / "refs" / "heads" / "loopx" / "LX-2", head)),
        runtime.shell(_python_writes(common / "refs" / "loopx" / "LX-1" / "wip" / "t1", head)),
        runtime.shell(_python_writes(common / "packed-refs", "'0' * 40 + ' refs/heads/main\\\\n'")),
        runtime.shell(_python_writes(other / "pwn.txt", "'another workspace'")),
        runtime.shell(_python_writes(ws / ".claude" / "settings.json", "'{}'")),
        Say("Done."),
    ]
    with ScriptedModel() as model:
        model.script(steps)
        if runtime.name == "codex":
            extra = ["--skip-git-repo-check", *codex_model_args(model)]
            env = codex_env(project)
        else:
            extra = [
                "--permission-mode",
                "bypassPermissions",
            ]  # the worst case: only LoopX and the sandbox stand in the way
            env = claude_env(project, model)
        turn = runner_runtimes.make(runtime.setup, extra, str(runtimes.binary(runtime.name)), "a1")
        argv = turn.argv("Do the next step of your card.", str(ws))
        for name in ("HOME", "CODEX_HOME"):  # the runner's environment is the person's (its Codex home is made from it)
            monkeypatch.setenv(name, env[name])
        monkeypatch.delenv("XDG_DATA_HOME", raising=False)
        env.update(turn.environ(str(ws)))
        proc = run_kept(
            argv, cwd=ws, env=env, capture_output=True, text=True, timeout=TIMEOUT, stdin=subprocess.DEVNULL
        )
        said = "\n".join(str(r.last_tool_result()) for r in model.agent_requests()[1:])
    why = f"{said}\n--- stderr\n{proc.stderr[-3000:]}"
    # the commit landed on the card's branch, in the main repository
    assert "the agent commits" in project.git("log", "--format=%s", "-1", "loopx/LX-1"), why
    # and nothing else moved
    assert not (root / "pwn.txt").exists(), why
    assert project.git("rev-parse", "main").strip() == base, why
    assert project.git("rev-parse", "loopx/LX-2").strip() == base, why
    assert project.git("rev-parse", "refs/loopx/LX-1/wip/t1").strip() == base, why
    assert "0" * 40 not in ((common / "packed-refs").read_text() if (common / "packed-refs").exists() else ""), why
    assert not (other / "pwn.txt").exists(), why
    assert not (ws / ".claude" / "settings.json").exists(), why


# -- a Claude → Codex handoff on the same branch, through real runners ----------------------------


class _Runners:
    """``loopx run`` processes as the person starts them, each one's output kept for a failure."""

    def __init__(self, tmp_path):
        self.logs, self.procs = tmp_path, []

    def spawn(self, agent, argv, env, cwd) -> subprocess.Popen:
        log = self.logs / f"runner-{agent}.log"
        with open(log, "wb") as fh:
            proc = subprocess.Popen(
                argv, cwd=cwd, env=env, stdout=fh, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL
            )
        self.procs.append((proc, log))
        return proc

    def ended(self, proc, timeout: float) -> int:
        try:
            return proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            pytest.fail(f"a runner did not exit within {timeout} s\n{self.explain()}")

    def explain(self) -> str:
        return "\n".join(
            f"--- {log.name} (exit {proc.poll()})\n{log.read_text(errors='replace')[-4000:]}"
            for proc, log in self.procs
        )

    def close(self) -> None:
        for proc, _ in self.procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait(timeout=30)


def test_a_claude_turn_hands_its_workspace_to_a_codex_turn_that_continues_on_the_same_branch(outside_tmp, tmp_path):
    """``loopx run`` for a Claude Code agent (2.1.335) claims the card: its workspace is
    made, the turn runs there with the sandbox on, commits on ``loopx/LX-1``, leaves an
    edit uncommitted, finds the main checkout read-only, and hands the card to a Codex
    agent. ``loopx run`` for the Codex agent accepts it and runs its turn in the same
    workspace, sandboxed: it sees the first agent's commit and uncommitted edit, and its
    own commit lands on the same branch."""
    project = outside_tmp
    project.init("claude-code", "cc1")
    project.init("codex", "cx1")
    project.with_remote()
    card = project.card("Write the notes", "--next", "write the notes")
    base = project.git("rev-parse", "main").strip()
    root = project.root

    def claude_commit(request):
        return Call(
            "Bash",
            {
                "command": "echo 'from claude' > notes.txt && git add notes.txt && git -c user.name=cc1 -c user.email=cc1@localhost commit -qm 'claude writes the notes' && echo 'claude was here' > wip.txt && echo committed",
                "description": "commit",
            },
        )

    claude_steps = [
        claude_commit,
        Call("Bash", {"command": _python_writes(root / "pwn.txt", "'main checkout'"), "description": "write"}),
        Call("mcp__loopx__handoff", {"card": card, "to": "cx1", "summary": "notes written; codex goes on"}),
        Say("Handed over."),
    ]
    codex_steps = [
        Call("exec_command", {"cmd": "git branch --show-current && git log --format=%s -1 && cat notes.txt wip.txt"}),
        Call(
            "exec_command",
            {
                "cmd": "echo 'from codex' >> notes.txt && git -c user.name=cx1 -c user.email=cx1@localhost commit -qam 'codex goes on' && echo committed"
            },
        ),
        Call("mcp__loopx__writeback", {"card": card, "summary": "codex continued the notes", "next": "review"}),
        Say("Done."),
    ]
    watch = _Runners(tmp_path)
    try:
        with ScriptedModel() as model:
            model.script(claude_steps)
            argv = [
                str(LOOPX),
                "run",
                "--agent",
                "cc1",
                "--runtime",
                "claude-code",
                "--bin",
                str(runtimes.binary("claude-sdk")),
                "--turns",
                "1",
                "--turn-limit",
                "120s",
                "--",
                "--permission-mode",
                "bypassPermissions",
            ]
            assert watch.ended(watch.spawn("cc1", argv, claude_env(project, model), root), timeout=300) == 0, (
                watch.explain()
            )
            claude_said = [str(r.last_tool_result()) for r in model.agent_requests()[1:]]
        why = "\n".join(claude_said) + watch.explain()
        assert "committed" in claude_said[0] and "Read-only file system" in claude_said[1], why
        assert not (root / "pwn.txt").exists() and project.git("rev-parse", "main").strip() == base, why
        assert project.git("log", "--format=%s", "-1", "loopx/LX-1").strip() == "claude writes the notes", why
        with ScriptedModel() as model:
            model.script(codex_steps)
            argv = [
                str(LOOPX),
                "run",
                "--agent",
                "cx1",
                "--runtime",
                "codex",
                "--bin",
                str(runtimes.binary("codex")),
                "--turns",
                "1",
                "--turn-limit",
                "120s",
                "--",
                "--sandbox",
                "workspace-write",
                *codex_model_args(model),
            ]  # README's command
            assert watch.ended(watch.spawn("cx1", argv, codex_env(project), root), timeout=300) == 0, watch.explain()
            codex_said = [str(r.last_tool_result()) for r in model.agent_requests()[1:]]
    finally:
        watch.close()
    why = "\n".join(codex_said) + watch.explain()
    # the receiver saw the first agent's commit and its uncommitted edit, on the same branch
    assert "loopx/LX-1" in codex_said[0] and "claude writes the notes" in codex_said[0], why
    assert "from claude" in codex_said[0] and "claude was here" in codex_said[0], why
    assert "committed" in codex_said[1], why
    log = project.git("log", "--format=%s", "loopx/LX-1").split("\n")
    assert log[:2] == ["codex goes on", "claude writes the notes"], why
    assert project.git("rev-parse", "main").strip() == base
    shown = project.show(card)
    assert shown["assignee"] == "cx1" and shown["next"] == "review", shown
