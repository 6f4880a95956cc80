"""Real runner processes (``python -m loopx_core run``) on a real board, the
person acting through ``tests.conftest.person`` (the tester's key). Tests wait
on the board's state with a deadline (``Watch.until``), never on sleeps or on
log text; a runner's log is shown only when a test fails."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from loopx_core.store import events as event_log
from loopx_core.store.models import Card, Runner
from tests.polling import until

HERE = Path(__file__).resolve().parent
TURN = HERE / "agent_turn.py"
DEADLINE = 90.0  # seconds: generous, the machine is shared and loaded


def pytest_collection_modifyitems(config, items):
    for item in items:
        if str(item.fspath).startswith(str(HERE)):
            item.add_marker(pytest.mark.slow)


class Watch:
    """Reads the board in-process while runner processes write to it."""

    def __init__(self, board, tmp_path: Path):
        self.board = board
        self.store = board.store()
        self.procs: list[tuple[subprocess.Popen, Path]] = []
        self.logs = tmp_path / "runner-logs"
        self.logs.mkdir(exist_ok=True)

    def close(self) -> None:
        for proc, _ in self.procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait(timeout=10)
        self.store.close()

    # -- runners -----------------------------------------------------------------------
    def run(
        self, agent: str, *args: str, runtime: str = "shell", rest=None, env: dict | None = None
    ) -> subprocess.Popen:
        """``loopx run --agent AGENT --runtime RUNTIME ARGS… -- REST…`` as the person
        starts it (their environment). ``rest``: the shell command (default: the
        scripted agent turn), or a runtime's extra arguments."""
        full = dict(os.environ, LOOPX_DB=self.board.url, **(env or {}))
        full.pop("LOOPX_AGENT", None)
        rest = ([sys.executable, str(TURN)] if runtime == "shell" else []) if rest is None else rest
        argv = [sys.executable, "-m", "loopx_core", "run", "--agent", agent, "--runtime", runtime, *args, "--", *rest]
        return self.spawn(agent, argv, full, self.board.root)

    def spawn(self, agent: str, argv: list, env: dict, cwd) -> subprocess.Popen:
        """A runner process, its output kept in a log shown when a test fails."""
        log = self.logs / f"{agent}-{len(self.procs)}.log"
        with open(log, "wb") as fh:
            proc = subprocess.Popen(
                argv, cwd=cwd, env=env, stdout=fh, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL
            )
        self.procs.append((proc, log))
        return proc

    def explain(self) -> str:
        return "\n".join(
            f"--- {log.name} (exit {proc.poll()})\n{log.read_text(errors='replace')[-4000:]}"
            for proc, log in self.procs
        )

    def ended(self, proc: subprocess.Popen, timeout: float = DEADLINE) -> int:
        try:
            return proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            pytest.fail(f"a runner did not exit within {timeout} s\n{self.explain()}")

    def signal(self, proc: subprocess.Popen, sig=signal.SIGTERM) -> None:
        proc.send_signal(sig)

    # -- reading the board -------------------------------------------------------------------
    def events(self, kind: str | None = None, since: int = 0) -> list:
        with self.store.read():
            found = event_log.since(since)
        return [e for e in found if kind is None or e.kind == kind]

    def seq(self) -> int:
        with self.store.read():
            return self.store.max_seq()

    def runner(self, agent: str) -> Runner | None:
        with self.store.read():
            return Runner.get_or_none(Runner.agent == agent)

    def card(self, card_id: int = 1) -> Card:
        with self.store.read():
            return Card.get_by_id(card_id)

    def evidence(self, card: str = "LX-1") -> list[dict]:
        return self.board.ok("log", card)["evidence"]

    def until(self, what: str, predicate, timeout: float = DEADLINE):
        """Wait for ``predicate()`` to be truthy (its value is returned), polling the
        board; a runner that died unexpectedly fails the test at once."""
        return until(
            predicate, what=what, timeout=timeout, interval=0.05, explain=self.explain, abort=self._runner_died
        )

    def _runner_died(self) -> str | None:
        for proc, _ in self.procs:
            if proc.poll() not in (None, 0, -9, -15) and not getattr(proc, "expected_exit", False):
                return f"a runner exited {proc.returncode}"
        return None

    def turns_started(self, agent: str | None = None) -> int:
        return len([e for e in self.events("turn_started") if agent is None or e.actor == f"runner:{agent}"])

    def seen(self, agent: str, seq: int) -> bool:
        """The agent's runner has looked at the board up to ``seq`` and decided."""
        row = self.runner(agent)
        return row is not None and (row.seen_seq or 0) >= seq


@pytest.fixture
def watch(board, tmp_path):
    w = Watch(board, tmp_path)
    yield w
    w.close()


def plan(board, steps: dict | None = None, agents: dict | None = None) -> None:
    """What the scripted agent does at each step (agent_turn.py)."""
    (board.root / ".plan.json").write_text(
        json.dumps(
            {
                "steps": {str(k): v for k, v in (steps or {}).items()},
                "agents": {a: {str(k): v for k, v in p.items()} for a, p in (agents or {}).items()},
            }
        )
    )


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie (killed, not yet reaped by its parent) is not alive
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False
    return True
