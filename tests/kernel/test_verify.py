"""`loopx verify`: the chain, the signatures and the decisions of a board —
clean boards verify, upgraded boards say what predates signing, exports verify
elsewhere, revoked keys sign nothing (SECURITY.md "The log")."""

from __future__ import annotations

import json

import pytest

from loopx_core.authority import keys
from loopx_core.ops import gates

from ..conftest import downgrade_sqlite
from .conftest import held


def test_a_board_in_use_verifies(team):
    team.ok("card", "add", "one", "--max-turns", "5")
    held(team, "LX-1", "a2")
    team.cli("gate", "ask", "LX-1", "--question", "push?", "--scope", "git:push", agent="a2")
    team.ok("gate", "answer", "G-1", "approve", "--remember", "agent")
    team.ok("writeback", "LX-1", "--summary", "pushed", agent="a2")
    team.ok("price", "set", "m", "--input", "1", "--output", "2")
    report = team.ok("verify")["verify"]
    assert report["ok"] and report["problems"] == [] and report["first_bad"] is None
    events = team.ok("events")["events"]
    assert report["events"] == len(events)
    assert report["signed"] == sum(e["signed"] for e in events) == sum(e["actor"].startswith("human:") for e in events)
    assert team.cli("verify", json_out=False).out.startswith("ok: ")


def test_an_export_verifies_on_another_machine_and_a_tampered_one_does_not(team, tmp_path, monkeypatch):
    team.ok("card", "add", "one")
    held(team, "LX-1", "a1")
    team.ok("writeback", "LX-1", "--summary", "a step", agent="a1")
    root = team.ok("person", "list")["people"][0]["fingerprint"]
    path = tmp_path / "board.json"
    path.write_text(json.dumps(team.ok("export")))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "elsewhere"))  # a machine that never saw the board
    assert team.cli("verify", "--file", str(path), "--root", root).code == 0
    unpinned = team.ok("verify", "--file", str(path))["verify"]
    assert any("--root" in n for n in unpinned["notes"])
    wrong = team.cli("verify", "--file", str(path), "--root", "0" * 16)
    assert wrong.code == 11 and "not the" in wrong.data["verify"]["first_bad"]["what"]
    doc = json.loads(path.read_text())
    rows = doc["chain"]["tables"]["event"]["rows"]
    cols = doc["chain"]["tables"]["event"]["columns"]
    victim = next(r for r in rows if r[cols.index("kind")] == "evidence_added")
    victim[cols.index("data")] = victim[cols.index("data")].replace("a step", "nothing")
    path.write_text(json.dumps(doc))
    bad = team.cli("verify", "--file", str(path), "--root", root)
    assert bad.code == 11 and bad.data["verify"]["first_bad"]["seq"] == victim[0]
    (tmp_path / "junk.json").write_text("{}")
    assert team.cli("verify", "--file", str(tmp_path / "junk.json")).code == 2


def test_a_revoked_key_signs_nothing_after_its_revocation(team, tmp_path):
    bob_file = keys.create(tmp_path / "bob.json", "bob", None)
    team.ok("person", "add", "bob", keys.b64(bob_file.public_raw))
    team.ok("card", "add", "one")
    held(team, "LX-1", "a2")
    team.cli("gate", "ask", "LX-1", "--question", "push?", "--scope", "git:push", agent="a2")
    team.ok("person", "revoke", bob_file.fingerprint)
    refused = team.cli("gate", "answer", "G-1", "approve", env={"LOOPX_KEY": str(bob_file.path)})
    assert refused.code == 10 and "revoked" in refused.data["error"]["message"]
    # Bob's key signs anyway, behind the CLI's back: the approval does not hold.
    store = team.store()
    try:
        gates.answer(store, 1, "approve", bob_file.unlock())
    finally:
        store.close()
    assert team.cli("gate", "status", "G-1").code == 6
    report = team.cli("verify")
    assert report.code == 11 and any("revoked" in p["what"] for p in report.data["verify"]["problems"])


def test_the_last_person_cannot_be_revoked_and_people_are_listed(team):
    me = team.ok("person", "list")["people"]
    assert len(me) == 1 and me[0]["root"] and me[0]["trusted"] and me[0]["name"] == "tester"
    res = team.cli("person", "revoke", me[0]["fingerprint"])
    assert res.code == 5 and "last person" in res.data["error"]["message"]
    assert team.cli("person", "add", "x", "not-a-key").code == 3
    assert team.cli("person", "add", "x", keys.b64(b"\0" * 32), agent="a1").code == 10


def test_a_board_from_before_signing_opens_chained_and_says_what_is_unsigned(board, monkeypatch):
    if board.backend != "sqlite":
        pytest.skip("the downgrade helper edits a SQLite file")
    board.ok("agent", "add", "old", "--can", "git:push")
    board.ok("card", "add", "one")
    downgrade_sqlite(board.db, 2)
    from loopx_core.authority import trust

    trust.pin_path().unlink()  # a board from before signing was never pinned on this machine (nor its place)
    monkeypatch.delenv("LOOPX_NOW")  # an old board is no test board: its clock is the real one
    report = board.ok("verify")["verify"]  # opening it upgrades it
    assert report["ok"], report
    notes = " ".join(report["notes"])
    assert "predate signing" in notes and "agent old" in notes
    # Its old scopes are not honoured until a person confirms them.
    held(board, "LX-1", "old")
    ask = board.cli("gate", "ask", "LX-1", "--question", "push?", "--scope", "git:push", agent="old")
    assert ask.code == 6
    assert board.cli("agent", "add", "old", "--can", "git:push").code == 10  # no people yet: nobody can sign
    assert board.ok("init")["board"]["created"] is False  # the person takes the board: its first person
    board.ok("agent", "add", "old", "--can", "git:push")
    again = board.cli("gate", "ask", "LX-1", "--question", "push now?", "--scope", "git:push", agent="old")
    assert again.code == 0 and again.data["gate"]["answered_by"] == "capability:old"  # confirmed: honoured
    board.ok("gate", "answer", "G-1", "approve")
    assert board.ok("verify")["verify"]["ok"]


def test_a_copy_on_another_backend_verifies(team, tmp_path):
    from loopx_core.authority import verify
    from loopx_core.store.backends import Store
    from loopx_core.store.discovery import parse_target

    team.ok("card", "add", "one", "--max-turns", "3")
    held(team, "LX-1", "a1")
    team.ok("writeback", "LX-1", "--summary", "s", agent="a1")
    target = tmp_path / "copy.db"
    assert team.cli("migrate", "--to", str(target)).code == 0
    copy = Store.open(parse_target(str(target), "flag"))
    try:
        assert verify.verify_store(copy).ok
    finally:
        copy.close()
