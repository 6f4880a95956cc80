"""No process LoopX starts for the person imports an agent's code (issue #24 §1).

An agent's runtime lets it write the project, and the processes LoopX starts on
the person's side start there: the board's out-of-process `verify`, the hook
and MCP commands `init --for` writes, `loopx run` and its turns, `loopx watch`,
`loopx demo --script`. Each test plants, in the project and in the agent's
watch folder, every kind of code Python would pick up from a folder —
`loopx_core/`, `loopx_tui/`, `sitecustomize.py`, `usercustomize.py`, a `.pth`
file — and shims named like the programs LoopX starts (`sh`, `loopx`,
`python3`); each writes a marker if it ever runs. The person's PATH has `.` in
it (a common convenience) and the runtimes' hooks get a `PYTHONPATH` naming the
watch folder (an agent that can edit the runtime's settings sets their `env`).
Then each process runs from the project, and no marker may appear.

The person starts LoopX by its console script (`loopx …`): run here the same
way, by absolute path, never `python -m loopx_core` from the project (which is
exactly the hole).
"""

from __future__ import annotations

import json
import os
import shlex
import stat
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from tests.adapters.conftest import a_home_of_its_own, payload  # noqa: F401  (fixture: a CODEX_HOME of the test's own)

LOOPX = Path(sys.executable).with_name("loopx")  # the installed console script, as the person runs it
pytestmark = pytest.mark.parametrize(
    "backend", ["sqlite"], indirect=True
)  # where the code comes from, not the board's backend


class Planted:
    """Code of an agent's making in ``folders``, each piece writing ``markers/<what>`` if it runs."""

    def __init__(self, markers: Path, *folders: Path):
        self.markers = markers
        markers.mkdir(exist_ok=True)
        for folder in folders:
            self.plant(folder)

    def _code(self, what: str) -> str:
        return f"open({str(self.markers / what)!r}, 'w').write('ran')"

    def plant(self, folder: Path) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        tag = folder.name
        for package in ("loopx_core", "loopx_tui"):
            (folder / package).mkdir(exist_ok=True)
            (folder / package / "__init__.py").write_text(self._code(f"{tag}-{package}") + "\n")
            (folder / package / "__main__.py").write_text(self._code(f"{tag}-{package}-main") + "\n")
        for module in ("sitecustomize", "usercustomize"):
            (folder / f"{module}.py").write_text(self._code(f"{tag}-{module}") + "\n")
        (folder / "planted.pth").write_text("import os; " + self._code(f"{tag}-pth") + "\n")
        for program in ("sh", "loopx", "python3", "python"):
            shim = folder / program
            shim.write_text(f"#!/bin/sh\necho ran > {shlex.quote(str(self.markers / f'{tag}-{program}-shim'))}\n")
            shim.chmod(shim.stat().st_mode | stat.S_IXUSR)

    def ran(self) -> list[str]:
        return sorted(p.name for p in self.markers.iterdir())


@pytest.fixture
def planted(board, tmp_path, monkeypatch):
    """The board's project and agent a1's watch folder, planted; the person's PATH with `.` first."""
    work = board.root / "work"
    work.mkdir()
    board.ok("agent", "add", "a1", "--watch", str(work))
    board.ok("card", "add", "a job", "--next", "step 1")
    plant = Planted(tmp_path / "markers", board.root, work)
    monkeypatch.setenv("PATH", os.pathsep.join([".", str(LOOPX.parent), os.environ.get("PATH", "")]))
    monkeypatch.delenv("LOOPX_AGENT", raising=False)
    return plant


def person_env(board, **extra) -> dict:
    return dict(os.environ, LOOPX_DB=board.url, **extra)


def test_the_boards_out_of_process_verify_imports_nothing_from_the_project(board, planted, monkeypatch):
    """The board checks a long history with `loopx verify` in a child process
    started from the project (the board runs there): through the code path that
    spawns it, with the threshold at zero."""
    import threading

    from loopx_tui import reads

    monkeypatch.setattr(reads, "VERIFY_HERE", 0)
    monkeypatch.chdir(board.root)
    monkeypatch.setenv("LOOPX_DB", board.url)
    store = board.store()
    reader = reads.BoardReader(store, lambda: 0.0)
    out: dict = {}

    def worker():  # the board reads in workers only
        try:
            out["report"], out["problems"] = reader.verify()
        except Exception as exc:  # noqa: BLE001 - shown by the assertion below
            out["error"] = exc

    thread = threading.Thread(target=worker)
    thread.start()
    thread.join(120)
    store.close()
    assert planted.ran() == []
    assert "error" not in out, out
    assert out["report"].events > 0 and not out["report"].problems and out["problems"] == 0


def _run_command(command: list[str] | str, stdin: str, env: dict, cwd: Path) -> subprocess.CompletedProcess:
    shell = isinstance(command, str)
    return subprocess.run(
        ["/bin/sh", "-c", command] if shell else command,
        input=stdin,
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


MCP_HELLO = (
    json.dumps(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "t", "version": "1"},
            },
        }
    )
    + "\n"
)


def _runtime_env(board, planted, agent: str, extra: dict) -> dict:
    """What a runtime gives its hooks: the person's environment, plus its settings'
    `env`, into which an agent that reached them put a PYTHONPATH."""
    return person_env(
        board,
        **{"LOOPX_AGENT": agent, "PYTHONPATH": str(board.root / "work"), "PYTHONUSERBASE": str(board.root), **extra},
    )


def test_the_hooks_and_mcp_server_claude_code_runs_import_nothing_from_the_project(board, planted):
    board.ok("init", "--for", "claude-code", "--agent", "a1")
    settings = json.loads((board.root / ".claude" / "settings.json").read_text())
    local = json.loads((board.root / ".claude" / "settings.local.json").read_text())
    env = _runtime_env(board, planted, "a1", {**local["env"], "CLAUDE_PROJECT_DIR": str(board.root)})
    commands = [
        h["command"]
        for groups in settings["hooks"].values()
        for group in groups
        for h in group["hooks"]
        if " hook claude-code " in h["command"]
    ]
    assert (
        len(commands) == 8
    )  # SessionStart, PreToolUse, Stop, SessionEnd, PermissionRequest, PreSkillShellCommand, the question tool's PreToolUse, Notification
    tool = payload("claude/pre_tool_use_bash.json", CWD=str(board.root), COMMAND="ls")
    for command in commands:
        proc = _run_command(command, json.dumps(tool), env, board.root)
        assert proc.returncode in (0, 2), (command, proc.stderr)
    server = json.loads((board.root / ".mcp.json").read_text())["mcpServers"]["loopx"]
    proc = _run_command([server["command"], *server["args"]], MCP_HELLO, {**env, **server.get("env", {})}, board.root)
    assert '"serverInfo"' in proc.stdout, proc.stderr  # it really served
    assert planted.ran() == []


def test_the_hooks_and_mcp_server_codex_runs_import_nothing_from_the_project(board, planted, a_home_of_its_own):
    board.ok("init", "--for", "codex", "--agent", "a1")
    config = tomllib.loads((board.root / ".codex" / "config.toml").read_text())
    env = _runtime_env(board, planted, "a1", {})
    commands = [h["command"] for groups in config["hooks"].values() for group in groups for h in group["hooks"]]
    assert len(commands) == 4  # SessionStart, PreToolUse, Stop, PermissionRequest
    tool = payload("codex/pre_tool_use_bash.json", CWD=str(board.root), COMMAND="ls")
    for command in commands:
        proc = _run_command(command, json.dumps(tool), env, board.root)
        assert proc.returncode in (0, 2), (command, proc.stderr)
    server = config["mcp_servers"]["loopx"]
    proc = _run_command([server["command"], *server["args"]], MCP_HELLO, {**env, **server.get("env", {})}, board.root)
    assert '"serverInfo"' in proc.stdout, proc.stderr
    assert planted.ran() == []


def test_a_runner_and_its_turn_import_and_run_nothing_from_the_project(board, planted):
    """`loopx run --runtime shell -- sh -c '… loopx writeback …'` from the project,
    with `.` on the person's PATH: the turn's `sh` and its `loopx` are the real ones."""
    turn = 'loopx writeback "$LOOPX_CARD" --turn-id "$LOOPX_TURN_ID" --summary "a turn" --next "step 2"'
    proc = subprocess.run(
        [str(LOOPX), "run", "--agent", "a1", "--runtime", "shell", "--turns", "1", "--", "sh", "-c", turn],
        cwd=board.root,
        env=person_env(board),
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert planted.ran() == []
    assert [e["summary"] for e in board.ok("log", "LX-1")["evidence"]] == ["a turn"]  # the turn really ran, as LoopX


def test_loopx_watch_imports_nothing_from_the_watch_folders(board, planted):
    board.ok("next", "--agent", "a1", "--claim", agent="a1")
    doc = {"card": "LX-1", "agent": "a1", "summary": "from a file"}
    (board.root / "work" / "turn.loopx.json").write_text(json.dumps(doc))
    proc = subprocess.run(
        [str(LOOPX), "watch", "--once"],
        cwd=board.root / "work",
        env=person_env(board),
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert planted.ran() == []
    assert "from a file" in [e["summary"] for e in board.ok("log", "LX-1")["evidence"]]


def test_the_scripted_demo_imports_nothing_from_its_folder(board, planted, tmp_path):
    demo = tmp_path / "demo"
    planted.plant(demo)
    proc = subprocess.run(
        [str(LOOPX), "demo", "--script", "--keep", str(demo)],
        cwd=demo,
        env={k: v for k, v in os.environ.items() if k not in ("LOOPX_DB", "LOOPX_NOW")},
        capture_output=True,
        text=True,
        timeout=300,
        stdin=subprocess.DEVNULL,
    )
    assert proc.returncode == 0, proc.stdout[:3000] + proc.stderr
    assert "(exit 0)" in proc.stdout  # its steps really ran
    assert planted.ran() == []


def test_the_live_demos_runners_and_agents_import_nothing_from_its_folder(board, planted, tmp_path, monkeypatch):
    """`loopx demo` starts a runner per agent, each driving the demo's stand-in
    agent, from the demo's folder: one turn each, then they end."""
    from loopx_core.demo import DemoAgents, build_demo_board

    monkeypatch.delenv("LOOPX_NOW", raising=False)
    demo = tmp_path / "demo"
    planted.plant(demo)
    location, _ = build_demo_board(demo)
    agents = DemoAgents(location, demo, pace=0.0, turns=1)
    agents.start()
    try:
        codes = [proc.wait(timeout=120) for proc in agents.procs]
    finally:
        agents.stop()
    logs = "".join(p.read_text(errors="replace")[-1500:] for p in (demo / ".loopx").glob("demo-*.log"))
    assert planted.ran() == [], logs
    assert codes and all(code == 0 for code in codes), logs
