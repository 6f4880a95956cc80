"""Setting up the demo board and running the agent processes."""

from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path

from ..rules import spawn
from ..store.discovery import BoardLocation, parse_target
from .scenario import AGENTS, CARDS, OBJECTIVE, WINDOWS

TYPE_CHECKING = False  # (annotations only; checkers read this as typing's)
if TYPE_CHECKING:
    from ..authority.keys import Person

PERSON_NAME = "you"
KEY_FILE = "demo-person.key.json"  # the demo's throwaway key: unsealed, in the demo folder


def demo_person(folder: Path) -> Person:
    """The person of a demo board: a throwaway key kept next to it (so `--keep` reopens as them)."""
    from ..authority import keys

    path = Path(folder) / ".loopx" / KEY_FILE
    found = keys.read(path) or keys.create(path, PERSON_NAME, None)
    return found.unlock()


def build_demo_board(folder: Path, *, windows: bool = True) -> tuple[BoardLocation, Person]:
    """A board in ``folder/.loopx/board.db`` with the scenario's agents and
    cards (left as it is when ``folder`` already holds the demo board), and
    with ``windows`` the scenario's quota windows (a card that sleeps until its
    window refills, then resumes by itself). Returns (location, the demo's person)."""
    from ..ops.agents import add_agent
    from ..ops.board import init_board
    from ..ops.cards import add_card
    from ..shapes.inputs import validate

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    location = parse_target(str(folder / ".loopx" / "board.db"), "flag")
    person = demo_person(folder)
    store, created = init_board(location, OBJECTIVE if not location.exists else None, person, pin=False)
    try:
        if created:
            for spec in AGENTS:
                add_agent(
                    store, validate("agent", {"id": spec.id, "runtime": spec.runtime, "can": list(spec.can)}), person
                )
            for card in CARDS:
                add_card(store, validate("card", {"title": card.title, **card.data}), person)
            if windows:
                from ..ops.cards import window_card

                for title, window in WINDOWS.items():
                    card_id = next(i for i, spec in enumerate(CARDS, 1) if spec.title == title)
                    window_card(store, card_id, validate("window", window), person)
    finally:
        store.close()
    return location, person


class DemoAgents:
    """Real runners (``loopx run``), one per agent, driving the demo's stand-in
    runtime (``python -m loopx_core.demo.agent`` as the `shell` runtime): the
    board shows them run turns, sleep, wait for the person and resume. Each
    logs to ``.loopx/demo-<id>.log``; ``stop`` sends them SIGTERM (they give
    their cards back), and they end with the demo even if it dies."""

    def __init__(
        self, location: BoardLocation, folder: Path, pace: float | None = None, turns: int = 0, grace: float = 2.0
    ):
        self.location = location
        self.folder = Path(folder)
        self.pace = pace if pace is not None else float(os.environ.get("LOOPX_DEMO_PACE", "2.5"))
        self.turns = turns  # 0: until stopped
        self.grace = grace
        self.procs: list[subprocess.Popen] = []

    def start(self) -> None:
        from ..runner.process import die_with_parent

        logs = self.folder / ".loopx"
        logs.mkdir(parents=True, exist_ok=True)
        env = spawn.person_env(LOOPX_DB=str(self.location.path), LOOPX_DEMO_PACE=str(self.pace))
        env.pop("LOOPX_AGENT", None)
        env.pop("LOOPX_NOW", None)
        for spec in AGENTS:
            log = open(logs / f"demo-{spec.id}.log", "ab")
            cmd = spawn.loopx_argv(
                "run",
                "--agent",
                spec.id,
                "--runtime",
                "shell",
                "--turn-limit",
                "2m",
                "--grace",
                f"{self.grace}s",
                "--turns",
                str(self.turns),
                "--",
                *spawn.python_argv("loopx_core.demo.agent"),
            )
            self.procs.append(
                subprocess.Popen(
                    cmd,
                    cwd=self.folder,
                    env=env,
                    stdin=subprocess.DEVNULL,
                    stdout=log,
                    stderr=log,
                    preexec_fn=lambda: die_with_parent(signal.SIGTERM),
                )
            )
            log.close()

    def stop(self) -> None:
        for proc in self.procs:
            if proc.poll() is None:
                proc.terminate()  # a runner's SIGTERM: finish or abandon the turn, give the card back
        for proc in self.procs:
            try:
                proc.wait(timeout=self.grace + 10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=3)
        self.procs = []
