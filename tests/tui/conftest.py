"""Fixtures for the TUI tests: a seeded board under a frozen clock, and apps
on it with every background worker off (changes are fed in by the test)."""

from __future__ import annotations

import os

# Before anything imports Textual: no animations, so every frame is final.
os.environ["TEXTUAL_ANIMATIONS"] = "none"
os.environ.pop("NO_COLOR", None)

import json  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
from pathlib import Path  # noqa: E402

import pytest  # noqa: E402

from loopx_core.rules import clock  # noqa: E402

HUMAN = "human:seed"  # the seeded board's person (loopx_core.demo.seed)


@pytest.fixture(scope="session")
def seed_template(tmp_path_factory):
    """``loopx_core.demo.seed``'s board, built once; each test gets a copy."""
    from loopx_core.demo.seed import seed_board

    board = seed_board(tmp_path_factory.mktemp("seed") / "project")
    return board


@pytest.fixture
def seeded(seed_template, tmp_path: Path):
    """A fresh copy of the fixed seeded board, clock frozen at its "now"."""
    import shutil

    from loopx_core.store.discovery import parse_target

    root = tmp_path / "project"
    shutil.copytree(seed_template.root, root)
    board = seed_template._replace(root=root, location=parse_target(str(root / ".loopx" / "board.db"), "flag"))
    from loopx_core.store.backends import Store

    store = Store.open(board.location)  # the copy's project folder is its own
    store.run(lambda: store.put_setting("project_root", str(root)))
    store.close()
    clock.freeze(board.now)
    yield board
    clock.set_clock(None)


def board_app_class():
    """LoopxApp whose ``run_test`` hands over the pilot once the board is on
    screen (it is opened and read in a worker): tests start from the board."""
    import asyncio
    from contextlib import asynccontextmanager

    from loopx_tui.app import LoopxApp

    class BoardApp(LoopxApp):
        @asynccontextmanager
        async def run_test(self, *args, **kwargs):
            async with super().run_test(*args, **kwargs) as pilot:
                await asyncio.wait_for(self.loaded.wait(), 60)  # (an app that failed to start raises here)
                await self.reads_idle()  # the other view's first cards, the history check
                await pilot.pause()
                yield pilot

    return BoardApp


async def settled(pilot) -> None:
    """For snapshots (``snap_compare`` runs the app itself): the board is on
    screen and the start-up toast is gone."""
    await pilot.app.loaded.wait()
    await pilot.app.reads_idle()
    await pilot.pause()
    pilot.app.clear_notifications()


async def show_done(app, pilot) -> None:
    """Done and cancelled cards are counted on open and read when asked for (d)."""
    await pilot.press("d")
    await app.reads_idle()
    await pilot.pause()


class Ticks:
    """The app's clock of keys (how long the person is idle, how long a gate
    dialog has been up): it moves only when the test steps it."""

    def __init__(self, start: float = 1000.0):
        self.at = start

    def __call__(self) -> float:
        return self.at

    def step(self, seconds: float) -> None:
        self.at += seconds


async def gate_dialog(pilot):
    """The gate dialog on screen and taking keys (returned). Its brief is read
    in a thread first, and Pilot's wait for idle does not wait for that thread
    on a loaded machine (PITFALLS "pytest and snapshots"): wait for the dialog."""
    from loopx_tui.modals.gate import GateModal
    from tests.polling import until_async

    app = pilot.app
    await until_async(
        lambda: isinstance(app.screen, GateModal) and app.screen.ready,
        what="the gate dialog",
        pause=lambda: pilot.pause(0.05),
    )
    return app.screen


async def arm(pilot) -> None:
    """Time passes with the gate dialog on screen: its answer keys arm."""
    await gate_dialog(pilot)
    app = pilot.app
    app.ticks.step(app.arm_delay)
    app.screen.arm_tick()
    await pilot.pause()


async def idle(pilot) -> None:
    """The person stops typing for ``gate_idle``: the queue's timer runs."""
    app = pilot.app
    app.ticks.step(app.gate_idle)
    app.gates.when_idle()
    await app.reads_idle()
    await pilot.pause()


@pytest.fixture
def make_app(seeded):
    """``make_app(**kw)``: a LoopxApp on the seeded board, workers off by
    default, its clock of keys a ``Ticks`` the test steps."""
    BoardApp = board_app_class()

    def make(location=None, **kw):
        kw.setdefault("background", False)
        kw.setdefault("person", seeded.person)
        kw.setdefault("ticks", Ticks())
        kw.setdefault("gate_idle", 2.0)
        return BoardApp(location or seeded.location, **kw)

    return make


def export(location) -> dict:
    """Everything in the board (from a separate process, so it never touches the app's store)."""
    env = dict(os.environ, LOOPX_DB=str(location.path), LOOPX_NOW=repr(clock.now()))
    env.pop("LOOPX_AGENT", None)
    out = subprocess.run(
        [sys.executable, "-m", "loopx_core", "--json", "export"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    data = json.loads(out.stdout)
    data["board"].pop("exported_at", None)
    return data


def loopx(location, *args: str, agent: str | None = None) -> subprocess.CompletedProcess:
    """The real CLI in another process: an agent (or person) elsewhere."""
    from loopx_core.demo.seed import KEY_FILE

    # A person elsewhere is the seeded board's person, in another process (their key file).
    env = dict(os.environ, LOOPX_DB=str(location.path), LOOPX_KEY=str(location.path.parent / KEY_FILE))
    env.pop("LOOPX_AGENT", None)
    env["LOOPX_NOW"] = repr(clock.now())  # the other process agrees on the (frozen) time
    if agent:
        env["LOOPX_AGENT"] = agent
    return subprocess.run(
        [sys.executable, "-m", "loopx_core", "--json", *args], env=env, capture_output=True, text=True, timeout=60
    )


async def feed(app) -> None:
    """What the change poller does, once: read the delta since the app's seq
    (off the UI thread, as the poller does) and post it. For tests that keep
    the workers off."""
    import asyncio

    from loopx_tui.messages import BoardChanged

    delta = await asyncio.to_thread(app.reader.delta, app.model.seq)
    if delta.events:
        app.post_message(BoardChanged(delta))


def card_spot(app, card_id: int, dx: int = 3, dy: int = 1):
    """Where to point at a card on the board (for Pilot's mouse): the column's
    card list that draws it and an offset into that list, ``dy`` rows below
    the card's top edge as it is scrolled now."""
    from loopx_tui.widgets.card_face import CARD_ROWS

    column = app.board_screen.board.column_of_card(card_id)
    assert column is not None, f"card {card_id} is not on the board"
    body = column.body
    return body, (dx, body.index_of(card_id) * CARD_ROWS - round(body.scroll_y) + dy)


def card_text(app, card_id: int) -> str:
    """The card's five lines as the board draws them."""
    column = app.board_screen.board.column_of_card(card_id)
    assert column is not None, f"card {card_id} is not on the board"
    return column.body.card_text(card_id)
