"""The person's cap on the workspaces' total size (#26): past it, the folders
that lose nothing go first; still past it, a new workspace is refused."""

from __future__ import annotations

from pathlib import Path

from .conftest import refused


def test_the_cap_removes_what_loses_nothing_then_refuses(repo_team):
    for title in ("one", "two", "three"):
        repo_team.ok("card", "add", title)
    refused(repo_team, 10, "workspace", "cap", "1K", agent="a1")
    refused(repo_team, 3, "workspace", "cap", "lots")
    assert repo_team.ok("workspace", "cap", "1")["cap"] == 1  # one byte: any workspace fills it
    first = Path(repo_team.ok("workspace", "open", "LX-1")["workspace"]["path"])
    listed = repo_team.ok("workspace", "list")
    assert listed["cap"] == 1 and listed["total"] > 1
    # LX-1's folder holds work no ref keeps yet: refused, nothing removed.
    (first / "draft.txt").write_text("an edit not saved anywhere else\n")
    err = refused(repo_team, 5, "workspace", "open", "LX-2")
    assert err["code"] == "workspace_cap" and "archive" in err["hint"] and first.is_dir()
    # Archived as it is, it may go: the next opening removes it first.
    repo_team.ok("workspace", "archive", "LX-1")
    second = Path(repo_team.ok("workspace", "open", "LX-2")["workspace"]["path"])
    assert second.is_dir() and not first.exists()  # (its edit is in refs/loopx/LX-1/archive/…)
    assert [w["card"] for w in repo_team.ok("workspace", "list")["workspaces"] if w["state"] != "removed"] == ["LX-2"]
    repo_team.ok("workspace", "cap", "none")
    assert repo_team.ok("workspace", "open", "LX-3")["workspace"]["state"] == "open"
    assert repo_team.cli("verify").code == 0
