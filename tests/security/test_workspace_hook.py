"""The PreToolUse hook when an agent works in its card's workspace (issue #26):
a linked git worktree on its own branch, beside the main checkout and another
card's workspace. The worktrees share one repository, so git run in one can
move every ref: the hook refuses what would move the base branch, another
card's branch, LoopX's refs (``refs/loopx/…``) or another worktree, or drop
commits LoopX recorded, and any write into the main checkout or another
workspace. Each attack is run by the real, cold hook process; the "really"
tests run the same command without the hook and show the harm it prevents.
The sandbox's side of the same line: ``tests/e2e/test_workspace_bounds.py``."""

from __future__ import annotations

import subprocess

import pytest

from tests.adapters.conftest import deny_reason, payload

# Both backends: on a PostgreSQL team board the hook finds the project (the main
# checkout) from the workspace by the checkout's .loopx/team.json, as the kernel does.
GIT = ("-c", "user.name=t", "-c", "user.email=t@localhost")


def _git(cwd, *argv) -> str:
    return subprocess.run(["git", *GIT, *argv], cwd=cwd, check=True, capture_output=True, text=True, timeout=60).stdout


@pytest.fixture
def workspaces(working, tmp_path):
    """The project as a git repository on ``main``; LX-1's workspace (the agent's)
    and LX-2's, each a worktree on its own branch; a LoopX ref; a tag."""
    root = working.root
    _git(root, "init", "-q", "-b", "main")
    (root / "README.md").write_text("project\n")
    _git(root, "add", "README.md")
    _git(root, "commit", "-q", "-m", "start")
    _git(root, "tag", "v1")
    ws = tmp_path / "workspaces"
    _git(root, "worktree", "add", "-q", "-b", "loopx/LX-1", str(ws / "LX-1"), "main")
    _git(root, "worktree", "add", "-q", "-b", "loopx/LX-2", str(ws / "LX-2"), "main")
    _git(ws / "LX-1", "commit", "-q", "--allow-empty", "-m", "the agent's work")
    _git(root, "update-ref", "refs/loopx/LX-1/wip/t1", "loopx/LX-1")
    working.ws = ws
    return working


def refs(root) -> str:
    return _git(root, "for-each-ref", "--format=%(refname) %(objectname)") + _git(
        root, "worktree", "list", "--porcelain"
    )


def bash(hooks, cwd, command):
    return hooks.spawn(
        "claude-code", "pre-tool-use", payload("claude/pre_tool_use_bash.json", CWD=str(cwd), COMMAND=command)
    )


MOVES_WHAT_IS_NOT_ITS_OWN = [
    "git update-ref refs/heads/main HEAD",
    "git update-ref -d refs/heads/loopx/LX-2",
    "git update-ref refs/loopx/LX-1/wip/t1 HEAD~1",
    "git update-ref --stdin",
    "git branch -f main HEAD",
    "git branch -D loopx/LX-2",
    "git branch -M loopx/LX-2 gone",
    "git push . HEAD:main",
    "git push ../../project HEAD:main",
    "git fetch . HEAD:main",
    "git fetch . +HEAD:refs/loopx/LX-1/wip/t1",
    "git checkout main",
    "git checkout --ignore-other-worktrees main",
    "git switch loopx/LX-2",
    "git checkout -B main",
    "git switch -C loopx/LX-2 HEAD",
    "git rebase HEAD loopx/LX-2",
    "git symbolic-ref HEAD refs/heads/main",
    "git worktree remove --force ../LX-2",
    "git worktree move ../LX-2 ../moved",
    "git worktree prune",
    "git reflog expire --expire=now --all",
    "git gc --prune=now",
    "git prune",
    "git repack -a -d",
    "git pack-refs --all",
    "git stash clear",
    "git tag -d v1",
    "git -C ../../project merge loopx/LX-1",
    "git --git-dir=../../project/.git update-ref refs/heads/main HEAD",
    # #38: no ref but its own, whether or not it exists yet — the shared namespaces as a class
    "git update-ref refs/replace/0000000000000000000000000000000000000001 HEAD",
    "git update-ref refs/notes/commits HEAD",
    "git symbolic-ref refs/heads/alias refs/heads/main",
    "git stash",
    "git stash push -m 'WIP on main: the person'",
    "git stash store -m 'WIP on main: the person' HEAD",
    "git stash pop",
    "git notes add -m 'reviewed' HEAD",
    "git tag v2",
    "git tag -a v2 -m release",
    "git branch scratch",
    "git branch -c loopx/LX-1 copy",
    "git switch -c loopx/LX-1-idea",
    "git checkout -b topic",
    "git worktree add -b topic ../topic",
    "git replace HEAD HEAD~1",
    "git config --file=../../project/.git/config remote.origin.pushurl /tmp/evil",
]


@pytest.mark.parametrize("command", MOVES_WHAT_IS_NOT_ITS_OWN)
def test_an_agent_in_its_workspace_moves_no_ref_but_its_own(hooks, workspaces, command):
    ws = workspaces.ws / "LX-1"
    before = refs(workspaces.root)
    res = bash(hooks, ws, command.replace("../../project", str(workspaces.root)))
    assert "never lets an agent do this" in deny_reason(res), res
    assert refs(workspaces.root) == before


WRITES_ELSEWHERE = [
    "echo x > {main}/README.md",
    "echo x >> {other}/notes.txt",
    "cp notes.txt {main}/",
    "mv notes.txt {other}/notes.txt",
    "tee {main}/new.txt < /dev/null",
    "rm -rf {other}",
    "sed -i s/project/pwned/ {main}/README.md",
    "touch ../LX-2/x",
]


@pytest.mark.parametrize("command", WRITES_ELSEWHERE)
def test_an_agent_in_its_workspace_writes_neither_the_main_checkout_nor_another_workspace(hooks, workspaces, command):
    ws = workspaces.ws / "LX-1"
    res = bash(hooks, ws, command.format(main=workspaces.root, other=workspaces.ws / "LX-2"))
    reason = deny_reason(res)
    assert "never lets an agent do this" in reason and (
        "main checkout" in reason or "another card's workspace" in reason
    ), reason


@pytest.mark.parametrize("tool", ["pre_tool_use_write.json", "pre_tool_use_edit.json"])
def test_file_tools_in_a_workspace_write_neither_the_main_checkout_nor_another_workspace(hooks, workspaces, tool):
    for target in (workspaces.root / "README.md", workspaces.ws / "LX-2" / "README.md"):
        res = hooks.spawn(
            "claude-code", "pre-tool-use", payload(f"claude/{tool}", CWD=str(workspaces.ws / "LX-1"), PATH=str(target))
        )
        assert "never lets an agent do this" in deny_reason(res), res


OWN_WORK = [
    "git commit --allow-empty -m more",
    "git merge main",
    "git rebase main",
    "git reset --soft HEAD~1",
    "git checkout -- README.md",
    "git stash list",
    "git notes list",
    "git tag --list",
    "git branch --list 'loopx/*'",
    "git config user.email agent@localhost",
    "git update-ref refs/heads/loopx/LX-1 HEAD",
    "git log --oneline main..HEAD",
    "git -C {main} log -1",
    "git diff main",
    "git worktree list",
    "git gc",
    "echo x > notes.txt",
    "cp {main}/README.md copy.md",
]


@pytest.mark.parametrize("command", OWN_WORK)
def test_an_agent_works_its_own_branch_freely(hooks, workspaces, command):
    res = bash(hooks, workspaces.ws / "LX-1", command.format(main=workspaces.root))
    assert res.out is None, res


def test_outside_a_workspace_nothing_changes(hooks, workspaces):
    """In the main checkout (no workspace) git keeps today's rules."""
    assert bash(hooks, workspaces.root, "git branch -f loopx/LX-2 main").out is None


def test_moving_the_base_branch_from_a_workspace_really_moves_it(workspaces):
    """The harm: the worktrees share the repository's refs."""
    ws = workspaces.ws / "LX-1"
    _git(ws, "update-ref", "refs/heads/main", "HEAD")
    assert _git(workspaces.root, "log", "-1", "--format=%s", "main").strip() == "the agent's work"


def test_pushing_to_itself_from_a_workspace_really_moves_loopxs_refs(workspaces):
    _git(workspaces.ws / "LX-1", "push", "-q", "-f", ".", "HEAD~1:refs/loopx/LX-1/wip/t1")
    assert _git(workspaces.root, "log", "-1", "--format=%s", "refs/loopx/LX-1/wip/t1").strip() == "start"


def test_removing_another_workspace_really_removes_it(workspaces):
    _git(workspaces.ws / "LX-1", "worktree", "remove", "--force", str(workspaces.ws / "LX-2"))
    assert not (workspaces.ws / "LX-2").exists()


def test_a_stash_stored_in_a_workspace_is_really_popped_by_the_person(workspaces):
    """The harm (#38): ``refs/stash`` is one ref for every checkout; an entry an
    agent stores under the person's subject is what their ``git stash pop`` applies."""
    ws = workspaces.ws / "LX-1"
    (ws / "README.md").write_text("the agent's change\n")
    made = _git(ws, "stash", "create").strip()
    _git(ws, "checkout", "--", "README.md")
    _git(ws, "stash", "store", "-m", "WIP on main: start", made)
    _git(workspaces.root, "stash", "pop")
    assert (workspaces.root / "README.md").read_text() == "the agent's change\n"


def test_a_git_file_the_agent_wrote_does_not_make_another_workspace_its_own(hooks, workspaces):
    """A ``.git`` file planted in a folder of its workspace, naming LX-2's admin
    folder: git would take it for LX-2's worktree, the hook does not."""
    ws = workspaces.ws / "LX-1"
    (ws / "sub").mkdir()
    (ws / "sub" / ".git").write_text(f"gitdir: {workspaces.root / '.git' / 'worktrees' / 'LX-2'}\n")
    res = bash(hooks, ws / "sub", "git update-ref refs/heads/loopx/LX-2 HEAD")
    assert "never lets an agent do this" in deny_reason(res), res
