"""LoopX's hooks run for a Codex turn in a card's workspace, and nothing the agent
wrote there is loaded outside the sandbox — the real Codex 0.171, started by a
real ``loopx run`` (issue #26).

Codex runs a hook only when its hash is trusted in the user config, keyed by the
path of the file declaring it; in a linked worktree it loads the worktree's own
``.codex/config.toml`` (trusted through the main checkout) with the main
checkout's hooks swapped in. So the runner gives a turn in a workspace a Codex
home of LoopX's (``setup_codex.workspace_home``): LoopX's hooks trusted there, no
project trust. The attack here is a ``.codex/config.toml`` committed on the
card's branch (as an earlier turn could, with git plumbing) naming an MCP server
that would run, as the person, a program of the agent's choosing.
"""

from __future__ import annotations

import base64
import shutil
import subprocess
import uuid
from pathlib import Path

import pytest

from . import runtimes
from .harness import (
    ALL,
    LOOPX,
    Project,
    as_person,
    claude_env,
    codex_env,
    codex_model_args,
    run_kept,
)
from .model_server import Call, Say, ScriptedModel


@pytest.fixture
def outside_tmp(installed_runtimes):
    # outside /tmp (Codex's sandbox writes it) and outside the checkout (CI installs LoopX from it)
    base = Path.home().resolve() / ".cache" / "loopx-e2e" / f"cx-{uuid.uuid4().hex[:10]}"
    project = Project(base / "project")
    yield project
    project.close()
    shutil.rmtree(base, ignore_errors=True)


def _loopx_codex_home(project: Project) -> Path:
    """LoopX's Codex home the runner made for cx1 (under the person's data folder)."""
    found = sorted((project.home / ".local" / "share" / "loopx" / "codex-home").glob("*/cx1"))
    assert len(found) == 1, found
    return found[0]


def _python_appends(path_of, text: str):
    """A step: a python one-liner appending ``text`` to a file whose path (base64) is
    known only when the step runs — no hook can read it."""

    def step(request):
        encoded = base64.b64encode(str(path_of()).encode()).decode()
        return Call(
            "exec_command",
            {
                "cmd": (
                    "python3 -c \"import base64; p = base64.b64decode('" + encoded + "').decode(); "
                    "open(p, 'a').write('" + text + "')\"; echo exit=$?"
                )
            },
        )

    return step


def test_a_codex_turn_in_a_workspace_runs_loopxs_hooks_and_loads_nothing_the_agent_planted(outside_tmp, tmp_path):
    project = outside_tmp
    project.init("codex", "cx1")
    remote = project.with_remote()
    card = project.card("Ship the notes", "--next", "publish the notes")
    base = project.git("rev-parse", "main").strip()
    ws = Path(as_person(project, "workspace", "open", card).data["workspace"]["path"])
    marker = tmp_path / "planted-server-ran"
    planted = f'[mcp_servers.notes]\ncommand = "sh"\nargs = ["-c", "touch {marker}; sleep 30"]\n'
    (ws / ".codex").mkdir()
    (ws / ".codex" / "config.toml").write_text(planted)
    git = ["git", "-C", str(ws), "-c", "user.name=cx1", "-c", "user.email=cx1@localhost"]
    subprocess.run([*git, "add", ".codex/config.toml"], check=True)
    subprocess.run([*git, "commit", "-qm", "notes server"], check=True)

    steps = [
        Call("exec_command", {"cmd": "pwd && git branch --show-current"}),
        Call("exec_command", {"cmd": "git push origin main"}),  # needs git:push: LoopX's PreToolUse gates it
        _python_appends(
            lambda: _loopx_codex_home(project) / "config.toml", '\\n[mcp_servers.mine]\\ncommand = \\"sh\\"\\n'
        ),
        Say("Waiting for a person."),
    ]
    log = tmp_path / "runner.log"
    with ScriptedModel() as model:
        model.script(steps)
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
        ]
        with open(log, "wb") as out:
            code = subprocess.run(
                argv,
                cwd=project.root,
                env=codex_env(project),
                stdout=out,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                timeout=300,
            ).returncode
        said = [str(r.last_tool_result()) for r in model.agent_requests()[1:]]
    why = (
        "\n".join(said)
        + "\n--- runner\n"
        + log.read_text(errors="replace")[-6000:]
        + "\n--- board\n"
        + project.loopx("log", card).out[-6000:]
    )
    assert code == 0 and len(said) >= 3, why
    # the turn ran in the card's workspace, on its branch
    assert str(ws) in said[0] and f"loopx/{card}" in said[0], why
    # LoopX's PreToolUse hook ran: the push was held for a person, and the board says so
    assert "git:push" in said[1] and "G-1" in said[1], why
    gate = project.gate("G-1")
    assert (
        gate["status"] == "pending" and gate["scope"] == "git:push" and gate["card"] == card and gate["agent"] == "cx1"
    ), why
    assert not project.pushed() and project.git("rev-parse", "main").strip() == base, why
    assert remote.exists()
    # the server the agent's branch names never ran, and LoopX's Codex home is not the agent's to write
    assert not marker.exists(), why
    assert "exit=1" in said[2] and "mcp_servers.mine" not in (_loopx_codex_home(project) / "config.toml").read_text(), (
        why
    )


def test_a_codex_turn_without_loopxs_profile_runs_in_the_workspace_commits_there_and_runs_loopxs_hooks(
    outside_tmp, tmp_path
):
    """`init --no-sandbox`: no LoopX permission profile, Codex's own workspace-write
    mode (README's runner command). Before, such turns ran in the project folder:
    that mode keeps a worktree's git folder read-only and a commit failed. Now the
    turn runs in the card's workspace with the commit's git paths as that mode's
    extra writable roots, and LoopX's hooks come with LoopX's Codex home."""
    project = outside_tmp
    project.init("codex", "cx1", sandbox=False)
    project.with_remote()
    card = project.card("Ship the notes", "--next", "write the notes")
    base = project.git("rev-parse", "main").strip()
    steps = [
        Call("exec_command", {"cmd": "pwd && git branch --show-current"}),
        Call(
            "exec_command",
            {
                "cmd": "echo n > notes.txt && git add notes.txt && git -c user.name=cx1 -c user.email=cx1@localhost commit -qm 'notes by codex' && echo committed"
            },
        ),
        Call("exec_command", {"cmd": "git push origin main"}),  # LoopX's PreToolUse hook gates it (git:push)
        Say("Waiting for a person."),
    ]
    log = tmp_path / "runner.log"
    with ScriptedModel() as model:
        model.script(steps)
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
        ]
        with open(log, "wb") as out:
            code = subprocess.run(
                argv,
                cwd=project.root,
                env=codex_env(project),
                stdout=out,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                timeout=300,
            ).returncode
        said = [str(r.last_tool_result()) for r in model.agent_requests()[1:]]
    why = (
        "\n".join(said)
        + "\n--- runner\n"
        + log.read_text(errors="replace")[-6000:]
        + "\n--- board\n"
        + project.loopx("log", card).out[-6000:]
    )
    assert code == 0 and len(said) >= 3, why
    ws = Path(project.loopx("workspace", "list").data["workspaces"][0]["path"])
    assert str(ws) in said[0] and f"loopx/{card}" in said[0], why  # in the card's workspace, on its branch
    assert (
        "committed" in said[1] and project.git("log", "--format=%s", "-1", f"loopx/{card}").strip() == "notes by codex"
    ), why
    assert project.git("rev-parse", "main").strip() == base and not (project.root / "notes.txt").exists(), why
    assert "git:push" in said[2] and "G-1" in said[2], why  # LoopX's hook ran there (its Codex home)
    assert project.gate("G-1")["scope"] == "git:push" and not project.pushed(), why
    assert _loopx_codex_home(project).is_dir()


@pytest.mark.parametrize("runtime", [r for r in ALL if r.name in ("claude-sdk", "codex")], ids=str)
def test_a_session_a_person_starts_in_a_workspace_is_bounded_as_the_runners_turns(outside_tmp, runtime):
    """`loopx workspace start` (here with the runtime's headless arguments after --):
    the session runs in the card's workspace as the agent, LoopX's PreToolUse hook
    holds what needs a person, and the main checkout is out of its reach."""
    project = outside_tmp
    agent = "cx1" if runtime.name == "codex" else "cc1"
    project.init(runtime.setup, agent)
    project.with_remote()
    card = project.card("Ship the notes", "--next", "publish the notes")
    root = project.root
    steps = [
        runtime.tool("claim", card=card),
        runtime.shell("pwd && git branch --show-current"),
        runtime.shell("git push origin main"),
        runtime.shell(_python_writes(root / "pwn.txt")),
        runtime.shell(
            "echo n > notes.txt && git add notes.txt && git -c user.name=a -c user.email=a@localhost commit -qm 'by hand' && echo committed"
        ),
        Say("Waiting for a person."),
    ]
    with ScriptedModel() as model:
        model.script(steps)
        if runtime.name == "codex":
            rest, env = (
                ["exec", "--json", "--skip-git-repo-check", *codex_model_args(model), "Do the next step."],
                codex_env(project),
            )
        else:
            rest, env = (
                [
                    "-p",
                    "Do the next step.",
                    "--output-format",
                    "stream-json",
                    "--verbose",
                    "--permission-mode",
                    "bypassPermissions",
                ],
                claude_env(project, model),
            )
        argv = [
            str(LOOPX),
            "workspace",
            "start",
            card,
            "--runtime",
            runtime.setup,
            "--agent",
            agent,
            "--bin",
            str(runtimes.binary(runtime.name)),
            "--",
            *rest,
        ]
        proc = run_kept(argv, cwd=root, env=env, capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL)
        said = [str(r.last_tool_result()) for r in model.agent_requests()[1:]]
    why = "\n".join(said) + f"\n--- stderr\n{proc.stderr[-4000:]}"
    assert proc.returncode == 0 and len(said) >= 5, why
    assert f"loopx/{card}" in said[1], why  # in the card's workspace, on its branch
    assert "G-1" in said[2] and "git:push" in said[2], why
    gate = project.gate("G-1")
    assert gate["scope"] == "git:push" and gate["card"] == card and gate["agent"] == agent, why
    assert not project.pushed() and not (root / "pwn.txt").exists(), why
    # the sandbox is the runner's, bounded to the workspace: a commit there lands on the card's branch
    assert "committed" in said[4] and project.git("log", "--format=%s", "-1", f"loopx/{card}").strip() == "by hand", why


def _python_writes(path) -> str:
    encoded = base64.b64encode(str(path).encode()).decode()
    return (
        "python3 -c \"import base64; open(base64.b64decode('" + encoded + "').decode(), 'w').write('x')\"; echo exit=$?"
    )
