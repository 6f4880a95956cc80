"""A PostgreSQL team board's workspaces (issue #26): the board spans machines
and records no project folder, so each checkout that points at it (its
``.loopx/team.json``, written by ``loopx init``) is the project there, and
its workspaces are its own. Real git, real worktrees, real cold processes."""

from __future__ import annotations

import json
import os
import uuid
from pathlib import Path
from urllib.parse import quote

import pytest

from tests.conftest import Board, git

from .conftest import held, loopx, refused, worked


@pytest.fixture
def team_repo(repo_team):
    if repo_team.backend != "postgresql":
        pytest.skip("a team board is a PostgreSQL board (a .loopx/ board records its one project folder)")
    return repo_team


def _pointer(root: Path) -> dict:
    return json.loads((root / ".loopx" / "team.json").read_text())


def _cold(board: Board, cwd: Path, *argv: str, agent: str | None = None) -> dict:
    env = {"LOOPX_DB": board.url, **({"LOOPX_AGENT": agent} if agent else {})}
    done = loopx("--json", *argv, cwd=cwd, env=env)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def _second_checkout(board: Board, tmp_path: Path, monkeypatch) -> Board:
    """Another clone of the project, set up for the same team board by a person's `init`."""
    other = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(board.root), str(other))
    second = Board(other, monkeypatch, board.url)
    second.ok("init")
    return second


def test_a_team_boards_project_here_is_the_checkout_that_points_at_it(team_repo):
    uid = team_repo.ok("export")["board"]["settings"]["board_uid"]
    pointer = _pointer(team_repo.root)
    assert pointer["board_uid"] == uid and pointer["checkout"].isalnum()
    assert "project_root" not in team_repo.ok("export")["board"]["settings"]  # the shared board records none
    assert team_repo.ok("where")["board"]["checkout"] == str(team_repo.root)
    team_repo.ok("card", "add", "one")
    claimed = team_repo.ok("next", "--claim", agent="a1")  # the first claim makes the workspace
    path = Path(claimed["workspace"]["path"])
    assert path.parent.name == pointer["checkout"] and path.parent.parent.name == uid  # keyed by board and checkout
    assert team_repo.root not in path.parents
    assert git(path, "rev-parse", "--abbrev-ref", "HEAD").strip() == "loopx/LX-1"
    # From inside the workspace: the main checkout is the project (its pointer), and the same workspace is named.
    assert _cold(team_repo, path / "src", "where")["board"]["checkout"] == str(team_repo.root)
    assert _cold(team_repo, path / "src", "next", agent="a1")["workspace"]["path"] == str(path)
    # A pointer an agent plants in its workspace is not its checkout.
    (path / ".loopx").mkdir()
    (path / ".loopx" / "team.json").write_text(json.dumps({"board_uid": uid, "checkout": "planted0planted0"}))
    assert _cold(team_repo, path, "where")["board"]["checkout"] == str(team_repo.root)
    from loopx_core.adapters.hooks import project_root

    assert project_root(("postgresql", team_repo.url), str(path / "src")) == os.path.realpath(
        team_repo.root
    )  # the hook: the same rule
    # Code state is evidence, the handoff carries it, verify checks its commits: as on SQLite.
    (path / "src" / "app.py").write_text("print('edited')\n")
    ev = _cold(team_repo, path, "writeback", "LX-1", "--summary", "edited", agent="a1")["evidence"]
    assert ev["extra"]["code"]["branch"] == "loopx/LX-1" and ev["extra"]["code"]["wip"]
    team_repo.ok("handoff", "LX-1", "--to", "a2", "--summary", "yours", agent="a1")
    packet = team_repo.ok("export")["handoffs"][-1]["packet"]
    packet = json.loads(packet) if isinstance(packet, str) else packet
    assert packet["code"]["path"] == str(path) and packet["code"]["branch"] == "loopx/LX-1" and packet["code"]["wip"]
    assert _cold(team_repo, path, "accept", "LX-1", agent="a2")["card"]["owner"] == "a2"
    assert team_repo.cli("verify").code == 0


def test_two_checkouts_of_one_team_board_keep_their_workspaces_apart(team_repo, tmp_path, monkeypatch):
    second = _second_checkout(team_repo, tmp_path, monkeypatch)
    first_id, second_id = _pointer(team_repo.root)["checkout"], _pointer(second.root)["checkout"]
    assert first_id != second_id
    again = second.ok("init")  # init again keeps the checkout's id: its workspaces stay its own
    assert _pointer(second.root)["checkout"] == second_id and again["board"]["checkout"] == str(second.root)
    team_repo.ok("card", "add", "one")
    team_repo.ok("card", "add", "two")
    one = Path(team_repo.ok("workspace", "open", "LX-1")["workspace"]["path"])
    two = Path(second.ok("workspace", "open", "LX-2")["workspace"]["path"])
    assert one.parent.name == first_id and two.parent.name == second_id and one.parent != two.parent
    assert str(two) in git(second.root, "worktree", "list") and str(two) not in git(team_repo.root, "worktree", "list")
    # Another checkout's workspace is listed, never opened, archived or removed from here.
    err = refused(second, 5, "workspace", "open", "LX-1")
    assert err["code"] == "workspace_elsewhere" and first_id in err["message"]
    assert refused(second, 5, "workspace", "archive", "LX-1", as_person=True)["code"] == "workspace_elsewhere"
    listed = {w["card"]: w for w in second.ok("workspace", "list")["workspaces"]}
    assert listed["LX-1"]["here"] is False and listed["LX-1"]["size"] is None and listed["LX-2"]["here"] is True
    cleaned = second.ok("workspace", "gc")  # (its own LX-2, still at its base, may go: the first checkout's stays)
    assert [r["card"] for r in cleaned["removed"]] == ["LX-2"] and one.is_dir()
    # `next --claim` here passes LX-1 by (first in order, but its code is in the first checkout).
    offered = second.ok("next", "--claim", agent="a1")
    assert offered["card"]["id"] == "LX-2" and offered["workspace"]["path"] == str(two)
    # A claim by name from the other checkout is refused like any claim that cannot get its workspace
    # (its code is in the first checkout), nothing written; --in-project takes it here on purpose.
    err = refused(second, 5, "claim", "LX-1", agent="a2")
    assert err["code"] == "no_workspace" and "another checkout" in err["message"] and "--in-project" in err["hint"]
    res = second.cli("claim", "LX-1", "--in-project", agent="a2")
    assert res.code == 0 and "workspace" not in res.data
    worked(second, "LX-1", "a2", "looked")
    assert (
        refused(second, 5, "done", "LX-1", "--summary", "finished", agent="a2")["code"] == "workspace_elsewhere"
    )  # never closed without its merge
    # Each checkout's verify checks its own workspaces' commits and says the rest are elsewhere.
    res = second.cli("verify")
    assert res.code == 0 and "other checkouts" in res.out
    assert team_repo.cli("verify").code == 0


def test_two_team_boards_in_one_data_folder_never_share_a_workspace(team_repo, tmp_path, monkeypatch, pg_server):
    import psycopg

    schema = "lxt_" + uuid.uuid4().hex[:12]
    with psycopg.connect(pg_server, autocommit=True) as conn:
        conn.execute(f'CREATE SCHEMA "{schema}"')
    try:
        root = tmp_path / "other-project"
        root.mkdir()
        sep = "&" if "?" in pg_server else "?"
        other = Board(root, monkeypatch, f"{pg_server}{sep}options={quote('-csearch_path=' + schema)}")
        other.ok("init", "--test-board")
        other.ok("agent", "add", "a1")
        from tests.conftest import make_repo

        make_repo(root)
        for board in (team_repo, other):
            board.ok("card", "add", "one")
        paths = [Path(board.ok("workspace", "open", "LX-1")["workspace"]["path"]) for board in (team_repo, other)]
        assert paths[0] != paths[1] and paths[0].parent.parent != paths[1].parent.parent
        assert all(p.is_dir() for p in paths)
        assert git(paths[0], "rev-parse", "--show-toplevel").strip() == str(paths[0])
        assert "other-project" not in git(team_repo.root, "worktree", "list")
    finally:
        with psycopg.connect(pg_server, autocommit=True) as conn:
            conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')


def test_a_checkout_of_another_team_board_has_no_workspaces_for_this_one(team_repo):
    pointer = _pointer(team_repo.root)
    (team_repo.root / ".loopx" / "team.json").write_text(json.dumps({**pointer, "board_uid": "0" * 32}))
    team_repo.ok("card", "add", "one")
    claimed = team_repo.ok("next", "--claim", agent="a1")
    assert claimed["card"]["id"] == "LX-1" and "workspace" not in claimed
    assert not [e for e in team_repo.ok("events")["events"] if e["kind"] == "workspace_opened"]


def test_a_sqlite_board_writes_no_team_pointer(repo_team):
    if repo_team.backend != "sqlite":
        pytest.skip("the .loopx/ board's own project folder")
    assert not (repo_team.root / ".loopx" / "team.json").exists()
    assert "checkout" not in repo_team.ok("where")["board"]
    repo_team.ok("card", "add", "one")
    held(repo_team, "LX-1", "a1")
    ws = repo_team.ok("workspace", "list")["workspaces"][0]
    assert ws["checkout"] is None and ws["here"] is True


def test_the_watcher_reads_this_checkouts_inbox_and_where_says_whose_pointer_it_is(team_repo, tmp_path):
    """A team board records no project folder: the watcher took its inbox from the
    shared `project_root` setting, so on PostgreSQL it watched no inbox at all (or
    whichever folder that setting named). It is this checkout's `.loopx/inbox`, as
    every other verb's project is. And `where` says when the checkout's pointer
    was written for another board."""
    team_repo.ok("card", "add", "one")
    held(team_repo, "LX-1", "a1")
    inbox = team_repo.root / ".loopx" / "inbox"
    inbox.mkdir(exist_ok=True)
    (inbox / "step.loopx.json").write_text(
        json.dumps({"card": "LX-1", "agent": "a1", "summary": "from this checkout's inbox"})
    )
    done = loopx("watch", "--once", cwd=team_repo.root, env={"LOOPX_DB": team_repo.url})
    assert done.returncode == 0, done.stderr
    summaries = [e["summary"] for e in team_repo.ok("export")["evidence"]]
    assert "from this checkout's inbox" in summaries, done.stdout
    # `where`: the pointer names the board it was written for; another board's pointer is said so.
    here = _cold(team_repo, team_repo.root, "where")["board"]
    assert here["checkout"] == str(team_repo.root) and here["pointer"] == "this address"
    pointer = _pointer(team_repo.root)
    (team_repo.root / ".loopx" / "team.json").write_text(
        json.dumps({**pointer, "board": "postgresql://elsewhere/other"})
    )
    there = loopx("--json", "where", cwd=team_repo.root, env={"LOOPX_DB": team_repo.url})
    answer = json.loads(there.stdout.strip().splitlines()[-1])["board"]
    assert answer["pointer"] == "another address" and there.returncode == 0
    text = loopx("where", cwd=team_repo.root, env={"LOOPX_DB": team_repo.url}).stdout
    assert "postgresql://elsewhere/other" in text and "not this board's" in text
