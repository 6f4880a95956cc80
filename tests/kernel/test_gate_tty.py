"""Only a person at a terminal answers a gate: a real pseudo-terminal succeeds;
a pipe, or an agent identity even on a terminal, is refused and changes nothing."""

from __future__ import annotations

import json
import os
import pty
import select
import subprocess
import sys
import time

import pytest

from .conftest import held

ANSWER = [sys.executable, "-m", "loopx_core", "gate", "answer", "G-1", "approve", "--note", "looks fine"]


def run_in_pty(argv, env, cwd, timeout=30.0):
    """Run ``argv`` with stdin, stdout and stderr on a pty slave (pty.fork); return (exit code, output)."""
    pid, fd = pty.fork()
    if pid == 0:  # the child: its controlling terminal is the pty
        try:
            os.chdir(cwd)
            os.execvpe(argv[0], argv, env)
        finally:
            os._exit(127)
    out = b""
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([fd], [], [], 0.2)
            if not ready:
                done, status = os.waitpid(pid, os.WNOHANG)
                if done:
                    return os.waitstatus_to_exitcode(status), out.decode(errors="replace")
                continue
            try:
                chunk = os.read(fd, 4096)
            except OSError:  # EIO: the child exited and closed the slave
                break
            if not chunk:
                break
            out += chunk
        else:
            os.kill(pid, 9)
    finally:
        os.close(fd)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status), out.decode(errors="replace")


@pytest.fixture
def asked(team):
    team.ok("card", "add", "push the release")
    held(team, "LX-1", "a2")
    assert team.cli("gate", "ask", "LX-1", "--question", "may I push?", "--scope", "git:push", agent="a2").code == 6
    env = {k: v for k, v in os.environ.items() if k != "LOOPX_AGENT"}
    env.update(LOOPX_DB=team.url, LOOPX_HUMAN="alice", TERM="dumb")
    return team, env


def test_a_person_in_a_terminal_answers_the_gate(asked):
    team, env = asked
    code, out = run_in_pty(ANSWER, env, team.root)
    assert code == 0, out
    assert "G-1 approved by human:alice" in out and "LX-1 is now active" in out
    gate = team.ok("gate", "status", "G-1")["gate"]
    assert gate["status"] == "approved" and gate["answered_by"] == "human:alice" and gate["note"] == "looks fine"
    c = team.ok("card", "show", "LX-1")["card"]
    assert c["status"] == "active" and c["lease"]["holder"] == "a2"
    ev = [e for e in team.ok("events")["events"] if e["kind"] == "gate_answered"][-1]
    assert ev["actor"] == "human:alice"


def test_the_same_command_from_a_pipe_is_refused(asked):
    team, env = asked
    before = team.snapshot()
    piped = subprocess.run(ANSWER, env=env, cwd=team.root, input="y\n", capture_output=True, text=True, timeout=30)
    assert piped.returncode == 10
    assert "terminal" in piped.stderr and "Traceback" not in piped.stderr
    as_json = subprocess.run([*ANSWER, "--json"], env=env, cwd=team.root, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=30)
    assert as_json.returncode == 10 and json.loads(as_json.stdout)["error"]["code"] == "forbidden"
    assert team.snapshot() == before


def test_stdout_on_a_terminal_is_not_enough(asked):
    """A person's terminal on stdout but an agent's pipe on stdin: still refused."""
    team, env = asked
    before = team.snapshot()
    master, slave = os.openpty()
    try:
        proc = subprocess.Popen(ANSWER, env=env, cwd=team.root, stdin=subprocess.PIPE, stdout=slave, stderr=slave)
        proc.communicate(input=b"y\n", timeout=30)
    finally:
        os.close(slave)
        os.close(master)
    assert proc.returncode == 10
    assert team.snapshot() == before


def test_an_agent_identity_is_refused_even_on_a_terminal(asked):
    team, env = asked
    before = team.snapshot()
    code, out = run_in_pty(ANSWER, dict(env, LOOPX_AGENT="a2"), team.root)
    assert code == 10, out
    assert "an agent cannot answer a gate" in out
    assert team.snapshot() == before
    # The gate is still there for the person.
    assert team.cli("gate", "status", "G-1").code == 6


def test_raising_a_budget_through_a_terminal(team):
    team.ok("card", "add", "one", "--max-turns", "1")
    held(team, "LX-1", "a1")
    assert team.ok("writeback", "LX-1", "--summary", "s", agent="a1")["card"]["status"] == "paused"
    env = {k: v for k, v in os.environ.items() if k != "LOOPX_AGENT"}
    env.update(LOOPX_DB=team.url, LOOPX_HUMAN="alice")
    argv = [sys.executable, "-m", "loopx_core", "card", "budget", "LX-1", "--add-turns", "2"]
    before = team.snapshot()
    piped = subprocess.run(argv, env=env, cwd=team.root, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=30)
    assert piped.returncode == 10 and team.snapshot() == before
    code, out = run_in_pty(argv, env, team.root)
    assert code == 0, out
    c = team.ok("card", "show", "LX-1")["card"]
    assert c["status"] == "active" and c["quota"]["turns"]["limit"] == 3
