"""The card's diff on the board (#26): the Diff tab (files, stats, the patch
highlighted, paged, read with real git in a worker) and the merge gate's
dialog, which shows the diff's summary, opens the whole diff on ``d`` and
merges on ``y`` as the person."""

from __future__ import annotations

from pathlib import Path

import pytest

from loopx_core.ops.done import done
from loopx_core.store.backends import Store
from loopx_tui.modals.gate import GateModal
from loopx_tui.screens.card import CardScreen
from loopx_tui.screens.diff import DiffScreen
from loopx_tui.widgets.diff_view import PAGE_LINES, WORK_MARK, DiffView
from tests.conftest import git, make_repo
from tests.gitrepo import commit, head, open_workspace

from .conftest import arm
from .conftest import settled as _settle

OAUTH = 6  # the seeded board's LX-6, held by claude-1 with evidence


def _merge_gate(seeded, tmp_path, files: dict[str, str]) -> int:
    """LX-6's branch with ``files`` committed, and claude-1's done: the merge gate's id."""
    make_repo(
        seeded.root, {"README.md": "# login\n\nThe login service.\n", "src/app.py": "def login():\n    return 'form'\n"}
    )
    tree = open_workspace(seeded.location, OAUTH, "claude-1")
    commit(tree, files, "GitHub sign-in")
    store = Store.open(seeded.location)
    try:
        card, _ = done(store, OAUTH, "claude-1", "GitHub sign-in works")
    finally:
        store.close()
    assert card.status == "waiting" and card.pending_gate is not None
    return card.pending_gate


CHANGE = {
    "src/app.py": "def login():\n    return 'github'\n\n\ndef callback(code):\n    return exchange(code)\n",
    "src/oauth.py": "PROVIDER = 'github'\n\n\ndef exchange(code):\n    return {'token': code}\n",
    "README.md": "# login\n\nThe login service, signing in with GitHub.\n",
}


@pytest.fixture
def merge_gate(seeded, tmp_path):
    return _merge_gate(seeded, tmp_path, CHANGE)


async def open_diff_tab(app, pilot, card_id: int = OAUTH) -> DiffView:
    app.open_card(card_id)
    await pilot.pause()
    await app.reads_idle()
    await pilot.press("5")
    await pilot.pause()
    await app.reads_idle()
    await pilot.pause()
    return app.screen.query_one(DiffView)


async def test_the_diff_tab_shows_files_stats_and_the_patch(make_app, merge_gate):
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        view = await open_diff_tab(app, pilot)
        assert isinstance(app.screen, CardScreen) and view.loads >= 1
        stats = str(view.query_one(".diff-stats").render())
        assert (
            "3 files · +11 −2" in stats
            and "+5    −0 src/oauth.py" in stats
            and "1 commit on loopx/LX-6 (into main)" in stats
        )
        for path in ("README.md", "src/app.py", "src/oauth.py"):
            assert path in stats
        assert any(line.startswith("+PROVIDER = 'github'") for line in view.lines)
        assert view.pages == 1


async def test_a_card_without_a_branch_says_so(make_app, seeded):
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        view = await open_diff_tab(app, pilot, 1)
        assert "not a git repository" in str(view.query_one(".diff-stats").render())


async def test_a_long_patch_comes_a_page_at_a_time(make_app, seeded, tmp_path):
    _merge_gate(seeded, tmp_path, {"data.txt": "".join(f"line {i}\n" for i in range(PAGE_LINES * 2))})
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        view = await open_diff_tab(app, pilot)
        assert view.pages == 3 and view.page_no == 0
        await pilot.press("right_square_bracket")
        assert view.page_no == 1 and view.position.startswith(f"page 2/3 · lines {PAGE_LINES + 1}–{PAGE_LINES * 2} of")
        await pilot.press("right_square_bracket", "right_square_bracket")
        assert view.page_no == 2  # (stops at the last)
        await pilot.press("left_square_bracket")
        assert view.page_no == 1


async def test_agent_text_in_the_diff_never_reaches_the_terminal_raw(make_app, seeded, tmp_path):
    _merge_gate(seeded, tmp_path, {"evil.txt": "before\x1b]0;owned\x07\x1b[2J after\n"})
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        view = await open_diff_tab(app, pilot)
        assert view.lines and not any("\x1b" in line or "\x07" in line for line in view.lines)
        assert any("before" in line and "after" in line for line in view.lines)


async def test_the_merge_gate_shows_the_diff_d_opens_it_and_y_merges(make_app, seeded, merge_gate):
    app = make_app()
    before = head(seeded.root)
    async with app.run_test(size=(100, 30)) as pilot:
        app.gates.show_first(merge_gate)
        await app.reads_idle()
        await pilot.pause()
        modal = app.screen
        assert isinstance(modal, GateModal) and modal.gate_id == merge_gate
        facts = str(modal.query_one("#gate-facts").render())
        assert "3 files · +11 −2 · 1 commit on loopx/LX-6 (into main)" in facts and "src/oauth.py" in facts
        assert "y merge · n reject · d diff" in str(modal.query_one("#gate-keys").render())
        assert not modal.check_action("remember", ())  # a merge is never remembered
        await pilot.press("d")  # works before the keys are armed: it answers nothing
        await pilot.pause()
        await app.reads_idle()
        await pilot.pause()
        assert isinstance(app.screen, DiffScreen)
        assert app.screen.query_one(DiffView).loads >= 1
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen is modal and not modal.armed  # back: the keys wait again
        await pilot.press("y")  # too early: dropped
        await app.ops_idle()
        assert head(seeded.root) == before
        await arm(pilot)
        await pilot.press("y")
        await app.ops_idle()
        await pilot.pause()
    merged = head(seeded.root)
    assert merged != before and head(seeded.root, "loopx/LX-6") in git(
        seeded.root, "rev-list", "--parents", "-n", "1", merged
    )
    assert (seeded.root / "src" / "oauth.py").exists()
    store = Store.open(seeded.location)
    try:
        from loopx_core.ops.board_pages import read_card

        with store.thread_connection():
            assert read_card(store, OAUTH).status == "done"
    finally:
        store.close()


def _uncommitted(seeded) -> Path:
    """LX-6's branch with CHANGE committed, then work nobody committed: an edit
    of a tracked file (as a killed turn leaves it) and a new, untracked file."""
    make_repo(
        seeded.root, {"README.md": "# login\n\nThe login service.\n", "src/app.py": "def login():\n    return 'form'\n"}
    )
    tree = open_workspace(seeded.location, OAUTH, "claude-1")
    commit(tree, CHANGE, "GitHub sign-in")
    (tree / "src" / "app.py").write_text("def login():\n    return 'github'  # half-way through\n")
    (tree / "notes.txt").write_text("todo: the callback\n")
    return tree


async def test_the_diff_tab_shows_uncommitted_edits_and_untracked_files(make_app, seeded):
    """#39: a killed turn's edit and an untracked file in the workspace are on
    the Diff tab, marked as work on no commit (a merge does not bring it in)."""
    _uncommitted(seeded)
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        view = await open_diff_tab(app, pilot)
        stats = str(view.query_one(".diff-stats").render())
        assert "3 files · +11 −2 · 1 commit on loopx/LX-6 (into main)" in stats
        assert "Uncommitted work in the workspace folder, on no commit: 2 files" in stats
        assert "notes.txt  (untracked)" in stats and "src/app.py" in stats.split("Uncommitted work", 1)[1]
        assert WORK_MARK in view.lines
        after = view.lines[view.lines.index(WORK_MARK) :]
        assert "+todo: the callback" in after and "+    return 'github'  # half-way through" in after
        assert "+PROVIDER = 'github'" in view.lines[: view.lines.index(WORK_MARK)]  # the branch's commit first


async def test_the_diff_tab_shows_work_when_nothing_is_committed(make_app, seeded):
    make_repo(seeded.root, {"README.md": "# login\n"})
    tree = open_workspace(seeded.location, OAUTH, "claude-1")
    (tree / "draft.py").write_text("print('draft')\n")
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        view = await open_diff_tab(app, pilot)
        stats = str(view.query_one(".diff-stats").render())
        assert "Nothing changed since the branch left its base. Its uncommitted work is below." in stats
        assert "draft.py  (untracked)" in stats and "+print('draft')" in view.lines


async def test_when_the_folder_is_gone_the_saved_wip_is_shown(make_app, seeded):
    """A runner recorded the work (refs/loopx/LX-6/wip/…), then the folder went: the tab shows the saved work."""
    import shutil

    from loopx_core.ops import workspaces

    tree = _uncommitted(seeded)
    store = Store.open(seeded.location)
    try:
        code = workspaces.record(store, OAUTH, "runner:claude-1")
    finally:
        store.close()
    assert code is not None and code["wip"]
    shutil.rmtree(tree)
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        view = await open_diff_tab(app, pilot)
        stats = str(view.query_one(".diff-stats").render())
        assert f"Uncommitted work saved at {code['wip'][:10]} (refs/loopx/…/wip: the folder is gone)" in stats
        assert "+todo: the callback" in view.lines[view.lines.index(WORK_MARK) :]


async def test_a_merged_cards_diff_tab_shows_what_its_merge_brought_in(make_app, seeded, merge_gate):
    """#39: after the merge the branch is in the base (its own diff is empty):
    the tab shows the merge's recorded commit against the base before it."""
    from loopx_core.ops import gates

    store = Store.open(seeded.location)
    try:
        gates.answer(store, merge_gate, "approve", seeded.person)
    finally:
        store.close()
    merged = head(seeded.root)
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        view = await open_diff_tab(app, pilot)
        stats = str(view.query_one(".diff-stats").render())
        assert f"Merged into main as {merged[:10]} by human:seed: 3 files · +11 −2 from loopx/LX-6" in stats
        assert "src/oauth.py" in stats and "Nothing changed" not in stats
        assert "+PROVIDER = 'github'" in view.lines


def test_snapshot_diff_tab_with_uncommitted_work(make_app, seeded, snap_compare):
    _uncommitted(seeded)

    async def diff_tab(pilot):
        await _settle(pilot)
        await open_diff_tab(pilot.app, pilot)

    assert snap_compare(make_app(), terminal_size=(100, 30), run_before=diff_tab)


@pytest.fixture
def fixed_commit_dates(monkeypatch):
    """Commits made at a fixed time: their ids (the Diff tab says "as asked:
    <commit>" while the merge gate asks) are the same on every run."""
    for name in ("GIT_AUTHOR_DATE", "GIT_COMMITTER_DATE"):
        monkeypatch.setenv(name, "2026-12-01T09:00:00+00:00")


def test_snapshot_diff_tab(fixed_commit_dates, make_app, merge_gate, snap_compare):
    async def diff_tab(pilot):
        await _settle(pilot)
        await open_diff_tab(pilot.app, pilot)

    assert snap_compare(make_app(), terminal_size=(100, 30), run_before=diff_tab)


def test_snapshot_merge_gate(make_app, merge_gate, snap_compare):
    async def gate(pilot):
        await _settle(pilot)
        pilot.app.gates.show_first(merge_gate)
        await pilot.app.reads_idle()
        await pilot.pause()
        await arm(pilot)

    assert snap_compare(make_app(), terminal_size=(100, 30), run_before=gate)
