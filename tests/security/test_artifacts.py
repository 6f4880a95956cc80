"""Reading files outside the project through evidence (issue #11: `ln -s
/etc/shadow x; loopx writeback LX-1 --artifact x`). Whatever way an agent
names the file — a symlink, a symlinked folder, an ``--input`` document, an
MCP call, a document in its watch folder, a link it leaves for the watcher —
the board never records the size or hash of a file outside the project."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest

from .conftest import agent_run


@pytest.fixture
def secret(tmp_path):
    path = tmp_path / "etc" / "shadow"
    path.parent.mkdir()
    path.write_text("root:$6$saltsalt$0123456789abcdef:19000:0:99999:7:::\n")
    return path


@pytest.fixture
def working(team):
    (team.root / "out").mkdir()
    team.ok("agent", "add", "w1", "--watch", "out")
    team.ok("card", "add", "one")
    assert agent_run(team, "w1", "claim", "LX-1")[0] == 0
    return team


def leaked(board, path) -> bool:
    """Does anything on the board carry the size+hash of ``path``?"""
    return hashlib.sha256(path.read_bytes()).hexdigest() in json.dumps(board.snapshot())


def test_writeback_of_a_symlink_to_a_secret(working, secret):
    os.symlink(secret, working.root / "x")
    code, out = agent_run(working, "w1", "writeback", "LX-1", "--summary", "s", "--artifact", "x")
    assert code == 3 and out["error"]["code"] == "artifact_outside_project"
    if os.path.exists("/etc/passwd"):
        os.symlink("/etc/passwd", working.root / "pw")
        assert agent_run(working, "w1", "writeback", "LX-1", "--summary", "s", "--artifact", "pw")[0] == 3
    assert not leaked(working, secret)
    assert working.ok("card", "show", "LX-1")["card"]["evidence_count"] == 0


def test_writeback_through_a_symlinked_folder(working, secret):
    os.symlink(secret.parent, working.root / "etcdir")
    for given in ("etcdir/shadow", "out/../etcdir/shadow", str(working.root / "etcdir" / "shadow")):
        assert agent_run(working, "w1", "writeback", "LX-1", "--summary", "s", "--artifact", given)[0] == 3, given
    assert not leaked(working, secret)


def test_an_input_document_naming_the_link(working, secret):
    os.symlink(secret, working.root / "x")
    (working.root / "turn.json").write_text(json.dumps({"summary": "s", "artifacts": ["x"]}))
    assert agent_run(working, "w1", "writeback", "LX-1", "--input", "turn.json")[0] == 3
    assert not leaked(working, secret)


async def test_an_mcp_writeback_naming_the_link(working, secret):
    from tests.adapters.test_mcp import call, session

    os.symlink(secret, working.root / "x")
    async with session(working, "w1") as client:
        err, text = await call(client, "writeback", card="LX-1", summary="s", artifacts=["x"])
    assert err and "[artifact_outside_project]" in text
    assert not leaked(working, secret)


def test_a_watched_document_naming_the_link(working, secret):
    os.symlink(secret, working.root / "x")
    (working.root / "out" / "t.loopx.json").write_text(
        json.dumps({"card": "LX-1", "agent": "w1", "summary": "s", "artifacts": ["x"]})
    )
    res = working.spawn("watch", "--once")
    assert res.returncode == 0, res.stderr
    assert any(
        l.startswith("refused out/t.loopx.json [LX-1]: artifact 'x' is outside the project")
        for l in res.stdout.splitlines()
    ), res.stdout
    assert not leaked(working, secret)


def test_a_link_left_in_the_watch_folder_is_not_observed(working, secret, clock):
    os.symlink(secret, working.root / "out" / "notes.txt")
    os.symlink(secret.parent, working.root / "out" / "etc")
    made = working.root / "out" / "made.txt"
    made.write_text("w1's own output\n")
    for path in (secret, made):  # both changed while w1 holds the card (the board's clock is frozen)
        os.utime(path, (clock.now + 60, clock.now + 60))
    res = working.spawn("watch", "--once")
    assert res.returncode == 0, res.stderr
    assert [l.split(" (")[0] for l in res.stdout.splitlines() if l.startswith("observed")] == [
        "observed out/made.txt on LX-1"
    ]
    assert [o["path"] for o in working.ok("log", "LX-1")["observed"]] == ["out/made.txt"]
    assert not leaked(working, secret)


# -- an artifact in the card's workspace (issue #39, item 2) ------------------------------------


@pytest.fixture
def in_workspace(repo_team):
    """a1 claims LX-1 in a git project: its workspace is made; it writes b.txt
    there, and the main checkout holds another b.txt of the same name."""
    from tests.kernel.test_workspaces import _loopx_in as loopx_in

    repo_team.ok("card", "add", "one")
    db = repo_team.url if repo_team.backend == "postgresql" else None
    code, claimed = loopx_in(repo_team.root, "next", "--claim", agent="a1", db=db)
    assert code == 0, claimed
    ws = Path(claimed["workspace"]["path"])
    (ws / "b.txt").write_text("the agent's artifact\n")
    (repo_team.root / "b.txt").write_text("the main checkout's namesake\n")
    repo_team.ws, repo_team.db_flag = ws, db
    return repo_team


def _recorded(board) -> list[dict]:
    return [a for e in board.ok("log", "LX-1")["evidence"] for a in e["artifacts"]]


@pytest.mark.parametrize("where", ["workspace, relative", "workspace, absolute", "main checkout, relative"])
def test_a_workspace_artifact_is_hashed_from_the_workspace(in_workspace, where):
    from tests.kernel.test_workspaces import _loopx_in as loopx_in

    ws = in_workspace.ws
    folder, named = {
        "workspace, relative": (ws, "b.txt"),
        "workspace, absolute": (ws, str(ws / "b.txt")),
        "main checkout, relative": (in_workspace.root, "b.txt"),
    }[where]
    code, out = loopx_in(
        folder, "writeback", "LX-1", "--summary", "made b.txt", "--artifact", named, agent="a1", db=in_workspace.db_flag
    )
    assert code == 0, out
    assert _recorded(in_workspace) == [
        {"path": "b.txt", "size": 21, "sha256": hashlib.sha256(b"the agent's artifact\n").hexdigest()}
    ]


async def test_an_mcp_writeback_names_a_workspace_artifact(in_workspace):
    from tests.adapters.test_mcp import call, session

    async with session(in_workspace, "a1") as client:  # (the server started in the main checkout)
        err, text = await call(
            client, "writeback", card="LX-1", summary="made b.txt", artifacts=["b.txt", str(in_workspace.ws / "b.txt")]
        )
    assert not err, text
    assert [a["sha256"] for a in _recorded(in_workspace)] == [hashlib.sha256(b"the agent's artifact\n").hexdigest()]


def test_a_workspace_artifact_outside_the_workspace_or_linked_out_is_refused(in_workspace, secret):
    from tests.kernel.test_workspaces import _loopx_in as loopx_in

    ws = in_workspace.ws
    os.symlink(secret, ws / "x")
    os.symlink(in_workspace.root / "b.txt", ws / "main-b")
    for named in ("x", "main-b", str(in_workspace.root / "b.txt"), "../../b.txt", str(secret)):
        code, out = loopx_in(
            ws, "writeback", "LX-1", "--summary", "s", "--artifact", named, agent="a1", db=in_workspace.db_flag
        )
        assert code == 3 and out["error"]["code"] == "artifact_outside_project", (named, out)
        assert "outside the card's workspace" in out["error"]["message"]
    assert not leaked(in_workspace, secret)
    assert in_workspace.ok("card", "show", "LX-1")["card"]["evidence_count"] == 0
