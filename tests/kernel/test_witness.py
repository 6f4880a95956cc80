"""The witness (authority/witness.py): a long-lived process of the person's
remembers the head of the log it saw, moves this machine's anchor on, and says
so when the log goes backwards — a log cut short, an event rewritten, an older
copy put back — whether it saw the head itself or another witness on this
machine did. Several processes write the anchor file at once."""

from __future__ import annotations

import json
import subprocess
import sys

from loopx_core.authority import witness
from tests.security.conftest import sql


def observed(board, w: witness.Witness | None = None):
    w = w or witness.Witness()
    store = board.store()
    try:
        return w, w.observe(store), witness.store_key(store)
    finally:
        store.close()


def head(board) -> witness.Head:
    store = board.store()
    try:
        with store.read():
            return witness.head(store.query)
    finally:
        store.close()


def test_a_growing_log_moves_the_anchor_on(team):
    w, gone, uid = observed(team)
    assert gone is None and witness.read_anchor(uid) == head(team)
    team.ok("card", "add", "one")
    assert w.observe(team.store()) is None
    assert witness.read_anchor(uid) == head(team) == w.seen


def test_a_log_cut_short_is_seen_by_the_witness_that_saw_it(team, monkeypatch):
    team.ok("card", "add", "one")
    w, _, uid = observed(team)
    seen = head(team)
    sql(team, f"DELETE FROM event WHERE seq = {seen.seq}")
    monkeypatch.delenv("LOOPX_NOW")  # (nothing on the board is trusted now, not even its test clock)
    _, gone, _ = observed(team, w)
    assert gone == witness.Gone(seen.seq, gone.what) and "is gone" in gone.what and "this process" in gone.what
    # Even with this machine's anchor rewritten to match, the process remembers.
    witness.advance(uid, head(team), replace=True)
    _, again, _ = observed(team, w)
    assert again == gone


def test_a_rewritten_head_and_a_rollback_another_witness_saw_are_named(team, monkeypatch):
    team.ok("card", "add", "one")
    observed(team)  # another process of the person's (the board, a runner) saw this head and left
    seen = head(team)
    sql(
        team,
        f"UPDATE event SET hash = (CASE WHEN substr(hash, 1, 1) = '0' THEN '1' ELSE '0' END) || substr(hash, 2) WHERE seq = {seen.seq}",
    )
    monkeypatch.delenv("LOOPX_NOW")  # (nothing on the board is trusted now, not even its test clock)
    _, gone, _ = observed(team)  # a new witness: this machine's anchor tells it
    assert gone.seq == seen.seq and "differs" in gone.what and "this machine" in gone.what
    report = team.cli("verify")
    assert report.code == 11 and any(
        p["seq"] == seen.seq and "this machine saw" in p["what"] for p in report.data["verify"]["problems"]
    )


def test_the_anchor_never_goes_backwards_unless_a_person_replaces_it(tmp_path):
    witness.advance("b1", witness.Head(5, "h5"))
    witness.advance("b1", witness.Head(3, "h3"))
    assert witness.read_anchor("b1") == witness.Head(5, "h5")
    witness.advance("b1", witness.Head(3, "h3"), replace=True)
    assert witness.read_anchor("b1") == witness.Head(3, "h3")


def test_observing_reads_two_rows_not_the_chain(team):
    """The per-turn cost: the remembered seq and the head, each one indexed row."""
    for n in range(5):
        team.ok("card", "add", f"card {n}")
    w = witness.Witness()
    store = team.store()
    asked = []
    real = store.query

    def query(sql_text, params=()):
        asked.append(sql_text)
        return real(sql_text, params)

    store.query = query
    try:
        w.observe(store)
        team.ok("card", "add", "one more")
        asked.clear()
        w.observe(store)
    finally:
        store.close()
    event_reads = [q for q in asked if "FROM event" in q]
    assert event_reads and all("WHERE seq = ?" in q or "LIMIT 1" in q for q in event_reads), event_reads


WRITER = """
import sys
from loopx_core.authority import witness
me, rounds = sys.argv[1], int(sys.argv[2])
for n in range(1, rounds + 1):
    witness.advance(me, witness.Head(n, f"{me}-{n}"))
    witness.advance("shared", witness.Head(n * 10 + int(me[1:]), f"shared-{me}-{n}"))
"""


def test_several_processes_write_the_anchor_at_once_and_none_is_lost(tmp_path):
    """Runners and the board move the anchor concurrently: each write is a
    read-modify-write of the whole file, under a lock, landed with os.replace."""
    writers = [subprocess.Popen([sys.executable, "-c", WRITER, f"w{i}", "60"]) for i in range(4)]
    assert [p.wait(timeout=120) for p in writers] == [0, 0, 0, 0]
    with open(witness.anchor_file(), encoding="utf-8") as fh:
        doc = json.load(fh)
    assert {k: v["seq"] for k, v in doc.items()} == {"w0": 60, "w1": 60, "w2": 60, "w3": 60, "shared": 603}
