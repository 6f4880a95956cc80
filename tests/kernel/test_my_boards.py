"""`loopx boards` (issue #42): every board `loopx init` made or the board opened
is remembered in the person's LoopX folder, listed with what needs the person
on each (`--json` too), a gone board said gone, `boards forget PATH` removes
one; bad input is refused with its documented exit code, and nothing else
changes. (The person's folder is the test's own: tests/conftest.py
``_person_env``.)"""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

import pytest

from tests.conftest import Board


def _list() -> list[dict]:
    from loopx_core.store.known_boards import list_path

    return json.loads(list_path().read_text())["boards"]


@pytest.fixture
def two(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """alpha: a gate waiting; beta: nothing yet."""
    alpha, beta = Board(tmp_path / "alpha", monkeypatch), Board(tmp_path / "beta", monkeypatch)
    for b in (alpha, beta):
        b.root.mkdir()
        b.ok("init", "--test-board")
        b.ok("agent", "add", "a1")
    alpha.ok("card", "add", "asks")
    alpha.ok("claim", "LX-1", agent="a1")
    assert alpha.cli("gate", "ask", "LX-1", "--question", "may I?", "--scope", "deploy:prod", agent="a1").code == 6
    return alpha, beta


def test_init_remembers_and_boards_lists_what_needs_you(two):
    alpha, beta = two
    assert [b["target"] for b in _list()] == [str(beta.db), str(alpha.db)]  # the latest first
    data = alpha.ok("boards")
    by_name = {b["name"]: b for b in data["boards"]}
    assert by_name["alpha"]["needs"] == {"gates": 1, "merges": 0, "questions": 0, "paused": 0, "total": 1}
    assert by_name["alpha"]["state"] == "ok" and by_name["alpha"]["kind"] == "local"
    assert by_name["beta"]["needs"]["total"] == 0
    assert by_name["alpha"]["first"] == ["G-1 deploy:prod on LX-1: may I?"] and by_name["beta"]["first"] == []
    assert data["needs_you"] == 1
    text = alpha.cli("boards", json_out=False)
    assert text.code == 0
    assert "1 needs you (1 gate)" in text.out and "nothing needs you" in text.out
    assert "1 needs you across 2 boards" in text.out
    assert "⚑ G-1 deploy:prod on LX-1: may I?" in text.out


def test_a_budget_pause_and_a_runtime_question_count(two):
    _alpha, beta = two
    beta.ok("card", "add", "spends", "--max-turns", "1")
    beta.ok("claim", "LX-1", agent="a1")
    beta.ok("writeback", "LX-1", "--summary", "turn 1", agent="a1")
    needs = next(b for b in beta.ok("boards")["boards"] if b["name"] == "beta")["needs"]
    assert needs["paused"] == 1 and needs["total"] == 1


def test_a_gone_board_is_said_gone_and_forget_removes_it(two):
    alpha, beta = two
    shutil.rmtree(beta.root / ".loopx")
    data = alpha.ok("boards")
    gone = next(b for b in data["boards"] if b["name"] == "beta")
    assert gone["state"] == "gone" and gone["needs"] is None and "gone" in gone["why"]
    assert not (beta.root / ".loopx").exists()  # reading the list creates nothing
    out = alpha.ok("boards", "forget", str(beta.root))  # the project folder names it
    assert out["forgotten"]["target"] == str(beta.db)
    assert [b["target"] for b in _list()] == [str(alpha.db)]


def test_forget_by_name_keeps_the_board_itself(two):
    alpha, beta = two
    before = beta.snapshot()
    assert alpha.ok("boards", "forget", "beta")["forgotten"]["name"] == "beta"
    assert beta.snapshot() == before and beta.db.exists()
    assert [b["name"] for b in alpha.ok("boards")["boards"]] == ["alpha"]


@pytest.mark.parametrize(
    "argv, code, says",
    [
        (("boards", "forget", "/nowhere/at/all"), 4, "no board"),
        (("boards", "forget"), 2, "forget which board"),
        (("boards", "frobnicate"), 2, "invalid choice"),
        (("boards", "--wait", "0"), 3, "out of range"),
        (("boards", "--wait", "31"), 3, "out of range"),
        (("boards", "--wait", "soon"), 2, "invalid float"),
    ],
)
def test_bad_input_is_refused_and_changes_nothing(two, argv, code, says):
    alpha, beta = two
    listed, board_before = _list(), alpha.snapshot()
    res = alpha.cli(*argv, json_out=False)
    assert res.code == code, res
    assert says in (res.out + res.err)
    assert _list() == listed and alpha.snapshot() == board_before


def test_an_unknown_board_says_so_in_json(two):
    alpha, _ = two
    res = alpha.cli("boards", "forget", "nope")
    assert res.code == 4 and res.data["error"]["code"] == "unknown_board", res


def test_an_agent_cannot_read_or_change_the_persons_list(two):
    alpha, _ = two
    listed = _list()
    for argv in (("boards",), ("boards", "forget", "beta")):
        res = alpha.cli(*argv, agent="a1")
        assert res.code == 10 and res.data["error"]["code"] == "person_only", res
    assert _list() == listed


def test_a_damaged_list_reads_as_empty_and_is_written_anew(two, tmp_path, monkeypatch):
    from loopx_core.store.known_boards import list_path

    alpha, _ = two
    list_path().write_text("{not json")
    assert alpha.ok("boards")["boards"] == []
    third = Board(tmp_path / "third", monkeypatch)
    third.root.mkdir()
    third.ok("init", "--test-board")
    assert [b["name"] for b in _list()] == ["third"]


def test_a_team_board_is_remembered_without_its_password():
    from loopx_core.store import known_boards
    from loopx_core.store.discovery import parse_target

    url = "postgresql://pat:s3cret@db.example/team?sslmode=require&password=s3cret"
    entry = known_boards.remember(parse_target(url, "env", Path("/")))
    assert entry is not None and entry.kind == "team" and entry.name == "team"
    assert "s3cret" not in known_boards.list_path().read_text()
    assert entry.target == "postgresql://pat@db.example/team?sslmode=require"
    assert known_boards.forget(url) == entry  # named with its password, it is found all the same
    assert known_boards.known() == []


def test_a_board_that_does_not_answer_is_unreachable_within_the_wait():
    import threading

    from loopx_core.ops import my_boards
    from loopx_core.store.known_boards import KnownBoard

    boards = [KnownBoard(f"postgresql://pat@h/db{i}", "team", f"db{i}", None, 0.0) for i in range(3)]
    hung = threading.Event()  # db1 answers only once the test is over

    def read(board, timeout):
        if board.name == "db1":
            hung.wait(120)
        return my_boards.BoardStanding(board, my_boards.OK, my_boards.Needs(gates=1))

    try:
        started = time.monotonic()
        found = my_boards.survey(boards, 2.0, read)
        assert time.monotonic() - started < 60  # (the survey's wait bounds it: db1 would hold it 120 s)
        assert [s.state for s in found] == ["ok", "unreachable", "ok"]
        assert "no answer within 2 s" in found[1].why
        again = my_boards.survey(boards, 2.0, read)  # (db1's first reading still hangs: it is not asked twice)
        assert again[1].state == "unreachable" and "still no answer" in again[1].why
        assert [s.state for s in again[::2]] == ["ok", "ok"]
    finally:
        hung.set()


def test_a_team_board_that_is_down_is_unreachable_not_an_error(two):
    """A PostgreSQL server nobody listens on: the board is said unreachable, the others still counted."""
    import socket

    from loopx_core.store import known_boards
    from loopx_core.store.discovery import parse_target

    alpha, _ = two
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # (closed again: nothing listens there)
    known_boards.remember(parse_target(f"postgresql://pat@127.0.0.1:{port}/down?connect_timeout=1", "env", Path("/")))
    data = alpha.ok("boards")
    down = next(b for b in data["boards"] if b["kind"] == "team")
    assert down["state"] == "unreachable" and down["needs"] is None
    assert data["needs_you"] == 1


def test_init_in_a_team_checkout_remembers_the_checkout(board):
    """On PostgreSQL (the suite's server), `init` remembers the team board with this machine's checkout."""
    listed = {b["target"]: b for b in _list()}
    if board.backend == "sqlite":
        assert listed[str(board.db)]["kind"] == "local"
        return
    (team,) = [b for b in listed.values() if b["kind"] == "team"]
    assert team["checkout"] == str(board.root)
    data = board.ok("boards")
    assert data["boards"][0]["state"] == "ok" and data["boards"][0]["here"] is True


def test_reading_a_team_board_leaves_the_callers_board_the_default(two, board):
    """The board's process surveys the person's boards: opening a team board
    to count must not make it the store of the caller's statements."""
    from loopx_core.ops import my_boards
    from loopx_core.store import records
    from loopx_core.store.known_boards import entry_for

    if board.backend == "sqlite":
        pytest.skip("a team board is read through its store only on PostgreSQL")
    alpha, _ = two
    mine = alpha.store()
    assert records.current_or_none() is mine
    team = board.store()
    entry = entry_for(team.location)
    team.close()
    records.bind_default(mine)
    found = my_boards.survey([entry], 10)
    assert found[0].state == "ok", found
    assert records.current_or_none() is mine
    mine.close()
