"""List bench: `loopx --json card list --status ready` (the first page, as an
agent runs it) as the board grows 100 → 50,000 cards, each size as a median
ratio to the floor sampled interleaved. Target at 50,000: ≤ 4×.

The big board is built quickly with bulk inserts through the store (one
transaction of Card.insert_many, the operators' row shape), not one CLI call
per card; a quarter of the cards are ready, as on a board in use.

Usage: python bench/list_bench.py [--runs N] [--sizes 100,1000,10000,50000]
"""

from __future__ import annotations

import argparse
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import floor_argv, person_env

LOOPX = [sys.executable, "-m", "loopx_core"]
_script = Path(sys.executable).with_name("loopx")
if _script.exists():
    LOOPX = [str(_script)]
STATUSES = ["ready"] * 5 + [
    "backlog",
    "active",
    "waiting",
    "paused",
    "blocked",
    "done",
    "done",
    "done",
    "done",
    "done",
    "done",
    "done",
    "done",
    "done",
    "cancelled",
]


def grow(db: Path, upto: int, have: int, rnd: random.Random) -> None:
    """Add cards ``have+1 .. upto`` in one transaction."""
    from loopx_core.rules import clock
    from loopx_core.store.backends import Store
    from loopx_core.store.discovery import parse_target
    from loopx_core.store.models import Card

    store = Store.open(parse_target(str(db), "flag"))
    now = clock.now()

    def body():
        rows = []
        for i in range(have, upto):
            status = rnd.choice(STATUSES)
            holder = f"agent-{i % 8}" if status in ("active", "waiting", "paused") else None
            rows.append(
                {
                    "title": f"Card {i}: "
                    + rnd.choice(["fix", "add", "refactor", "test", "ship"])
                    + " "
                    + rnd.choice(["login", "billing", "search", "cache", "docs"]),
                    "status": status,
                    "priority": rnd.randint(0, 4),
                    "assignee": holder,
                    "needs": [],
                    "todos": [{"id": 1, "text": "a todo", "done": False}],
                    "lease_holder": holder,
                    "lease_token": 1 if holder else None,
                    "fence": 1 if holder else 0,
                    "lease_expires": now + 86400 if holder else None,
                    "lease_seconds": 86400 if holder else None,
                    "paused_reason": "budget" if status == "paused" else None,
                    "blocked_reason": "gate rejected" if status == "blocked" else None,
                    "body": "Some words about the card. " * 8,
                    "created_at": now - 86400 + i,
                    "updated_at": now - 3600 + i,
                    "done_at": now - 100 if status == "done" else None,
                }
            )
        for chunk in range(0, len(rows), 500):
            Card.insert_many(rows[chunk : chunk + 500]).execute()

    store.run(body)
    store.close()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=9)
    ap.add_argument("--sizes", default="100,1000,10000,50000")
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    rnd = random.Random(16)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        env = person_env(folder)
        db = folder / ".loopx" / "board.db"
        env["LOOPX_DB"] = str(db)
        subprocess.run(LOOPX + ["init"], env=env, cwd=folder, check=True, capture_output=True)
        floor = floor_argv(folder)
        argv = LOOPX + ["--json", "card", "list", "--status", "ready"]
        have = 0
        print(f"{'cards':>7} {'floor ms':>9} {'list ms':>8} {'ratio':>6} {'JSON bytes':>11}  (target at 50,000: <= 4x)")
        for size in sizes:
            grow(db, size, have, rnd)
            have = size
            floor_ms, list_ms = [], []
            out = b""
            for i in range(args.runs + 1):
                start = time.perf_counter()
                subprocess.run(floor, env=env, cwd=folder, check=True)
                f = (time.perf_counter() - start) * 1000
                start = time.perf_counter()
                out = subprocess.run(argv, env=env, cwd=folder, check=True, capture_output=True).stdout
                ms = (time.perf_counter() - start) * 1000
                if i:  # the first round warms the page cache
                    floor_ms.append(f)
                    list_ms.append(ms)
            fm, lm = statistics.median(floor_ms), statistics.median(list_ms)
            print(f"{size:>7} {fm:>9.1f} {lm:>8.1f} {lm / fm:>5.2f}x {len(out):>11}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
