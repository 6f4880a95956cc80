"""Shared fixtures: a throwaway project with a board, and ways to drive the real CLI."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import NamedTuple

import pytest

REPO = Path(__file__).resolve().parent.parent


class Result(NamedTuple):
    code: int
    data: dict
    out: str
    err: str


class Board:
    """A project folder with ``.loopx/board.db``, driven through ``loopx`` itself."""

    def __init__(self, root: Path, monkeypatch: pytest.MonkeyPatch):
        self.root = root
        self.db = root / ".loopx" / "board.db"
        self._mp = monkeypatch

    # In-process: the real argument parsing, dispatch, output and exit codes,
    # without paying a cold interpreter per call.
    def cli(self, *argv: str, agent: str | None = None, stdin: str | None = None, tty: bool = False, json_out: bool = True, env: dict | None = None) -> Result:
        from loopx_core.cli.main import main

        args = (["--json"] if json_out else []) + [str(a) for a in argv]
        out, err = io.StringIO(), io.StringIO()
        with self._mp.context() as mp:
            mp.chdir(self.root)
            mp.setenv("LOOPX_DB", str(self.db))
            mp.setenv("LOOPX_HUMAN", "tester")
            if agent:
                mp.setenv("LOOPX_AGENT", agent)
            else:
                mp.delenv("LOOPX_AGENT", raising=False)
            for key, value in (env or {}).items():
                mp.setenv(key, value)
            fake_in = io.StringIO(stdin or "")
            fake_in.isatty = lambda: tty  # type: ignore[method-assign]
            mp.setattr(sys, "stdin", fake_in)
            mp.setattr(sys, "stdout", out)
            mp.setattr(sys, "stderr", err)
            code = main(args)
        text = out.getvalue()
        data = {}
        if json_out and text.strip():
            data = json.loads(text.strip().splitlines()[-1])
        return Result(code, data, text, err.getvalue())

    def ok(self, *argv: str, **kw) -> dict:
        res = self.cli(*argv, **kw)
        assert res.code == 0, (argv, res)
        return res.data

    def spawn(self, *argv: str, agent: str | None = None, env: dict | None = None, timeout: float = 60, **kw) -> subprocess.CompletedProcess:
        """A real, cold ``loopx`` process (for concurrency, crashes and ttys)."""
        full = dict(os.environ, LOOPX_DB=str(self.db), LOOPX_HUMAN="tester", **(env or {}))
        full.pop("LOOPX_AGENT", None)
        if agent:
            full["LOOPX_AGENT"] = agent
        return subprocess.run([sys.executable, "-m", "loopx_core", *map(str, argv)], cwd=self.root, env=full, capture_output=True, text=True, timeout=timeout, **kw)

    def store(self):
        from loopx_core.discovery import parse_target
        from loopx_core.store import Store

        return Store.open(parse_target(str(self.db), "flag"))

    def snapshot(self) -> dict:
        """Everything in the board, to assert that a refusal changed nothing."""
        data = self.ok("export")
        data["board"].pop("exported_at", None)
        return data


@pytest.fixture
def board(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Board:
    root = tmp_path / "project"
    root.mkdir()
    b = Board(root, monkeypatch)
    b.ok("init", "--objective", "test board")
    return b


@pytest.fixture
def team(board: Board) -> Board:
    """A board with two agents: ``a1`` may push, ``a2`` may not."""
    board.ok("agent", "add", "a1", "--can", "git:push")
    board.ok("agent", "add", "a2")
    return board


@pytest.fixture(autouse=True)
def _reset_clock():
    from loopx_core import clock

    yield
    clock.set_clock(None)
