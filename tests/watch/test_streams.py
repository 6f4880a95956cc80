"""``*.loopx.jsonl`` streams: byte offsets in the board, torn lines, restarts,
truncation and replacement — with a real watcher running."""

from __future__ import annotations

import os

from tests.polling import until_async

from .conftest import Watcher, append, doc, events, evidence, lines, write_atomic


def stream_row(store, path):
    from loopx_core.store.models import IngestStream

    with store.read():
        return IngestStream.get_or_none(IngestStream.path == str(path))


async def test_bursts_with_a_torn_last_line(project, watcher):
    path = project.root / "out" / "turns.loopx.jsonl"
    path.write_text("")
    n = 0
    for burst in range(5):
        text = lines(*(doc(f"turn {n + i}", next=f"step {n + i}") for i in range(10)))
        n += 10
        cut = len(text) - 17  # the burst ends in the middle of its last line
        append(path, text[:cut])
        await until_async(lambda: len(evidence(watcher.store)) >= n - 1, what=f"burst {burst}")
        append(path, text[cut:])
    await until_async(lambda: len(evidence(watcher.store)) >= n, what="the last line")
    assert [e.summary for e in evidence(watcher.store)] == [f"turn {i}" for i in range(n)]
    assert not events(watcher.store, "ingest_error") and not watcher.kinds("refused")
    row = stream_row(watcher.store, path)
    assert row.offset == path.stat().st_size and row.lines == n
    assert [e.extra["line"] for e in evidence(watcher.store)][:3] == [1, 2, 3]


async def test_a_restart_resumes_at_the_stored_offset(project):
    path = project.root / "out" / "turns.loopx.jsonl"
    path.write_text(lines(*(doc(f"turn {i}", next=f"s{i}") for i in range(10))))
    w = await Watcher(project).start()
    await until_async(lambda: len(evidence(w.store)) == 10, what="the first ten")
    await w.stop()
    # Written while no watcher runs, including a torn line.
    append(
        path, lines(*(doc(f"turn {i}", next=f"s{i}") for i in range(10, 15))) + '{"card": "LX-1", "agent": "w1", "summ'
    )
    w2 = Watcher(project)
    w2.store = w.store
    await w2.start()
    try:
        await until_async(lambda: len(evidence(w2.store)) == 15, what="the five new lines")
        append(path, 'ary": "turn 15", "next": "s15"}\n')
        await until_async(lambda: len(evidence(w2.store)) == 16, what="the completed line")
        assert [e.summary for e in evidence(w2.store)] == [f"turn {i}" for i in range(16)]
        # The second watcher read only the new lines: nothing was even a duplicate.
        await until_async(lambda: len(w2.kinds("ingested")) >= 6, what="the sixth result")
        assert [r.kind for r in w2.results if r.kind != "notice"] == ["ingested"] * 6
        assert [r.line for r in w2.kinds("ingested")] == list(range(11, 17))
    finally:
        await w2.stop()
        w2.close()


async def test_truncation_and_replacement_start_over_without_duplicates(project, watcher):
    path = project.root / "out" / "turns.loopx.jsonl"
    first = [doc(f"turn {i}", next=f"s{i}") for i in range(5)]
    path.write_text(lines(*first))
    await until_async(lambda: len(evidence(watcher.store)) == 5, what="five lines")
    # Truncated, then new lines: the stream is read again from the top.
    with open(path, "w") as handle:
        handle.write(lines(doc("after truncation", next="t1")))
    await until_async(lambda: len(evidence(watcher.store)) == 6, what="the line after truncation")
    # Results reach on_result once their batch is done, a moment after the commit.
    await until_async(
        lambda: any("was truncated" in r.message for r in watcher.kinds("notice")), what="the 'was truncated' notice"
    )
    # Replaced by a new file (new inode) holding the old lines plus two new ones.
    write_atomic(path, lines(*first, doc("replaced 1", next="r1"), doc("replaced 2", next="r2")))
    await until_async(lambda: len(evidence(watcher.store)) == 8, what="the two new lines")
    await until_async(
        lambda: any("was replaced" in r.message for r in watcher.kinds("notice")), what="the 'was replaced' notice"
    )
    # Rewritten in place with the same size (same inode, bytes before the offset changed).
    size = path.stat().st_size
    text = path.read_text().replace('"turn 0"', '"TURN 0"')
    with open(path, "r+") as handle:
        handle.write(text)
    assert path.stat().st_size == size
    await until_async(lambda: len(evidence(watcher.store)) == 9, what="the rewritten line")
    summaries = [e.summary for e in evidence(watcher.store)]
    assert summaries == [f"turn {i}" for i in range(5)] + ["after truncation", "replaced 1", "replaced 2", "TURN 0"]
    assert not events(watcher.store, "ingest_error")


async def test_bad_lines_name_the_line_and_a_fix_is_appended(project, watcher):
    path = project.root / "out" / "turns.loopx.jsonl"
    path.write_text(
        lines(doc("ok 1", next="a")) + "{not json\n" + lines({"card": "LX-1", "agent": "w1"}, doc("ok 2", next="b"))
    )
    await until_async(lambda: len(evidence(watcher.store)) == 2, what="the good lines")
    errs = await until_async(
        lambda: len(events(watcher.store, "ingest_error")) == 2 and events(watcher.store, "ingest_error"),
        what="two refusals",
    )
    assert [(e.data["file"], e.data["line"]) for e in errs] == [
        ("out/turns.loopx.jsonl", 2),
        ("out/turns.loopx.jsonl", 3),
    ]
    assert errs[0].data["reason"].startswith("not valid JSON") and errs[0].card is None
    assert errs[1].data["reason"] == "summary: is required" and errs[1].card == 1
    append(path, lines(doc("fixed line 3", next="c")))
    await until_async(lambda: len(evidence(watcher.store)) == 3, what="the fix")
    assert len(events(watcher.store, "ingest_error")) == 2


async def test_an_unterminated_last_line_is_taken_once_it_settles(project, watcher):
    path = project.root / "out" / "turns.loopx.jsonl"
    path.write_text(
        lines(doc("one", next="a")) + '{"card": "LX-1", "agent": "w1", "summary": "no newline", "next": "b"}'
    )
    # Not an error while it might still grow; ingested once it stayed put for the settle time.
    await until_async(lambda: len(evidence(watcher.store)) == 2, what="the unterminated line")
    append(path, "\n" + lines(doc("three", next="c")))
    await until_async(lambda: len(evidence(watcher.store)) == 3, what="the next line")
    assert [e.summary for e in evidence(watcher.store)] == ["one", "no newline", "three"]
    assert not events(watcher.store, "ingest_error")
    assert os.path.getsize(path) == stream_row(watcher.store, path).offset
