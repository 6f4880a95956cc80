"""A huge file in a watch folder is refused before a byte of it is read, once,
and the rest of the folder keeps flowing (issue #24 §4: a 20 GiB sparse file
stalled `loopx watch` for minutes while it was hashed)."""

from __future__ import annotations

import json
import os

from loopx_core.rules.artifacts import HASH_MAX
from tests.polling import until

from .conftest import doc, events, evidence, observed, write_atomic

HUGE = 20 << 30  # 20 GiB, sparse: costs no disk


def _refusals(store, name: str) -> list:
    return [e for e in events(store, "ingest_error") if e.data["file"].endswith(name)]


def test_a_20_gib_file_is_refused_once_and_the_folder_keeps_flowing(project, procs):
    store = project.store()
    try:
        w = procs(project).wait_started()
        out = project.root / "out"
        with open(out / "huge.bin", "wb") as fh:
            fh.truncate(HUGE)
        (out / "report.md").write_text("# Report\n")
        write_atomic(out / "turn.loopx.json", doc("a turn next to a huge file", next="x"))
        until(
            lambda: any(o.path == "out/report.md" for o in observed(store)),
            what="the normal file observed",
            explain=lambda: "\n".join(w.err[-20:]),
        )
        until(lambda: evidence(store), what="the document ingested", explain=lambda: "\n".join(w.err[-20:]))
        refused = until(lambda: _refusals(store, "huge.bin"), what="the huge file refused")
        assert refused[0].data["code"] == "artifact_too_large" and refused[0].card == 1
        assert str(HUGE) in refused[0].data["reason"] and f"{HASH_MAX >> 20} MB" in refused[0].data["reason"]
        assert not any(o.path == "out/huge.bin" for o in observed(store))
        # Later changes elsewhere flow, and the unchanged huge file is not reported again.
        (out / "later.txt").write_text("later")
        until(lambda: any(o.path == "out/later.txt" for o in observed(store)), what="a later file observed")
        assert len(_refusals(store, "huge.bin")) == 1
        # Changed: looked at again (and refused again: still too large).
        with open(out / "huge.bin", "r+b") as fh:
            fh.truncate(HUGE + (1 << 20))
        until(lambda: len(_refusals(store, "huge.bin")) == 2, what="the changed huge file looked at again")
        assert w.proc.poll() is None
    finally:
        store.close()


def test_an_artifact_too_large_to_hash_is_recorded_with_its_size(project):
    with open(project.root / "out" / "dump.bin", "wb") as fh:
        fh.truncate(HUGE)
    ev = project.ok("writeback", "LX-1", "--summary", "made a dump", "--artifact", "out/dump.bin", agent="w1")[
        "evidence"
    ]
    assert ev["artifacts"] == [{"path": "out/dump.bin", "size": HUGE, "sha256": None, "too_large": True}]
    assert json.loads(json.dumps(project.ok("log", "LX-1")["evidence"][-1]["artifacts"])) == ev["artifacts"]
    assert os.path.getsize(project.root / "out" / "dump.bin") == HUGE


def test_the_boards_file_viewer_reads_only_the_head_of_a_huge_artifact(project, monkeypatch):
    """Opening a 20 GiB artifact in the board reads its first bytes, never the whole."""
    import hashlib

    from loopx_core.shapes.values import Artifact
    from loopx_tui.screens import artifact as artifact_screen
    from loopx_tui.screens.artifact import MAX_BYTES, read_artifact

    hashed, real_sha256 = [], hashlib.sha256

    class Counting:
        def __init__(self):
            self.real = real_sha256()

        def update(self, chunk):
            hashed.append(len(chunk))
            self.real.update(chunk)

        def hexdigest(self):
            return self.real.hexdigest()

    monkeypatch.setattr(artifact_screen.hashlib, "sha256", Counting)

    path = project.root / "out" / "dump.log"
    with open(path, "wb") as fh:
        fh.write(b"first line\n")
        fh.truncate(HUGE)
    view = read_artifact(Artifact("out/dump.log", HUGE, None, too_large=True), str(project.root))
    assert view.matches is None and view.truncated
    assert view.text is None or view.text.startswith("first line")
    assert MAX_BYTES < HASH_MAX and sum(hashed) <= 2 * max(MAX_BYTES, 1 << 20)
