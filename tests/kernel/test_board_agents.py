"""init, where, agent add/list/show, export: the board and who may work on it."""

from __future__ import annotations

import json

import pytest

from .conftest import events, kinds, loopx, refused


def test_init_creates_once_and_records_the_objective(board):
    # The fixture already ran `init --objective "test board"`.
    again = board.ok("init")
    assert again["board"]["created"] is False
    assert board.snapshot()["board"]["settings"]["objective"] == "test board"
    changed = board.ok("init", "--objective", "ship v2")
    assert changed["board"]["created"] is False
    assert board.snapshot()["board"]["settings"]["objective"] == "ship v2"
    assert kinds(board)[:2] == ["person_added", "board_created"] and kinds(board)[-1] == "board_updated"


def test_init_refuses_an_unreadable_objective(board):
    refused(board, 3, "init", "--objective", "bad\x00objective")


def test_where_names_the_board_and_why(board):
    where = board.ok("where")["board"]
    assert where["source"] == "env" and where["exists"] is True
    assert where["backend"] == board.backend
    if board.backend == "sqlite":
        assert where["path"] == str(board.db)
        assert where["url"] == f"sqlite:///{board.db}"


def test_where_finds_the_nearest_board_from_a_subfolder(board):
    if board.backend != "sqlite":
        pytest.skip("discovery of .loopx/ is about SQLite files")
    sub = board.root / "src" / "deep"
    sub.mkdir(parents=True)
    proc = loopx("--json", "where", cwd=sub)
    assert proc.returncode == 0, proc.stderr
    where = json.loads(proc.stdout)["board"]
    assert where["source"] == "nearest" and where["path"] == str(board.db)


def test_a_folder_without_a_board_is_told_to_run_init(board, tmp_path):
    if board.backend != "sqlite":
        pytest.skip("a missing SQLite file")
    proc = loopx("--json", "--db", tmp_path / "nowhere" / "board.db", "card", "list", cwd=tmp_path)
    assert proc.returncode == 4
    assert "loopx init" in json.loads(proc.stdout)["error"]["hint"]


def test_agent_add_list_show(board):
    a = board.ok(
        "agent",
        "add",
        "claude-1",
        "--runtime",
        "claude-code",
        "--can",
        "git:push",
        "--can",
        "deploy:*",
        "--tokens",
        "2000000",
        "--window",
        "5h",
    )["agent"]
    assert a["id"] == "claude-1" and a["runtime"] == "claude-code"
    assert a["capabilities"] == ["deploy:*", "git:push"]
    assert a["token_window"] == {"tokens": 2000000, "seconds": 5 * 3600.0}
    board.ok("agent", "add", "codex-2", "--watch", "out")
    listed = board.ok("agent", "list")["agents"]
    assert [x["id"] for x in listed] == ["claude-1", "codex-2"]
    assert listed[1]["watch"] == [str(board.root / "out")]
    assert board.ok("agent", "show", "claude-1")["agent"] == a
    assert kinds(board).count("agent_added") == 2


def test_agent_add_again_is_unchanged_or_an_update(board):
    board.ok("agent", "add", "a1", "--can", "git:push")
    n = len(events(board))
    same = board.ok("agent", "add", "a1", "--can", "git:push")["agent"]
    assert same["capabilities"] == ["git:push"]
    assert len(events(board)) == n  # nothing changed: no event
    updated = board.ok("agent", "add", "a1", "--can", "deploy:prod")["agent"]
    assert updated["capabilities"] == ["deploy:prod"]
    assert kinds(board)[-1] == "agent_updated"


@pytest.mark.parametrize(
    "argv",
    [
        ["agent", "add", "bad id"],
        ["agent", "add", "-x"],
        ["agent", "add", "a1", "--can", "Not A Scope"],
        ["agent", "add", "a1", "--tokens", "100"],  # --tokens without --window
        ["agent", "add", "a1", "--window", "5h"],
        ["agent", "add", "a1", "--tokens", "0", "--window", "5h"],
        ["agent", "add", "a1", "--tokens", "10", "--window", "soon"],
        ["agent", "add", "a1", "--runtime", "Claude Code"],
    ],
)
def test_agent_add_refuses_bad_input(board, argv):
    res = board.cli(*argv)
    assert res.code in (2, 3), res
    refused(board, res.code, *argv)


def test_an_unknown_agent_is_told_to_register(board):
    board.ok("card", "add", "one")
    for argv in (
        ["next"],
        ["claim", "LX-1"],
        ["heartbeat", "LX-1"],
        ["writeback", "LX-1", "--summary", "x"],
        ["gate", "ask", "LX-1", "--question", "q"],
    ):
        err = refused(board, 4, *argv, agent="ghost")
        assert err["code"] == "unknown_agent"
        assert "loopx agent add ghost" in err["hint"], err
    refused(board, 4, "agent", "show", "ghost")


def test_no_agent_identity_is_a_usage_error(board):
    board.ok("card", "add", "one")
    err = refused(board, 2, "claim", "LX-1")
    assert "LOOPX_AGENT" in err["hint"]


def test_export_holds_the_whole_board(team):
    team.ok("card", "add", "one")
    team.ok("claim", "LX-1", agent="a1")
    team.ok("writeback", "LX-1", "--summary", "s", agent="a1")
    data = team.ok("export")
    assert set(data) >= {"board", "agents", "cards", "gates", "evidence", "observed", "handoffs", "events"}
    assert [a["id"] for a in data["agents"]] == ["a1", "a2"]
    assert [c["id"] for c in data["cards"]] == ["LX-1"]
    assert data["evidence"][0]["summary"] == "s"
    assert [e["seq"] for e in data["events"]] == sorted(e["seq"] for e in data["events"])


def test_agent_add_and_card_add_suggest_the_same_next_command(board):
    """Both say how an agent takes a card, in the same words (the agent's id
    filled in where it is known)."""
    agent = board.cli("agent", "add", "claude-1", json_out=False)
    card = board.cli("card", "add", "Write the login page", json_out=False)
    assert agent.code == 0 and card.code == 0
    assert "`loopx next --agent claude-1 --claim`" in agent.out
    assert "`loopx next --agent ID --claim`" in card.out
    assert "LOOPX_AGENT=" not in agent.out
