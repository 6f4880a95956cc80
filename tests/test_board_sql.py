"""An edit of the board from outside LoopX waits for the write lock like a
person's client would (issue #44: under load, an attack's ``sqlite3`` met the
busy runner's lock, "database is locked", and the test failed)."""

from __future__ import annotations

import subprocess
import sys
import threading

import pytest

from tests import board_sql
from tests.security.conftest import sql

HOLD = """
import sqlite3, sys
con = sqlite3.connect(sys.argv[1], isolation_level=None, timeout=60)
con.execute("BEGIN IMMEDIATE")
print("held", flush=True)
sys.stdin.read()
con.execute("COMMIT")
"""


def python_edit(board, statement: str) -> None:
    with board_sql.connect(board.db) as con:
        con.execute(statement)


@pytest.mark.parametrize("edit", [sql, python_edit], ids=["sqlite3 client", "python sqlite3"])
def test_an_edit_from_outside_waits_for_a_held_write_lock(board, edit):
    if board.backend != "sqlite":
        pytest.skip("SQLite's lock (PostgreSQL's psql waits for row locks by itself)")
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(board.db)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        release = threading.Timer(1.0, holder.stdin.close)  # a runner's turn of bookkeeping, made long by load
        release.start()
        edit(board, "UPDATE setting SET value = 'edited from outside' WHERE key = 'objective'")
        release.join()
        assert holder.wait(timeout=60) == 0
    finally:
        if holder.poll() is None:
            holder.kill()
    with board_sql.connect(board.db) as con:
        assert con.execute("SELECT value FROM setting WHERE key = 'objective'").fetchone() == ("edited from outside",)
