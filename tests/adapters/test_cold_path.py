"""The per-turn verbs stay cold: a whole agent turn cycle, each verb in a fresh
process as an agent runs it, and none of them imports pydantic (the cold-path
pre-checks in loopx_core/shapes/inputs.py accept what agents send) or the board, the
MCP SDK or the watcher — nor peewee or the models (the operators run on
store/records.py over sqlite3, or on a PostgreSQL board over libpq itself:
store/libpq.py, so neither psycopg nor what it loads, asyncio and
importlib.metadata, issue #42). Bad input still reaches pydantic for its message."""

from __future__ import annotations

import json
import os
import subprocess
import sys

PROBE = (
    "import sys\n"
    "from loopx_core.cli.main import main\n"
    "code = main(sys.argv[1:])\n"
    "import os\n"
    "heavy = ('pydantic', 'loopx_core.shapes.schemas', 'mcp', 'textual', 'watchfiles', 'loopx_tui', 'peewee', 'loopx_core.store.models', 'argcomplete')\n"
    "heavy += ('psycopg', 'asyncio', 'importlib.metadata')\n"
    "heavy += tuple(os.environ.get('PROBE_ALSO', '').split())\n"
    "sys.stderr.write('\\nLOADED ' + ' '.join([str(code)] + [m for m in heavy if m in sys.modules]))\n"
)

CYCLE = [
    ("a1", ["card", "add", "from an agent", "--needs", "git:push", "--priority", "1", "--max-usd", "3"]),
    ("a1", ["claim", "LX-1", "--lease", "20m"]),
    ("a1", ["next"]),
    ("a1", ["heartbeat", "LX-1"]),
    ("a1", ["writeback", "LX-1", "--summary", "did a thing", "--next", "more", "--tokens", "100"]),
    ("a1", ["context", "LX-1"]),
    ("a1", ["gate", "ask", "LX-1", "--question", "push?", "--scope", "git:push", "--option", "yes"]),
    ("a1", ["gate", "status", "G-1"]),
    ("a1", ["monitor", "LX-1", "--every", "10m"]),
    ("a1", ["release", "LX-1"]),
    ("a1", ["claim", "LX-1"]),
    ("a1", ["handoff", "LX-1", "--to", "a2", "--summary", "over to you", "--done", "half", "--pending", "rest"]),
    ("a2", ["accept", "LX-1"]),
    ("a2", ["done", "LX-1", "--summary", "finished", "--verify-timeout", "5m"]),
]


def _run(board, agent: str | None, argv: list[str], also: tuple[str, ...] = ()) -> tuple[int, list[str]]:
    """The exit code and which of the heavy modules (and ``also``) the verb loaded
    (``agent`` None: the person, whose key signs)."""
    env = {**os.environ, "LOOPX_DB": board.url, "PYTHONPATH": os.pathsep.join(sys.path), "PROBE_ALSO": " ".join(also)}
    env.pop("LOOPX_AGENT", None)
    if agent is not None:
        env["LOOPX_AGENT"] = agent
    proc = subprocess.run(
        [sys.executable, "-c", PROBE, "--json", *argv],
        cwd=board.root,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    code, *loaded = proc.stderr.rsplit("LOADED ", 1)[-1].split()
    return int(code), loaded


def test_no_per_turn_verb_imports_pydantic_nor_peewee_nor_psycopg(team):
    """On a PostgreSQL board too: a per-turn verb there cost 4x the same verb on
    SQLite, most of it importing psycopg, asyncio, importlib.metadata and peewee (#42).
    A project that is no git repository never loads the git plumbing (issue #26: workspaces cost it nothing)."""
    expect: list[str] = []
    for agent, argv in CYCLE:
        code, loaded = _run(team, agent, argv, also=("loopx_core.workspace.git",))
        assert code == 0 and loaded == expect, (argv, code, loaded)
    assert team.ok("card", "show", "LX-1")["card"]["status"] == "done"
    assert team.cli("verify").code == 0  # the chain the cold verbs wrote holds


def test_a_persons_verbs_pay_no_more_than_an_agents(team, tmp_path):
    """A person's ``card add`` used to load peewee and the models (the people's
    rows) and cryptography's serialization formats: 4-5x the floor against the
    agent's 1.9x (bench/run.py prints both). Their people verbs read and write
    through store/records.py too."""
    from loopx_core.authority import keys

    other = keys.create(tmp_path / "other.json", "bo", None)
    public = json.loads(other.path.read_text())["public"]
    expect: list[str] = []
    also = ("cryptography.hazmat.primitives.serialization",)
    for argv in (
        ["card", "add", "from a person", "--priority", "1"],
        ["person", "add", "bo", public],
        ["person", "list"],
    ):
        code, loaded = _run(team, None, argv, also)
        assert code == 0 and loaded == expect, (argv, code, loaded)
    fingerprint = keys.fingerprint(keys.unb64(public))
    assert [p["name"] for p in team.ok("person", "list")["people"]] == ["tester", "bo"]
    assert _run(team, None, ["person", "revoke", fingerprint], also) == (0, expect)
    assert [p["revoked"] for p in team.ok("person", "list")["people"]] == [False, True]
    assert team.ok("card", "show", "LX-1")["card"]["title"] == "from a person"
    assert team.cli("verify").code == 0  # the people's events and rows still agree


def test_polling_a_gate_and_listing_cards_read_sqlite_without_peewee(team):
    """The reads an agent repeats between turns (plainread.py); a PostgreSQL board takes the kernel's path, on libpq."""
    team.ok("card", "add", "one")
    team.ok("claim", "LX-1", agent="a1")
    assert team.cli("gate", "ask", "LX-1", "--question", "deploy?", "--scope", "deploy:prod", agent="a1").code == 6
    expect: list[str] = []
    assert _run(team, "a1", ["gate", "status", "G-1"]) == (6, expect)
    assert _run(team, "a1", ["card", "list", "--status", "waiting"]) == (0, expect)
    assert _run(team, "a1", ["card", "list", "--full"], also=("loopx_core.ops.cards",))[1] == expect + [
        "loopx_core.ops.cards"
    ]  # whole cards: the kernel


def test_bad_input_still_gets_pydantics_message(team):
    team.ok("card", "add", "one")
    code, loaded = _run(team, "a1", ["card", "add", "x", "--priority", "9"])
    assert code == 3 and "pydantic" in loaded
    res = team.cli("card", "add", "x", "--priority", "9")
    assert res.code == 3 and "priority" in res.data["error"]["message"]
    assert json.dumps(res.data)  # the documented error object


STOP_PROBE = (
    "import sys\n"
    "from loopx_core.cli.main import main\n"
    "main(['hook', 'claude-code', 'stop'])\n"
    "heavy = ('pydantic', 'loopx_core.shapes.schemas', 'peewee', 'loopx_core.store.models', 'mcp', 'textual', 'watchfiles', 'loopx_tui', 'psycopg', 'asyncio', 'importlib.metadata')\n"
    "sys.stderr.write('\\nLOADED ' + ' '.join([m for m in heavy if m in sys.modules]))\n"
)


def _stop(board, agent: str, transcript) -> tuple[str, list[str]]:
    """A cold Stop hook process: what it answered, and which heavy modules it loaded."""
    from .conftest import payload

    data = payload(
        "claude/stop.json", CWD=str(board.root), TRANSCRIPT=str(transcript) if transcript else "/nonexistent/t.jsonl"
    )
    env = {**os.environ, "LOOPX_DB": board.url, "LOOPX_AGENT": agent, "PYTHONPATH": os.pathsep.join(sys.path)}
    proc = subprocess.run(
        [sys.executable, "-c", STOP_PROBE],
        input=json.dumps(data),
        cwd=board.root,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    return proc.stdout, proc.stderr.rsplit("LOADED ", 1)[-1].split()


def test_the_stop_hook_checks_and_charges_a_turn_without_peewee(team, transcript):
    """Every turn end runs the Stop hook: it charges the transcript's usage and asks
    "did this turn report?" (ops/turns.py on store/records.py) — on SQLite without
    peewee or the models, on PostgreSQL without psycopg either (store/libpq.py)."""
    expect: list[str] = []
    team.ok("card", "add", "one")
    team.ok("claim", "LX-1", agent="a1")
    out, loaded = _stop(team, "a1", transcript.path)  # charged, but a charge is not a report
    assert "loopx writeback LX-1 --agent a1" in out and loaded == expect, (out, loaded)
    assert [e["source"] for e in team.ok("log", "LX-1")["evidence"]] == ["hook"]
    team.ok("writeback", "LX-1", "--summary", "did it", agent="a1")
    assert _stop(team, "a1", transcript.path) == ("", expect)
    out, loaded = _stop(team, "a1", None)  # no transcript: since the session's previous turn (it ended above)
    assert "loopx writeback LX-1 --agent a1" in out and loaded == expect, (out, loaded)
    assert team.cli("verify").code == 0
