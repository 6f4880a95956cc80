"""``*.loopx.json`` documents in a watched folder, with a real watcher running."""

from __future__ import annotations

import json
import os

from tests.polling import until_async

from .conftest import FAST, Watcher, doc, events, evidence, write_atomic


async def test_an_atomic_write_is_ingested_once_with_source_file(project, watcher):
    out = project.root / "out"
    write_atomic(out / "turn-1.loopx.json", doc("wrote the parser", next="write the tests", tokens=1200, usd=0.02))
    rows = await until_async(lambda: evidence(watcher.store), what="the evidence")
    ev = rows[0]
    assert (ev.card_id, ev.agent, ev.summary, ev.source) == (1, "w1", "wrote the parser", "file")
    assert ev.turn_id.startswith("file-") and ev.tokens == 1200
    assert ev.extra == {"file": "out/turn-1.loopx.json"}
    # The same content again, atomically, under another name: a no-op.
    write_atomic(out / "turn-1-copy.loopx.json", doc("wrote the parser", next="write the tests", tokens=1200, usd=0.02))
    write_atomic(out / "turn-2.loopx.json", doc("wrote the tests", next="run them"))  # a sentinel
    await until_async(lambda: len(evidence(watcher.store)) >= 2, what="the sentinel")
    assert [e.summary for e in evidence(watcher.store)] == ["wrote the parser", "wrote the tests"]
    assert not events(watcher.store, "ingest_error")
    # The temp files of the atomic writes were never taken for artifacts.
    assert not [r for r in watcher.results if r.kind == "observed" and r.file.endswith(".tmp")]
    # Results reach on_result once their batch is done, a moment after the commit.
    await until_async(lambda: len(watcher.kinds("ingested")) >= 2, what="the second result")
    assert [r.kind for r in watcher.results if r.kind in ("ingested", "refused")] == ["ingested", "ingested"]


async def test_a_document_written_in_two_chunks_is_retried_not_reported(project, monkeypatch):
    from loopx_core.watch.ingest import Ingestor

    seen_unfinished: list[int] = []  # the size of the document each time the watcher found it not parsing yet
    real_doc = Ingestor.doc

    def doc_seen(self, path, **kw):
        results, pending = real_doc(self, path, **kw)
        if pending:
            seen_unfinished.append(os.path.getsize(path))
        return results, pending

    monkeypatch.setattr(Ingestor, "doc", doc_seen)
    # A settle time far longer than the wait below: the half-written file is
    # retried when it changes, never reported in between.
    watcher = await Watcher(project, FAST._replace(settle=30)).start()
    try:
        path = project.root / "out" / "slow.loopx.json"
        text = json.dumps(doc("two chunks", next="chunk two"))
        with open(path, "w") as handle:
            handle.write(text[:25])
            handle.flush()
            await until_async(lambda: 25 in seen_unfinished, what="the watcher to read the half-written document")
            handle.write(text[25:])
        rows = await until_async(lambda: evidence(watcher.store), what="the evidence")
        assert rows[0].summary == "two chunks"
        assert not events(watcher.store, "ingest_error")
        assert not watcher.kinds("refused")
    finally:
        await watcher.stop()
        watcher.close()


async def test_malformed_documents_are_reported_once_and_fixing_them_ingests(project, watcher):
    out = project.root / "out"
    # Valid JSON, invalid document: reported at once, on its card.
    bad = write_atomic(out / "bad.loopx.json", {"card": "LX-1", "agent": "w1", "summray": "typo"})
    err = (await until_async(lambda: events(watcher.store, "ingest_error"), what="the ingest error"))[0]
    assert err.card == 1
    assert err.data["file"] == "out/bad.loopx.json" and err.data["line"] is None
    assert "summary: is required" in err.data["reason"] and "summray: is not a known field" in err.data["reason"]
    assert err.data["code"] == "invalid_input"
    assert not evidence(watcher.store)  # never half-applied
    # Not JSON at all, and staying that way: reported once it settled, with the line.
    broken = out / "broken.loopx.json"
    broken.write_text('{"card": "LX-1", "agent": "w1",\n "summary": "oops" "next": 1}')
    errs = await until_async(
        lambda: len(events(watcher.store, "ingest_error")) >= 2 and events(watcher.store, "ingest_error"),
        what="the JSON error",
    )
    assert errs[1].data["file"] == "out/broken.loopx.json" and errs[1].data["line"] == 2
    assert errs[1].data["reason"].startswith("not valid JSON") and errs[1].card == 1
    # Fix both: both ingest, and nothing is reported again.
    write_atomic(bad, doc("fixed the typo", next="a"))
    write_atomic(broken, doc("fixed the syntax", next="b"))
    await until_async(lambda: len(evidence(watcher.store)) == 2, what="the fixed documents")
    assert sorted(e.summary for e in evidence(watcher.store)) == ["fixed the syntax", "fixed the typo"]
    assert len(events(watcher.store, "ingest_error")) == 2
    assert [r.file for r in watcher.kinds("refused")] == ["out/bad.loopx.json", "out/broken.loopx.json"]


async def test_refusals_are_the_cli_refusals(project):
    """Unknown card or agent, an agent not holding the card, an artifact outside
    the project: the same codes and messages as ``loopx writeback``."""
    cli = {}
    for name, card, agent, extra in (
        ("card", "LX-99", "w1", []),
        ("agent", "LX-1", "ghost", []),
        ("holder", "LX-1", "a2", []),
        ("outside", "LX-1", "w1", ["--artifact", "/etc/hostname"]),
    ):
        res = project.cli("writeback", card, "--summary", "s", *extra, agent=agent)
        assert res.code != 0, res
        cli[name] = (res.code, res.data["error"]["code"], res.data["error"]["message"], res.data["error"]["hint"])
    w = await Watcher(project).start()
    try:
        out = project.root / "out"
        write_atomic(out / "card.loopx.json", doc("s", card="LX-99"))
        inbox = (
            project.root / ".loopx" / "inbox"
        )  # a document naming another agent than the folder's is refused before (test_identity.py)
        write_atomic(inbox / "agent.loopx.json", doc("s", agent="ghost"))
        write_atomic(inbox / "holder.loopx.json", doc("s", agent="a2"))
        write_atomic(out / "outside.loopx.json", doc("s", artifacts=["/etc/hostname"]))
        errs = await until_async(
            lambda: len(events(w.store, "ingest_error")) >= 4 and events(w.store, "ingest_error"), what="four refusals"
        )
        by_file = {e.data["file"].split("/")[-1].split(".")[0]: e for e in errs}
        for name, (_, code, message, hint) in cli.items():
            got = by_file[name]
            assert got.data["code"] == code, name
            assert got.data["reason"] == message, name
            assert got.data["hint"] == hint, name
        assert by_file["card"].card is None  # LX-99 does not exist
        assert by_file["holder"].card == 1 and by_file["holder"].data["agent"] == "a2"
        assert not evidence(w.store)
    finally:
        await w.stop()
        w.close()


async def test_duplicates_and_turn_ids(project):
    # A turn written through the CLI first, then the same turn arrives as a file.
    project.ok("writeback", "LX-1", "--summary", "via cli", "--turn-id", "t-1", "--next", "n1", agent="w1")
    w = await Watcher(project).start()
    try:
        out = project.root / "out"
        write_atomic(out / "same.loopx.json", doc("via cli", turn_id="t-1", next="n1"))  # same payload: a no-op
        write_atomic(out / "clash.loopx.json", doc("different", turn_id="t-1"))  # same turn id, other payload
        write_atomic(out / "a.loopx.json", doc("twice", next="n2"))
        write_atomic(out / "b.loopx.json", doc("twice", next="n2"))  # same content, other file
        err = (await until_async(lambda: events(w.store, "ingest_error"), what="the turn conflict"))[0]
        assert err.data["code"] == "turn_conflict" and err.data["file"] == "out/clash.loopx.json"
        await until_async(lambda: len(evidence(w.store)) >= 2, what="the new turn")
        write_atomic(out / "sentinel.loopx.json", doc("sentinel", next="n3"))
        await until_async(lambda: any(e.summary == "sentinel" for e in evidence(w.store)), what="the sentinel")
        assert [e.summary for e in evidence(w.store)] == ["via cli", "twice", "sentinel"]
        assert len(events(w.store, "ingest_error")) == 1
    finally:
        await w.stop()
        w.close()


async def test_a_burst_of_500_documents(project, watcher):
    out = project.root / "out" / "burst"
    out.mkdir()
    for i in range(500):
        write_atomic(out / f"turn-{i:03}.loopx.json", doc(f"turn {i}", next=f"step {i + 1}", tokens=10))
    await until_async(lambda: len(evidence(watcher.store)) >= 500, timeout=60, what="500 documents")
    rows = evidence(watcher.store)
    assert len(rows) == 500 and len({e.summary for e in rows}) == 500
    assert not events(watcher.store, "ingest_error")
    from loopx_core.store.models import Card

    with watcher.store.read():
        card = Card.get_by_id(1)
    assert card.used_turns == 500 and card.used_tokens == 5000 and card.status == "active"


async def test_the_inbox_takes_documents_for_any_agent(project, watcher):
    inbox = project.root / ".loopx" / "inbox"
    assert inbox.is_dir()  # created by the watcher
    write_atomic(inbox / "sub" / "t.loopx.json", doc("from the inbox"))
    rows = await until_async(lambda: evidence(watcher.store), what="the inbox document")
    assert rows[0].extra == {"file": ".loopx/inbox/sub/t.loopx.json"}
    # Other files in the inbox are not artifacts of anything.
    (inbox / "notes.txt").write_text("hello")
    write_atomic(inbox / "t2.loopx.json", doc("sentinel", next="x"))
    await until_async(lambda: len(evidence(watcher.store)) == 2, what="the sentinel")
    assert not watcher.kinds("observed")
