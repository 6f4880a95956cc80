"""The async API the TUI calls: stopping by event or by cancellation."""

from __future__ import annotations

import asyncio
import threading

import pytest

from tests.polling import until_async

from .conftest import FAST, doc, evidence, write_atomic


async def test_cancelling_the_task_stops_it_cleanly(project):
    from loopx_core.watch import watch_board

    store = project.store()
    try:
        results = []
        task = asyncio.create_task(watch_board(store, on_result=results.append, config=FAST))
        await until_async(lambda: any(r.message.startswith("following") for r in results), what="the start")
        write_atomic(project.root / "out" / "t.loopx.json", doc("before the cancel"))
        await until_async(lambda: evidence(store), what="the document")
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await asyncio.wait_for(task, 5)
        # A thread-safe stop (threading.Event) works too, and the board is fine.
        stop = threading.Event()
        task = asyncio.create_task(watch_board(store, stop_event=stop, config=FAST))
        write_atomic(project.root / "out" / "t2.loopx.json", doc("after the cancel", next="n"))
        await until_async(lambda: len(evidence(store)) == 2, what="the second document")
        stop.set()
        stats = await asyncio.wait_for(task, 5)
        assert stats.ingested == 1 and str(project.root / "out") in stats.folders
    finally:
        store.close()


async def test_results_carry_what_the_tui_shows(project, watcher):
    write_atomic(project.root / ".loopx" / "inbox" / "bad.loopx.json", doc("s", card="LX-1", agent="a2"))
    write_atomic(project.root / "out" / "ok.loopx.json", doc("fine"))
    await until_async(lambda: watcher.kinds("refused") and watcher.kinds("ingested"), what="both results")
    bad, ok = watcher.kinds("refused")[0], watcher.kinds("ingested")[0]
    assert bad.to_json()["card"] == "LX-1" and bad.code == "not_holder" and bad.agent == "a2"
    assert bad.text().startswith("refused .loopx/inbox/bad.loopx.json [LX-1]: LX-1 is not leased to a2")
    assert ok.to_json() == {
        "kind": "ingested",
        "file": "out/ok.loopx.json",
        "line": None,
        "card": "LX-1",
        "agent": "w1",
        "evidence": "E-1",
    }
    assert ok.text() == "ingested E-1 on LX-1 from out/ok.loopx.json (w1)"


async def test_a_board_given_by_location_or_db_string_is_opened_and_closed_by_the_watcher(project):
    """The API takes what `--db` takes, not only an open Store."""
    from loopx_core.store.discovery import parse_target
    from loopx_core.watch import WatchConfig, watch_board

    db = str(project.root / ".loopx" / "board.db")
    write_atomic(project.root / "out" / "a.loopx.json", doc("given a location", next="a"))
    stats = await watch_board(parse_target(db, "flag"), once=True, config=WatchConfig(settle=0.2))
    assert stats.ingested == 1
    write_atomic(project.root / "out" / "b.loopx.json", doc("given a string", next="b"))
    stats = await watch_board(db, once=True, config=WatchConfig(settle=0.2))
    assert (stats.ingested, stats.duplicate) == (1, 0)
    store = project.store()
    try:
        assert [e.summary for e in evidence(store)] == ["given a location", "given a string"]
    finally:
        store.close()
