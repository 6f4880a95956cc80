"""A card's tries side by side on the board (#26): T opens them, ←/→ pick,
k keeps one after asking (signed; the others archived and cancelled)."""

from __future__ import annotations

import pytest

from loopx_core.ops import tries
from loopx_core.store.backends import Store
from loopx_tui.modals.confirm import ConfirmModal
from loopx_tui.screens.tries import TriesScreen
from tests.conftest import git, make_repo
from tests.gitrepo import commit, open_workspace

from .conftest import settled as _settle

LIMITER = 7  # the seeded board's LX-7, ready and unowned


@pytest.fixture
def tried(seeded):
    """LX-7 and two tries of it (LX-12, LX-13), each with a commit in its own workspace."""
    make_repo(seeded.root, {"src/app.py": "def login():\n    return 'form'\n"})
    store = Store.open(seeded.location)
    try:
        added = tries.add_tries(store, LIMITER, seeded.person, ["codex-1", None])
    finally:
        store.close()
    changes = {
        LIMITER: {"src/limit.py": "RATE = 5\n"},
        12: {"src/limit.py": "RATE = 10\nBURST = 20\n", "src/app.py": "def login():\n    return limit('form')\n"},
        13: {"src/bucket.py": "tokens = 5\n"},
    }
    for card_id, files in changes.items():
        commit(open_workspace(seeded.location, card_id, "codex-1"), files, f"try on LX-{card_id}")
    return [c.id for c in added]


async def open_tries(app, pilot, card_id=LIMITER) -> TriesScreen:
    app.open_tries(card_id)
    await pilot.pause()
    await app.reads_idle()
    await pilot.pause()
    return app.screen


async def test_tries_side_by_side_and_k_keeps_one(make_app, seeded, tried):
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await open_tries(app, pilot)
        assert isinstance(screen, TriesScreen) and screen.loads >= 1
        assert [t.card.key for t in screen.tries] == ["LX-7", "LX-12", "LX-13"] and screen.selected == 0
        by = {t.card.key: t for t in screen.tries}
        assert (by["LX-12"].files, by["LX-12"].added, by["LX-12"].removed) == (2, 3, 1) and by[
            "LX-12"
        ].card.owner == "codex-1"
        await pilot.press("right")
        assert screen.selected == 1
        await pilot.press("k")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmModal)
        await pilot.press("y")
        await app.ops_idle()
        await pilot.pause()
    tips = {key: git(seeded.root, "rev-parse", f"refs/heads/loopx/{key}").strip() for key in ("LX-7", "LX-13")}
    store = Store.open(seeded.location)
    try:
        from loopx_core.ops.board_pages import read_card

        with store.thread_connection():
            assert [read_card(store, c).status for c in (LIMITER, 12, 13)] == ["cancelled", "ready", "cancelled"]
    finally:
        store.close()
    for key, tip in tips.items():  # archived, not deleted
        assert tip in git(seeded.root, "for-each-ref", "--format=%(objectname)", f"refs/loopx/{key}/archive")


async def test_t_opens_the_tries_from_the_card_screen(make_app, seeded, tried):
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        app.open_card(12)
        await pilot.pause()
        await app.reads_idle()
        await pilot.press("T")
        await pilot.pause()
        await app.reads_idle()
        await pilot.pause()
        assert isinstance(app.screen, TriesScreen) and app.screen.first == LIMITER and app.screen.selected == 1


def test_snapshot_tries(make_app, tried, snap_compare):
    async def side_by_side(pilot):
        await _settle(pilot)
        await open_tries(pilot.app, pilot)
        await pilot.press("right")

    assert snap_compare(make_app(), terminal_size=(100, 30), run_before=side_by_side)


async def test_w_shows_the_workspaces_with_size_age_and_the_cap(make_app, seeded, tried):
    from loopx_core.ops import workspace_cap
    from loopx_tui.screens.workspaces import WorkspacesScreen

    store = Store.open(seeded.location)
    try:
        workspace_cap.set_cap(store, 10 * 1024**3, seeded.person)
    finally:
        store.close()
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("W")
        await pilot.pause()
        await app.reads_idle()
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, WorkspacesScreen) and screen.loads >= 1
        assert [w.key for w in screen.found] == ["LX-7", "LX-12", "LX-13"]
        assert all(
            w.size and w.size > 0 and w.removable is None for w in screen.found
        )  # each holds a commit not in main
        total = str(screen.query_one("#workspaces-total").render())
        assert "of a 10.0 GB cap" in total


def test_snapshot_workspaces(make_app, tried, snap_compare):
    async def workspaces(pilot):
        await _settle(pilot)
        await pilot.press("W")
        await pilot.pause()
        await pilot.app.reads_idle()
        await pilot.pause()

    assert snap_compare(make_app(), terminal_size=(100, 30), run_before=workspaces)
