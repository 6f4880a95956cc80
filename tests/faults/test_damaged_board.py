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
        root = con.execute("SELECT rootpage FROM sqlite_master WHERE type = 'table' AND name = ?", (table,)).fetchone()[
            0
        ]
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


def _varint(buf: bytes, at: int) -> tuple[int, int]:
    """SQLite's varint at ``at``: (value, next offset)."""
    value = 0
    for n in range(9):
        byte = buf[at + n]
        if n == 8:
            return (value << 8) | byte, at + 9
        value = (value << 7) | (byte & 0x7F)
        if not byte & 0x80:
            return value, at + n + 1
    raise AssertionError("unreachable")


def _leaf_holding(db, table: str, rowid: int) -> tuple[int, int]:
    """The table's leaf page holding ``rowid`` (dbstat names the leaves; each
    leaf's cells are read for their rowids) and the page size."""
    con = board_sql.connect(db)
    try:
        con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        size = con.execute("PRAGMA page_size").fetchone()[0]
        leaves = [r[0] for r in con.execute("SELECT pageno FROM dbstat WHERE name = ? AND pagetype = 'leaf'", (table,))]
    finally:
        con.close()
    with open(db, "rb") as fh:
        for page in leaves:
            fh.seek((page - 1) * size)
            buf = fh.read(size)
            assert buf[0] == 0x0D  # a table b-tree leaf
            cells = int.from_bytes(buf[3:5], "big")
            for n in range(cells):
                at = int.from_bytes(buf[8 + 2 * n : 10 + 2 * n], "big")
                _, at = _varint(buf, at)  # (the payload's size)
                if _varint(buf, at)[0] == rowid:
                    return page, size
    raise AssertionError(f"no leaf of {table} holds row {rowid}")


def _damage_half_a_leaf(db, table: str, rowid: int) -> None:
    """Half the leaf page holding ``rowid`` zeroed after its 8-byte header: its
    cell pointers and the cells near them gone, the page still a valid leaf —
    so SQLite reads no error, only rows that are not there."""
    page, size = _leaf_holding(db, table, rowid)
    with open(db, "r+b") as fh:
        fh.seek((page - 1) * size + 8)
        fh.write(b"\x00" * (size // 2))


def test_a_card_on_half_a_damaged_leaf_page_is_damage_not_absence(board):
    """#44: half the leaf page holding LX-40 overwritten. Its lookups found
    nothing and said "no such card" (exit 4), and writes went on into the
    damaged file; a card the log says was added is damage (exit 12)."""
    board.ok("agent", "add", "a1")
    for n in range(60):
        board.ok("card", "add", f"task {n} " + "y" * 80)
    board.ok("claim", "LX-1", agent="a1")
    _damage_half_a_leaf(board.db, "card", 40)
    res = board.spawn("--json", "context", "LX-40", agent="a1", timeout=60)
    assert res.returncode == 12, res
    error = json.loads(res.stdout)["error"]
    assert error["code"] == "board_damaged" and "verify" in error["hint"], error
    # found once, writes refuse the board before they write into it
    for argv in (("card", "add", "new"), ("next", "--claim")):
        res = board.spawn("--json", *argv, agent="a1" if argv[0] == "next" else None, timeout=60)
        assert res.returncode == 12 and json.loads(res.stdout)["error"]["code"] == "board_damaged", res
    # a card that never was is still "not found"
    assert board.spawn("--json", "context", "LX-999", agent="a1", timeout=60).returncode == 4


async def test_mcp_says_a_hidden_card_is_damage_and_writes_then_refuse(board):
    """The same rule over `loopx mcp` (a real server, the SDK's client): the
    agent reads `[board_damaged]`, not "no such card", and the board is marked."""
    from tests.adapters.test_mcp import session

    board.ok("agent", "add", "a1")
    for n in range(60):
        board.ok("card", "add", f"task {n} " + "y" * 80)
    _damage_half_a_leaf(board.db, "card", 40)
    async with session(board, "a1") as client:
        got = await client.call_tool("context", {"card": "LX-40"})
    assert got.is_error and got.content[0].text.startswith("[board_damaged]"), got.content[0].text
    res = board.spawn("--json", "card", "add", "new", timeout=60)
    assert res.returncode == 12 and json.loads(res.stdout)["error"]["code"] == "board_damaged", res
