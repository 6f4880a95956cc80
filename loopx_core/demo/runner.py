"""Setting up the demo board and running the agent processes."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from ..discovery import BoardLocation, parse_target
from .scenario import AGENTS, CARDS, OBJECTIVE

PERSON_NAME = "you"
KEY_FILE = "demo-person.key.json"  # the demo's throwaway key: unsealed, in the demo folder


def demo_person(folder: Path):
    """The person of a demo board: a throwaway key kept next to it (so `--keep` reopens as them)."""
    from .. import keys

    path = Path(folder) / ".loopx" / KEY_FILE
    found = keys.read(path) or keys.create(path, PERSON_NAME, None)
    return found.unlock()


def build_demo_board(folder: Path):
    """A board in ``folder/.loopx/board.db`` with the scenario's agents and
    cards (left as it is when ``folder`` already holds the demo board).
    Returns (location, the demo's person)."""
    from ..agents import add_agent
    from ..board import init_board
    from ..cards import add_card
    from ..inputs import validate

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    location = parse_target(str(folder / ".loopx" / "board.db"), "flag")
    person = demo_person(folder)
    store, created = init_board(location, OBJECTIVE if not location.exists else None, person, pin=False)
    try:
        if created:
            for spec in AGENTS:
                add_agent(store, validate("agent", {"id": spec.id, "runtime": spec.runtime, "can": list(spec.can)}), person)
            for spec in CARDS:
                add_card(store, validate("card", {"title": spec.title, **spec.data}), person)
    finally:
        store.close()
    return location, person


class DemoAgents:
    """The simulated agents, one process each, logging to ``.loopx/demo-<id>.log``."""

    def __init__(self, location: BoardLocation, folder: Path, pace: float | None = None, turns: int = 0, delay: float = 0.6):
        self.location = location
        self.folder = Path(folder)
        self.pace = pace if pace is not None else float(os.environ.get("LOOPX_DEMO_PACE", "2.5"))
        self.turns = turns  # 0: until stopped
        self.delay = delay
        self.procs: list[subprocess.Popen] = []

    def start(self) -> None:
        logs = self.folder / ".loopx"
        logs.mkdir(parents=True, exist_ok=True)
        env = dict(os.environ)
        env.pop("LOOPX_AGENT", None)
        env.pop("LOOPX_NOW", None)
        for i, spec in enumerate(AGENTS):
            log = open(logs / f"demo-{spec.id}.log", "ab")
            cmd = [
                sys.executable, "-m", "loopx_core.demo.agent",
                "--db", str(self.location.path), "--agent", spec.id, "--root", str(self.folder),
                "--pace", str(self.pace), "--seed", str(i), "--delay", str(self.delay * (1 + i)), "--turns", str(self.turns),
            ]
            self.procs.append(subprocess.Popen(cmd, cwd=self.folder, env=env, stdin=subprocess.DEVNULL, stdout=log, stderr=log))
            log.close()

    def stop(self) -> None:
        for proc in self.procs:
            if proc.poll() is None:
                proc.terminate()
        for proc in self.procs:
            try:
                proc.wait(timeout=3)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=3)
        self.procs = []
