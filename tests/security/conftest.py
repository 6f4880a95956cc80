"""Attacks, run the way an agent would run them: real ``loopx`` processes,
``script`` for a pseudo-terminal, the real ``sqlite3``/``psql`` clients on the
board. An agent is the same OS user as the person; what it lacks is the
person's key (sealed with a passphrase, or kept from it by the runtime's
sandbox): its environment has LOOPX_AGENT set and no usable LOOPX_KEY.

One module per attack family; every test runs on SQLite and PostgreSQL unless
the attack only exists on one of them. People's actions go through
``tests.conftest.person`` / the tester's key. The kernel suite's frozen clock
and its fast PostgreSQL schema are reused here."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys

import pytest

from tests import board_sql
from tests.adapters.conftest import hooks, working  # noqa: F401  (fixtures: a hook runner, an agent holding a card)
from tests.kernel.conftest import _kernel_pg, clock, pg_url  # noqa: F401  (fixtures: the frozen clock, an emptied schema)

from ..conftest import NO_KEY


def agent_env(board, agent: str | None = "a2", **extra) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("LOOPX_AGENT",)}
    env.update(LOOPX_DB=board.url, **NO_KEY)
    if agent:
        env["LOOPX_AGENT"] = agent
    env.update(extra)
    return env


def shell(board, command: str, env: dict, timeout: float = 60, stdin: str | None = None) -> subprocess.CompletedProcess:
    """``command`` in a shell in the project folder, ``loopx`` being this LoopX (``stdin``: what it reads)."""
    loopx = f"{shlex.quote(sys.executable)} -m loopx_core"
    command = command.replace("loopx ", loopx + " ") if command != "loopx mcp" else f"{loopx} mcp"
    return subprocess.run(
        ["bash", "-c", command], cwd=board.root, env=env, capture_output=True, text=True, timeout=timeout, input=stdin
    )


def in_script(board, command: str, env: dict, typed: str | None = None) -> subprocess.CompletedProcess:
    """``script -qc COMMAND /dev/null``: the command on a fresh pseudo-terminal
    (``typed``: what the agent types into it)."""
    if not shutil.which("script"):
        pytest.fail("util-linux `script` is needed for the pty attacks (apt-get install bsdutils)")
    loopx = f"{shlex.quote(sys.executable)} -m loopx_core"
    feed = {"input": typed} if typed is not None else {"stdin": subprocess.DEVNULL}
    return subprocess.run(
        ["script", "-qec", command.replace("loopx ", loopx + " "), "/dev/null"],
        cwd=board.root,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        **feed,
    )


def at_the_prompt(board, command: str, env: dict, typed: str, prompt: str = "assphrase") -> subprocess.CompletedProcess:
    """Like ``in_script``, but ``typed`` is typed only once ``prompt`` shows, at
    each prompt: text typed *ahead* is flushed by the prompt itself (getpass's
    TCSAFLUSH), so typing ahead would race the prompt and, lost, wait forever."""
    from ..ptys import on_pty

    argv = [sys.executable, "-m", "loopx_core", *shlex.split(command)[1:]]
    answered = [0]

    def respond(out: bytes) -> bytes | None:
        if out.count(prompt.encode()) > answered[0]:
            answered[0] += 1
            return typed.encode()
        return None

    code, out = on_pty(argv, env, board.root, respond)
    return subprocess.CompletedProcess(argv, code, out, "")


def sqlite_client(db, *commands: str) -> list[str]:
    """SQLite's own client on ``db``, waiting for the board's write lock like a person's would."""
    return board_sql.client(db, *commands)


def sql(board, statement: str) -> subprocess.CompletedProcess:
    """Edit the board behind LoopX's back with the database's own client."""
    if board.backend == "sqlite":
        proc = subprocess.run(sqlite_client(board.db, statement), capture_output=True, text=True, timeout=120)
    else:
        client = shutil.which("psql")
        if not client:
            pytest.fail("psql is needed for the SQL attacks on PostgreSQL (apt-get install postgresql-client)")
        proc = subprocess.run(
            [client, board.url, "-v", "ON_ERROR_STOP=1", "-c", statement], capture_output=True, text=True, timeout=60
        )
    assert proc.returncode == 0, proc.stderr
    return proc


def sql_rows(board, query: str) -> list[tuple]:
    store = board.store()
    try:
        return [tuple(r) for r in store.query(query)]
    finally:
        store.close()


@pytest.fixture
def asked(team):
    """LX-1 held by a2 (no scopes) with a pending git:push gate G-1."""
    team.ok("card", "add", "push the release")
    assert team.ok("claim", "LX-1", agent="a2")["action"] == "work"
    assert team.cli("gate", "ask", "LX-1", "--question", "may I push?", "--scope", "git:push", agent="a2").code == 6
    return team


def agent_run(board, agent: str, *argv: str, **kw) -> tuple[int, dict]:
    """``LOOPX_AGENT=agent loopx --json ARGV`` as a cold process: (exit code, its JSON)."""
    proc = board.spawn("--json", *argv, agent=agent, **kw)
    assert "Traceback" not in proc.stderr, proc.stderr
    lines = proc.stdout.strip().splitlines()
    return proc.returncode, (json.loads(lines[-1]) if lines else {})
