"""Driving real runtimes against a real board.

A ``Project`` is a git repository in a temporary folder with a LoopX board made
exactly as README's agent set-up says (``loopx init --objective … --for RUNTIME
--agent ID``), and a throwaway home folder for the runtime (outside /tmp:
Codex refuses to put its helper binaries under /tmp). The person's commands
run as real ``loopx`` processes without ``LOOPX_AGENT``; the runtime runs with
a PATH that does *not* hold ``loopx`` (the hooks must name it absolutely).

``answer_as_person`` is the one place a person's decision is made: when the
lead's human key lands (#11), only it changes.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from . import runtimes
from .model_server import Call, ScriptedModel

LOOPX = Path(sys.executable).parent / "loopx"  # the installed console script of this venv
PYTHON = Path(
    sys.executable
).absolute()  # the interpreter `init` writes into the runtimes' settings (`-I -m loopx_core`)


def _homes() -> Path:
    """Where each test's HOME lives: resolved (bwrap cannot mount a denied path under
    a symlink, PITFALLS), and never under /tmp, which Codex's sandbox replaces with
    an empty one — hiding the `codex-linux-sandbox` helper Codex keeps in CODEX_HOME
    ("bwrap: execvp codex-linux-sandbox: No such file or directory"). Nor under
    this checkout: LoopX is installed from it (editable), the hook keeps the
    installed LoopX read-only to agents, and a HOME there would put every card's
    workspace (~/.local/share/loopx/workspaces) inside it. HOME here is the test
    run's own (beside the checkout, removed at the end: tests/suite_home.py), never the
    person's: nothing lands in their ~/.cache."""
    return Path.home().resolve() / ".cache" / "loopx-e2e" / "e2e-homes"


HOMES = _homes()
RUNTIME_PATH = "/usr/bin:/bin"  # what the runtime sees: no loopx on it
TIMEOUT = 120  # one session, at most (each takes a few seconds)
CODEX_MODEL = "gpt-5.1-codex"


@dataclass
class Result:
    code: int
    data: dict
    out: str
    err: str


class Project:
    def __init__(self, root: Path):
        self.root = root
        self.home = HOMES / uuid.uuid4().hex[:12]
        self.home.mkdir(parents=True)
        self.root.mkdir(parents=True, exist_ok=True)
        subprocess.run(["git", "init", "-q", str(root)], check=True)
        self.sessions: list[Session] = []

    def close(self) -> None:
        shutil.rmtree(self.home, ignore_errors=True)

    @property
    def key_dir(self) -> Path:
        """The person's LoopX folder (platformdirs' user config dir under this HOME)."""
        return self.home / ".config" / "loopx"

    def env(self, **extra) -> dict:
        env = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith(("LOOPX_", "CLAUDE", "ANTHROPIC", "CODEX", "OPENAI"))
        }
        env.pop("XDG_CONFIG_HOME", None)  # platformdirs then uses ~/.config, as for most people
        env.pop(
            "XDG_DATA_HOME", None
        )  # and ~/.local/share (workspaces, LoopX's Codex home): not under /tmp, which Codex's sandbox writes
        env.update(HOME=str(self.home), CODEX_HOME=str(self.home / ".codex"))
        env.update(extra)
        return env

    # -- the person's side ----------------------------------------------------------------
    def loopx(self, *args, agent: str | None = None, check: bool = True, env: dict | None = None) -> Result:
        full = self.env(**(env or {}))
        if agent:
            full["LOOPX_AGENT"] = agent
        proc = subprocess.run(
            [str(LOOPX), "--json", *map(str, args)],
            cwd=self.root,
            env=full,
            capture_output=True,
            text=True,
            timeout=60,
            stdin=subprocess.DEVNULL,
        )
        data = json.loads(proc.stdout.strip().splitlines()[-1]) if proc.stdout.strip() else {}
        if check and proc.returncode != 0:
            raise AssertionError(
                f"loopx {' '.join(map(str, args))} exited {proc.returncode}: {proc.stdout}{proc.stderr}"
            )
        return Result(proc.returncode, data, proc.stdout, proc.stderr)

    def init(self, runtime: str, agent: str, *, can=(), sandbox: bool = True) -> dict:
        """README's agent set-up, verbatim, typed by the person at a terminal (it makes
        their key, sealed with a passphrase, at ~/.config/loopx/key.json)."""
        args = ["init", "--objective", "e2e board", "--for", runtime, "--agent", agent]
        for scope in can:
            args += ["--can", scope]
        if not sandbox:
            args.append("--no-sandbox")
        return as_person(self, *args).data

    def git(self, *args) -> str:
        env = dict(
            self.env(),
            GIT_AUTHOR_NAME="e2e",
            GIT_AUTHOR_EMAIL="e2e@localhost",
            GIT_COMMITTER_NAME="e2e",
            GIT_COMMITTER_EMAIL="e2e@localhost",
        )
        return subprocess.run(
            ["git", *args], cwd=self.root, env=env, capture_output=True, text=True, check=True, timeout=60
        ).stdout

    def with_remote(self) -> Path:
        """A commit on main and an ``origin`` that is a bare repository inside the project
        (writable from the sandboxes), so a push that ran leaves a trace."""
        remote = self.root / "remote.git"
        subprocess.run(["git", "init", "-q", "--bare", str(remote)], check=True)
        (self.root / "README.txt").write_text("e2e\n")
        self.git("checkout", "-q", "-b", "main")
        self.git("add", "README.txt")
        self.git("commit", "-q", "-m", "first")
        self.git("remote", "add", "origin", str(remote))
        return remote

    def pushed(self) -> bool:
        """Did anything reach the remote?"""
        out = subprocess.run(
            ["git", "--git-dir", str(self.root / "remote.git"), "for-each-ref"],
            capture_output=True,
            text=True,
            timeout=60,
        ).stdout
        return bool(out.strip())

    def card(self, title: str, *extra) -> str:
        return as_person(self, "card", "add", title, *extra).data["card"]["id"]

    def show(self, card: str) -> dict:
        return self.loopx("card", "show", card).data["card"]

    def gate(self, gate: str) -> dict:
        return self.loopx("gate", "status", gate, check=False).data["gate"]

    def gates(self) -> list[dict]:
        return self.loopx("gate", "list").data["gates"]

    def evidence(self, card: str) -> list[dict]:
        return self.loopx("log", card).data["evidence"]


PASSPHRASE = "e2e correct horse battery staple"
PROMPTS = (b"assphrase", b"Again: ")  # what loopx asks on the terminal when it needs the person's passphrase


def as_person(project: Project, *args) -> Result:
    """A person's command, run the way a person runs it: at their terminal (a pty that
    is the process's controlling terminal), no agent identity, typing their passphrase
    each time LoopX asks for it."""
    argv = [str(LOOPX), "--json", *map(str, args)]
    code, out = _at_terminal(argv, project.env(TERM="dumb"), project.root)
    lines = [line for line in out.replace("\r", "").splitlines() if line.startswith("{")]
    if code != 0:
        raise AssertionError(f"as a person: loopx {' '.join(map(str, args))} exited {code}: {out}")
    return Result(code, json.loads(lines[-1]) if lines else {}, out, "")


def answer_as_person(project: Project, gate: str, decision: str = "approve") -> dict:
    """A person answers a gate. THE one place a person's decision is made in this suite."""
    return as_person(project, "gate", "answer", gate, decision).data["gate"]


def _at_terminal(argv: list, env: dict, cwd: Path, timeout: float = 60.0) -> tuple[int, str]:
    """(exit code, output) of ``argv`` on a pty, with PASSPHRASE typed at each prompt."""
    import pty
    import select
    import time

    pid, fd = pty.fork()
    if pid == 0:  # the child: the pty is its controlling terminal
        try:
            os.chdir(cwd)
            os.execve(argv[0], argv, env)
        finally:
            os._exit(127)
    out, answered = b"", 0
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            if not select.select([fd], [], [], 0.2)[0]:
                if os.waitpid(pid, os.WNOHANG)[0]:
                    break
                continue
            try:
                chunk = os.read(fd, 4096)
            except OSError:  # EIO: the child closed the terminal
                break
            if not chunk:
                break
            out += chunk
            if sum(out.count(p) for p in PROMPTS) > answered:  # a new prompt: type the passphrase
                answered += 1
                try:
                    os.write(fd, (PASSPHRASE + "\n").encode())
                except OSError:  # it ended meanwhile
                    break
        else:
            os.kill(pid, 9)
    finally:
        os.close(fd)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status), out.decode(errors="replace")


# -- sessions -------------------------------------------------------------------------------------


@dataclass
class Session:
    runtime: str
    code: int
    stdout: str
    stderr: str
    model_log: str
    events: list = field(default_factory=list)

    def explain(self) -> str:
        return f"=== {self.runtime} exit {self.code}\n--- stream\n{self.stdout[-12000:]}\n--- stderr\n{self.stderr[-4000:]}\n--- model server\n{self.model_log}"


def claude_env(project: Project, model: ScriptedModel) -> dict:
    return project.env(
        PATH=RUNTIME_PATH,
        ANTHROPIC_BASE_URL=model.url,
        ANTHROPIC_API_KEY="sk-e2e-not-a-key",
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
        DISABLE_AUTOUPDATER="1",
        IS_SANDBOX="1",  # we run as root here: Claude Code refuses bypassPermissions as root without it
    )


def run_claude(
    project: Project,
    model: ScriptedModel,
    steps,
    *,
    binary: str = "claude-code",
    prompt: str = "Do the next step of your card.",
    args=(),
    path: str = RUNTIME_PATH,
    env: dict | None = None,
) -> Session:
    """One ``claude -p`` session, tools pre-approved (the worst case: only LoopX and the sandbox stand in the way).
    ``env``: more variables for the runtime (and so its hooks), e.g. a test's ``LOOPX_FAULT``."""
    model.script(steps)
    cmd = [
        str(runtimes.binary(binary)),
        "-p",
        prompt,
        "--output-format",
        "stream-json",
        "--verbose",
        "--permission-mode",
        "bypassPermissions",
        *args,
    ]
    return _session(project, model, binary, cmd, dict(claude_env(project, model), PATH=path, **(env or {})))


def kept(cmd: list) -> list[str]:
    """``cmd`` under LoopX's turn keeper (loopx_core/runner/guard.py), as the runner
    starts a turn: whatever the runtime starts — Codex's ``bwrap``, Claude Code's
    ``socat`` bridge — ends with it (issue #44: they outlived the suite)."""
    return [str(PYTHON), "-I", "-m", "loopx_core.runner.guard", str(os.getpid()), "--", *map(str, cmd)]


def run_kept(cmd: list, *, timeout: float, capture_output: bool = False, **kw) -> subprocess.CompletedProcess:
    """``subprocess.run(cmd, …)`` for a runtime the test starts itself: under the
    keeper, in a session of its own; past ``timeout`` the keeper is told to stop
    (it ends everything under it) before TimeoutExpired is raised."""
    if capture_output:
        kw.update(stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    with subprocess.Popen(kept(cmd), start_new_session=True, **kw) as proc:
        try:
            out, err = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            for sig in (signal.SIGTERM, signal.SIGKILL):
                try:
                    os.killpg(proc.pid, sig)
                    proc.wait(timeout=10)
                    break
                except (ProcessLookupError, subprocess.TimeoutExpired):
                    continue
            raise
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


def _session(project: Project, model: ScriptedModel, name: str, cmd: list, env: dict) -> Session:
    """Run one headless session to its end (bounded) and keep what it printed."""
    proc = run_kept(
        cmd, cwd=project.root, env=env, capture_output=True, text=True, timeout=TIMEOUT, stdin=subprocess.DEVNULL
    )
    events = []
    for line in proc.stdout.splitlines():
        try:
            events.append(json.loads(line))
        except ValueError:
            pass  # a runtime's non-JSON line (a warning): kept in stdout for the failure report
    session = Session(name, proc.returncode, proc.stdout, proc.stderr, model.log(), events)
    project.sessions.append(session)
    return session


def run_codex(
    project: Project,
    model: ScriptedModel,
    steps,
    *,
    prompt: str = "Do the next step of your card.",
    args=(),
    path: str = RUNTIME_PATH,
    env: dict | None = None,
) -> Session:
    """One ``codex exec --json`` session. The model provider is given on the command line
    so the person's ~/.codex/config.toml holds only what ``loopx init`` wrote."""
    model.script(steps)
    cmd = [
        str(runtimes.binary("codex")),
        "exec",
        "--json",
        "--skip-git-repo-check",
        *codex_model_args(model),
        *args,
        prompt,
    ]
    return _session(project, model, "codex", cmd, dict(codex_env(project, path), **(env or {})))


def codex_model_args(model: ScriptedModel) -> list[str]:
    """Codex's arguments that make the scripted model its model provider."""
    provider = (
        '{name="scripted", base_url="' + model.url + '/v1", wire_api="responses", env_key="LOOPX_E2E_MODEL_KEY", '
        "request_max_retries=0, stream_max_retries=0}"
    )
    return [
        "-c",
        f'model="{CODEX_MODEL}"',
        "-c",
        'model_provider="scripted"',
        "-c",
        f"model_providers.scripted={provider}",
    ]


def codex_env(project: Project, path: str = RUNTIME_PATH) -> dict:
    return project.env(PATH=path, LOOPX_E2E_MODEL_KEY="not-a-key")


# -- one runtime, as a test sees it -------------------------------------------------------------


class Runtime:
    """A runtime under test: how its model calls the shell and the MCP tools, how it runs."""

    def __init__(self, name: str):
        self.name = name  # claude-code (2.1.197) | claude-sdk (2.1.335) | codex
        self.setup = "codex" if name == "codex" else "claude-code"

    def __repr__(self):
        return self.name

    def shell(self, command: str) -> Call:
        if self.name == "codex":
            return Call("exec_command", {"cmd": command})
        return Call("Bash", {"command": command, "description": "run a command"})

    def tool(self, name: str, **args) -> Call:
        return Call(f"mcp__loopx__{name}", args)

    def run(
        self,
        project: Project,
        model: ScriptedModel,
        steps,
        *,
        no_sandbox: bool = False,
        path: str = RUNTIME_PATH,
        env: dict | None = None,
    ) -> Session:
        if self.name == "codex":
            args = ("--dangerously-bypass-approvals-and-sandbox",) if no_sandbox else ()
            return run_codex(project, model, steps, args=args, path=path, env=env)
        return run_claude(project, model, steps, binary=self.name, path=path, env=env)


ALL = [Runtime(n) for n in ("claude-code", "claude-sdk", "codex")]
