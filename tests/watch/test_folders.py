"""Which folders are followed (and when), and observed artifacts."""

from __future__ import annotations

import os
import time

from tests.polling import until_async

from .conftest import Watcher, doc, events, evidence, observed, write_atomic


async def test_observed_artifacts_and_what_is_ignored(project, watcher):
    out = project.root / "out"
    noise = [
        ".git/objects/ab/cdef",
        ".git/index",
        "__pycache__/m.cpython-311.pyc",
        "node_modules/x/index.js",
        ".pytest_cache/v/cache",
        ".mypy_cache/3.11/m.json",
        "pkg/.venv/lib/x.py",
        ".loopx/notes.txt",
        ".report.md.swp",
        "report.md~",
        ".#report.md",
        "4913",
        "#report.md#",
        "download.part",
        "x.tmp",
    ]
    for rel in noise:
        path = out / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("noise")
    (out / "src").mkdir()
    (out / "src" / "report.md").write_text("# Report\n")
    rows = await until_async(lambda: observed(watcher.store), what="the observed artifact")
    ev = await until_async(lambda: events(watcher.store, "artifact_observed"), what="its event")
    assert [(o.card_id, o.agent, o.path, o.size) for o in rows] == [(1, "w1", "out/src/report.md", 9)]
    import hashlib

    assert rows[0].sha256 == hashlib.sha256(b"# Report\n").hexdigest()
    assert ev[0].card == 1 and ev[0].data["path"] == "out/src/report.md" and ev[0].data["sha256"] == rows[0].sha256
    # Changed: observed again. Rewritten with the same bytes: not.
    (out / "src" / "report.md").write_text("# Report\nmore\n")
    await until_async(lambda: len(observed(watcher.store)) == 2, what="the change")
    (out / "src" / "report.md").write_text("# Report\nmore\n")
    (out / "src" / "other.txt").write_text("sentinel")
    await until_async(lambda: any(o.path == "out/src/other.txt" for o in observed(watcher.store)), what="the sentinel")
    paths = [o.path for o in observed(watcher.store)]
    assert paths == ["out/src/report.md", "out/src/report.md", "out/src/other.txt"]
    # Evidence documents are not artifacts; the log shows the observed ones apart.
    write_atomic(out / "t.loopx.json", doc("turn", next="x"))
    await until_async(lambda: evidence(watcher.store), what="the document")
    assert not any(o.path.endswith(".loopx.json") for o in observed(watcher.store))


async def test_files_are_observed_only_while_the_agent_holds_a_card(project):
    project.ok("release", "LX-1", agent="w1")
    w = await Watcher(project).start()
    try:
        out = project.root / "out"
        (out / "while-idle.txt").write_text("idle")
        # Modified a second before the claim: a claim now takes less than the 50 ms
        # of slack the rule allows coarse file clocks, so "just before" would count.
        before = time.time() - 1
        os.utime(out / "while-idle.txt", (before, before))
        project.spawn("claim", "LX-1", agent="w1")
        # Modified before the claim: a catch-up would skip it; a change after the claim counts.
        (out / "after-claim.txt").write_text("working")
        rows = await until_async(lambda: observed(w.store), what="the observation")
        assert [o.path for o in rows] == ["out/after-claim.txt"]
    finally:
        await w.stop()
        w.close()


async def test_a_missing_watch_folder_is_followed_once_it_appears(project):
    project.ok("agent", "add", "w2", "--watch", "later/deep")
    project.ok("card", "add", "Second")
    project.ok("claim", "LX-2", agent="w2")
    w = await Watcher(project).start()
    try:
        later = project.root / "later" / "deep"
        assert any(
            r.kind == "notice" and "does not exist yet" in r.message and str(later) in r.message for r in w.results
        )
        later.mkdir(parents=True)
        write_atomic(later / "t.loopx.json", doc("in the late folder", card="LX-2", agent="w2"))
        rows = await until_async(lambda: evidence(w.store), what="the document in the new folder")
        assert rows[0].card_id == 2 and rows[0].extra == {"file": "later/deep/t.loopx.json"}
        assert any("appeared" in r.message for r in w.kinds("notice"))
        # It disappears and comes back: followed again.
        for f in later.iterdir():
            f.unlink()
        later.rmdir()
        await until_async(lambda: any("disappeared" in r.message for r in w.kinds("notice")), what="the disappearance")
        later.mkdir()
        write_atomic(later / "t2.loopx.json", doc("back again", card="LX-2", agent="w2", next="n"))
        await until_async(lambda: len(evidence(w.store)) == 2, what="the document after it came back")
    finally:
        await w.stop()
        w.close()


async def test_agents_registered_after_start_and_new_subfolders(project, watcher):
    # Another process registers an agent with a watch folder and gives it a card.
    assert project.spawn("agent", "add", "w3", "--watch", "o3").returncode == 0
    assert project.spawn("card", "add", "Third").returncode == 0
    assert project.spawn("claim", "LX-2", agent="w3").returncode == 0
    o3 = project.root / "o3"
    await until_async(lambda: any(str(o3) in r.message for r in watcher.kinds("notice")), what="the new agent's folder")
    # Folders created after start, with a file written at once (before any watch on them).
    deep = o3 / "a" / "b" / "c"
    deep.mkdir(parents=True)
    (deep / "t.loopx.json").write_text('{"card": "LX-2", "agent": "w3", "summary": "deep"}')
    (deep / "out.csv").write_text("a,b\n")
    rows = await until_async(lambda: evidence(watcher.store), what="the deep document")
    assert rows[0].card_id == 2 and rows[0].agent == "w3"
    await until_async(
        lambda: any(o.path == "o3/a/b/c/out.csv" for o in observed(watcher.store)), what="the deep artifact"
    )


async def test_documents_in_a_folder_outside_the_project(project, tmp_path):
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    project.ok("agent", "add", "w1", "--watch", "out", "--watch", str(outside))
    w = await Watcher(project).start()
    try:
        write_atomic(outside / "t.loopx.json", doc("from outside", artifacts=["out/ok.txt"]))
        (project.root / "out").joinpath("ok.txt").write_text("x")
        (outside / "result.bin").write_bytes(b"\x00\x01")
        rows = await until_async(lambda: evidence(w.store), what="the outside document")
        assert rows[0].extra == {"file": str(outside / "t.loopx.json")}
        assert rows[0].artifacts[0]["path"] == "out/ok.txt"  # relative to the project root
        await until_async(
            lambda: any(o.path == str(outside / "result.bin") for o in observed(w.store)), what="the outside artifact"
        )
        assert os.path.isabs([o.path for o in observed(w.store) if "result" in o.path][0])
    finally:
        await w.stop()
        w.close()


async def test_running_out_of_os_file_watches_falls_back_to_polling(project, monkeypatch):
    """watchfiles raises FileNotFoundError("OS file watch limit reached …") when
    inotify's limit is hit; restarting would fail forever, so the watcher polls."""
    import watchfiles

    real = watchfiles.awatch
    calls = []

    def limited(*paths, force_polling=None, **kw):
        calls.append(force_polling)
        if not force_polling:
            raise FileNotFoundError(f"OS file watch limit reached. about {[str(p) for p in paths]}")
        return real(*paths, force_polling=True, **kw)

    monkeypatch.setattr(watchfiles, "awatch", limited)
    w = await Watcher(project).start()
    try:
        await until_async(
            lambda: any("limit on file watches" in r.message for r in w.kinds("notice")), what="the notice"
        )
        notice = [r for r in w.kinds("notice") if "limit on file watches" in r.message][0]
        assert "fs.inotify.max_user_watches" in notice.message and "polling" in notice.message
        write_atomic(project.root / "out" / "t.loopx.json", doc("seen by polling", next="n"))
        rows = await until_async(lambda: evidence(w.store), what="the document, found by polling")
        assert rows[0].summary == "seen by polling"
        assert calls[0] is None and True in calls
    finally:
        await w.stop()
        w.close()
