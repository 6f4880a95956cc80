"""Every way around `git push` (tests/adapters/test_commands.py's table), run
as the runtime runs the hook: a cold `loopx hook` process per call, Claude
Code's and Codex's payloads. Each must be denied with a gate a person can
answer — the scope the hidden command needs, or `shell:opaque` /
`shell:interactive` when LoopX cannot read what would run."""

from __future__ import annotations

import pytest

from tests.adapters.conftest import deny_reason, payload
from tests.adapters.test_commands import EVASIONS, GUARDED


@pytest.fixture(params=["sqlite"])
def backend(request) -> str:
    """SQLite only: the hook's checks do not depend on the backend (a
    PostgreSQL-only case builds its own board)."""
    return request.param

RUNTIMES = {"claude-code": "claude/pre_tool_use_bash.json", "codex": "codex/pre_tool_use_bash.json"}


@pytest.mark.parametrize("name, command", EVASIONS, ids=[e[0] for e in EVASIONS])
def test_evasion_is_denied_with_a_gate(hooks, working, name, command):
    (working.root / "push.sh").write_text("#!/bin/sh\ngit push origin main\n")
    runtime = "codex" if len(name) % 2 else "claude-code"  # both runtimes, alternately
    res = hooks.spawn(runtime, "pre-tool-use", payload(RUNTIMES[runtime], CWD=str(working.root), COMMAND=command, SESSION="s"))
    assert res.code == 0 and "Traceback" not in res.stderr
    reason = deny_reason(res)
    assert "gate G-1 is opened" in reason
    [gate] = working.ok("gate", "list")["gates"]
    assert gate["scope"] in GUARDED and gate["status"] == "pending" and gate["card"] == "LX-1"


def test_a_person_can_allow_what_the_hook_cannot_read(hooks, working):
    """`shell:opaque` is a scope like any other: approved for the lease, the
    same command runs; rejected, it stays denied."""
    call = payload("claude/pre_tool_use_bash.json", CWD=str(working.root), COMMAND='eval "$(make print-deploy-command)"')
    assert "`shell:opaque`" in deny_reason(hooks.spawn("claude-code", "pre-tool-use", call))
    hooks.answer("G-1")
    allowed = hooks.spawn("claude-code", "pre-tool-use", call)
    assert allowed.out["hookSpecificOutput"]["permissionDecision"] == "allow"
