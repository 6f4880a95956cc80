"""The board decides only as a person: started with LOOPX_AGENT (an agent that
runs `loopx` under `script`, or types into it), or without the person's key, it
opens read-only and every key that would decide is refused (Pilot, the launch
path's own wiring)."""

from __future__ import annotations

import pytest

from loopx_core.demo.seed import KEY_FILE
from loopx_core.ops import gates
from loopx_core.store.backends import Store

from ..tui.conftest import Ticks, arm, seed_template, seeded  # noqa: F401  (the seeded board fixtures)


@pytest.fixture
def launched(seeded, monkeypatch):
    """``board_app``: what `loopx` runs, minus the terminal."""
    from loopx_tui.launch import board_app

    opened = []

    def make():
        store = Store.open(seeded.location)
        opened.append(store)
        app = board_app(seeded.location, store, ask=lambda prompt: pytest.fail("asked a passphrase"))
        app.background = False
        app.ticks = Ticks()  # (the clock of keys, stepped by the test: the gate dialog arms on it)
        app.last_input = app.ticks()
        return app

    monkeypatch.setenv("LOOPX_KEY", str(seeded.root / ".loopx" / KEY_FILE))
    yield make
    for store in opened:
        store.close()


async def on_screen(app, pilot) -> None:
    """The board reads the store only in workers: wait for what they bring."""
    await app.loaded.wait()
    await app.reads_idle()
    await pilot.pause()


def status(seeded, gate: int) -> str:
    store = Store.open(seeded.location)
    try:
        return gates.status(store, gate).status
    finally:
        store.close()


@pytest.mark.parametrize("why", ["agent", "no key"])
async def test_a_board_that_cannot_prove_a_person_decides_nothing(launched, seeded, monkeypatch, why):
    if why == "agent":
        monkeypatch.setenv("LOOPX_AGENT", "claude-1")
    else:
        monkeypatch.setenv("LOOPX_KEY", str(seeded.root / "no-key.json"))
    app = launched()
    assert app.person is None and app.read_only
    async with app.run_test(size=(120, 36)) as pilot:
        await on_screen(app, pilot)
        await pilot.press("g")
        await on_screen(app, pilot)  # the gate's brief is read in a worker; keys typed before it shows are dropped
        await arm(pilot)
        await pilot.press("y")
        await app.ops_idle()
        await pilot.pause()
        await pilot.press("escape", "A")
        await app.ops_idle()
        await pilot.pause()
        assert any("read-only" in message for _, message in app.notices), app.notices
    assert status(seeded, seeded.gate) == "pending"


async def test_the_person_decides_with_one_key(launched, seeded):
    app = launched()
    assert app.person is not None and app.person.actor == "human:seed"
    async with app.run_test(size=(120, 36)) as pilot:
        await on_screen(app, pilot)
        await pilot.press("g")
        await on_screen(app, pilot)
        await arm(pilot)
        await pilot.press("y")
        await app.ops_idle()
        await pilot.pause()
    assert status(seeded, seeded.gate) == "approved"


async def test_the_board_says_in_red_when_the_history_was_altered(launched, seeded):
    """An agent edits the board's file behind LoopX's back (an approval, an
    event): the board checks its history as it opens and says so in red."""
    from tests import board_sql

    app = launched()
    async with app.run_test(size=(120, 36)) as pilot:
        await on_screen(app, pilot)
        assert app.history is not None and app.history.ok
        assert not [banner for banner in app.board_screen.query("#board-banner") if banner.display]  # no red line
    con = board_sql.connect(seeded.location.path)
    con.execute("UPDATE event SET data = '{}' WHERE kind = 'claimed'")
    con.commit()
    con.close()
    app = launched()
    async with app.run_test(size=(120, 36)) as pilot:
        await on_screen(app, pilot)
        banner = app.board_screen.query_one("#board-banner")
        assert not app.history.ok and banner.display
        text = str(banner.render())
        assert "HISTORY ALTERED" in text and "was altered after it was written" in text
        assert "as seed" in str(app.board_screen.query_one("#board-header").render())


@pytest.mark.parametrize("where", ["in the board's process", "in a `loopx verify` process"])
async def test_a_history_altered_row_by_row_is_counted_in_full_but_only_its_first_problems_are_kept(
    launched, seeded, monkeypatch, where
):
    """An agent that alters every event must not make the board hold every
    problem for as long as it stays open (a bench board altered row by row:
    ~100,000 of them, ~45 MB and 60 MB of RSS). The board keeps the first ones,
    names the first in red and counts them all, as `loopx verify` does."""
    from loopx_core.authority import verify
    from loopx_tui import reads
    from tests import board_sql

    if where != "in the board's process":
        monkeypatch.setattr(reads, "VERIFY_HERE", 0)  # (a long history: checked by `loopx verify --json`)
    con = board_sql.connect(seeded.location.path)
    con.execute(
        "UPDATE event SET data = '{}' WHERE kind IN ('evidence_added', 'card_added', 'claimed')"
    )  # (30 events; the test clock's setting stays signed)
    con.commit()
    con.close()
    store = Store.open(seeded.location)
    try:
        whole = verify.verify_store(store, anchor=False)
    finally:
        store.close()
    assert len(whole.problems) > reads.PROBLEMS_KEPT  # (the attack: more problems than the board keeps)
    app = launched()
    async with app.run_test(size=(120, 36)) as pilot:
        await on_screen(app, pilot)
        assert app.history is not None and not app.history.ok
        assert len(app.history.problems) == reads.PROBLEMS_KEPT
        assert app.history.first == whole.first  # the one named in red
        assert f"{whole.first.where} {whole.first.what}" in str(app.board_screen.query_one("#board-banner").render())
        assert ("error", f"{len(whole.problems):,} problem(s) in the board's history — see the red line") in app.notices


async def test_the_board_says_in_red_when_its_log_goes_backwards_and_decides_nothing_more(launched, seeded, tmp_path):
    """A witness: the board saw a head of the log; an agent puts an older copy
    of board.db back (through SQLite's own client, so the open board reads it):
    the board says what vanished, in red, goes read-only and follows no further."""
    import subprocess

    from tests.polling import until_async

    from ..security.conftest import sqlite_client
    from ..tui.conftest import loopx

    def wait_until(pilot, check):
        return until_async(check, what="the board to see it", timeout=60, pause=lambda: pilot.pause(0.05))

    old = tmp_path / "old.db"
    subprocess.run(sqlite_client(seeded.location.path, f".backup {old}"), check=True, timeout=120)
    app = launched()
    app.background, app.poll_interval = True, 0.02
    async with app.run_test(size=(120, 36)) as pilot:
        await on_screen(app, pilot)
        proc = loopx(seeded.location, "writeback", "LX-6", "--summary", "a turn", agent="claude-1")
        assert proc.returncode == 0, proc.stderr
        assert await wait_until(pilot, lambda: app.model.cards[6].evidence_count == 2)  # the board saw the newer head
        seen = app.reader.witness.seen
        subprocess.run(sqlite_client(seeded.location.path, f".restore {old}"), check=True, timeout=120)
        assert await wait_until(pilot, lambda: app.read_only and "WENT BACKWARDS" in app.read_only)
        await pilot.pause()
        banner = str(app.board_screen.query_one("#board-banner").render())
        assert f"event {seen.seq} is gone" in banner and "read-only" in banner
        assert "WENT BACKWARDS" in str(app.board_screen.query_one("#board-header").render())
        await pilot.press("g")
        await on_screen(app, pilot)
        await pilot.press("y")
        await app.ops_idle()
        await pilot.pause()
        assert any(
            "WENT BACKWARDS" in message and "nothing more is decided" in message for _, message in app.notices
        ), app.notices  # the refusal says why
    done = subprocess.run(
        sqlite_client(seeded.location.path, f"SELECT status FROM gate WHERE id = {seeded.gate}"),
        capture_output=True,
        text=True,
        check=True,
    )
    assert done.stdout.strip() == "pending"  # (read with SQLite's client: this machine trusts nothing on the board now)
