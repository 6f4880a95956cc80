"""The PreToolUse hook, a cold process on every tool call, allows a call a gate
approved on the phone by checking the passkey's assertion with ``cryptography``
alone: it never imports py_webauthn (0.26–0.57 s a call) nor what it loads
(docs/PERFORMANCE.md; devices.assertion_fails)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from tests.adapters.conftest import payload

from .conftest import pair, serving, tap

HEAVY = ("webauthn", "cbor2", "asn1crypto", "OpenSSL", "pydantic", "peewee")
PROBE = (
    "import io, json, sys\n"
    "sys.stdin = io.StringIO(sys.argv[1])\n"
    "from loopx_core.cli.main import main\n"
    "main(['hook', 'claude-code', 'pre-tool-use'])\n"
    f"heavy = {HEAVY!r}\n"
    "sys.stderr.write(json.dumps(sorted({m.split('.')[0] for m in sys.modules if m.split('.')[0] in heavy})))\n"
)


def hook(board, command: str) -> tuple[str, list[str]]:
    """A cold PreToolUse hook process for a Bash ``command`` of agent a2: what it said, what it loaded."""
    call = payload("claude/pre_tool_use_bash.json", CWD=str(board.root), COMMAND=command)
    env = {**os.environ, "LOOPX_DB": board.url, "LOOPX_AGENT": "a2", "PYTHONPATH": os.pathsep.join(sys.path)}
    proc = subprocess.run(
        [sys.executable, "-c", PROBE, json.dumps(call)],
        cwd=board.root,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    return proc.stdout, json.loads(proc.stderr.strip().splitlines()[-1])


def test_the_hook_allows_a_call_approved_on_the_phone_without_importing_webauthn(team, page):
    pair(team, page)
    team.ok("card", "add", "Fix the date parser", "--next", "make the test pass")
    team.ok("next", "--claim", agent="a2")
    said, loaded = hook(team, "git push")  # opens G-1 for git:push
    assert '"deny"' in said and "G-1" in said and loaded == [], (said, loaded)
    with serving(team) as server:
        page.goto(server.url)
        assert tap(page, 'button.yes[data-gate="G-1"]') == "G-1 approved ✓"
    assert team.ok("gate", "status", "G-1")["gate"]["note"].startswith("answered on phone")
    said, loaded = hook(team, "git push")  # the retry: the device's signature checked, cold
    assert '"allow"' in said and loaded == [], (said, loaded)
