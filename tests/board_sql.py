"""Opening a SQLite board from outside LoopX (an attack's edit, a test's read,
an old schema made by hand) the way a person's client would: waiting for the
write lock of whoever holds it — a busy runner, the board, a watcher — instead
of failing at once with "database is locked" (issue #44: under load an
attack's ``sqlite3`` met the runner's lock and the test failed).

Every such opening in the suite goes through here: ``connect`` for Python's
sqlite3, ``client`` for SQLite's own command-line client. A test that means to
*hold* the lock (tests of lock waits) opens its own connection on purpose."""

from __future__ import annotations

import shutil
import sqlite3

import pytest

BUSY_SECONDS = 60.0  # a person's client waits; a loaded machine (load ~18) needs seconds, not milliseconds


def connect(path, **kw) -> sqlite3.Connection:
    """``sqlite3.connect`` that waits up to BUSY_SECONDS for a lock."""
    kw.setdefault("timeout", BUSY_SECONDS)
    return sqlite3.connect(str(path), **kw)


def client(db, *commands: str) -> list[str]:
    """``sqlite3 DB COMMANDS…`` (this machine's client) that waits for a lock the
    same way (its ``.timeout``, set before anything else runs)."""
    found = shutil.which("sqlite3")
    if not found:
        pytest.fail("the sqlite3 client is needed for the SQL attacks (apt-get install sqlite3)")
    return [found, "-cmd", f".timeout {int(BUSY_SECONDS * 1000)}", str(db), *commands]
