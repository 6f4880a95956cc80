"""A damaged board file (#30): `verify` runs SQLite's integrity check and names
the damage (exit 12); writes then refuse the board, with the way out, until a
check finds the file whole again. Pages of a real board file are overwritten."""

from __future__ import annotations

import json
import shutil

import pytest

from tests import board_sql

pytestmark = pytest.mark.parametrize("backend", ["sqlite"], indirect=True)


def _root_page(db, table: str) -> tuple[int, int]:
    con = board_sql.connect(db)
    try:
        con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        size = con.execute("PRAGMA page_size").fetchone()[0]
        root = con.execute("SELECT rootpage FROM sqlite_master WHERE type = 'table' AND name = ?", (table,)).fetchone()[0]
    finally:
        con.close()
    return root, size


def _damage(db, table: str) -> None:
    root, size = _root_page(db, table)
    with open(db, "r+b") as fh:
        fh.seek((root - 1) * size + 8)
        fh.write(b"\xa5" * (size - 16))


def _filled(board) -> None:
    board.ok("agent", "add", "a1")
    for n in range(3):
        board.ok("card", "add", f"task {n}")
    board.ok("claim", "LX-1", agent="a1")
    for n in range(30):
        board.ok("writeback", "LX-1", "--summary", f"step {n} " + "x" * 200, "--next", f"step {n + 1}", agent="a1")


def _json(res) -> dict:
    assert "Traceback" not in res.err, res.err
    return res.data


def test_a_damaged_evidence_page_is_named_by_verify_and_writes_refuse_the_board(board, tmp_path):
    _filled(board)
    backup = tmp_path / "backup.db"
    shutil.copy(board.db, backup)
    _damage(board.db, "evidence")
    res = board.cli("verify")
    assert res.code == 12, res
    assert _json(res)["verify"]["damaged"] is True
    assert res.data["verify"]["problems"], res.data
    # writes refuse it now — an agent's writeback and a person's card add — and say the way out
    for argv, agent in ((("writeback", "LX-1", "--summary", "more"), "a1"), (("card", "add", "new"), None)):
        res = board.cli(*argv, agent=agent)
        assert res.code == 12 and res.data["error"]["code"] == "board_damaged", res
        assert "migrate" in res.data["error"]["hint"] and "backup" in res.data["error"]["hint"]
    assert board.cli("card", "list").code == 0  # what still reads, reads
    # the way out: what still reads into a fresh board
    fresh = tmp_path / "fresh.db"
    res = board.cli("migrate", "--to", str(fresh))
    assert res.code in (0, 12), res  # (the damaged table may not copy: then the backup)
    # a backup put back: verify finds it whole, and writes go on
    shutil.copy(backup, board.db)
    assert board.cli("verify").code == 0
    assert board.cli("card", "add", "after the restore").code == 0


def test_a_read_that_meets_a_damaged_page_marks_the_board(board):
    _filled(board)
    _damage(board.db, "card")
    res = board.cli("card", "list")
    assert res.code == 12 and res.data["error"]["code"] == "board_damaged", res
    res = board.cli("card", "add", "new")
    assert res.code == 12, res
    assert json.loads(res.out)["error"]["code"] == "board_damaged"
