"""The watcher's state in the board: the schema step that adds it, and the
engine on a PostgreSQL board."""

from __future__ import annotations

import json

from tests import board_sql

from ..conftest import downgrade_sqlite
from .conftest import doc, events, evidence, write_atomic


def test_a_v1_board_opens_and_gains_the_watch_tables(project):
    from loopx_core.store import migrations

    downgrade_sqlite(project.db, 1)
    write_atomic(project.root / "out" / "t.loopx.json", doc("after the upgrade"))
    res = project.spawn("watch", "--once")
    assert res.returncode == 0, res.stderr
    assert "ingested E-1 on LX-1" in res.stdout
    con = board_sql.connect(project.db)
    try:
        assert con.execute("SELECT value FROM setting WHERE key='schema_version'").fetchone() == (
            str(migrations.SCHEMA_VERSION),
        )
        assert con.execute("SELECT count(*) FROM ingest_seen").fetchone() == (1,)
        assert con.execute("SELECT count(*) FROM card").fetchone() == (1,)  # nothing else touched
    finally:
        con.close()


def test_a_migrated_copy_carries_the_watchers_state(project):
    """A watcher on a copy made by `loopx migrate` neither re-reads streams nor
    reports refused files a second time."""
    out = project.root / "out"
    write_atomic(out / "t.loopx.json", doc("a document", next="a"))
    (out / "s.loopx.jsonl").write_text(
        json.dumps(doc("a line", next="b")) + "\n" + json.dumps(doc("x", agent="ghost")) + "\n"
    )
    (out / "bad.loopx.json").write_text("{")
    first = project.spawn("watch", "--once", "--json")
    assert first.returncode == 0, first.stderr
    seen = json.loads(first.stdout)
    assert (seen["ingested"], seen["refused"]) == (2, 2), (
        seen
    )  # two documents in, the bad one and the ghost's line refused
    copy = project.root / "copy.db"
    moved = project.ok("migrate", "--to", copy)["migration"]
    assert moved["tables"]["ingest_seen"]["rows"] == 4 and moved["tables"]["ingest_stream"]["rows"] == 1
    again = project.spawn("--db", copy, "watch", "--once", "--json")
    assert again.returncode == 0, again.stderr
    report = json.loads(again.stdout)  # one JSON object: what this pass did
    assert (report["ingested"], report["refused"], report["results"]) == (0, 0, []), report
    con = board_sql.connect(copy)
    try:
        assert con.execute("SELECT count(*) FROM evidence").fetchone() == (2,)
        assert con.execute("SELECT count(*) FROM event WHERE kind = 'ingest_error'").fetchone() == (2,)
    finally:
        con.close()


async def test_the_engine_on_a_postgresql_board(tmp_path, monkeypatch, request):
    from tests.conftest import Board

    url = request.getfixturevalue("pg_url")
    root = tmp_path / "project"
    (root / "out").mkdir(parents=True)
    board = Board(root, monkeypatch, url)
    board.ok("init")
    board.ok("agent", "add", "w1", "--watch", "out")
    board.ok("card", "add", "Build it")
    board.ok("claim", "LX-1", agent="w1")
    monkeypatch.chdir(root)  # a PostgreSQL board's project is the watcher's folder
    write_atomic(root / "out" / "t.loopx.json", doc("on postgres", next="n"))
    (root / "out" / "s.loopx.jsonl").write_text(
        json.dumps(doc("line", next="m")) + "\n" + json.dumps(doc("x", agent="ghost")) + "\n"
    )
    (root / "out" / "bad.loopx.json").write_text("{")
    from loopx_core.watch import WatchConfig, watch_board

    store = board.store()
    try:
        results = []
        stats = await watch_board(store, once=True, on_result=results.append, config=WatchConfig(settle=0.2))
        assert (stats.ingested, stats.refused) == (2, 2)
        assert sorted(e.summary for e in evidence(store)) == ["line", "on postgres"]
        assert sorted(e.data["file"] for e in events(store, "ingest_error")) == [
            "out/bad.loopx.json",
            "out/s.loopx.jsonl",
        ]
        again = await watch_board(store, once=True, config=WatchConfig(settle=0.2))
        assert (again.ingested, again.refused, again.duplicate) == (0, 0, 0)
    finally:
        store.close()
