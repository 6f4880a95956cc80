"""Another process holding the board's write lock for long (#30): a write
waits at most LOOPX_LOCK_WAIT, then exit 5 `lock_wait` saying so, nothing
written; reads go on meanwhile. The holder is a real process (SQLite's
BEGIN IMMEDIATE; PostgreSQL's advisory write lock), ended by the test."""

from __future__ import annotations

import json
import subprocess
import sys

from tests.conftest import person_ok
from tests.kernel.conftest import last_seq

HOLD_SQLITE = """
import sqlite3, sys
con = sqlite3.connect(sys.argv[1], isolation_level=None, timeout=30)
con.execute("BEGIN IMMEDIATE")
print("held", flush=True)
sys.stdin.read()
"""

HOLD_PG = """
import sys, psycopg
from loopx_core.store.pg import WRITE_LOCK_KEY
con = psycopg.connect(sys.argv[1])
con.execute("SELECT pg_advisory_xact_lock(%s)", (WRITE_LOCK_KEY,))
print("held", flush=True)
sys.stdin.read()
"""


def _hold(board) -> subprocess.Popen:
    script, target = (HOLD_SQLITE, str(board.db)) if board.backend == "sqlite" else (HOLD_PG, board.url)
    holder = subprocess.Popen(
        [sys.executable, "-c", script, target], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    assert holder.stdout.readline().strip() == "held"
    return holder


def test_a_held_write_lock_is_waited_for_a_bounded_time_and_reads_go_on(board):
    person_ok(board, "card", "add", "before")
    seq = last_seq(board)
    holder = _hold(board)
    try:
        res = board.spawn("--json", "card", "add", "during", env={"LOOPX_LOCK_WAIT": "1"}, timeout=60)
        assert res.returncode == 5, res
        err = json.loads(res.stdout)["error"]
        assert err["code"] == "lock_wait" and "LOOPX_LOCK_WAIT" in err["hint"], err
        reads = board.spawn("--json", "card", "list", env={"LOOPX_LOCK_WAIT": "1"}, timeout=60)
        assert reads.returncode == 0 and [c["title"] for c in json.loads(reads.stdout)["cards"]] == ["before"], reads
    finally:
        holder.stdin.close()
        holder.wait(timeout=30)
    assert last_seq(board) == seq  # nothing was written
    person_ok(board, "card", "add", "after")  # and the board writes again once it is let go
