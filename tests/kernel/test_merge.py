"""Merging is the person's (#26): ``done`` on a card whose branch has commits
opens a ``git:merge`` gate; the person's signed approval brings the branch into
the base with real git; a conflict sends the card back to its agent with the
files, nothing lost; an agent can never answer it."""

from __future__ import annotations

import os
import subprocess

import pytest

from tests.conftest import GIT_ID, git, make_repo
from tests.gitrepo import commit, head, open_workspace

from ..conftest import NO_KEY
from .conftest import card, held, kinds, refused, worked


@pytest.fixture
def repo(repo_team):
    return repo_team


def workspace(board, key):
    return open_workspace(board, int(key.split("-")[1]))


def finish(board, key, agent, tree, files, message="the change"):
    """An agent's whole card: claim, commit in its workspace, write back, done."""
    held(board, key, agent)
    commit(tree, files, message)
    worked(board, key, agent, message)
    return board.ok("done", key, "--summary", message, agent=agent)


def answer(board, gate, decision="approve", *extra):
    return board.cli("gate", "answer", gate, decision, *extra, tty=True)


def test_done_with_commits_waits_for_the_persons_merge(repo, tmp_path):
    repo.ok("card", "add", "greet")
    tree = workspace(repo, "LX-1")
    before = head(repo.root)
    out = finish(repo, "LX-1", "a1", tree, {"src/app.py": "print('hello, world')\n"})
    c = out["card"]
    assert c["status"] == "waiting" and c["pending_gate"] == "G-1"
    gate = repo.cli("gate", "status", "G-1").data["gate"]
    assert (
        gate["kind"] == "merge" and gate["scope"] == "git:merge" and gate["question"] == "Merge loopx/LX-1 into main?"
    )
    assert head(repo.root) == before  # nothing merged by the agent's done
    asked = [e for e in repo.ok("events", "--card", "LX-1")["events"] if e["kind"] == "gate_asked"][-1]
    assert (
        asked["data"]["branch"] == "loopx/LX-1"
        and asked["data"]["base"] == "main"
        and asked["data"]["head"] == head(repo.root, "loopx/LX-1")
    )

    res = answer(repo, "G-1")
    assert res.code == 0, res
    assert res.data["card"]["status"] == "done" and res.data["gate"]["status"] == "approved"
    # A real merge commit on main, both parents, the branch's file in the person's checkout.
    merged = head(repo.root)
    assert git(repo.root, "rev-list", "--parents", "-n", "1", merged).split()[1:] == [
        before,
        head(repo.root, "loopx/LX-1"),
    ]
    assert (repo.root / "src/app.py").read_text() == "print('hello, world')\n"
    assert git(repo.root, "status", "--porcelain", "--untracked-files=no").strip() == ""
    last = repo.ok("events", "--card", "LX-1")["events"][-1]
    assert last["kind"] == "merged" and last["actor"].startswith("human:") and last["signed"] is True
    assert last["data"]["commit"] == merged
    assert card(repo, "LX-1")["owner"] == "a1"
    assert repo.cli("verify").code == 0  # the rows are what the events replay to


def test_done_without_commits_closes_as_before(repo, tmp_path):
    repo.ok("card", "add", "look only")
    workspace(repo, "LX-1")
    held(repo, "LX-1", "a1")
    worked(repo, "LX-1", "a1", "read the code")
    assert repo.ok("done", "LX-1", "--summary", "nothing to change", agent="a1")["card"]["status"] == "done"
    assert "gate_asked" not in kinds(repo, "LX-1")


def test_two_cards_editing_one_file_the_second_gets_the_conflict(repo, tmp_path):
    repo.ok("card", "add", "one")
    repo.ok("card", "add", "two")
    t1 = workspace(repo, "LX-1")
    t2 = workspace(repo, "LX-2")
    finish(repo, "LX-1", "a1", t1, {"src/app.py": "print('one')\n"}, "one")
    finish(repo, "LX-2", "a2", t2, {"src/app.py": "print('two')\n", "notes.md": "two's notes\n"}, "two")
    # Each workspace saw only its own edit.
    assert (t1 / "src/app.py").read_text() == "print('one')\n" and (t2 / "src/app.py").read_text() == "print('two')\n"
    assert answer(repo, "G-1").data["card"]["status"] == "done"
    main_after_one, two_head = head(repo.root), head(repo.root, "loopx/LX-2")

    # G-2 was asked against main before LX-1 merged: main moved, so the yes is
    # refused, and the new main conflicts: no new gate, the card goes back to a2.
    res = answer(repo, "G-2")
    assert res.code == 5 and res.data["error"]["code"] == "merge_moved", res
    assert "main moved" in res.data["error"]["message"] and "went back to a2" in res.data["error"]["hint"]
    c = card(repo, "LX-2")
    assert c["status"] == "ready" and c["owner"] == "a2" and c["lease"] is None
    assert (
        "src/app.py" in c["next"] and "notes.md" not in c["next"] and "`git merge main` in your workspace" in c["next"]
    )
    assert repo.cli("gate", "status", "G-2").data["gate"]["status"] == "withdrawn"
    # Nothing lost, nothing half-merged: main and the branch are as they were.
    assert head(repo.root) == main_after_one and head(repo.root, "loopx/LX-2") == two_head
    assert (repo.root / "src/app.py").read_text() == "print('one')\n" and not (repo.root / "notes.md").exists()
    last = repo.ok("events", "--card", "LX-2")["events"][-1]
    assert last["kind"] == "merge_conflict" and last["data"]["files"] == ["src/app.py"] and last["signed"] is True
    assert repo.cli("verify").code == 0
    # Back to its agent only: another agent does not get it.
    assert repo.cli("next", "--claim", agent="a1").data["action"] == "idle"

    # The agent resolves it in its own workspace and finishes again; this time it merges.
    held(repo, "LX-2", "a2")
    conflicted = subprocess.run(
        ["git", "-C", str(t2), "merge", "-q", "main"], capture_output=True, env=dict(os.environ, **GIT_ID)
    )
    assert conflicted.returncode == 1  # the same conflict, now in the agent's own workspace
    commit(t2, {"src/app.py": "print('one and two')\n"}, "resolve")
    worked(repo, "LX-2", "a2", "resolved the conflict")
    again = repo.ok("done", "LX-2", "--summary", "resolved", agent="a2")["card"]
    assert again["status"] == "waiting" and again["pending_gate"] == "G-3"
    assert answer(repo, "G-3").data["card"]["status"] == "done"
    assert (repo.root / "src/app.py").read_text() == "print('one and two')\n" and (
        repo.root / "notes.md"
    ).read_text() == "two's notes\n"
    assert repo.cli("verify").code == 0


def test_a_dirty_main_checkout_is_never_clobbered(repo, tmp_path):
    repo.ok("card", "add", "greet")
    tree = workspace(repo, "LX-1")
    finish(repo, "LX-1", "a1", tree, {"src/app.py": "print('agent')\n"})
    (repo.root / "src/app.py").write_text("print('the person is editing this')\n")
    before = head(repo.root)
    err = refused(repo, 5, "gate", "answer", "G-1", "approve", tty=True)
    assert (
        err["code"] == "merge_refused"
        and "uncommitted changes (src/app.py)" in err["message"]
        and "stash" in err["hint"]
    )
    assert (repo.root / "src/app.py").read_text() == "print('the person is editing this')\n" and head(
        repo.root
    ) == before
    assert repo.cli("gate", "status", "G-1").data["gate"]["status"] == "pending"
    # Once the person commits their own edit, main has moved: the yes is refused
    # and, the branch now conflicting with main, the card goes back to its agent.
    git(repo.root, "commit", "-q", "-am", "mine")
    assert answer(repo, "G-1").data["error"]["code"] == "merge_moved"
    assert card(repo, "LX-1")["status"] == "ready"


def test_an_agent_cannot_answer_the_merge_gate(repo, tmp_path):
    repo.ok("card", "add", "greet")
    tree = workspace(repo, "LX-1")
    finish(repo, "LX-1", "a1", tree, {"src/app.py": "print('agent')\n"})
    before = head(repo.root)
    refused(repo, 10, "gate", "answer", "G-1", "approve", agent="a1", tty=True)
    refused(repo, 10, "gate", "answer", "G-1", "approve", tty=True, env=NO_KEY)  # the agent's environment: no key
    assert head(repo.root) == before


def test_a_merge_is_never_remembered(repo, tmp_path):
    repo.ok("card", "add", "greet")
    tree = workspace(repo, "LX-1")
    finish(repo, "LX-1", "a1", tree, {"src/app.py": "print('agent')\n"})
    err = refused(repo, 3, "gate", "answer", "G-1", "approve", "--remember", "board", tty=True)
    assert "decided once" in err["message"]


def test_rejecting_the_merge_blocks_the_card_and_merges_nothing(repo, tmp_path):
    repo.ok("card", "add", "greet")
    tree = workspace(repo, "LX-1")
    finish(repo, "LX-1", "a1", tree, {"src/app.py": "print('agent')\n"})
    before = head(repo.root)
    res = answer(repo, "G-1", "reject", "--note", "not this way")
    assert res.data["card"]["status"] == "blocked" and head(repo.root) == before
    assert repo.cli("verify").code == 0


def test_a_planted_git_config_runs_nothing_as_the_person(repo, tmp_path):
    """An agent that can write the repository's config plants an fsmonitor and a
    hook: the person's merge must not run them."""
    repo.ok("card", "add", "greet")
    tree = workspace(repo, "LX-1")
    finish(repo, "LX-1", "a1", tree, {"src/app.py": "print('agent')\n"})
    marker = tmp_path / "ran"
    script = tmp_path / "evil.sh"
    script.write_text(f"#!/bin/sh\ntouch {marker}\n")
    script.chmod(0o755)
    git(repo.root, "config", "core.fsmonitor", str(script))
    hooks = repo.root / ".git" / "hooks"
    for name in ("post-merge", "reference-transaction", "post-checkout"):
        (hooks / name).write_text(f"#!/bin/sh\ntouch {marker}\n")
        (hooks / name).chmod(0o755)
    assert answer(repo, "G-1").data["card"]["status"] == "done"
    assert not marker.exists()


def test_a_planted_merge_driver_is_refused(repo, tmp_path):
    repo.ok("card", "add", "greet")
    tree = workspace(repo, "LX-1")
    finish(repo, "LX-1", "a1", tree, {"src/app.py": "print('agent')\n", ".gitattributes": "src/*.py merge=evil\n"})
    marker = tmp_path / "ran"
    git(repo.root, "config", "merge.evil.driver", f"touch {marker}; false")
    err = refused(repo, 5, "gate", "answer", "G-1", "approve", tty=True)
    assert "merge driver" in err["message"]
    assert not marker.exists()


def test_a_base_no_work_tree_has_is_moved_by_compare_and_swap(tmp_path):
    """When nobody has the base checked out, the merge commit is made in the
    object store and the base ref moves only if it is still where it was."""
    from loopx_core.workspace import merge

    root = tmp_path / "repo"
    root.mkdir()
    make_repo(root)
    git(root, "branch", "release")
    tree = tmp_path / "ws"
    git(root, "worktree", "add", "-q", "-b", "loopx/LX-9", str(tree), "release")
    tip = commit(tree, {"lib.py": "x = 1\n"}, "lib")
    before = head(root, "release")
    pinned = merge.pin(root, "release", "loopx/LX-9")
    done = merge.bring_in(root, "release", "loopx/LX-9", "Merge it", "person", pinned)
    assert done.conflicts == () and done.commit == head(root, "release")
    assert git(root, "rev-list", "--parents", "-n", "1", done.commit).split()[1:] == [before, tip]
    assert head(root, "main") != done.commit and not (root / "lib.py").exists()  # the checkout on main is untouched
    again = merge.bring_in(root, "release", "loopx/LX-9", "Merge it", "person", pinned)
    assert again.already and again.commit == done.commit  # a retry after a crash merges nothing twice


def test_the_timeline_counts_a_merge_as_the_cards_finish_and_a_conflict_as_the_end_of_its_work(repo, tmp_path):
    from loopx_core.ops import trajectory
    from loopx_core.rules import clock

    repo.ok("card", "add", "one")
    repo.ok("card", "add", "two")
    t1, t2 = workspace(repo, "LX-1"), workspace(repo, "LX-2")
    finish(repo, "LX-1", "a1", t1, {"src/app.py": "print('one')\n"}, "one")
    finish(repo, "LX-2", "a2", t2, {"src/app.py": "print('two')\n"}, "two")
    assert answer(repo, "G-1").data["card"]["status"] == "done"  # merged: a `merged` event, no `done`
    assert answer(repo, "G-2").data["error"]["code"] == "merge_moved"  # main moved, and now conflicts: back to a2
    assert card(repo, "LX-2")["status"] == "ready"  # nobody works on it
    later = clock.now() + 3 * trajectory.HOUR
    store = repo.store()
    try:
        merged, conflicted = (trajectory.read_trajectory(store, card_id, later) for card_id in (1, 2))
    finally:
        store.close()
    assert merged.end is not None and merged.end <= clock.now()  # the card's finish is the merge
    assert [s.label for s in merged.work] == ["a1"] and all(
        s.end is not None for s in merged.work
    )  # the person's answer is no agent's work
    assert trajectory.figures(merged).lifecycle_hours < 1
    assert conflicted.end is None and all(s.end is not None for s in conflicted.work)
    assert trajectory.figures(conflicted).agent_hours < 1  # not the three hours it sat ready
