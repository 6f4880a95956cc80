"""A phone's answer is checked offline like any decision: ``loopx verify``
(and an export's) re-checks the assertion with the device's key; a rewritten
answer, even with its hash recomputed, counts for nothing."""

from __future__ import annotations

import json
import sqlite3

from loopx_core.authority import chain

from .conftest import pair, serving, tap
from .test_attacks import ask, status


def test_a_phone_answer_verifies_offline_and_a_rewritten_one_is_named(team, page, tmp_path):
    device = pair(team, page)
    ask(team)
    with serving(team) as server:
        page.goto(server.url)
        assert tap(page, 'button.yes[data-gate="G-1"]') == "G-1 approved ✓"
    report = team.ok("verify")["verify"]
    assert report["ok"] and report["signed"] >= 3, report
    export = tmp_path / "board.json"
    export.write_text(json.dumps(team.ok("export")))
    assert team.ok("verify", "--file", str(export))["verify"]["ok"]  # offline: the export alone
    con = sqlite3.connect(team.db)
    seq, prev, at, actor, card, kind, data, op_id, key = con.execute(
        "SELECT seq, prev, at, actor, card, kind, data, op_id, key FROM event WHERE kind = 'gate_answered'"
    ).fetchone()
    assert key == device["device"]
    doc = json.loads(data)
    assert doc["phone"]["gate"] == "G-1" and doc["phone"]["answer"] == "approved"
    # The answer turned around, the decision with it, the hash recomputed: the passkey never signed that.
    doc["answer"] = doc["phone"]["answer"] = "rejected"
    doc["phone"]["decision"] = "reject"
    text = chain.data_text(doc)
    con.execute(
        "UPDATE event SET data = ?, hash = ? WHERE seq = ?",
        (text, chain.event_hash(prev, seq, at, actor, card, kind, text, op_id, key), seq),
    )
    con.commit()
    con.close()
    out = team.cli("verify")
    assert out.code == 11
    named = [p["what"] for p in out.data["verify"]["problems"] if p["seq"] == seq]
    assert any("device signature does not verify" in what for what in named), out.data
    assert status(team, "G-1") == "pending"  # the row says approved; no valid signature backs it


def test_a_long_running_process_sees_a_device_paired_after_it_looked(team, page):
    from loopx_core.authority.trust import EVENT_COLUMNS, EventRow

    pair(team, page, label="first")
    ask(team, "first?")
    ask(team, "second?")
    store = team.store()  # a runner's or the board's: it keeps its view of the people
    try:

        def answer_row(gate: str) -> EventRow:
            rows = store.query(f"SELECT {EVENT_COLUMNS} FROM event WHERE kind = 'gate_answered' ORDER BY seq", ())
            return next(r for r in map(EventRow._make, rows) if r.payload()["gate"] == gate)

        with serving(team) as server:
            page.goto(server.url)
            assert tap(page, 'button.yes[data-gate="G-1"]') == "G-1 approved ✓"
            with store.read():
                assert store.trust().check(answer_row("G-1")) is None
            # Another phone: a new authenticator, paired while this process holds its view.
            page.send("WebAuthn.removeVirtualAuthenticator", {"authenticatorId": page.authenticator})
            page.add_authenticator()
            second = pair(team, page, label="second")
            page.goto(server.url)
            assert tap(page, 'button.yes[data-gate="G-2"]') == "G-2 approved ✓"
        with store.read():
            row = answer_row("G-2")
            assert row.key == second["device"] and store.trust().check(row) is None
    finally:
        store.close()
    assert status(team, "G-2") == "approved"
