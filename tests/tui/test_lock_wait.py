"""A person's action that waits for the board's write lock (#30).

Another process holds the lock — a real one, in SQLite's ``BEGIN IMMEDIATE``,
as any writer elsewhere would. The action runs in a worker, so the board keeps
answering keys; every screen's footer says "waiting for the board" (what
waits, for how long by the app's clock, the bound) until the action goes
through once the lock is let go, or gives up after ``LOOPX_LOCK_WAIT`` with
the bounded wait's refusal, the card unchanged."""

from __future__ import annotations

import asyncio
import subprocess
import sys

import pytest

from loopx_core.ops import cards as card_ops
from loopx_tui.widgets.footer import KeyBar
from tests.polling import until_async

from .conftest import export
from .conftest import settled as _settle

HOLD = """
import sqlite3, sys
con = sqlite3.connect(sys.argv[1], isolation_level=None, timeout=30)
con.execute("BEGIN IMMEDIATE")
print("held", flush=True)
sys.stdin.read()
"""


class Writer:
    """Another process in a write transaction on the board: it holds the write lock until released."""

    def __init__(self, path):
        self.proc = subprocess.Popen(
            [sys.executable, "-c", HOLD, str(path)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )
        assert self.proc.stdout.readline().strip() == "held"

    def release(self) -> None:
        if self.proc.poll() is None:
            self.proc.stdin.close()
            self.proc.wait(timeout=30)


@pytest.fixture
def writers(seeded):
    """``await writers.hold()``: a writer elsewhere takes the lock (ended by the test, or after it)."""

    class Writers(list):
        async def hold(self) -> Writer:
            writer = await asyncio.to_thread(Writer, seeded.location.path)
            self.append(writer)
            return writer

    held = Writers()
    yield held
    for writer in held:
        writer.release()


def _footer(app) -> KeyBar:
    return app.screen.query_one(KeyBar)


async def test_an_action_waiting_for_the_lock_says_so_until_it_goes_through(make_app, seeded, writers, monkeypatch):
    monkeypatch.setenv("LOOPX_LOCK_WAIT", "60")
    app = make_app(gate_idle=3600)  # (the seeded gate stays queued while the test steps the app's clock)
    async with app.run_test(size=(120, 36)) as pilot:
        writer = await writers.hold()
        assert app.board_screen.select_card(9)
        await pilot.press("r")  # LX-9 from the backlog to ready: its write waits for the lock
        await asyncio.wait_for(app.lock_said.wait(), 60)
        assert _footer(app).note.startswith(
            "waiting for the board: move LX-9 — another process holds its write lock (0 s; gives up after 60 s)"
        )
        assert "waiting for the board" in str(_footer(app).render())
        app.ticks.step(4)  # the app's clock moves: the footer counts
        app.watch_lock()
        assert "(4 s; gives up after 60 s)" in _footer(app).note
        await pilot.press("t")  # keys keep working meanwhile; the timeline's footer says it too (at the next look)
        await until_async(
            lambda: (
                type(app.screen).__name__ == "TimelineScreen"
                and _footer(app).note.startswith("waiting for the board: move LX-9")
            ),
            what="the timeline saying it",
            pause=lambda: pilot.pause(0.05),
        )
        await pilot.press("escape")
        assert (await asyncio.to_thread(card_ops.show_card, app.store, 9)).status == "backlog"  # (reads go on)
        writer.release()
        await app.ops_idle()
        await pilot.pause()
        assert not app.lock_said.is_set() and _footer(app).note == "" and "waiting" not in str(_footer(app).render())
        assert (await asyncio.to_thread(card_ops.show_card, app.store, 9)).status == "ready"
        assert any("LX-9 moved to ready" in m for _, m in app.notices)


async def test_an_action_that_waits_past_the_bound_gives_up_and_changes_nothing(make_app, seeded, writers, monkeypatch):
    monkeypatch.setenv("LOOPX_LOCK_WAIT", "1")
    before = export(seeded.location)
    app = make_app(gate_idle=3600)  # (the seeded gate stays queued while the test steps the app's clock)
    async with app.run_test(size=(120, 36)) as pilot:
        await writers.hold()
        assert app.board_screen.select_card(9)
        await pilot.press("r")
        await app.ops_idle()
        await pilot.pause()
        refusals = [m for sev, m in app.notices if sev == "error"]
        assert any(
            "another writer held the board" in m and "for longer than 1 s" in m and "LOOPX_LOCK_WAIT" in m
            for m in refusals
        ), refusals
        assert not app.lock_said.is_set() and _footer(app).note == ""
        assert not app.actions.in_flight and app._lock_timer is None  # (nothing runs: the app stops looking)
    for writer in writers:
        writer.release()
    assert export(seeded.location) == before


def test_the_waiting_line_snapshot(make_app, writers, snap_compare, monkeypatch):
    """The footer while LX-9's move waits 3 s (by the app's frozen clock) for the lock."""
    monkeypatch.setenv("LOOPX_LOCK_WAIT", "30")

    async def waiting(pilot):
        await _settle(pilot)
        app = pilot.app
        await writers.hold()
        assert app.board_screen.select_card(9)
        await pilot.press("r")
        await asyncio.wait_for(app.lock_said.wait(), 60)
        app.ticks.step(3)
        app.watch_lock()
        await pilot.pause()

    assert snap_compare(make_app(gate_idle=3600), terminal_size=(120, 36), run_before=waiting)
