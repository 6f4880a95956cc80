"""Claims that need real processes: eight agents racing, a killed agent, a person at a terminal."""

from __future__ import annotations

import json
import os
import pty
import select
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


def _run_in_pty(argv, env, cwd, timeout=30):
    pid, fd = pty.fork()
    if pid == 0:  # child: stdin/stdout/stderr are the pty slave
        os.chdir(cwd)
        os.execvpe(argv[0], argv, env)
    out = b""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.5)
        if ready:
            try:
                chunk = os.read(fd, 4096)
            except OSError:
                break
            if not chunk:
                break
            out += chunk
        elif os.waitpid(pid, os.WNOHANG) != (0, 0):
            break
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status), out.decode(errors="replace")


def test_a_person_answers_a_gate_through_a_terminal(team):
    team.ok("card", "add", "one")
    team.ok("claim", "LX-1", agent="a2")
    assert team.cli("gate", "ask", "LX-1", "--question", "push?", "--scope", "git:push", agent="a2").code == 6
    env = dict(os.environ, LOOPX_DB=team.url, LOOPX_HUMAN="alice")
    env.pop("LOOPX_AGENT", None)
    argv = [sys.executable, "-m", "loopx_core", "gate", "answer", "G-1", "approve", "--note", "go"]
    # Without a terminal, and with an agent identity, the same command is refused.
    before = team.snapshot()
    piped = subprocess.run(argv, env=env, cwd=team.root, stdin=subprocess.DEVNULL, capture_output=True, text=True)
    assert piped.returncode == 10 and "terminal" in piped.stderr
    code, _ = _run_in_pty(argv, dict(env, LOOPX_AGENT="a2"), team.root)
    assert code == 10
    assert team.snapshot() == before
    code, out = _run_in_pty(argv, env, team.root)
    assert code == 0, out
    gate = team.ok("gate", "status", "G-1")["gate"]
    assert gate["status"] == "approved" and gate["answered_by"] == "human:alice"
