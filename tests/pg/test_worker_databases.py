"""A killed test run cannot drop its PostgreSQL databases; the next run drops
them — only those made on this machine by a process that is gone, never a live
run's (tests/conftest.py ``_worker_database``)."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid

from tests.conftest import _host_tag, _sweep, stale_databases, worker_database_name


def test_only_dead_processes_databases_on_this_machine_are_stale():
    alive = {100, 200}.__contains__
    names = [
        "test_gw0_97f81618_abc123_100",  # a live run here
        "test_gw1_97f81618_abc123_300",  # killed: its worker is gone
        "test_gw0_0a0b0c0d_fff000_300",  # another machine's: its pids mean nothing here
        "test_gw0_97f81618",  # an older run's name, without a pid: whose it is cannot be told
        "other_gw0_97f81618_abc123_300",  # another base database
        "test",
    ]
    assert stale_databases(names, "test", "abc123", alive) == ["test_gw1_97f81618_abc123_300"]


def test_a_killed_runs_database_is_dropped_and_a_live_ones_kept(pg_server):
    import psycopg

    base = "lxsweep" + uuid.uuid4().hex[:6]  # a base of this test's own: a real run's databases are never in play
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True, check=True
    )
    dead_pid = int(dead.stdout)
    run = uuid.uuid4().hex[:8]
    stale = worker_database_name(base, "gw0", run, _host_tag(), dead_pid)
    live = worker_database_name(base, "gw1", run, _host_tag(), os.getpid())
    with psycopg.connect(pg_server, autocommit=True) as conn:  # (from any database)
        for name in (stale, live):
            conn.execute(f'CREATE DATABASE "{name}"')
        try:
            _sweep(conn, base, _host_tag())
            left = {
                row[0] for row in conn.execute("SELECT datname FROM pg_database WHERE datname LIKE %s", (base + "%",))
            }
        finally:
            for name in (stale, live):
                conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    assert left == {live}
