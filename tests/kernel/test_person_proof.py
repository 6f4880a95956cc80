"""A person proves who they are with their key — never with a terminal, a name
or a missing LOOPX_AGENT (SECURITY.md). Real processes on a real pty: a sealed
key answers once its passphrase is typed; the same command from a pipe, with a
wrong passphrase, with an agent identity, or without the key is refused and
changes nothing."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from loopx_core.authority import keys

from ..conftest import NO_KEY
from ..ptys import on_pty
from .conftest import held

ANSWER = [sys.executable, "-m", "loopx_core", "gate", "answer", "G-1", "approve", "--note", "looks fine"]
PASSPHRASE = "correct horse battery staple"


def run_in_pty(argv, env, cwd, typed: bytes = b"", timeout=60.0):
    """Type ``typed`` once it asks for a passphrase."""
    pending = [typed] if typed else []

    def respond(out: bytes):
        return pending.pop() if pending and b"Passphrase" in out else None

    return on_pty(argv, env, cwd, respond, timeout)


@pytest.fixture
def asked(team, tmp_path):
    """A pending git:push gate, and a second person, alice, whose key is sealed
    with a passphrase and who is one of the board's people."""
    team.ok("card", "add", "push the release")
    held(team, "LX-1", "a2")
    assert team.cli("gate", "ask", "LX-1", "--question", "may I push?", "--scope", "git:push", agent="a2").code == 6
    alice = keys.create(tmp_path / "alice.json", "alice", PASSPHRASE)
    team.ok("person", "add", "alice", keys.b64(alice.public_raw))
    env = {k: v for k, v in os.environ.items() if k != "LOOPX_AGENT"}
    env.update(LOOPX_DB=team.url, LOOPX_KEY=str(alice.path), TERM="dumb")
    return team, env


def test_a_person_types_their_passphrase_and_the_answer_is_signed(asked):
    team, env = asked
    code, out = run_in_pty(ANSWER, env, team.root, typed=(PASSPHRASE + "\n").encode())
    assert code == 0, out
    assert "Passphrase for LoopX key" in out and PASSPHRASE not in out  # asked, not echoed
    assert "G-1 approved by human:alice" in out and "LX-1 is now active" in out
    gate = team.ok("gate", "status", "G-1")["gate"]
    assert gate["status"] == "approved" and gate["answered_by"] == "human:alice" and gate["note"] == "looks fine"
    ev = [e for e in team.ok("events")["events"] if e["kind"] == "gate_answered"][-1]
    assert ev["actor"] == "human:alice" and ev["signed"] is True
    assert team.cli("verify").code == 0


def test_a_wrong_passphrase_is_refused(asked):
    team, env = asked
    before = team.snapshot()
    code, out = run_in_pty(ANSWER, env, team.root, typed=b"guess\n")
    assert code == 10 and "wrong passphrase" in out, out
    assert team.snapshot() == before


def test_a_sealed_key_from_a_pipe_is_refused(asked):
    """No terminal to ask the passphrase on: refused (the pipe cannot type it)."""
    team, env = asked
    before = team.snapshot()
    piped = subprocess.run(
        ANSWER,
        env=env,
        cwd=team.root,
        input=PASSPHRASE + "\n",
        capture_output=True,
        text=True,
        timeout=60,
        start_new_session=True,
    )
    assert piped.returncode == 10, piped
    assert "terminal" in piped.stderr and "Traceback" not in piped.stderr
    as_json = subprocess.run(
        [*ANSWER, "--json"],
        env=env,
        cwd=team.root,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        start_new_session=True,
    )
    assert as_json.returncode == 10 and json.loads(as_json.stdout)["error"]["code"] == "forbidden"
    assert team.snapshot() == before


def test_an_agent_identity_is_refused_even_with_the_key_on_a_terminal(asked):
    team, env = asked
    before = team.snapshot()
    code, out = run_in_pty(ANSWER, dict(env, LOOPX_AGENT="a2"), team.root, typed=(PASSPHRASE + "\n").encode())
    assert code == 10, out
    assert "an agent cannot" in out and "Passphrase" not in out  # refused before asking
    assert team.snapshot() == before
    assert team.cli("gate", "status", "G-1").code == 6


def test_a_terminal_and_a_name_without_the_key_prove_nothing(asked):
    """The attack of the authority issue: `env -u LOOPX_AGENT script -qc 'loopx
    gate answer G-1 approve' /dev/null`, with LOOPX_HUMAN naming the person."""
    team, env = asked
    before = team.snapshot()
    code, out = run_in_pty(ANSWER, dict(env, LOOPX_HUMAN="alice", **NO_KEY), team.root)
    assert code == 10 and "no LoopX key" in out, out
    assert team.snapshot() == before


def test_raising_a_budget_needs_the_key_too(team):
    team.ok("card", "add", "one", "--max-turns", "1")
    held(team, "LX-1", "a1")
    assert team.ok("writeback", "LX-1", "--summary", "s", agent="a1")["card"]["status"] == "paused"
    env = {k: v for k, v in os.environ.items() if k != "LOOPX_AGENT"}
    env.update(LOOPX_DB=team.url)
    argv = [sys.executable, "-m", "loopx_core", "card", "budget", "LX-1", "--add-turns", "2"]
    before = team.snapshot()
    code, out = run_in_pty(argv, dict(env, **NO_KEY), team.root)
    assert code == 10 and team.snapshot() == before, out
    code, out = run_in_pty(argv, env, team.root)  # the tester's own (unsealed) key
    assert code == 0, out
    c = team.ok("card", "show", "LX-1")["card"]
    assert c["status"] == "active" and c["quota"]["turns"]["limit"] == 3


def answer_every_prompt(argv, env, cwd, answer: bytes, timeout=60.0):
    """Type ``answer`` at each prompt (output ending in ": "). Returns (exit
    code, what it printed, how many times it asked)."""
    asked = [0]
    answered_at = [0]

    def respond(out: bytes):
        if out.endswith(b": ") and len(out) > answered_at[0]:
            asked[0] += 1
            answered_at[0] = len(out)
            return answer
        return None

    code, out = on_pty(argv, env, cwd, respond, timeout)
    return code, out, asked[0]


def test_init_asks_a_new_passphrase_twice_and_signs_with_the_key_it_made(tmp_path):
    """`init` without a key: a new passphrase, typed again, and the board is
    signed with that key at once — no third prompt."""
    env = {k: v for k, v in os.environ.items() if k not in ("LOOPX_AGENT", "LOOPX_DB", "LOOPX_NOW")}
    env.update(LOOPX_KEY=str(tmp_path / "key" / "key.json"), TERM="dumb")
    argv = [sys.executable, "-m", "loopx_core", "init", "--objective", "ship it"]
    code, out, asked = answer_every_prompt(argv, env, tmp_path, (PASSPHRASE + "\n").encode())
    assert code == 0, out
    assert asked == 2 and "New passphrase" in out and "Again" in out and "Passphrase for LoopX key" not in out, out
    assert "created board" in out and PASSPHRASE not in out
    found = keys.read(tmp_path / "key" / "key.json")
    assert found.sealed and found.unlock(PASSPHRASE).fingerprint == found.fingerprint
    verified = subprocess.run(
        [sys.executable, "-m", "loopx_core", "verify"],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert verified.returncode == 0, verified
