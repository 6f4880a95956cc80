"""The person's board, open on the day's board while the runners work (#39).

The real Textual app, headless (``App.run_test``) in the test process, reads
the same board the runners write — in its workers, on its own clock, the
real one. ``BoardWatch`` says what it shows for each runner (the state its
owner view and header use: ``loopx_tui.runners.state``) and what ``loopx
runner list`` says in another process at the same moment: one liveness rule
(``rules.liveness.runner_alive``), so the two must agree."""

from __future__ import annotations

import time
from contextlib import asynccontextmanager

from loopx_core.rules.liveness import STALE
from loopx_core.store.discovery import parse_target
from tests.polling import until_async

from .harness import Project


class BoardWatch:
    def __init__(self, project: Project, app, pilot, explain):
        self.project, self.app, self.pilot, self.explain = project, app, pilot, explain

    def pause(self):
        return self.pilot.pause(0.25)

    def header(self) -> str:
        return str(self.app.board_screen.query_one("#board-header").render())

    def shown(self) -> dict[str, str]:
        """agent -> the runner's state as the board shows it now."""
        from loopx_tui.runners import state

        now = self.app.now()
        return {agent: state(view, now) for agent, view in self.app.model.runners.items()}

    def listed(self) -> dict[str, str]:
        """agent -> the runner's state as ``loopx runner list`` says it now (another process)."""
        return {r["agent"]: r["state"] for r in self.project.loopx("runner", "list").data["runners"]}

    async def until(self, what: str, check, timeout: float):
        return await until_async(check, what=what, timeout=timeout, pause=self.pause, explain=self.explain)

    async def agree(self, agent: str, wanted, timeout: float = 15.0) -> str:
        """Wait until the board and ``runner list`` both say ``agent``'s runner is in a state
        ``wanted(state)`` accepts — the same one; returns it."""
        seen: list = []

        def both():
            board, listed = self.shown().get(agent), self.listed().get(agent)
            seen[:] = [board, listed]
            return board if board is not None and board == listed and wanted(board) else None

        return await until_async(
            both,
            what=f"the board and `runner list` to agree on {agent}'s runner",
            timeout=timeout,
            pause=self.pause,
            explain=lambda: f"board {seen[0]!r}, runner list {seen[1]!r}\n{self.explain()}",
        )

    async def hold_alive(self, agents, seconds: float, waiting: str) -> None:
        """``seconds`` pass with ``waiting``'s runner waiting on its gate; throughout, the board
        never calls one of ``agents`` gone (each re-read of its row finds a fresh heartbeat;
        a runner that ended its turns says stopped)."""
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            shown = self.shown()
            gone = [a for a in agents if shown.get(a) == "gone"]
            assert not gone, f"the board calls {gone} gone while they work or wait: {shown}\n{self.explain()}"
            assert shown.get(waiting) == "waiting", (
                f"{waiting}'s runner no longer waits on its gate: {shown}\n{self.explain()}"
            )
            await self.pilot.pause(1.0)

    async def gone_after_kill(self, agent: str, proc) -> float:
        """``kill -9`` of ``agent``'s runner: the board says gone within the liveness window, as
        ``runner list`` does; returns how long the board took."""
        import signal

        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)  # (reaped, as the person's shell would)
        killed = time.monotonic()
        await self.until(f"the board calls the killed {agent} gone", lambda: self.shown().get(agent) == "gone", STALE)
        took = time.monotonic() - killed
        assert self.listed()[agent] == "gone"
        return took


@asynccontextmanager
async def board_open(project: Project, explain):
    """The board app on ``project``'s board, as ``loopx board`` opens it, until the block ends."""
    from tests.tui.conftest import board_app_class

    location = parse_target(str(project.root / ".loopx" / "board.db"), "flag", project.root)
    app = board_app_class()(location, background=True)
    async with app.run_test(size=(200, 50)) as pilot:
        yield BoardWatch(project, app, pilot, explain)
