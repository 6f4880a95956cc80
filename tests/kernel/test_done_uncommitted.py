"""``done`` on a card whose workspace holds uncommitted work is refused (#39):
the person merges commits, so finishing would leave that work behind unseen —
on a card with no commit it would even close the card as if nothing were
made (seen in the real day: an agent's commit failed, its file stayed in the
worktree, and ``done`` closed the card). Real git, real worktrees, both
backends; the MCP ``done`` (a real ``loopx mcp`` process) says the same."""

from __future__ import annotations

from tests.conftest import git
from tests.gitrepo import commit, open_workspace

from .conftest import card, held, kinds, refused, worked


def workspace(board, key):
    return open_workspace(board, int(key.split("-")[1]))


def test_an_untracked_file_refuses_done_naming_it_and_a_commit_lets_it_finish(repo_team):
    repo = repo_team
    repo.ok("card", "add", "write the result")
    tree = workspace(repo, "LX-1")
    held(repo, "LX-1", "a1")
    (tree / "out").mkdir()
    (tree / "out" / "result.txt").write_text("ok\n")  # made, never committed (the agent's commit failed)
    worked(repo, "LX-1", "a1", "wrote the result")
    err = refused(repo, 5, "done", "LX-1", "--summary", "finished", agent="a1")
    assert err["code"] == "uncommitted_work", err
    assert (
        "out/result.txt" in err["message"] and "git add -A && git commit" in err["hint"] and str(tree) in err["hint"]
    ), err
    assert card(repo, "LX-1")["status"] == "active"
    git(tree, "add", "-A")
    git(tree, "commit", "-q", "-m", "the result")
    finished = repo.ok("done", "LX-1", "--summary", "finished", agent="a1")["card"]
    assert finished["status"] == "waiting" and finished["pending_gate"], finished  # its branch: the person's merge


def test_an_edited_tracked_file_refuses_done_and_removing_the_edit_lets_it_finish(repo_team):
    repo = repo_team
    repo.ok("card", "add", "greet")
    tree = workspace(repo, "LX-1")
    held(repo, "LX-1", "a1")
    commit(tree, {"app.py": "print('hello')\n"}, "greet")
    (tree / "app.py").write_text("print('hello, world')\n")  # edited after the commit
    worked(repo, "LX-1", "a1", "greets")
    err = refused(repo, 5, "done", "LX-1", "--summary", "greets", agent="a1")
    assert err["code"] == "uncommitted_work" and "app.py" in err["message"], err
    assert "gate_asked" not in kinds(repo, "LX-1")
    git(tree, "checkout", "--", ".")  # the agent drops the edit: what is committed is the work
    assert repo.ok("done", "LX-1", "--summary", "greets", agent="a1")["card"]["status"] == "waiting"


def test_ignored_files_do_not_count_and_a_clean_workspace_without_commits_closes(repo_team):
    repo = repo_team
    repo.ok("card", "add", "look only")
    tree = workspace(repo, "LX-1")
    held(repo, "LX-1", "a1")
    (tree / ".git-info-exclude-check").write_text("")  # a file the person's ignore rules leave out (below)
    common = git(tree, "rev-parse", "--path-format=absolute", "--git-common-dir").strip()
    with open(f"{common}/info/exclude", "a", encoding="utf-8") as fh:
        fh.write("/.git-info-exclude-check\n")
    worked(repo, "LX-1", "a1", "read the code")
    assert repo.ok("done", "LX-1", "--summary", "nothing to change", agent="a1")["card"]["status"] == "done"


async def test_the_mcp_done_refuses_uncommitted_work_too(repo_team):
    from pathlib import Path

    from tests.security.test_verify_confined import mcp

    repo = repo_team
    repo.ok("card", "add", "write the result")
    tree = workspace(repo, "LX-1")
    held(repo, "LX-1", "a1")
    (tree / "result.txt").write_text("ok\n")
    worked(repo, "LX-1", "a1", "wrote the result")
    before = repo.snapshot()
    async with mcp(repo, "a1", Path(tree)) as client:
        result = await client.call_tool("done", {"card": "LX-1", "summary": "finished"})
    said = result.content[0].text
    assert result.is_error and "[uncommitted_work]" in said and "result.txt" in said, said
    assert repo.snapshot() == before


def test_a_refusal_is_never_taken_for_the_board_going_away():
    """``loopx mcp`` runs a call again while the board's server is away (a
    PostgreSQL restart) and the runner begins its loop again: both read that
    from the store's errors. A refusal is answered at once: done's
    ``uncommitted_work`` once shared the store's ``uncommitted`` code, and the
    MCP ``done`` was run again for a minute before the agent heard why."""
    from loopx_core.shapes.errors import BoardError, Conflict
    from loopx_core.store.failures import board_lost, may_run_again

    refusal = Conflict("LX-1's workspace holds uncommitted work", "commit it", code="uncommitted")
    assert not board_lost(refusal)
    assert not may_run_again(refusal, reads_only=False, idempotent=False)
    cut_off = BoardError("lost the connection before its commit", "retry", code="uncommitted")
    assert board_lost(cut_off) and may_run_again(cut_off, reads_only=False, idempotent=False)
