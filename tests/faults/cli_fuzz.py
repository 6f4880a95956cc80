"""Random argument vectors over the verb table (shapes/verbs.py), run in-process
through ``cli.main`` against a board: no call may end in exit 1 (an internal
error), and a refusal must leave the board as it was (#30).

Seeded and bounded: ``fuzz(board, seed, count, seconds)`` stops at whichever
comes first. Used by tests/faults/test_cli_fuzz.py and bench/cli_fuzz.py.
"""

from __future__ import annotations

import io
import json
import random
import sys
import time
from contextlib import redirect_stderr, redirect_stdout

# Surfaces that run until stopped (a phone's pairing waits for the phone until it
# expires), and the verbs that replace the tester's own key file (the session's
# key) — not fuzzed; their inputs are tested elsewhere (tests/phone for the phone's).
SKIPPED = {
    ("board", None),
    ("demo", None),
    ("watch", None),
    ("mcp", None),
    ("hook", None),
    ("run", None),
    ("serve", None),
    ("phone", "pair"),
    ("key", "init"),
    ("key", "passphrase"),
    ("key", "trust"),
}
WAITING_FLAGS = {"--follow", "--wait"}  # they wait for a human or for events: not in a fuzz loop
REFUSALS = {2, 3, 4, 5, 10, 11, 12}
CHANGES_ON_REFUSAL = {"verify_failed"}  # done's failed verify is recorded (evidence), then refused

NASTY = [
    "",
    " ",
    "-",
    "--",
    "0",
    "1",
    "-1",
    "2",
    "3",
    "99999999999999999999999",
    "1e400",
    "nan",
    "inf",
    "-inf",
    "0.5",
    "LX-1",
    "LX-2",
    "lx-1",
    "LX-0",
    "LX--1",
    "LX-99999999999999999999",
    "G-1",
    "G-2",
    "H-1",
    "E-1",
    "a1",
    "a2",
    "nobody",
    "x" * 300,
    "y" * 5000,
    "\udcff\udcfe",
    "\x1b]0;owned\x07",
    "\x1b[2J",
    "\r\n",
    "line\nbreak",
    "💥",
    "名前",
    "/dev/zero",
    "/dev/null",
    "/dev/urandom",
    "/",
    ".",
    "..",
    "../../etc/passwd",
    "/proc/self/mem",
    "sqlite:///",
    "postgresql://nobody@127.0.0.1:1/none",
    "approve",
    "reject",
    "card",
    "agent",
    "board",
    "1h",
    "30s",
    "0s",
    "-5m",
    "99999999999d",
    "2026-13-45",
    "backlog",
    "ready",
    "cancelled",
    "done",
    "md",
    "json",
    "git:push",
    "fs:write:/",
    "*",
    "{}",
    "[]",
    '{"summary": 1}',
    "bash",
    "zsh",
    "claude-code",
    "codex",
]


def _value(rng: random.Random) -> str:
    roll = rng.random()
    if roll < 0.8:
        return rng.choice(NASTY)
    if roll < 0.9:
        return "".join(chr(rng.randrange(1, 0x3000)) for _ in range(rng.randrange(1, 40)))
    return str(rng.randrange(-(10**6), 10**6))


def vectors(seed: int):
    """An endless, reproducible stream of argument vectors."""
    from loopx_core.shapes import verbs

    table = [
        v for key, v in sorted(verbs.VERBS.items(), key=lambda kv: (kv[0][0], kv[0][1] or "")) if key not in SKIPPED
    ]
    rng = random.Random(seed)
    while True:
        verb = rng.choice(table)
        argv = [verb.verb] + ([verb.sub] if verb.sub else [])
        for names, options in verb.args:
            name = names[0]
            if name in WAITING_FLAGS:
                continue
            if not name.startswith("-"):
                if rng.random() < 0.95:
                    argv.append(_value(rng))
                continue
            if rng.random() < 0.5:
                continue
            if options.get("action") in ("store_true", "store_false"):
                argv.append(name)
            else:
                argv += [name, _value(rng)]
        if rng.random() < 0.05:
            argv.insert(rng.randrange(len(argv) + 1), _value(rng))  # a stray word
        yield argv


class Finding:
    def __init__(self, argv, code, out, err):
        self.argv, self.code, self.out, self.err = argv, code, out, err

    def __repr__(self) -> str:
        return f"exit {self.code}: loopx {' '.join(map(repr, self.argv))}\n  {self.out.strip()[:300]}\n  {self.err.strip()[:300]}"


def run_once(argv: list[str], agent: str | None) -> tuple[int, str, str]:
    from loopx_core.cli.main import main

    out, err = io.StringIO(), io.StringIO()
    saved = sys.stdin
    sys.stdin = io.StringIO("")
    try:
        with redirect_stdout(out), redirect_stderr(err):
            code = main(["--json", *argv])
    finally:
        sys.stdin = saved
    return code, out.getvalue(), err.getvalue()


def fuzz(state, seed: int, count: int, seconds: float, agent_share: float = 0.5) -> dict:
    """Run up to ``count`` vectors (or ``seconds``). ``state()`` returns what must
    not change on a refusal. Returns the figures and the findings."""
    import os

    rng = random.Random(seed ^ 0x5EED)
    internal, changed, codes = [], [], {}
    started, ran = time.monotonic(), 0
    for argv in vectors(seed):
        if ran >= count or time.monotonic() - started > seconds:
            break
        agent = rng.choice(["a1", "a2"]) if rng.random() < agent_share else None
        if agent:
            os.environ["LOOPX_AGENT"] = agent
        else:
            os.environ.pop("LOOPX_AGENT", None)
        before = state()
        code, out, err = run_once(argv, agent)
        ran += 1
        codes[code] = codes.get(code, 0) + 1
        if code == 1:
            internal.append(Finding(argv, code, out, err))
        elif code in REFUSALS:
            try:
                kind = json.loads(out.strip().splitlines()[-1])["error"]["code"] if out.strip() else ""
            except (ValueError, KeyError, TypeError):
                kind = "?"
            if kind not in CHANGES_ON_REFUSAL and state() != before:
                changed.append(Finding(argv, code, out, err))
    os.environ.pop("LOOPX_AGENT", None)
    return {
        "calls": ran,
        "seconds": round(time.monotonic() - started, 1),
        "codes": dict(sorted(codes.items())),
        "internal": internal,
        "changed": changed,
    }


TABLES = ("card", "event", "evidence", "gate", "agent", "handoff", "setting", "person", "operation")


def board_state(board):
    """What a refusal must leave as it was: SQLite's ``data_version`` (it moves on
    any other connection's commit), else the log's head and every table's size."""
    if board.backend == "sqlite":
        from tests import board_sql

        observer = board_sql.connect(board.db)
        return lambda: observer.execute("PRAGMA data_version").fetchone()[0]
    import psycopg

    conn = psycopg.connect(board.url.replace("postgresql://", "postgresql://", 1), autocommit=True)
    sql = " UNION ALL ".join(f"SELECT '{t}', count(*) FROM \"{t}\"" for t in TABLES)

    def state():
        return conn.execute(sql).fetchall(), conn.execute('SELECT max(seq) FROM "event"').fetchone()

    return state


def prepare(board) -> None:
    """Two agents, a few cards in each state, a gate: something for the verbs to act on."""
    board.ok("agent", "add", "a1", "--can", "git:push")
    board.ok("agent", "add", "a2")
    for title in ("one", "two", "three", "four"):
        board.ok("card", "add", title)
    board.ok("claim", "LX-1", agent="a1")
    board.ok("writeback", "LX-1", "--summary", "started", agent="a1")
    board.cli("gate", "ask", "LX-1", "--question", "may I?", "--scope", "git:push", agent="a1")
