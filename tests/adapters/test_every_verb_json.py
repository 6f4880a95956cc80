"""README: "every command takes --json and then prints exactly one JSON object".
Held over the whole verb table: every verb runs once, in a scenario that gives it
something to act on, as a real cold ``loopx`` process, and its standard output
must be one JSON object and nothing else — on success and on a refusal alike.
A verb added to the table without a line here fails the test."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from loopx_core.shapes import verbs

# The runtimes' own protocols: their stdout belongs to the runtime that reads it.
EXEMPT = {
    ("hook", None): "the runtime's hook protocol (the hook's answer is the runtime's JSON, or nothing)",
    ("mcp", None): "JSON-RPC over stdio (one JSON message per line, for the MCP client)",
}

AGENT = "a1"
SPAWNED = {("run", None)}  # a runner of its own: signals, child processes


def scenario(tmp: Path) -> list[tuple[tuple[str, str | None], list[str], dict]]:
    """(verb, argv, how): the whole table in an order where each verb has what it needs."""
    other_key = tmp / "other-key.json"
    steps = [
        (("where", None), ["where"], {}),
        (("completion", None), ["completion", "bash"], {}),
        (("init", None), ["--db", str(tmp / "second" / "board.db"), "init", "--objective", "a second board"], {}),
        (("agent", "add"), ["agent", "add", "a1", "--can", "git:push"], {}),
        (("agent", "list"), ["agent", "list"], {}),
        (("agent", "show"), ["agent", "show", "a1"], {}),
        (("card", "add"), ["card", "add", "First"], {}),
        (("card", "list"), ["card", "list"], {}),
        (("card", "show"), ["card", "show", "LX-1"], {}),
        (("price", "set"), ["price", "set", "m1", "--input", "1", "--output", "2"], {}),
        (("price", "list"), ["price", "list"], {}),
        (("price", "remove"), ["price", "remove", "m1"], {}),
        (("key", "show"), ["key", "show"], {}),
        (("key", "lock"), ["key", "lock"], {}),
        (("key", "init"), ["key", "init", "--no-passphrase"], {"env": {"LOOPX_KEY": str(other_key)}}),
        (("key", "passphrase"), ["key", "passphrase"], {}),  # no terminal: refused, as JSON
        (("person", "list"), ["person", "list"], {}),
        (("person", "add"), ["person", "add", "other", "@other-key"], {}),
        (("person", "revoke"), ["person", "revoke", "@other-fp"], {}),
        (("key", "trust"), ["key", "trust", "@root-fp"], {}),
        (("policy", "show"), ["policy", "show"], {}),
        (("policy", "sign"), ["policy", "sign"], {}),
        (("dangerous", "set"), ["dangerous", "set", "db:*"], {}),
        (("dangerous", "list"), ["dangerous", "list"], {}),
        (("notify", "set"), ["notify", "set", "--", "/bin/true"], {}),
        (("notify", "show"), ["notify", "show"], {}),
        (("notify", "test"), ["notify", "test"], {}),
        (("next", None), ["next", "--claim"], {"agent": AGENT}),
        (("heartbeat", None), ["heartbeat", "LX-1"], {"agent": AGENT}),
        (("writeback", None), ["writeback", "LX-1", "--summary", "did it"], {"agent": AGENT}),
        (("context", None), ["context", "LX-1", "--format", "json"], {"agent": AGENT}),
        (("gate", "ask"), ["gate", "ask", "LX-1", "--question", "may I?", "--scope", "deploy:prod"], {"agent": AGENT}),
        (("gate", "status"), ["gate", "status", "G-1"], {"agent": AGENT}),
        (("gate", "list"), ["gate", "list"], {}),
        (("gate", "answer"), ["gate", "answer", "G-1", "approve"], {}),
        (("monitor", None), ["monitor", "LX-1", "--every", "1h"], {"agent": AGENT}),
        (("release", None), ["release", "LX-1"], {"agent": AGENT}),
        (("claim", None), ["claim", "LX-1"], {"agent": AGENT}),
        (("card", "add"), ["card", "add", "Second"], {}),
        (("handoff", None), ["handoff", "LX-1", "--to", "a2", "--summary", "yours"], {"agent": AGENT}),
        (("accept", None), ["accept", "LX-1"], {"agent": "a2"}),
        (("done", None), ["done", "LX-1", "--summary", "finished"], {"agent": "a2"}),
        (("card", "budget"), ["card", "budget", "LX-2", "--add-turns", "1"], {}),
        (("card", "window"), ["card", "window", "LX-2", "--every", "1d", "--turns", "5"], {}),
        (("card", "edit"), ["card", "edit", "LX-2", "--next", "the next step"], {}),
        (("card", "assign"), ["card", "assign", "LX-2", "--to", "a2"], {}),
        (("card", "unassign"), ["card", "unassign", "LX-2"], {}),
        (("card", "move"), ["card", "move", "LX-2", "--to", "backlog"], {}),
        (("card", "try"), ["card", "try", "LX-2", "--to", "a2"], {}),
        (("card", "tries"), ["card", "tries", "LX-2"], {}),
        (("card", "keep"), ["card", "keep", "LX-3"], {}),
        (("workspace", "cap"), ["workspace", "cap", "20G"], {}),
        (("log", None), ["log", "LX-1"], {}),
        (("events", None), ["events"], {}),
        (("export", None), ["export"], {}),
        (("verify", None), ["verify"], {}),
        (("runner", "list"), ["runner", "list"], {}),
        (("runner", "pause"), ["runner", "pause", "a1"], {}),
        (("runner", "resume"), ["runner", "resume", "a1"], {}),
        (("runner", "stop"), ["runner", "stop", "a1"], {}),
        (("workspace", "open"), ["workspace", "open", "LX-2"], {}),  # not a git repository: refused, as JSON
        (("workspace", "list"), ["workspace", "list"], {}),
        (
            ("workspace", "start"),
            ["workspace", "start", "LX-2", "--runtime", "claude-code", "--agent", AGENT],
            {},
        ),  # no hooks set up: refused, as JSON
        (("workspace", "archive"), ["workspace", "archive", "LX-2"], {}),
        (("workspace", "gc"), ["workspace", "gc", "--dry-run"], {}),
        (("workspace", "setup"), ["workspace", "setup", "true", "--timeout", "1m"], {}),
        (("card", "add"), ["card", "add", "Third"], {}),  # a ready card for a2's runner's one turn
        (
            ("run", None),
            ["run", "--agent", "a2", "--runtime", "shell", "--turns", "1", "--", sys.executable, "-c", "pass"],
            {},
        ),
        (("watch", None), ["watch", "--once"], {}),
        (("boards", None), ["boards"], {}),
        (("phone", "list"), ["phone", "list"], {}),
        (("phone", "pair"), ["phone", "pair", "--expires", "soon"], {}),  # not a duration: refused, as JSON
        (("phone", "revoke"), ["phone", "revoke", "wa:0000"], {}),  # no such device: refused, as JSON
        (("serve", None), ["serve", "--origin", "http://board.example"], {}),  # http off localhost: refused
        (("board", None), ["board"], {}),
        (("demo", None), ["demo", "--script"], {}),
        (("migrate", None), ["migrate", "--to", str(tmp / "copy.db")], {}),
    ]
    return steps


# Printing does not depend on the store: one backend is enough.
@pytest.mark.parametrize("backend", ["sqlite"])
def test_every_verb_prints_exactly_one_json_object(board, tmp_path):
    board.ok("agent", "add", "a2")
    covered = set()
    key_of = {}
    for verb, argv, how in scenario(tmp_path):
        argv = [resolve(a, key_of, tmp_path) for a in argv]
        env = dict(how.get("env", {}), XDG_DATA_HOME=str(tmp_path / "data"))
        if verb in SPAWNED:
            proc = board.spawn("--json", *argv, agent=how.get("agent"), env=env, timeout=120, stdin=subprocess.DEVNULL)
            code, out, err = proc.returncode, proc.stdout, proc.stderr
        else:  # in-process: the same parsing, dispatch and printing, without a cold start per verb
            res = board.cli(*argv, agent=how.get("agent"), env=env)
            code, out, err = res.code, res.out, res.err
        lines = out.splitlines()
        assert len(lines) == 1, (argv, code, out[-2000:], err[-2000:])
        data = json.loads(lines[0])
        assert isinstance(data, dict), (argv, data)
        assert code in range(0, 12), (argv, code, data)
        covered.add(verb)
        if verb == ("key", "init"):
            key_of["other-key"] = board.cli("key", "show", env={"LOOPX_KEY": str(tmp_path / "other-key.json")}).out
    missing = set(verbs.VERBS) - covered - set(EXEMPT)
    assert not missing, f"verbs with no line in this test's scenario: {sorted(missing, key=str)}"


def resolve(word: str, key_of: dict, tmp: Path) -> str:
    """``@other-key`` / ``@other-fp`` / ``@root-fp``: values only known once the scenario ran that far."""
    if not word.startswith("@"):
        return word
    shown = json.loads(key_of.get("other-key") or "{}")
    if word == "@other-key":
        return shown.get("public_key", "")
    if word == "@other-fp":
        return shown.get("fingerprint", "")
    return shown.get("fingerprint", "")  # trusting a key that is not the root: refused, as JSON
