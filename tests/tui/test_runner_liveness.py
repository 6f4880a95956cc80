"""The board tells the truth about a real runner process: alive while it waits
on a gate longer than the liveness window (its heartbeats are no events: the
board re-reads the runners' rows on its own clock), gone soon after a real
SIGKILL — and it says what `loopx runner list` says, one rule
(``rules.liveness.runner_alive``) for both.

The app's clock is one the test sets (``Clock``); the runner's heartbeats are
real. Each step waits for the thing itself (a row, a header), never a sleep."""

from __future__ import annotations

import json
import signal

from loopx_core.ops.runners import STALE
from loopx_core.store.discovery import parse_target
from tests.polling import until_async
from tests.runner.conftest import Watch, plan

from .conftest import board_app_class

SOON = 20.0  # s: a killed runner is called gone well inside the liveness window


class Clock:
    """The app's "now", set by the test."""

    def __init__(self, at: float):
        self.at = at

    def __call__(self) -> float:
        return self.at


def header(app) -> str:
    return str(app.board_screen.query_one("#board-header").render())


def listed(team, at: float) -> str:
    """What `loopx runner list` (another process) says of a1's runner at ``at``."""
    res = team.spawn("--json", "runner", "list", env={"LOOPX_NOW": repr(at)})
    assert res.returncode == 0, res.stdout + res.stderr
    return {r["agent"]: r for r in json.loads(res.stdout)["runners"]}["a1"]["state"]


async def test_a_waiting_runner_stays_alive_and_a_killed_one_is_gone(team, tmp_path):
    import time

    watch = Watch(team, tmp_path)
    clock = Clock(time.time())
    app = board_app_class()(parse_target(team.url, "flag", team.root), background=True, now=clock, poll_interval=0.05)
    try:
        async with app.run_test(size=(160, 40)) as pilot:
            team.ok("card", "add", "job", "--next", "step 1")
            plan(team, {1: "gate"})
            proc = watch.run("a1")

            def pause():
                return pilot.pause(0.05)

            row = await until_async(
                lambda: (r := watch.runner("a1")) and r.state == "waiting" and r,
                what="a1 waits on its gate",
                pause=pause,
                abort=watch._runner_died,
                explain=watch.explain,
            )
            waited_since = row.since  # its last event: the board's runner events stop here
            await until_async(lambda: "1 waiting" in header(app), what="the board shows it waiting", pause=pause)
            # A heartbeat after its last event (no event: only a re-read of the row sees it).
            beat = await until_async(
                lambda: (r := watch.runner("a1")) and r.heartbeat >= waited_since + 1 and r.heartbeat,
                what="a heartbeat while it waits",
                pause=pause,
                timeout=60,
            )
            clock.at = (
                waited_since + STALE + 0.5
            )  # longer than the window since its last event, inside it since that beat
            assert clock.at - beat < STALE
            app.tick()
            await until_async(
                lambda: app.model.runners["a1"].heartbeat >= beat,
                what="the board re-reads the runner's row",
                pause=pause,
                timeout=SOON,
            )
            app.tick()
            await pilot.pause()
            assert "1 waiting" in header(app) and "gone" not in header(app)
            assert listed(team, clock.at) == "waiting"

            proc.send_signal(signal.SIGKILL)
            proc.wait(timeout=30)  # (reaped, as the person's shell would)
            killed_at = time.monotonic()
            clock.at = watch.runner("a1").heartbeat + 1  # its heartbeat is fresh: only its process says it is gone
            await until_async(
                lambda: "1 gone" in header(app),
                what="the board calls the killed runner gone",
                pause=pause,
                timeout=SOON,
            )
            assert time.monotonic() - killed_at < STALE
            assert "waiting" not in header(app)
            assert listed(team, clock.at) == "gone"
    finally:
        watch.close()
