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

HOLD = r"""
import sqlite3, sys
con = sqlite3.connect(sys.argv[1], isolation_level=None)
con.execute("PRAGMA locking_mode = EXCLUSIVE")
con.execute("BEGIN EXCLUSIVE")
con.execute("UPDATE setting SET value = value WHERE key = 'objective'")
con.execute("COMMIT")
print("held", flush=True)
sys.stdin.readline()  # until told
con.close()
"""

pytestmark = pytest.mark.parametrize("backend", ["sqlite"], indirect=True)  # SQLite's file lock


class Held:
    def __init__(self, path):
        self.proc = subprocess.Popen(
            [sys.executable, "-c", HOLD, str(path)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )
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
    proc = subprocess.Popen(
        [sys.executable, "-c", evil, str(board.db)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert proc.stdout.readline().strip() == "held"
        out = board.spawn("board", "--text")
        assert out.returncode == 5 and f"pid {proc.pid}" in out.stderr
        assert "\x1b" not in out.stderr and "\x07" not in out.stderr
    finally:
        proc.stdin.write("\n")
        proc.stdin.flush()
        proc.wait(30)


# What SQLite's own connection holds while it is the last to close and
# checkpoints a long WAL into the board (seen in /proc/locks, docs/PITFALLS.md):
# the WAL index open (its read lock on the "DMS" byte of -shm) and a write lock
# on the board file's lock bytes. A real connection gives the first; fcntl the
# second, on the same bytes SQLite locks (PENDING_BYTE 0x40000000, then RESERVED
# and the SHARED range).
CHECKPOINTING = r"""
import fcntl, os, sqlite3, sys
con = sqlite3.connect(sys.argv[1], isolation_level=None)
con.execute("SELECT count(*) FROM card").fetchone()  # the WAL index is open and read-locked now
fd = os.open(sys.argv[1], os.O_RDWR)  # (kept open: closing any fd of the file drops the process's locks)
fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB, 512, 0x40000000)
print("checkpointing", flush=True)
sys.stdin.readline()  # until told
"""


def test_a_connection_checkpointing_as_it_closes_is_waited_for_not_refused(board, monkeypatch):
    """The last connection to close locks the whole file while it checkpoints,
    for seconds on a loaded machine: a LoopX process opening the board then
    waits, like for any writer, and is not told the board is held (exit 5
    ``board_busy`` refused agents' writes under load)."""
    import threading

    from loopx_core.store import holder
    from loopx_core.store.backends import SqliteStore as Store
    from loopx_core.store.discovery import parse_target

    proc = subprocess.Popen(
        [sys.executable, "-c", CHECKPOINTING, str(board.db)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert proc.stdout.readline().strip() == "checkpointing"
        assert holder.exclusive_holders(board.db) == [proc.pid]  # the whole file is locked …
        assert holder.exclusive_mode_holders(board.db) == set()  # … but not in exclusive locking mode
        decided = threading.Event()
        judge = Store._refuse_if_held

        def judged(self, conn, exc):
            try:
                return judge(self, conn, exc)
            finally:
                decided.set()

        monkeypatch.setattr(Store, "_refuse_if_held", judged)
        result: list = []

        def open_board():
            try:
                store = Store.open(parse_target(str(board.db), "test"))
                result.append(store.execute("SELECT count(*) FROM card").fetchone()[0])
            except Exception as exc:  # the test's answer
                result.append(exc)

        opener = threading.Thread(target=open_board)
        opener.start()
        assert decided.wait(60)  # it found the file locked and judged who holds it …
        assert not result  # … and waits, not refused
        proc.stdin.write("\n")
        proc.stdin.flush()
        proc.wait(30)
        opener.join(60)
        assert result == [0], result  # it read the board once the checkpoint let go
    finally:
        if proc.poll() is None:
            proc.kill()


# The same hold, taken after an ordinary read: the connection opened the WAL
# index the usual way (its "DMS" read lock on -shm stays), so it holds exactly
# the locks SQLite's own close-time checkpoint holds, and LoopX cannot tell it
# from one at once (docs/SECURITY.md).
HOLD_AFTER_A_READ = HOLD.replace(
    'con.execute("PRAGMA locking_mode = EXCLUSIVE")',
    'con.execute("SELECT count(*) FROM card").fetchone()\ncon.execute("PRAGMA locking_mode = EXCLUSIVE")',
)


def test_a_holder_that_looks_like_a_checkpoint_is_named_once_the_busy_timeout_ends(board):
    """What LoopX can still say about a holder it must wait for: after the
    busy timeout, exit 5 ``board_busy`` with its pid — never "database is
    locked — is it a LoopX board?" — and nothing half-written."""
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLD_AFTER_A_READ, str(board.db)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout.readline().strip() == "held"
        from loopx_core.store import holder

        assert holder.exclusive_holders(board.db) == [proc.pid] and holder.exclusive_mode_holders(board.db) == set()
        out = board.spawn("--json", "card", "add", "a card", timeout=120)
        assert out.returncode == 5, (out.stdout, out.stderr)
        err = json.loads(out.stdout)["error"]
        assert err["code"] == "board_busy" and err["holder"]["pid"] == proc.pid
    finally:
        if proc.poll() is None:
            proc.stdin.write("\n")
            proc.stdin.flush()
            proc.wait(30)
    assert board.ok("card", "list")["cards"] == []
