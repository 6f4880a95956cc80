"""Opening the board and following it never imports peewee nor the models: a
fresh process imports the board (loopx_tui.app), opens a seeded board in a
worker thread and reads it as the board does — the snapshot, a filtered page
of the owner view, more of a column, one card, the changes since the start
and a gate's brief — on the record layer's plain SQL (DESIGN §9, contract
``board-reads-without-orm``). A PostgreSQL board is read on libpq itself
(store/libpq.py): neither peewee nor psycopg there either (#42)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from tests.conftest import person_ok
from tests.kernel.conftest import held

PROBE = """
import json, sys, threading
import loopx_tui.app
from loopx_tui.reads import BoardReader, open_store
from loopx_core.ops.board_pages import CardFilter
from loopx_core.store.discovery import parse_target

out = {}

def read():
    store = open_store(parse_target(sys.argv[1], "flag"))
    reader = BoardReader(store, lambda: 0.0)
    snap = reader.snapshot("status", {"ready": 10, "active": 10, "needs_you": 10, "blocked": 10, "done": 10})
    page = reader.page("owner", {"a1": 10, None: 10}, CardFilter(words=("login",), owners=("a1",)))
    more = reader.more("status", "ready", 1, 5, CardFilter())
    reader.card_filter, reader.by_owner = CardFilter(statuses=("active",)), True
    delta = reader.delta(0)
    brief = reader.gate_brief(snap.pending_gates[0].id)
    out["read"] = {
        "cards": snap.page.tally.total(), "on_page": len(snap.page.cards), "runners": [r.agent for r in snap.runners],
        "owner_page": sorted(c.id for c in page.cards), "more": [c.id for c in more], "card": reader.card(2).title,
        "delta": [delta.seq == snap.seq, len(delta.cards), delta.agents is not None, delta.runners is not None, delta.shown.total()],
        "brief": [brief.gate.question, brief.card.id, brief.evidence.summary],
    }
    store.close()

worker = threading.Thread(target=read)
worker.start()
worker.join()
out["loaded"] = [m for m in ("peewee", "loopx_core.store.models", "loopx_core.store.orm", "psycopg") if m in sys.modules]
print(json.dumps(out))
"""


def test_opening_and_following_the_board_imports_neither_peewee_nor_the_models(team):
    team.ok("card", "add", "login form")
    team.ok("card", "add", "billing page")
    team.ok("card", "add", "login tests")
    team.ok("card", "add", "spare")
    held(team, "LX-1", "a1")
    team.ok("writeback", "LX-1", "--summary", "drew the form", agent="a1")
    assert team.cli("gate", "ask", "LX-1", "--question", "ship?", agent="a1").code == 6
    held(team, "LX-3", "a1")
    person_ok(team, "runner", "pause", "a1")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    proc = subprocess.run(
        [sys.executable, "-c", PROBE, team.url], cwd=team.root, env=env, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["read"] == {
        "cards": 4,
        "on_page": 4,
        "runners": ["a1"],
        "owner_page": [1, 3],
        "more": [4],
        "card": "billing page",
        "delta": [True, 4, True, True, 1],
        "brief": ["ship?", 1, "drew the form"],
    }
    assert out["loaded"] == []
