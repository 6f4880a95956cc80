"""Claims that need real processes: eight agents racing, a killed agent, a person at a terminal."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from tests.agent_loop import AGENT_LOOP as AGENT



def test_eight_agent_processes_drain_the_board_each_card_done_once(board):
    if board.backend != "sqlite":
        pytest.skip("the PostgreSQL drain is tests/pg (agents on several hosts)")
    for i in range(8):
        board.ok("agent", "add", f"agent-{i}")
    for i in range(24):
        board.ok("card", "add", f"card {i}")
    env = dict(os.environ, LOOPX_DB=board.url)
    procs = [subprocess.Popen([sys.executable, "-c", AGENT, f"agent-{i}"], cwd=board.root, env=env, stdout=subprocess.PIPE, text=True) for i in range(8)]
    errors = [json.loads(p.communicate(timeout=300)[0]) for p in procs]
    assert errors == [[]] * 8, errors
    events = board.ok("events")["events"]
    done = [e["card"] for e in events if e["kind"] == "done"]
    assert sorted(done) == sorted(f"LX-{i}" for i in range(1, 25))
    assert len([e for e in events if e["kind"] == "claimed"]) == 24
    assert all(c["status"] == "done" for c in board.ok("card", "list")["cards"])


def test_a_killed_agent_loses_its_card_when_the_lease_runs_out(board):
    board.ok("agent", "add", "doomed")
    board.ok("agent", "add", "heir")
    board.ok("card", "add", "long job")
    t0 = 1_800_000_000
    # A real agent process claims, then hangs mid-turn until it is SIGKILLed.
    script = (
        "import subprocess, sys, time\n"
        f"subprocess.run([sys.executable, '-m', 'loopx_core', 'next', '--claim', '--agent', 'doomed', '--lease', '2m'], check=True, stdout=subprocess.DEVNULL)\n"
        "print('claimed', flush=True)\n"
        "time.sleep(600)\n"
    )
    env = dict(os.environ, LOOPX_DB=board.url, LOOPX_NOW=str(t0))
    proc = subprocess.Popen([sys.executable, "-c", script], cwd=board.root, env=env, stdout=subprocess.PIPE, text=True)
    assert "claimed" in proc.stdout.readline()
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=10)
    still = board.cli("next", "--claim", agent="heir", env={"LOOPX_NOW": str(t0 + 60)})
    assert still.code == 9  # the lease still runs: nobody else may take it
    later = {"LOOPX_NOW": str(t0 + 121)}
    taken = board.ok("next", "--claim", agent="heir", env=later)
    assert taken["card"]["id"] == "LX-1" and taken["lease"]["holder"] == "heir"
    zombie = board.spawn("writeback", "LX-1", "--summary", "back from the dead", "--json", agent="doomed", env=later)
    assert zombie.returncode == 5 and "heir" in json.loads(zombie.stdout)["error"]["message"]
