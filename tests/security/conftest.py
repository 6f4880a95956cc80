"""Attacks, run the way an agent would run them: real ``loopx`` processes
(``board.spawn``), real files and symlinks, real ``loopx watch`` and ``loopx
mcp`` processes. Each test asserts that the attack changes nothing a person
relies on. One module per attack family; every test runs on SQLite and
PostgreSQL unless the attack only exists on one of them.

People's actions go through ``tests.conftest.person`` (one place to switch
how a person proves who they are). The kernel suite's frozen clock and its
fast PostgreSQL schema are reused here."""

from __future__ import annotations

import json

from tests.kernel.conftest import _kernel_pg, clock, pg_url  # noqa: F401  (fixtures: the frozen clock, an emptied schema)


def agent_run(board, agent: str, *argv: str, **kw) -> tuple[int, dict]:
    """``LOOPX_AGENT=agent loopx --json ARGV`` as a cold process: (exit code, its JSON)."""
    proc = board.spawn("--json", *argv, agent=agent, **kw)
    assert "Traceback" not in proc.stderr, proc.stderr
    lines = proc.stdout.strip().splitlines()
    return proc.returncode, (json.loads(lines[-1]) if lines else {})
