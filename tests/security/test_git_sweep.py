"""What a turn creates in the repository's shared git folder is moved out after
it (issue #38): Claude Code's sandbox keeps only existing paths of the main
checkout's ``.git`` read-only, so a program can create new ones there.
Real git, real worktrees; the turn is its record (``sweep.begin``), a program's
writes, and the sweep LoopX runs after it or before it reads for the person."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from loopx_core.rules import workspace_bounds
from loopx_core.workspace import quarantine, sweep

ID = {
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@localhost",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@localhost",
}


def git(cwd, *args) -> str:
    full = (
        {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
        | ID
        | {"GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
    )
    return subprocess.run(
        ["git", *args], cwd=cwd, env=full, capture_output=True, text=True, check=True, timeout=60
    ).stdout


@pytest.fixture
def repo(tmp_path):
    main = tmp_path / "project"
    main.mkdir()
    git(main, "init", "-q", "-b", "main")
    (main / "README.txt").write_text("the truth\n")
    git(main, "add", "README.txt")
    git(main, "commit", "-q", "-m", "first")
    git(main, "worktree", "add", "-q", "-b", "loopx/LX-1", str(tmp_path / "ws" / "LX-1"), "main")
    return main


def bounds(repo: Path):
    b = workspace_bounds.find(repo.parent / "ws" / "LX-1")
    assert b is not None
    return b


def plant(common: Path, rel: str, text: str) -> None:
    """A program's write (not git's)."""
    path = common / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_the_turns_creations_are_moved_out_before_a_read_and_named_at_its_end(repo):
    b = bounds(repo)
    workspace_bounds.prepare(b)
    common = repo / ".git"
    for sample in (common / "hooks").iterdir():
        sample.unlink()
    (common / "hooks").rmdir()  # (a repository without a hooks folder: the sandbox has no path to keep)
    sweep.begin(b)
    head = git(repo, "rev-parse", "main").strip()
    for rel in ("MERGE_HEAD", "shallow", "refs/stash", "refs/heads/evil", "refs/heads/loopx/LX-99", "config.worktree"):
        plant(common, rel, head + "\n")
    assert git(repo, "branch", "--format=%(refname:short)").split() == [
        "evil",
        "loopx/LX-1",
        "loopx/LX-99",
        "main",
    ]  # the harm
    quarantine.admitted(repo)  # LoopX reads the repository for the person mid-turn: swept first
    assert (
        git(repo, "branch", "--format=%(refname:short)").split() == ["loopx/LX-1", "main"]
        and git(repo, "stash", "list") == ""
    )
    plant(common, "hooks/post-commit", "#!/bin/sh\necho agent\n")
    plant(
        common, "refs/heads/main.lock", head + "\n"
    )  # a git mid-update holds one: never moved (git never reads it as a ref)
    got = sweep.end(b)
    assert got.moved == sorted(
        ["MERGE_HEAD", "shallow", "refs/stash", "refs/heads/evil", "refs/heads/loopx/LX-99", "config.worktree", "hooks"]
    )
    assert (Path(got.where) / "refs" / "heads" / "evil").read_text() == head + "\n"
    assert (common / "refs" / "heads" / "main.lock").exists()
    (common / "refs" / "heads" / "main.lock").unlink()
    assert not (common / "MERGE_HEAD").exists() and not (common / "shallow").exists()
    (repo / "mine.txt").write_text("mine\n")
    git(repo, "add", "mine.txt")
    git(repo, "commit", "-q", "-m", "the person's")
    assert git(repo, "log", "--format=%P", "-1").strip() == head  # one parent: no merge with the planted MERGE_HEAD


def test_without_a_running_turn_nothing_is_touched_a_persons_own_merge_included(repo):
    b = bounds(repo)
    sweep.begin(b)
    sweep.end(b)  # the turn is over
    git(repo, "branch", "side")
    git(repo, "checkout", "-q", "side")
    (repo / "side.txt").write_text("side\n")
    git(repo, "add", "side.txt")
    git(repo, "commit", "-q", "-m", "side")
    git(repo, "checkout", "-q", "main")
    git(repo, "merge", "--no-commit", "--no-ff", "side")  # the person's own merge, in progress
    assert (repo / ".git" / "MERGE_HEAD").exists()
    quarantine.admitted(repo)  # LoopX reads the repository meanwhile (the board's diff)
    assert (repo / ".git" / "MERGE_HEAD").exists() and "side" in git(repo, "branch")


def test_a_record_whose_process_is_gone_sweeps_nothing(repo):
    b = bounds(repo)
    sweep.begin(b, pid=2**22 + 12345)  # (no such process)
    plant(repo / ".git", "MERGE_HEAD", "x\n")
    quarantine.admitted(repo)
    assert (repo / ".git" / "MERGE_HEAD").exists() and not any((repo / ".git" / "loopx-turns").iterdir())


def test_another_cards_workspace_made_by_loopx_during_the_turn_stays(repo, tmp_path):
    b = bounds(repo)
    workspace_bounds.prepare(b)
    sweep.begin(b)
    git(
        repo, "worktree", "add", "-q", "-b", "loopx/LX-2", str(tmp_path / "ws" / "LX-2"), "main"
    )  # LoopX, for another card
    git(repo, "update-ref", "refs/loopx/LX-2/wip/x", "main")  # its saved work
    plant(repo / ".git", "refs/heads/loopx/LX-3", git(repo, "rev-parse", "main"))  # a future card's branch, planted
    got = sweep.end(b)
    assert got.moved == ["refs/heads/loopx/LX-3"]
    assert "loopx/LX-2" in git(repo, "branch") and git(tmp_path / "ws" / "LX-2", "status", "--porcelain") == ""


def test_a_changed_ref_is_named_not_undone(repo):
    b = bounds(repo)
    workspace_bounds.prepare(b)
    sweep.begin(b)
    (repo / "x.txt").write_text("x\n")
    git(repo, "add", "x.txt")
    git(repo, "commit", "-q", "-m", "moved main")
    own = repo.parent / "ws" / "LX-1"
    (own / "y.txt").write_text("y\n")
    git(own, "add", "y.txt")
    git(own, "commit", "-q", "-m", "the turn's own")
    got = sweep.end(b)
    assert got.moved == [] and got.changed == ["refs/heads/main"]
    assert git(repo, "log", "--format=%s", "-1").strip() == "moved main"


def test_the_record_folder_is_the_one_prepare_makes(repo):
    assert sweep.TURNS == workspace_bounds.TURNS
    b = bounds(repo)
    workspace_bounds.prepare(b)
    assert (repo / ".git" / workspace_bounds.TURNS).is_dir()
    assert str(repo / ".git" / workspace_bounds.TURNS) in workspace_bounds.guarded(
        b
    )  # so the sandbox keeps the record read-only


def test_a_linked_entry_is_swept_and_a_sandboxs_mount_point_is_left(repo, tmp_path):
    """git follows a link: a program's ``MERGE_HEAD`` or branch made as a symlink
    to a file it wrote is swept like a file. What git never reads — an empty
    folder, a name git refuses under refs/ (another turn's sandbox binds them) —
    stays where it is."""
    b = bounds(repo)
    workspace_bounds.prepare(b)
    common = repo / ".git"
    sweep.begin(b)
    head = git(repo, "rev-parse", "main").strip()
    target = tmp_path / "elsewhere"
    target.write_text(head + "\n")
    (common / "MERGE_HEAD").symlink_to(target)
    (common / "refs" / "heads" / "linked").symlink_to(target)
    os.mkfifo(common / "shallow")  # the person's next git would hang reading it
    assert "linked" in git(repo, "branch", "--format=%(refname:short)").split()  # the harm: git reads through the link
    (common / "refs" / "heads" / "loopx" / ".codex").mkdir(parents=True)  # a mount point Codex's sandbox binds
    quarantine.admitted(repo)
    assert not (common / "MERGE_HEAD").is_symlink() and not (common / "refs" / "heads" / "linked").is_symlink()
    assert not (common / "shallow").exists()
    assert "linked" not in git(repo, "branch", "--format=%(refname:short)").split()
    assert (common / "refs" / "heads" / "loopx" / ".codex").is_dir()
    sweep.end(b)


def test_an_empty_packed_refs_another_runner_made_stays_and_one_naming_refs_goes(repo):
    """Another runner's sandboxed turn starting meanwhile makes the common dir's
    ``packed-refs`` (header only) so its sandbox can keep it read-only: that names
    no ref and stays (it was moved out, a false alarm on this card, seen in the
    e2e day). One naming a ref is a planted one: moved out."""
    b = bounds(repo)
    common = repo / ".git"
    assert not (common / "packed-refs").exists()
    sweep.begin(b)  # this turn's record: no packed-refs yet
    workspace_bounds.ensure_packed_refs(b)  # another runner's prepare, meanwhile
    assert sweep.end(b).moved == [] and (common / "packed-refs").exists()
    (common / "packed-refs").unlink()
    sweep.begin(b)
    head = git(repo, "rev-parse", "main").strip()
    plant(common, "packed-refs", f"# pack-refs with: peeled fully-peeled sorted \n{head} refs/heads/evil\n")
    assert sweep.end(b).moved == ["packed-refs"]
    assert "evil" not in git(repo, "branch", "--format=%(refname:short)")
