"""Documents are committed in batches (one transaction for several files):
what fails inside a batch, or the batch as a whole, loses nothing and
ingests nothing twice."""

from __future__ import annotations

import pytest

from loopx_core.watch import ingest
from loopx_core.watch.ingest import Ingestor
from loopx_core.watch.rules import Origin
from tests.polling import until_async

from .conftest import Watcher, doc, events, evidence, write_atomic


def in_out(project) -> Origin:
    """Found in w1's watch folder ``out/``."""
    return Origin(("w1",), False, (str(project.root / "out"),))


def _burst(folder, n: int, prefix: str = "turn") -> list[str]:
    return [
        str(write_atomic(folder / f"{prefix}-{i:03}.loopx.json", doc(f"{prefix} {i}", next=f"step {i}")))
        for i in range(n)
    ]


def test_a_batch_that_does_not_commit_leaves_the_board_and_the_watchers_memory_as_before(project):
    paths = _burst(project.root / "out", 5)
    store = project.store()
    try:
        ing = Ingestor(store)
        ing.load()
        origin = in_out(project)

        def then_fail():
            for path in paths:
                ing.doc(path, origin=origin)
            raise OSError("disk full")  # as a failing COMMIT would

        with pytest.raises(OSError):
            ing.batch(then_fail)
        assert evidence(store) == []
        # Nothing is remembered as handled: the same files ingest now, once each.
        assert [ing.doc(p, origin=origin)[0][0].kind for p in paths] == ["ingested"] * 5
        assert [ing.doc(p, origin=origin)[0] for p in paths] == [[]] * 5
        assert [e.summary for e in evidence(store)] == [f"turn {i}" for i in range(5)]
    finally:
        store.close()


def test_a_duplicate_inside_one_batch_is_seen_before_the_commit(project):
    out = project.root / "out"
    first = str(write_atomic(out / "a.loopx.json", doc("same turn", next="n")))
    copy = str(write_atomic(out / "b.loopx.json", doc("same turn", next="n")))
    store = project.store()
    try:
        ing = Ingestor(store)
        origin = in_out(project)
        results = ing.batch(lambda: [ing.doc(first, origin=origin)[0], ing.doc(copy, origin=origin)[0]])
        assert [[r.kind for r in rs] for rs in results] == [["ingested"], []]
        assert len(evidence(store)) == 1
    finally:
        store.close()


async def test_one_document_failing_inside_a_batch_does_not_hold_back_the_others(project, monkeypatch):
    real = ingest.Ingestor._apply
    failed = []

    def flaky(self, obj, raw, *args):
        if isinstance(obj, dict) and obj.get("summary") == "turn 2" and not failed:
            failed.append(True)
            self.store.db.execute_sql(
                "INSERT INTO ingest_seen (key, outcome, path, created_at) VALUES ('half', 'ingested', 'x', 0)"
            )
            raise RuntimeError("the board went away for a moment")
        return real(self, obj, raw, *args)

    monkeypatch.setattr(ingest.Ingestor, "_apply", flaky)
    w = await Watcher(project).start()
    try:
        _burst(project.root / "out", 5)
        await until_async(lambda: len(evidence(w.store)) == 5, what="all five, the failed one on its retry")
        assert sorted(e.summary for e in evidence(w.store)) == [f"turn {i}" for i in range(5)]
        await until_async(
            lambda: any("could not ingest out/turn-002.loopx.json" in r.message for r in w.kinds("notice")),
            what="the notice",
        )
        assert not events(w.store, "ingest_error")
        # The failed document's savepoint was rolled back with it.
        with w.store.read():
            assert w.store.db.execute_sql("SELECT count(*) FROM ingest_seen WHERE key = 'half'").fetchone()[0] == 0
    finally:
        await w.stop()
        w.close()
