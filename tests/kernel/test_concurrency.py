"""Real processes: eight agents drain one board, and an agent killed mid-turn
loses its card only when its lease runs out."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections import defaultdict

import pytest

from .conftest import card, events, kinds

# One agent: a plain shell-style loop over cold `python -m loopx_core` calls.
AGENT = r"""
import json, os, subprocess, sys, time
agent, go = sys.argv[1], sys.argv[2]
loopx = [sys.executable, "-m", "loopx_core", "--json"]
log = []
def call(*args):
    p = subprocess.run(loopx + list(args) + ["--agent", agent], capture_output=True, text=True)
    log.append({"args": list(args), "code": p.returncode, "out": p.stdout, "err": p.stderr})
    return p
while not os.path.exists(go):  # start together
    time.sleep(0.005)
while True:
    p = call("next", "--claim")
    if p.returncode == 9:
        break
    if p.returncode != 0:
        continue  # reported from the log
    key = json.loads(p.stdout)["card"]["id"]
    call("writeback", key, "--summary", agent + " did " + key, "--turn-id", agent + "-" + key)
    call("done", key, "--summary", agent + " finished " + key)
print(json.dumps(log))
"""

AGENTS = 8
CARDS = 24


def test_eight_agent_processes_drain_the_board_each_card_done_once(board):
    if board.backend != "sqlite":
        # ~30 s of cold psycopg processes on this machine; the PostgreSQL drain
        # (agents on several hosts) is tests/pg/test_pg_board.py.
        pytest.skip("the PostgreSQL drain lives in tests/pg")
    for i in range(AGENTS):
        board.ok("agent", "add", f"ag-{i}")
    for i in range(CARDS):
        board.ok("card", "add", f"card {i}", "--priority", str(i % 3))
    go = board.root / "go"
    env = dict(os.environ, LOOPX_DB=board.url)
    env.pop("LOOPX_AGENT", None)
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", AGENT, f"ag-{i}", str(go)],
            cwd=board.root,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for i in range(AGENTS)
    ]
    go.write_text("go")
    logs = {}
    for i, p in enumerate(procs):
        out, err = p.communicate(timeout=240)
        assert p.returncode == 0, err
        logs[f"ag-{i}"] = json.loads(out)

    calls = [c for log in logs.values() for c in log]
    bad = [c for c in calls if c["code"] not in (0, 9) or (c["code"] == 9 and c["args"][0] != "next")]
    assert bad == [], bad[:3]
    assert not [c for c in calls if "database is locked" in (c["out"] + c["err"]).lower() or "Traceback" in c["err"]]
    # Each agent ended on `idle`, and did only work it was given.
    for agent, log in logs.items():
        assert log[-1]["args"] == ["next", "--claim"] and log[-1]["code"] == 9

    evs = events(board)
    by_card = defaultdict(list)
    for e in evs:
        if e["card"]:
            by_card[e["card"]].append(e)
    assert sorted(by_card, key=lambda k: int(k[3:])) == [f"LX-{i}" for i in range(1, CARDS + 1)]
    for key, seq in by_card.items():
        ks = [e["kind"] for e in seq]
        assert ks == ["card_added", "claimed", "evidence_added", "done_reported", "done"], (key, ks)
        claimer = seq[1]["data"]["agent"]
        assert seq[2]["actor"] == seq[3]["actor"] == seq[4]["actor"] == f"agent:{claimer}"  # the winner did the work
    # Each agent's claims happen one at a time: claimed, then done, before its next claim.
    for agent in logs:
        mine = [e["kind"] for e in evs if e["actor"] == f"agent:{agent}" and e["kind"] in ("claimed", "done")]
        assert mine == ["claimed", "done"] * (len(mine) // 2), (agent, mine)
    worked_by = {e["data"]["agent"] for e in evs if e["kind"] == "claimed"}
    assert len(worked_by) > 1  # the work really was shared
    cards = board.ok("card", "list", "--full")["cards"]
    assert [c["status"] for c in cards] == ["done"] * CARDS
    assert all(c["evidence_count"] == 2 and c["lease"] is None for c in cards)
    seqs = [e["seq"] for e in evs]
    assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs)


def test_an_agent_killed_mid_turn_loses_its_card_when_the_lease_runs_out(board, clock):
    board.ok("agent", "add", "doomed")
    board.ok("agent", "add", "heir")
    board.ok("card", "add", "long job")
    # A real agent process claims, writes its first step, then hangs mid-turn.
    script = (
        "import subprocess, sys, time\n"
        "run = lambda *a: subprocess.run([sys.executable, '-m', 'loopx_core', *a, '--agent', 'doomed'], check=True, stdout=subprocess.DEVNULL)\n"
        "run('next', '--claim', '--lease', '2m')\n"
        "run('writeback', 'LX-1', '--summary', 'half way', '--todo-add', 'finish')\n"
        "print('mid-turn', flush=True)\n"
        "time.sleep(600)\n"
    )
    env = dict(os.environ, LOOPX_DB=board.url)
    env.pop("LOOPX_AGENT", None)
    proc = subprocess.Popen([sys.executable, "-c", script], cwd=board.root, env=env, stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "mid-turn"
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
    assert proc.returncode == -signal.SIGKILL
    c = card(board, "LX-1")
    assert c["status"] == "active" and c["lease"]["holder"] == "doomed"

    clock.advance(60)  # the lease still runs: nobody else may take it
    assert board.spawn("--json", "next", "--claim", agent="heir").returncode == 9
    clock.advance(61)  # T0 + 121 s: past the expiry
    taken = board.spawn("--json", "next", "--claim", agent="heir")
    assert taken.returncode == 0, taken.stderr
    data = json.loads(taken.stdout)
    assert data["card"]["id"] == "LX-1" and data["lease"]["holder"] == "heir" and data["lease"]["token"] == 2
    assert data["card"]["todos"] == [{"id": 1, "text": "finish", "done": False}]  # the continuation survived
    exp = [e for e in events(board, "LX-1") if e["kind"] == "lease_expired"]
    assert [e["data"] for e in exp] == [{"holder": "doomed", "token": 1}]

    # The zombie comes back (a restarted runtime with the same identity): every write is refused.
    for argv in (
        ["writeback", "LX-1", "--summary", "back from the dead"],
        ["done", "LX-1", "--summary", "x"],
        ["heartbeat", "LX-1"],
    ):
        zombie = board.spawn("--json", *argv, agent="doomed")
        assert zombie.returncode == 5, zombie.stderr
        assert "heir" in json.loads(zombie.stdout)["error"]["message"]
    assert (
        board.spawn("--json", "writeback", "LX-1", "--summary", "finished", "--todo-done", "1", agent="heir").returncode
        == 0
    )
    assert board.spawn("--json", "done", "LX-1", "--summary", "done", agent="heir").returncode == 0
    assert kinds(board, "LX-1").count("done") == 1
    assert [e["agent"] for e in board.ok("log", "LX-1")["evidence"]] == ["doomed", "heir", "heir"]
