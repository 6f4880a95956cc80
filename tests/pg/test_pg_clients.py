"""A team board's two clients (store/pg.py): libpq for a process that has not
loaded the models, peewee (psycopg) from the first use of the models on — the
switch never loses or doubles a write (#42)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from tests.pg.test_pg_board import ok

SWITCH = r"""
import json, sys
from loopx_core.store.backends import Store
from loopx_core.store.discovery import parse_target

store = Store.open(parse_target(sys.argv[1], "flag"))
report = {"fast_first": store._fast, "loaded_first": [m for m in ("peewee", "psycopg") if m in sys.modules]}
runs = []

def body():
    runs.append(len(runs))
    store.execute('INSERT INTO "setting" ("key", "value") VALUES (?, ?)', ("probe-%d" % len(runs), "x"))
    rows = store.db.execute_sql('SELECT count(*) FROM "setting" WHERE "key" LIKE %s', ("probe-%",)).fetchone()
    return rows[0]

report["seen_in_body"] = store.run(body)
report["runs"] = len(runs)
report["fast_after"] = store._fast
report["probes"] = store.query('SELECT "key" FROM "setting" WHERE "key" LIKE ? ORDER BY "key"', ("probe-%",))
print(json.dumps(report))
"""


def test_a_write_that_reaches_for_the_models_runs_again_on_peewee_once(pg_url, tmp_path):
    ok(pg_url, "init", cwd=tmp_path)
    env = dict(os.environ, LOOPX_DB=pg_url)
    proc = subprocess.run(
        [sys.executable, "-c", SWITCH, pg_url], env=env, cwd=tmp_path, capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert report["fast_first"] is True and report["loaded_first"] == []  # opened on libpq: no psycopg, no peewee
    assert report["runs"] == 2 and report["fast_after"] is False  # rolled back on libpq, run again on peewee
    assert report["seen_in_body"] == 1 and report["probes"] == [["probe-2"]]  # the first run's insert is gone


def test_the_per_turn_cycle_holds_on_either_client(pg_url, tmp_path, monkeypatch):
    """``LOOPX_PG_CLIENT=psycopg`` keeps a process on peewee: the same cycle, the same chain."""
    ok(pg_url, "init", cwd=tmp_path)
    ok(pg_url, "agent", "add", "a1", cwd=tmp_path)
    for client in ("libpq", "psycopg"):
        monkeypatch.setenv("LOOPX_PG_CLIENT", client)
        card = ok(pg_url, "card", "add", f"via {client}", cwd=tmp_path)["card"]["id"]
        ok(pg_url, "claim", card, agent="a1", cwd=tmp_path)
        ok(pg_url, "writeback", card, "--summary", "did it", agent="a1", cwd=tmp_path)
        ok(pg_url, "done", card, "--summary", "done", agent="a1", cwd=tmp_path)
    monkeypatch.delenv("LOOPX_PG_CLIENT")
    assert [c["status"] for c in ok(pg_url, "card", "list", cwd=tmp_path)["cards"]] == ["done", "done"]
    ok(pg_url, "verify", cwd=tmp_path)  # exit 0: the chain both clients wrote holds
