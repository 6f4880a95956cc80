"""Fixtures for the runtime adapters: documented hook payloads, a way to run a
hook as a real process or in-process, and a project whose agent holds a card."""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import sys
from datetime import UTC
from pathlib import Path
from typing import NamedTuple

import pytest

FIXTURES = Path(__file__).resolve().parent / "fixtures"
REPO = Path(__file__).resolve().parents[2]
SESSION = "3f8e2c1a-5b6d-4e7f-8a9b-0c1d2e3f4a5b"


def _fill(value, subs: dict):
    if isinstance(value, dict):
        return {k: _fill(v, subs) for k, v in value.items()}
    if isinstance(value, list):
        return [_fill(v, subs) for v in value]
    if isinstance(value, str) and value.startswith("__") and value.endswith("__") and value[2:-2] in subs:
        return subs[value[2:-2]]
    return value


def payload(name: str, **subs) -> dict:
    """A fixture payload with its ``__NAME__`` placeholders filled in."""
    subs.setdefault("SESSION", SESSION)
    subs.setdefault("TRANSCRIPT", "/nonexistent/transcript.jsonl")
    return _fill(json.loads((FIXTURES / name).read_text()), subs)


class HookResult(NamedTuple):
    code: int
    out: dict | None
    stdout: str
    stderr: str


def _parse(stdout: str) -> dict | None:
    return json.loads(stdout) if stdout.strip() else None


class Hooks:
    """Runs ``loopx hook RUNTIME EVENT`` against a board."""

    def __init__(self, board, monkeypatch):
        self.board = board
        self.mp = monkeypatch

    def spawn(
        self,
        runtime: str,
        event: str,
        data,
        *,
        agent: str | None = "a2",
        env: dict | None = None,
        raw: str | None = None,
    ) -> HookResult:
        """A real, cold ``python -m loopx_core hook …`` process."""
        full = {
            k: v for k, v in os.environ.items() if k not in ("LOOPX_AGENT", "CLAUDE_ENV_FILE", "CLAUDE_PROJECT_DIR")
        }
        full.update({"LOOPX_DB": self.board.url, **(env or {})})
        if agent:
            full["LOOPX_AGENT"] = agent
        text = raw if raw is not None else json.dumps(data)
        proc = subprocess.run(
            [sys.executable, "-m", "loopx_core", "hook", runtime, event],
            input=text,
            cwd=self.board.root,
            env=full,
            capture_output=True,
            text=True,
            timeout=60,
        )
        return HookResult(proc.returncode, _parse(proc.stdout), proc.stdout, proc.stderr)

    def run(
        self,
        runtime: str,
        event: str,
        data,
        *,
        agent: str | None = "a2",
        env: dict | None = None,
        raw: str | None = None,
    ) -> HookResult:
        """The same hook in-process (fast): ``run_hook`` with the real stdin/stdout contract."""
        from loopx_core.adapters.hooks import run_hook

        out, err = io.StringIO(), io.StringIO()
        with self.mp.context() as mp:
            mp.chdir(self.board.root)
            mp.setenv("LOOPX_DB", self.board.url)
            mp.delenv("CLAUDE_ENV_FILE", raising=False)
            mp.delenv("CLAUDE_PROJECT_DIR", raising=False)
            if agent:
                mp.setenv("LOOPX_AGENT", agent)
            else:
                mp.delenv("LOOPX_AGENT", raising=False)
            for key, value in (env or {}).items():
                mp.setenv(key, value)
            code = run_hook(
                runtime,
                event,
                None,
                stdin=io.StringIO(raw if raw is not None else json.dumps(data)),
                stdout=out,
                stderr=err,
            )
        return HookResult(code, _parse(out.getvalue()), out.getvalue(), err.getvalue())

    def answer(self, gate: str, decision: str = "approve", remember: str | None = None) -> None:
        """A human answers (the operator, as the TUI would call it)."""
        from loopx_core.authority import keys
        from loopx_core.ops import gates
        from loopx_core.rules import ids

        store = self.board.store()
        try:
            gates.answer(store, ids.parse(ids.GATE, gate), decision, keys.unlock(), remember=remember)
        finally:
            store.close()


@pytest.fixture
def hooks(team, monkeypatch) -> Hooks:
    return Hooks(team, monkeypatch)


@pytest.fixture
def working(team):
    """``a2`` (no capabilities) holds LX-1; ``a1`` may push."""
    team.ok("card", "add", "Fix the date parser", "--next", "make the test pass")
    team.ok("next", "--claim", agent="a2")
    return team


@pytest.fixture
def transcript(tmp_path):
    """A copy of the Claude Code transcript fixture; ``append()`` adds the next turn."""

    class Transcript:
        path = tmp_path / "session.jsonl"

        def later(self) -> None:
            """Move the current turn's prompt (and what follows) two minutes into the future."""
            import time
            from datetime import datetime

            stamp = datetime.fromtimestamp(time.time() + 120, UTC).strftime("%Y-%m-%dT%H:%M")
            self.path.write_text(self.path.read_text().replace("2026-03-11T02:40", stamp))

        def append(self, name: str = "claude/transcript_continued.jsonl") -> None:
            with open(self.path, "a") as fh:
                fh.write((FIXTURES / name).read_text())

    shutil.copy(FIXTURES / "claude" / "transcript.jsonl", Transcript.path)
    return Transcript()


def deny_reason(result: HookResult) -> str:
    assert result.out is not None, result
    out = result.out["hookSpecificOutput"]
    assert out["hookEventName"] == "PreToolUse"
    assert out["permissionDecision"] == "deny", out
    return out["permissionDecisionReason"]


@pytest.fixture(autouse=True)
def a_home_of_its_own(tmp_path, monkeypatch):
    """``init --for codex`` writes the person's own Codex config ($CODEX_HOME, else
    ~/.codex): never the real one."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("CODEX_HOME", str(home / ".codex"))
    return home
