"""A card's workspace folder deleted by hand (#44): the holder's next call
rebuilds it from the card's branch and its saved uncommitted work, and the
card says so. Before, `git worktree add` refused the folder git still had
registered: `next` and `workspace open` answered exit 5 `no_workspace`
forever, the card stayed held. Real git, real `rm -rf`, both backends."""

from __future__ import annotations

import shutil
from pathlib import Path

from tests.conftest import git


def _claimed_with_work(board) -> Path:
    board.ok("card", "add", "one")
    path = Path(board.ok("next", "--claim", agent="a1")["workspace"]["path"])
    (path / "src" / "app.py").write_text("print('committed')\n")
    git(path, "commit", "-qam", "committed work")
    (path / "src" / "app.py").write_text("print('uncommitted')\n")
    (path / "notes.txt").write_text("untracked\n")
    board.ok(
        "writeback", "LX-1", "--summary", "half done", agent="a1"
    )  # (saves the uncommitted work under refs/loopx/LX-1/wip/…)
    return path


def _rebuilt(board, path: Path, head: str) -> dict:
    assert git(path, "rev-parse", "--abbrev-ref", "HEAD").strip() == "loopx/LX-1"
    assert git(path, "rev-parse", "HEAD").strip() == head  # the branch's commits
    assert (path / "src" / "app.py").read_text() == "print('uncommitted')\n"  # the saved work put back
    assert (path / "notes.txt").read_text() == "untracked\n"
    shown = board.ok("card", "show", "LX-1")
    assert shown["card"]["status"] == "active" and shown["card"]["owner"] == "a1"
    rebuilt = shown["workspace"]["rebuilt"]
    assert rebuilt["restored"] is True and rebuilt["wip"]
    opened = [e for e in board.ok("events")["events"] if e["kind"] == "workspace_opened"]
    assert opened[-1]["data"]["rebuilt"] == rebuilt
    return rebuilt


def test_a_workspace_deleted_by_hand_is_rebuilt_by_the_holders_next_call(repo_team):
    path = _claimed_with_work(repo_team)
    head = git(path, "rev-parse", "HEAD").strip()
    shutil.rmtree(path)
    res = repo_team.cli("next", agent="a1")
    assert res.code == 0, res
    assert res.data["action"] == "work" and res.data["workspace"]["path"] == str(path)
    assert "rebuilt" in res.err  # said to the agent, on stderr
    _rebuilt(repo_team, path, head)
    assert repo_team.cli("card", "show", "LX-1", json_out=False).out.count("rebuilt") == 1
    assert repo_team.cli("verify").code == 0


def test_workspace_open_rebuilds_a_deleted_folder_too(repo_team):
    path = _claimed_with_work(repo_team)
    head = git(path, "rev-parse", "HEAD").strip()
    shutil.rmtree(path)
    res = repo_team.cli("workspace", "open", "LX-1")
    assert res.code == 0, res
    _rebuilt(repo_team, path, head)
    # an agent elsewhere still cannot take the card: it is held, and now workable
    assert repo_team.cli("next", "--claim", agent="a2").code == 9
