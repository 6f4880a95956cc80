"""LoopX's git only reads a card's workspace: it never takes the worktree's
``index.lock`` an agent's ``git add -A && git commit`` needs (#39). A ``git
status`` or ``git diff`` refreshes the index and takes that lock unless told
not to (``GIT_OPTIONAL_LOCKS=0``); an agent's commit running at that moment
dies with "Unable to create '…/index.lock': File exists". The runner records
a workspace every lease renewal, the board reads it, another agent's ``done``
checks every quarantine: reads run while agents commit.

Two real processes: LoopX's workspace reads in a loop (the runner's record,
the board's Diff tab, ``done``'s checks) while an agent commits in a loop in
the same worktree; not one commit fails. Seen to fail before: the same reads
with the optional lock allowed made 19 of 150 commits die on index.lock.
And every git LoopX starts — each of the plumbing's ways of running it — runs
with the rule (a ``git`` on the PATH that records its environment)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from tests.conftest import GIT_ID, git

READS = """
import sys, time
from loopx_core.workspace import changes, git, quarantine
tree, seconds, count = sys.argv[1], float(sys.argv[2]), sys.argv[3]
end, n = time.monotonic() + seconds, 0
while time.monotonic() < end:
    try:
        quarantine.admitted(tree)                  # done's and the merge's check of every quarantine
        snap = git.snapshot(tree)                  # the runner's record of the workspace
        git.diff_stat(tree, "main", snap.tree)
        git.uncommitted(tree)                      # done's refusal of uncommitted work
        changes.untracked(tree)                    # the board's Diff tab
        changes.files_between(tree, "main", snap.tree)
        git.git(tree, "status", "--porcelain")     # any status LoopX runs
        n += 1
        with open(count, "w") as fh:
            fh.write(str(n))
    except git.GitError as err:                    # a read's own failure is the runner's to record and
        print(err.message, file=sys.stderr, flush=True)  # retry (ops/workspaces.py): not this test's claim
"""

COMMITS = 120


def _worktree(tmp_path: Path) -> Path:
    repo, tree = tmp_path / "repo", tmp_path / "LX-1"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    (repo / "a.txt").write_text("a\n")
    git(repo, "add", "a.txt")
    git(repo, "commit", "-q", "-m", "first")
    git(repo, "worktree", "add", "-q", "-b", "loopx/LX-1", str(tree), "main")
    return tree


def test_an_agents_commits_never_meet_a_lock_of_loopx_reads(tmp_path):
    tree = _worktree(tmp_path)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    reads = subprocess.Popen([sys.executable, "-c", READS, str(tree), "600", str(tmp_path / "reads")], env=env)
    try:
        failed = []
        agent = dict(os.environ, **GIT_ID)
        started = time.monotonic()
        for i in range(COMMITS):
            (tree / f"f{i % 7}.txt").write_text(f"{i}\n")
            (tree / "new" / str(i)).mkdir(parents=True)
            (tree / "new" / str(i) / "n.txt").write_text("n\n")  # untracked, as an agent's new file
            done = subprocess.run(
                ["sh", "-c", f"git add -A && git commit -q -m c{i}"],
                cwd=tree,
                env=agent,
                capture_output=True,
                text=True,
            )
            if done.returncode != 0:
                failed.append(
                    done.stderr.strip().splitlines()[:1]
                )  # "fatal: Unable to create …/index.lock: File exists."
            if reads.poll() is not None:
                break
        assert reads.poll() is None, "the reads stopped early"
        assert time.monotonic() - started < 600
    finally:
        reads.kill()
        reads.wait()
    assert int((tmp_path / "reads").read_text()) > 0, "no read ran beside the commits"
    assert not failed, f"{len(failed)} of {COMMITS} commits failed: {failed[:3]}"
    assert int(git(tree, "rev-list", "--count", "main..HEAD")) == COMMITS


def test_every_git_loopx_starts_takes_no_optional_lock(tmp_path, monkeypatch):
    """Deterministic: each way the plumbing runs git (its calls, its streamed
    reads, its repository look-ups) starts it with ``GIT_OPTIONAL_LOCKS=0``."""
    from loopx_core.workspace import changes
    from loopx_core.workspace import git as plumbing

    tree = _worktree(tmp_path)
    real = subprocess.run(["sh", "-c", "command -v git"], capture_output=True, text=True, check=True).stdout.strip()
    shim, said = tmp_path / "bin", tmp_path / "said"
    shim.mkdir()
    (shim / "git").write_text(f'#!/bin/sh\necho "${{GIT_OPTIONAL_LOCKS:-unset}} $*" >> {said}\nexec {real} "$@"\n')
    (shim / "git").chmod(0o755)
    monkeypatch.setenv("PATH", f"{shim}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("GIT_OPTIONAL_LOCKS", "1")  # a person's (or an agent's) environment does not decide it
    plumbing._WHERE.clear()
    plumbing._PROGRAMS.clear()
    (tree / "b.txt").write_text("b\n")
    snap = plumbing.snapshot(tree)
    plumbing.uncommitted(tree)
    changes.untracked(tree)
    changes.patch_between(tree, "main", snap.tree)
    plumbing.stream(tree, "log", "--oneline", "-1", limit=1000)
    plumbing.git(tree, "status", "--porcelain")
    calls = said.read_text().splitlines()
    assert (
        any(" status " in f" {c} " for c in calls)
        and any("config" in c for c in calls)
        and any("rev-parse" in c for c in calls)
    ), calls
    assert all(c.startswith("0 ") for c in calls), [c for c in calls if not c.startswith("0 ")]
