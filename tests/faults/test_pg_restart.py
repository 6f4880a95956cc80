"""A PostgreSQL restart mid-run (#30): the long-lived processes reconnect and
say so; nothing is lost. A server of the test's own (tests/faults/pgserver.py),
stopped with `pg_ctl stop -m immediate` and started again."""

from __future__ import annotations

import json
import os
import sys

import pytest

from tests.conftest import Board
from tests.faults.pgserver import own_pg  # noqa: F401  (the fixture)

pytestmark = pytest.mark.slow


@pytest.fixture
def pg_board(own_pg, tmp_path, monkeypatch):  # noqa: F811
    root = tmp_path / "project"
    root.mkdir()
    b = Board(root, monkeypatch, own_pg.url)
    b.ok("init", "--objective", "restart", "--test-board")
    b.ok("agent", "add", "a1")
    b.ok("card", "add", "one")
    b.ok("card", "add", "two")
    return b


async def test_mcp_answers_again_after_the_server_restarts(pg_board, own_pg):  # noqa: F811
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    env = {
        "LOOPX_DB": pg_board.url,
        "LOOPX_AGENT": "a1",
        "PYTHONPATH": os.pathsep.join(sys.path),
        "LOOPX_KEY": "/nonexistent/key.json",
        "LOOPX_NOW": os.environ["LOOPX_NOW"],
    }
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "loopx_core", "mcp"], env=env, cwd=str(pg_board.root)
    )
    errlog_path = pg_board.root / "mcp.err"
    with open(errlog_path, "w") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write):
            async with ClientSession(read, write) as client:
                await client.initialize()
                first = await client.call_tool("claim", {"card": "LX-1"})
                assert not first.is_error, first.content[0].text
                own_pg.stop()
                own_pg.start()
                answers = []
                for _ in range(5):  # bounded: the first call after the restart may say the server went away
                    got = await client.call_tool(
                        "writeback", {"card": "LX-1", "summary": "after the restart", "op_id": "after-restart-1"}
                    )
                    answers.append((got.is_error, got.content[0].text))
                    if not got.is_error:
                        break
                assert not answers[-1][0], answers
                assert all("[internal]" not in text for _, text in answers), answers
    assert "reconnect" in errlog_path.read_text() or len(answers) == 1
    card = pg_board.ok("card", "show", "LX-1")["card"]
    assert card["status"] == "active" and card["lease"]["holder"] == "a1"
    evidence = [e for e in pg_board.ok("log", "LX-1")["evidence"] if e["summary"] == "after the restart"]
    assert len(evidence) == 1, evidence


async def test_an_mcp_call_in_flight_while_the_server_restarts_waits_out_the_reconnect(pg_board, own_pg):  # noqa: F811
    """#44: a call whose transaction is open when the server stops (held there
    by a table lock the test takes) answers once the server is back — as `run`
    and `watch` do — never `[uncommitted]`/`board_unreachable … retry`; a
    write in flight is made once."""
    import asyncio

    import psycopg
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    env = {
        "LOOPX_DB": pg_board.url,
        "LOOPX_AGENT": "a1",
        "PYTHONPATH": os.pathsep.join(sys.path),
        "LOOPX_KEY": "/nonexistent/key.json",
        "LOOPX_NOW": os.environ["LOOPX_NOW"],
    }
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "loopx_core", "mcp"], env=env, cwd=str(pg_board.root)
    )
    errlog_path = pg_board.root / "mcp.err"

    def waiting_on(table: str) -> bool:
        with psycopg.connect(own_pg.url, autocommit=True) as probe:
            return bool(
                probe.execute(
                    "SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query ILIKE %s", (f"%{table}%",)
                ).fetchone()
            )

    with open(errlog_path, "w") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write):
            async with ClientSession(read, write) as client:
                await client.initialize()
                first = await client.call_tool("claim", {"card": "LX-1"})
                assert not first.is_error, first.content[0].text
                for tool, arguments, table in (
                    ("context", {"card": "LX-1"}, "card"),
                    ("context", {"card": "LX-1"}, "evidence"),
                    ("cards", {}, "card"),
                    ("next", {}, "card"),
                    ("next", {}, "gate"),
                    ("gate_ask", {"card": "LX-1", "question": "ok?"}, "gate"),
                    ("writeback", {"card": "LX-1", "summary": "while it restarted"}, "evidence"),
                    ("writeback", {"card": "LX-1", "summary": "while it restarted 2"}, "event"),
                ):
                    holder = psycopg.connect(own_pg.url)
                    holder.execute(
                        f'LOCK TABLE "{table}" IN ACCESS EXCLUSIVE MODE'
                    )  # (the call's transaction waits here)
                    call = asyncio.create_task(client.call_tool(tool, arguments))
                    await asyncio.to_thread(_until, lambda table=table: waiting_on(table), f"{tool} is in flight")
                    await asyncio.to_thread(own_pg.stop)
                    holder.close()
                    await asyncio.to_thread(own_pg.start)
                    got = await asyncio.wait_for(call, 180)
                    assert not got.is_error, (tool, table, got.content[0].text)
    assert "running it again once the board is back" in errlog_path.read_text()
    for summary in ("while it restarted", "while it restarted 2"):
        assert len([e for e in pg_board.ok("log", "LX-1")["evidence"] if e["summary"] == summary]) == 1, summary
    assert (
        pg_board.cli("verify").code == 0
    )  # (ids that jumped after the immediate stops: docs/decisions/…-pg-id-gaps.md)


def _until(check, what: str, limit: float = 60.0):
    import time

    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        found = check()
        if found:
            return found
        time.sleep(0.2)
    raise AssertionError(f"not within {limit:g} s: {what}")


def test_watch_reconnects_after_the_server_restarts(pg_board, own_pg):  # noqa: F811
    import subprocess

    (pg_board.root / "out").mkdir()
    pg_board.ok("agent", "add", "w1", "--watch", "out")
    pg_board.ok("claim", "LX-2", agent="w1")
    env = dict(os.environ, LOOPX_DB=pg_board.url)
    err_path = pg_board.root / "watch.err"
    with open(err_path, "w") as err:
        watch = subprocess.Popen(
            [sys.executable, "-m", "loopx_core", "watch"],
            cwd=pg_board.root,
            env=env,
            stdout=subprocess.PIPE,
            stderr=err,
            text=True,
        )
        try:
            _until(lambda: "following" in err_path.read_text(), "the watcher started")
            own_pg.stop()
            (pg_board.root / "out" / "during.loopx.json").write_text(
                '{"card": "LX-2", "agent": "w1", "summary": "written while the server was down"}'
            )
            own_pg.start()
            (pg_board.root / "out" / "after.loopx.json").write_text(
                '{"card": "LX-2", "agent": "w1", "summary": "written after the restart"}'
            )

            def both():
                summaries = {e["summary"] for e in pg_board.ok("log", "LX-2")["evidence"]}
                return {"written while the server was down", "written after the restart"} <= summaries

            _until(both, "both documents ingested", 90)
            assert watch.poll() is None, "the watcher exited"
        finally:
            watch.terminate()
            watch.wait(timeout=30)
    text = err_path.read_text()
    assert "Traceback" not in text, text[-2000:]
    assert "reconnect" in text, text[-2000:]


def test_run_reconnects_after_the_server_restarts(pg_board, own_pg):  # noqa: F811
    """A turn in flight while the server restarts: the runner reconnects, says
    so, records the turn, and goes on to the next."""
    import subprocess
    from pathlib import Path

    turn = Path(__file__).resolve().parent.parent / "runner" / "agent_turn.py"
    (pg_board.root / ".plan.json").write_text(json.dumps({"steps": {"1": "hold"}}))
    pg_board.ok("card", "add", "three", "--next", "step 1")  # LX-3; LX-1 and LX-2 go first
    for key in ("LX-1", "LX-2"):
        pg_board.ok("card", "move", key, "--to", "backlog")
    env = dict(os.environ, LOOPX_DB=pg_board.url)
    env.pop("LOOPX_AGENT", None)
    err_path = pg_board.root / "run.err"
    with open(err_path, "w") as err:
        runner = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "loopx_core",
                "run",
                "--agent",
                "a1",
                "--runtime",
                "shell",
                "--turns",
                "2",
                "--",
                sys.executable,
                str(turn),
            ],
            cwd=pg_board.root,
            env=env,
            stdout=err,
            stderr=err,
            text=True,
        )
        try:
            _until(lambda: (pg_board.root / ".held-a1").exists(), "the turn is in flight")
            own_pg.stop()
            own_pg.start()
            (pg_board.root / ".let-go-a1").touch()
            code = runner.wait(timeout=180)
        finally:
            if runner.poll() is None:
                runner.kill()
                runner.wait(timeout=30)
    text = err_path.read_text()
    assert code == 0, text[-3000:]
    assert "reconnect" in text, text[-3000:]
    summaries = [e["summary"] for e in pg_board.ok("log", "LX-3")["evidence"]]
    assert "did step 1" in summaries and "did step 2" in summaries, (summaries, text[-3000:])


def test_a_runners_waker_is_pushed_to_again_after_the_server_restarts(pg_board, own_pg):  # noqa: F811
    """#42: the LISTEN connection dies with the server; the waker LISTENs
    again on a new one, so a write after the restart still wakes it at once
    (its polling an hour away here), not only at its next poll."""
    import psycopg

    from tests.pg.test_pg_push import slow_waker

    def listening() -> bool:
        with psycopg.connect(own_pg.url, autocommit=True) as probe:
            return bool(probe.execute("SELECT 1 FROM pg_stat_activity WHERE query ILIKE 'LISTEN%'").fetchone())

    with slow_waker(pg_board.url) as (waker, waiting, woke):
        assert waker.listener is not None
        own_pg.stop()
        own_pg.start()
        waiting.start()
        _until(listening, "the waker LISTENs again after the restart", 60)
        pg_board.spawn("--json", "card", "add", "after the restart")
        waiting.join(timeout=60)
        assert woke == [True]  # the write woke it, not a poll
