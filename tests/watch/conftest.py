"""Fixtures for the watcher: a project whose agent ``w1`` holds ``LX-1`` and
follows ``out/``, an in-process watcher running on the test's event loop, and
real ``loopx watch`` processes. Every wait polls the board (or the process
output) with a timeout; nothing sleeps blindly for a result.

While an in-process watcher runs, the test must not call ``board.ok``: the
in-process CLI opens its own Store, and peewee's model proxy is one per
process. Change the board through ``board.spawn`` (a real process) instead."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from loopx_core.watch.watcher import WatchConfig
from tests.polling import until, until_async

FAST = WatchConfig(settle=0.4, observe_delay=0.1, recheck=0.1, debounce_ms=200, step_ms=30)


@pytest.fixture(params=["sqlite"])
def backend(request) -> str:
    """Watch tests run on SQLite (files and folders are what they exercise);
    ``test_postgres.py`` covers the engine on a PostgreSQL board."""
    return request.param


@pytest.fixture
def project(team):
    root = team.root
    (root / "out").mkdir()
    team.ok("agent", "add", "w1", "--watch", "out")
    team.ok("card", "add", "Build it")
    team.ok("claim", "LX-1", agent="w1")
    return team


# -- files -----------------------------------------------------------------------


def doc(summary: str, *, card: str = "LX-1", agent: str = "w1", **extra) -> dict:
    return {"card": card, "agent": agent, "summary": summary, **extra}


def write_atomic(path: Path, data) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    text = data if isinstance(data, str) else json.dumps(data)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(text)
    os.replace(tmp, path)
    return path


def append(path: Path, text: str) -> None:
    with open(path, "a") as handle:
        handle.write(text)
        handle.flush()


def lines(*docs) -> str:
    return "".join(json.dumps(d) + "\n" for d in docs)


# -- reading the board -------------------------------------------------------------


def evidence(store, card: int | None = None) -> list:
    from loopx_core.store.models import Evidence

    with store.read():
        query = Evidence.select().order_by(Evidence.id)
        if card is not None:
            query = query.where(Evidence.card == card)
        return list(query)


def events(store, kind: str) -> list:
    from loopx_core.store.models import Event

    with store.read():
        return list(Event.select().where(Event.kind == kind).order_by(Event.seq))


def observed(store) -> list:
    from loopx_core.store.models import Observed

    with store.read():
        return list(Observed.select().order_by(Observed.id))


# -- an in-process watcher -----------------------------------------------------------


class Watcher:
    """``watch_board`` running as a task on the test's loop."""

    def __init__(self, board, config: WatchConfig = FAST):
        self.board = board
        self.config = config
        self.store = None
        self.results: list = []
        self.progress: list = []
        self.task: asyncio.Task | None = None
        self.stop_event: asyncio.Event | None = None

    async def start(self):
        from loopx_core.watch import watch_board

        if self.store is None:
            self.store = self.board.store()
        self.results, self.progress = [], []
        self.stop_event = asyncio.Event()
        self.task = asyncio.create_task(
            watch_board(
                self.store,
                stop_event=self.stop_event,
                on_result=self.results.append,
                on_progress=lambda d, t: self.progress.append((d, t)),
                config=self.config,
            )
        )
        # Started once the initial notice ("following N folders") is out.
        await until_async(
            lambda: (
                self.task.done() or any(r.kind == "notice" and r.message.startswith("following") for r in self.results)
            ),
            what="the watcher to start",
        )
        if self.task.done():
            self.task.result()
        return self

    async def stop(self):
        if self.task is None:
            return None
        self.stop_event.set()
        stats = await asyncio.wait_for(self.task, 10)
        self.task = None
        return stats

    def kinds(self, kind: str) -> list:
        return [r for r in self.results if r.kind == kind]

    def close(self):
        if self.store is not None:
            self.store.close()
            self.store = None


@pytest.fixture
async def watcher(project):
    w = Watcher(project)
    await w.start()
    yield w
    await w.stop()
    w.close()


# -- real `loopx watch` processes -------------------------------------------------------


class Proc:
    """A ``loopx watch`` process whose stdout/stderr lines are collected by threads."""

    def __init__(self, board, *args: str, env: dict | None = None):
        full = dict(os.environ, LOOPX_DB=board.url, LOOPX_HUMAN="tester", **(env or {}))
        full.pop("LOOPX_AGENT", None)
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "loopx_core", "watch", *args],
            cwd=board.root,
            env=full,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            bufsize=1,
        )
        self.out: list[str] = []
        self.err: list[str] = []
        self._threads = [
            threading.Thread(target=self._pump, args=(s, l), daemon=True)
            for s, l in ((self.proc.stdout, self.out), (self.proc.stderr, self.err))
        ]
        for t in self._threads:
            t.start()

    @staticmethod
    def _pump(stream, sink):
        for line in stream:
            sink.append(line.rstrip("\n"))

    def wait_started(self, timeout: float = 30.0):
        until(
            lambda: any("following" in l for l in self.err) or self.proc.poll() is not None,
            timeout=timeout,
            what="loopx watch to start",
        )
        assert self.proc.poll() is None, (self.out, self.err)
        return self

    def interrupt(self, sig=None) -> int:
        import signal

        self.proc.send_signal(sig or signal.SIGINT)
        code = self.proc.wait(20)
        for t in self._threads:
            t.join(5)
        return code

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)


@pytest.fixture
def procs():
    started: list[Proc] = []

    def start(board, *args, **kw) -> Proc:
        p = Proc(board, *args, **kw)
        started.append(p)
        return p

    yield start
    for p in started:
        p.kill()
