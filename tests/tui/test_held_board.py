"""The board opened while another process holds it exclusively (issue #24 §4):
it says at once who holds it, keeps answering keys, and opens the board as soon
as the holder lets go — no "database is locked" after a long wait."""

from __future__ import annotations

import pytest
from textual.widgets import Static

from loopx_core.shapes.errors import BoardBusy
from loopx_tui.app import LoopxApp
from tests.kernel.test_held_board import Held
from tests.polling import until_async


def _app(seeded) -> LoopxApp:
    return LoopxApp(seeded.location, background=False, person=seeded.person)  # (not make_app's: it waits for the board)


def _opening_text(app) -> str:
    return str(app.query_one("#opening", Static).content)


@pytest.fixture
def held(seeded):
    h = Held(seeded.location.path)
    yield h
    h.release()


async def _waiting(app, pilot) -> None:
    await until_async(
        lambda: "waiting for the board" in _opening_text(app),
        what="the board saying it waits",
        pause=lambda: pilot.pause(0.05),
    )


async def test_the_board_says_who_holds_it_and_opens_once_it_is_let_go(seeded, held):
    app = _app(seeded)
    async with app.run_test(size=(110, 30)) as pilot:
        await _waiting(app, pilot)
        text = _opening_text(app)
        assert f"pid {held.proc.pid}" in text and "locking_mode" in text and "q quits" in text
        assert isinstance(app.board_error, BoardBusy) and app.board_screen is None
        await pilot.press("v", "?")  # keys reach an app that is not stuck on the lock
        await pilot.pause()
        held.release()
        await until_async(
            lambda: app.board_screen is not None, what="the board opened once let go", pause=lambda: pilot.pause(0.05)
        )
        await app.reads_idle()
        assert app.model.cards  # the board's own cards, read as soon as it was free


async def test_q_quits_a_board_still_waiting(seeded, held):
    app = _app(seeded)
    async with app.run_test(size=(110, 30)) as pilot:
        await _waiting(app, pilot)
        await pilot.press("q")
        await pilot.pause()
    assert not app.is_running
