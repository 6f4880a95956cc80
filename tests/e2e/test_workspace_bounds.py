"""A turn started in a card's workspace, with the runtime's sandbox on, by the
real Claude Code (2.1.197, 2.1.335) and Codex (0.171) binaries, each started
with the exact command line the runner builds (``runner/runtimes.py``) — issue
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

import pytest

from loopx_core.runner import runtimes as runner_runtimes

from . import runtimes
from .harness import ALL, HOMES, Project, claude_env, codex_env, codex_model_args
from .model_server import Say, ScriptedModel

TIMEOUT = 120


def _python_writes(path, text: str) -> str:
    """A one-liner writing ``text`` to ``path`` (base64: no hook can read the path)."""
    encoded = base64.b64encode(str(path).encode()).decode()
    return (
        "python3 -c \"import base64, os; p = base64.b64decode('" + encoded + "').decode(); "
        "os.makedirs(os.path.dirname(p), exist_ok=True); open(p, 'w').write(" + text + ")\"; echo exit=$?"
    )


@pytest.fixture
def outside_tmp(installed_runtimes):
    base = HOMES / f"ws-{uuid.uuid4().hex[:10]}"
    project = Project(base / "project")
    yield project
    project.close()
    shutil.rmtree(base, ignore_errors=True)


def _own_head(common) -> str:
    """Python code (inside the sandbox) reading the workspace branch's new commit."""
    encoded = base64.b64encode(str(common / "refs" / "heads" / "loopx" / "LX-1").encode()).decode()
    return "open(base64.b64decode('" + encoded + "').decode()).read()"


@pytest.mark.parametrize("runtime", ALL, ids=str)
def test_a_sandboxed_turn_in_a_workspace_commits_there_and_writes_nothing_else(outside_tmp, runtime):
    project = outside_tmp
    project.init(runtime.setup, "a1")
    project.with_remote()
    root, common = project.root, project.root / ".git"
    ws = root.parent / "workspaces" / "LX-1"
    other = root.parent / "workspaces" / "LX-2"
    project.git("worktree", "add", "-q", "-b", "loopx/LX-1", str(ws), "main")
    project.git("worktree", "add", "-q", "-b", "loopx/LX-2", str(other), "main")
    project.git("update-ref", "refs/loopx/LX-1/wip/t1", "main")
    base = project.git("rev-parse", "main").strip()
    head = _own_head(common)
    steps = [
        runtime.shell("echo work > work.txt && git add work.txt && git -c user.name=a1 -c user.email=a1@localhost commit -qm 'the agent commits' && echo committed"),
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
            extra = ["--permission-mode", "bypassPermissions"]  # the worst case: only LoopX and the sandbox stand in the way
            env = claude_env(project, model)
        turn = runner_runtimes.make(runtime.setup, extra, str(runtimes.binary(runtime.name)), "a1")
        argv = turn.argv("Do the next step of your card.", str(ws))
        proc = subprocess.run(argv, cwd=ws, env=env, capture_output=True, text=True, timeout=TIMEOUT, stdin=subprocess.DEVNULL)
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
