"""A board another process holds exclusively (issue #24 §4): LoopX says at
once who holds it — not "database is locked" after a long wait — with exit 5
(``board_busy``), and works again as soon as it is let go.

The holder is a real second process: SQLite's exclusive locking mode, then a
write, which keeps a lock on the whole file until the connection closes (in
WAL mode that is the only lock that stops readers)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

HOLD = r'''
import sqlite3, sys
con = sqlite3.connect(sys.argv[1], isolation_level=None)
con.execute("PRAGMA locking_mode = EXCLUSIVE")
con.execute("BEGIN EXCLUSIVE")
con.execute("UPDATE setting SET value = value WHERE key = 'objective'")
con.execute("COMMIT")
print("held", flush=True)
sys.stdin.readline()  # until told
con.close()
'''

pytestmark = pytest.mark.parametrize("backend", ["sqlite"], indirect=True)  # SQLite's file lock


class Held:
    def __init__(self, path):
        self.proc = subprocess.Popen([sys.executable, "-c", HOLD, str(path)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        assert self.proc.stdout.readline().strip() == "held"

    def release(self) -> None:
        if self.proc.poll() is None:
            self.proc.stdin.write("\n")
            self.proc.stdin.flush()
            self.proc.wait(30)


@pytest.fixture
def held(board):
    h = Held(board.db)
    yield h
    h.release()


def test_board_text_verify_and_a_write_name_the_holder_at_once(board, held):
    for argv in (("board", "--text"), ("--json", "verify"), ("--json", "card", "add", "a card")):
        proc = board.spawn(*argv, timeout=60)
        assert proc.returncode == 5, (argv, proc.stdout, proc.stderr)
        text = proc.stdout + proc.stderr
        assert f"pid {held.proc.pid}" in text and "locking_mode" in text, text  # who, and what it runs
        if argv[0] == "--json":
            err = json.loads(proc.stdout)["error"]
            assert err["code"] == "board_busy" and err["holder"]["pid"] == held.proc.pid
    held.release()
    assert board.spawn("board", "--text").returncode == 0
    assert board.spawn("card", "add", "a card").returncode == 0
    assert board.ok("card", "list")["cards"][0]["title"] == "a card"  # nothing was half-written meanwhile


def test_the_holders_command_line_reaches_the_terminal_made_safe(board):
    """The holder's command line is whatever it was started with (an agent's):
    it reaches the terminal made safe."""
    evil = HOLD.replace("import sqlite3, sys", "import sqlite3, sys  # \x1b]0;owned\x07")
    proc = subprocess.Popen([sys.executable, "-c", evil, str(board.db)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "held"
        out = board.spawn("board", "--text")
        assert out.returncode == 5 and f"pid {proc.pid}" in out.stderr
        assert "\x1b" not in out.stderr and "\x07" not in out.stderr
    finally:
        proc.stdin.write("\n")
        proc.stdin.flush()
        proc.wait(30)
