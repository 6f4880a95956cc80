"""Who wrote a document (DESIGN §7): in an agent's watch folder, that agent —
a document naming another is refused; in the board's inbox, nobody can tell —
it is recorded as unverified and shown so. Files that really live elsewhere
(symlinks out of the project and the folder) are never read or hashed.
Each case runs a real ``loopx watch --once``."""

from __future__ import annotations

import hashlib
import json

from .conftest import doc, events, evidence, lines, observed, write_atomic


def watch_once(project) -> list[str]:
    res = project.spawn("watch", "--once")
    assert res.returncode == 0, res.stderr
    return res.stdout.splitlines()


def test_a_document_naming_another_agent_is_refused(project):
    project.ok("card", "add", "theirs")
    project.ok("claim", "LX-2", agent="a2")
    write_atomic(
        project.root / "out" / "forged.loopx.json", doc("I am a2, honest", card="LX-2", agent="a2", tokens=10**6)
    )
    out = watch_once(project)
    assert [l for l in out if l.startswith("refused")] == [
        f"refused out/forged.loopx.json [LX-2]: out/forged.loopx.json is in the watch folder of w1 ({project.root / 'out'}) but names agent a2"
    ]
    store = project.store()
    try:
        (err,) = events(store, "ingest_error")
        assert err.data["code"] == "agent_mismatch" and err.data["agent"] == "a2" and err.card == 2
        assert "name w1 in the document" in err.data["hint"]
        assert evidence(store) == []
    finally:
        store.close()
    assert project.ok("card", "show", "LX-2")["card"]["quota"]["tokens"]["used"] == 0


def test_in_the_folders_of_several_agents_it_must_be_one_of_them(project):
    project.ok("agent", "add", "w2", "--watch", "out")
    project.ok("card", "add", "two")
    project.ok("claim", "LX-2", agent="w2")
    project.ok("card", "add", "three")
    project.ok("claim", "LX-3", agent="a2")
    out_dir = project.root / "out"
    write_atomic(out_dir / "w2.loopx.json", doc("w2's turn", card="LX-2", agent="w2"))
    write_atomic(out_dir / "a2.loopx.json", doc("a2's turn", card="LX-3", agent="a2"))
    out = watch_once(project)
    assert any(l.startswith("ingested E-1 on LX-2 from out/w2.loopx.json (w2)") for l in out), out
    refusal = [l for l in out if l.startswith("refused")]
    assert len(refusal) == 1 and "watch folder of w1 or w2" in refusal[0] and "names agent a2" in refusal[0]


def test_a_stream_line_naming_another_agent_is_refused_and_the_rest_ingested(project):
    project.ok("card", "add", "theirs")
    project.ok("claim", "LX-2", agent="a2")
    (project.root / "out" / "s.loopx.jsonl").write_text(
        lines(doc("mine", next="a"), doc("forged", card="LX-2", agent="a2"), doc("mine again", next="b"))
    )
    out = watch_once(project)
    assert len([l for l in out if l.startswith("ingested")]) == 2
    assert [l.split(":")[0] for l in out if l.startswith("refused")] == ["refused out/s.loopx.jsonl"]
    assert any(":2 [LX-2]" in l and "names agent a2" in l for l in out), out


def test_an_inbox_document_is_recorded_unverified_and_shown_so(project):
    inbox = project.root / ".loopx" / "inbox"
    write_atomic(inbox / "claim.loopx.json", doc("w1 finished everything", tokens=50, turn_id="t-9"))
    out = watch_once(project)
    assert any(l.startswith("ingested E-1 on LX-1 from .loopx/inbox/claim.loopx.json (w1)") for l in out), out
    log = project.ok("log", "LX-1")
    (ev,) = log["evidence"]
    assert ev["unverified"] is True and ev["agent"] == "w1" and ev["turn_id"].startswith("inbox-")
    assert log["card"]["unverified_evidence"] == 1
    text = project.cli("log", "LX-1", json_out=False).out
    assert "w1 [file, unverified] w1 finished everything" in text
    shown = project.cli("card", "show", "LX-1", json_out=False).out
    assert "evidence 1 (1 unverified: from the inbox, writer not proven)" in shown
    context = project.cli("context", "LX-1", json_out=False).out
    assert "w1 (unverified: from the inbox): w1 finished everything" in context
    added = [e for e in project.ok("events")["events"] if e["kind"] == "evidence_added"]
    assert added[-1]["data"]["unverified"] is True
    # The inbox document took a turn id of its own: w1's real turn t-9 is not pre-empted.
    real = project.ok("writeback", "LX-1", "--summary", "the real turn", "--turn-id", "t-9", agent="w1")
    assert real["evidence"]["id"] == "E-2" and real["evidence"]["unverified"] is False
    assert real["card"]["unverified_evidence"] == 1


def test_an_inbox_document_cannot_release_a_card(project):
    write_atomic(project.root / ".loopx" / "inbox" / "drop.loopx.json", doc("letting go", release=True))
    out = watch_once(project)
    refusal = [l for l in out if l.startswith("refused")]
    assert len(refusal) == 1 and "asks to release the card" in refusal[0]
    c = project.ok("card", "show", "LX-1")["card"]
    assert c["status"] == "active" and c["lease"]["holder"] == "w1" and c["evidence_count"] == 0


def test_a_document_that_is_a_symlink_out_of_the_folder_is_not_read(project, tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    target = write_atomic(elsewhere / "theirs.loopx.json", doc("read through a link", tokens=7))
    (project.root / "out" / "link.loopx.json").symlink_to(target)
    (project.root / "out" / "stream.loopx.jsonl").symlink_to(elsewhere / "secret.txt")
    (elsewhere / "secret.txt").write_text("root:s3cr3t-hash:19000:0:99999:7:::\n")
    out = watch_once(project)
    refusals = sorted(l for l in out if l.startswith("refused"))
    assert len(refusals) == 2 and all("leads outside the project and the watch folder of w1" in l for l in refusals), (
        refusals
    )
    store = project.store()
    try:
        assert evidence(store) == []
        assert all("s3cr3t" not in json.dumps(e.data) for e in events(store, "ingest_error"))
    finally:
        store.close()


def test_an_observed_symlink_out_of_the_project_is_ignored_never_hashed(project, tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("do not hash me\n")
    (project.root / "real.txt").write_text("in the project\n")
    (project.root / "out" / "leak").symlink_to(secret)
    (project.root / "out" / "inner").symlink_to(project.root / "real.txt")
    (project.root / "out" / "made.txt").write_text("made by w1\n")
    watch_once(project)
    store = project.store()
    try:
        seen = {o.path: o.sha256 for o in observed(store)}
        assert seen == {
            "real.txt": hashlib.sha256(b"in the project\n").hexdigest(),
            "out/made.txt": hashlib.sha256(b"made by w1\n").hexdigest(),
        }
        digest = hashlib.sha256(secret.read_bytes()).hexdigest()
        assert all(digest not in json.dumps(e.data) for e in events(store, "artifact_observed"))
    finally:
        store.close()
