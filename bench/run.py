"""Kernel benchmark: what an agent pays per turn, and a concurrent drain.

Prints, for this machine:
- the cold-process median of every verb an agent calls per turn (card add,
  claim, next, heartbeat, writeback, context, gate ask, gate status, card list
  --json, release, handoff, accept, done), as a ratio to a bare python process
  that opens SQLite, inserts a row and commits (the floor), sampled before every
  call so machine noise hits both alike. Target: <= 3x. (The hooks:
  hook_bench.py; lists at 100 -> 50,000 cards: list_bench.py.)
- a person's verbs on the same board (card add, person list), the same way.
- 8 concurrent agent processes draining 24 cards: wall time, throughput, errors.

Usage: python bench/run.py [--runs N] [--agents 8] [--cards 24] [--db URL]
Then runs the other benches in this folder that exist (hook, hook worst case, mcp, watch, tui, runner, hosts, phone) unless --kernel-only.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import floor_argv, person_env

HERE = Path(__file__).resolve().parent
LOOPX = [sys.executable, "-m", "loopx_core"]
_script = Path(sys.executable).with_name("loopx")
if _script.exists():
    LOOPX = [str(_script)]  # what agents actually run: the console script


def timed(argv, env, cwd) -> tuple[float, int]:
    start = time.perf_counter()
    proc = subprocess.run(argv, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    return (time.perf_counter() - start) * 1000, proc.returncode


def setup_board(folder: Path, db: str | None, cards: int) -> dict:
    env = person_env(folder)
    env.pop("LOOPX_AGENT", None)
    env["LOOPX_DB"] = db or str(folder / ".loopx" / "board.db")
    run = lambda *a: subprocess.run(LOOPX + list(a), env=env, cwd=folder, check=True, capture_output=True)
    run("init")
    for i in range(8):
        run("agent", "add", f"agent-{i}")
    run("agent", "add", "solo")
    return env


# One agent turn cycle, every per-turn verb once (the hooks: hook_bench.py).
# LX-{card} is the card the cycle adds; solo holds it, hands it to solo2 who finishes it.
CYCLE = [
    ("card add", "solo", ["card", "add", "bench card {i}"], {0}),
    ("claim", "solo", ["claim", "{card}"], {0}),
    ("next", "solo", ["next"], {0}),
    ("heartbeat", "solo", ["heartbeat", "{card}"], {0}),
    (
        "writeback",
        "solo",
        ["writeback", "{card}", "--summary", "turn {i}", "--next", "step {i}", "--tokens", "100"],
        {0},
    ),
    ("context", "solo", ["context", "{card}"], {0}),
    ("gate ask", "solo", ["gate", "ask", "{card}", "--question", "push {i}?", "--scope", "git:push"], {0}),
    ("gate status", "solo", ["gate", "status", "G-{gate}"], {0}),
    ("card list", "solo", ["--json", "card", "list", "--status", "ready"], {0}),
    ("release", "solo", ["release", "{card}"], {0}),
    ("claim", "solo", ["claim", "{card}"], {0}),
    ("handoff", "solo", ["handoff", "{card}", "--to", "solo2", "--summary", "over to you {i}"], {0}),
    ("accept", "solo2", ["accept", "{card}"], {0}),
    ("done", "solo2", ["done", "{card}", "--summary", "done {i}"], {0}),
]
VERBS = list(dict.fromkeys(name for name, *_ in CYCLE))
# The same board's person (no LOOPX_AGENT: their key signs), after the cycles:
# a person's verb should pay what the agent's pays, not load the ORM.
PERSON = [
    ("card add (person)", ["card", "add", "a person's card {i}"]),
    ("person list", ["person", "list"]),
]


def per_turn(runs: int, db: str | None) -> dict:
    """Median ms of each per-turn verb and of the floor, sampled interleaved:
    the floor runs before every verb, so noise on this shared machine hits both."""
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        env = setup_board(folder, db, 0)
        subprocess.run(
            LOOPX + ["agent", "add", "solo", "--can", "git:push"], env=env, cwd=folder, check=True, capture_output=True
        )
        subprocess.run(LOOPX + ["agent", "add", "solo2"], env=env, cwd=folder, check=True, capture_output=True)
        floor = floor_argv(folder)
        times: dict[str, list[float]] = {"floor": [], **{v: [] for v in VERBS}}
        failures: list[str] = []
        for i in range(runs + 2):
            for name, agent, argv, codes in CYCLE:
                fms, _ = timed(floor, env, folder)
                args = [a.format(i=i, card=f"LX-{i + 1}", gate=i + 1) for a in argv]
                ms, code = timed(LOOPX + args, dict(env, LOOPX_AGENT=agent), folder)
                if code not in codes:
                    failures.append(f"{name} exit {code}")
                if i >= 2:  # the first rounds warm the page cache and .pyc files
                    times["floor"].append(fms)
                    times[name].append(ms)
        for i in range(runs + 2):
            for name, argv in PERSON:
                fms, _ = timed(floor, env, folder)
                ms, code = timed(LOOPX + [a.format(i=i) for a in argv], env, folder)
                if code != 0:
                    failures.append(f"{name} exit {code}")
                if i >= 2:
                    times["floor"].append(fms)
                    times.setdefault(name, []).append(ms)
        med = {k: statistics.median(v) for k, v in times.items()}
        names = VERBS + [name for name, _ in PERSON]
        return {
            "runs": runs,
            "floor_ms": med["floor"],
            "verbs": {v: (med[v], med[v] / med["floor"]) for v in names},
            "failures": failures,
        }


AGENT_LOOP = r"""
import json, subprocess, sys
loopx, agent = json.loads(sys.argv[1]), sys.argv[2]
errors, done = 0, 0
def call(*args):
    p = subprocess.run(loopx + ["--json", *args, "--agent", agent], capture_output=True, text=True)
    return p.returncode, (json.loads(p.stdout) if p.stdout.strip() else {})
while True:
    code, out = call("next", "--claim")
    if code == 9:
        break
    if code != 0:
        errors += 1
        continue
    card = out["card"]["id"]
    code, _ = call("writeback", card, "--summary", f"{agent} worked on {card}", "--next", "finish")
    errors += code != 0
    code, _ = call("done", card, "--summary", "done")
    errors += code != 0
    done += code == 0
print(json.dumps({"agent": agent, "errors": errors, "done": done}))
"""


def drain(agents: int, cards: int, db: str | None) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        env = setup_board(folder, db, cards)
        for i in range(cards):
            subprocess.run(LOOPX + ["card", "add", f"card {i}"], env=env, cwd=folder, check=True, capture_output=True)
        start = time.perf_counter()
        procs = [
            subprocess.Popen(
                [
                    sys.executable,
                    "-c",
                    AGENT_LOOP,
                    json.dumps(LOOPX),
                    f"agent-{i % 8}" if agents <= 8 else f"agent-{i % 8}",
                ],
                env=env,
                cwd=folder,
                stdout=subprocess.PIPE,
                text=True,
            )
            for i in range(agents)
        ]
        results = [json.loads(p.communicate()[0]) for p in procs]
        wall = time.perf_counter() - start
        events, since = [], 0
        while since is not None:  # a page at a time (next_since)
            out = json.loads(
                subprocess.run(
                    LOOPX + ["--json", "events", "--since", str(since)],
                    env=env,
                    cwd=folder,
                    capture_output=True,
                    text=True,
                    check=True,
                ).stdout
            )
            events += out["events"]
            since = out["next_since"]
        done_events = [e["card"] for e in events if e["kind"] == "done"]
        return {
            "agents": agents,
            "cards": cards,
            "seconds": round(wall, 2),
            "cards_per_second": round(cards / wall, 2),
            "errors": sum(r["errors"] for r in results),
            "done_once": len(done_events) == cards == len(set(done_events)),
        }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--agents", type=int, default=8)
    ap.add_argument("--cards", type=int, default=24)
    ap.add_argument("--db", help="a postgresql:// URL to bench that backend instead of SQLite")
    ap.add_argument("--kernel-only", action="store_true")
    args = ap.parse_args()
    backend = "postgresql" if args.db else "sqlite"
    print(f"== kernel ({backend}) ==")
    turn = per_turn(args.runs, args.db)
    print(
        f"floor (python + sqlite insert/commit): {turn['floor_ms']:.1f} ms median of {turn['runs'] * (len(CYCLE) + len(PERSON))}, sampled before every call"
    )
    for verb, (ms, ratio) in turn["verbs"].items():
        print(f"loopx {verb:<17} {ms:6.1f} ms = {ratio:4.2f}x floor (target <= 3x)")
    print(
        f"errors: {len(turn['failures'])}"
        + (f" ({', '.join(sorted(set(turn['failures'])))})" if turn["failures"] else "")
    )
    d = drain(args.agents, args.cards, args.db)
    print(
        f"drain: {d['agents']} agents, {d['cards']} cards in {d['seconds']} s = {d['cards_per_second']} cards/s, errors {d['errors']}, every card done once: {d['done_once']}"
    )
    if args.kernel_only:
        return 0
    for name in (
        "pg_bench.py",
        "hook_bench.py",
        "list_bench.py",
        "hook_worst.py",
        "mcp_bench.py",
        "watch_bench.py",
        "tui_bench.py",
        "runner_bench.py",
        "hosts_bench.py",
        "phone_bench.py",  # (needs chromium: says so and stops without it)
    ):
        path = HERE / name
        if path.exists():
            print(f"\n== {name} ==", flush=True)
            subprocess.run([sys.executable, str(path)])
    return 0


if __name__ == "__main__":
    sys.exit(main())
