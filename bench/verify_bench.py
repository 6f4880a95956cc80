"""`loopx verify` on a long history: 50,000 events, one in a hundred signed by
a person, the rest charges on 50 cards (so verify's replay folds them into
each card's counters), built in bulk through the kernel's own event writer. Prints the cold
`loopx verify` time (target: <= 2 s), the floor (python + sqlite insert/commit)
and the ratio, and the per-event cost of chaining on the write path.

Usage: python bench/verify_bench.py [--events 50000] [--runs 5]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import floor_argv, person_env

REPO = Path(__file__).resolve().parent.parent
CARDS = 50
sys.path.insert(0, str(REPO))


def build(folder: Path, n: int) -> float:
    """The board, and the mean cost of one chained event write in microseconds."""
    os.environ.update(LOOPX_KEY=str(folder / "person-key.json"), XDG_CONFIG_HOME=str(folder / "config"))
    from loopx_core.authority import keys
    from loopx_core.ops.board import init_board
    from loopx_core.store import events
    from loopx_core.store.discovery import parse_target

    person = keys.unlock(keys.create(folder / "person-key.json", "bench", None).path)
    store, _ = init_board(parse_target(str(folder / ".loopx" / "board.db"), "flag"), "verify bench", person)
    me = store.trust().people[person.fingerprint]
    person = person.named(me.name)
    from loopx_core.ops.cards import add_card
    from loopx_core.store import records

    for c in range(CARDS):
        add_card(store, {"title": f"card {c + 1}"}, person)
    start = time.perf_counter()

    def body():
        # Charges on real cards, so `verify` replays them into each card's counters (and the rows agree).
        used = {c: [0, 0] for c in range(1, CARDS + 1)}
        for i in range(n):
            if i % 100 == 0:
                events.emit(person, "setting_changed", None, key="note", value=str(i))
            else:
                card = 1 + i % CARDS
                used[card][0] += 1
                used[card][1] += i
                events.emit(
                    "agent:bench",
                    "evidence_added",
                    card,
                    evidence=f"E-{i}",
                    summary="a turn of work " * 3,
                    tokens=i,
                    used={"turns": used[card][0], "tokens": used[card][1], "usd": 0.0},
                )
        for card, (turns, tokens) in used.items():
            records.execute(
                'UPDATE "card" SET "used_turns" = ?, "used_tokens" = ? WHERE "id" = ?', (turns, tokens, card)
            )

    store.run(body)
    per_event = (time.perf_counter() - start) / n * 1e6

    def rows():
        # Each charge's evidence row, as a writeback leaves it: verify compares them with their events (#38).
        for i in range(n):
            if i % 100:
                records.execute(
                    'INSERT INTO "evidence" ("id", "card_id", "agent", "summary", "artifacts", "todos_added", "todos_done", "tokens_in", "tokens_out", "tokens", "usd", "source", "payload_hash", "created_at", "unverified") '
                    "VALUES (?, ?, 'bench', ?, '[]', '[]', '[]', 0, 0, ?, 0.0, 'cli', '', 0.0, 0)",
                    (i, 1 + i % CARDS, "a turn of work " * 3, i),
                )

    store.run(rows)
    store.close()
    return per_event


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--events", type=int, default=50_000)
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        per_event = build(folder, args.events)
        env = person_env(folder)
        env["LOOPX_DB"] = str(folder / ".loopx" / "board.db")
        floor = floor_argv(folder)
        verify = [sys.executable, "-m", "loopx_core", "verify"]
        times = {"floor": [], "verify": []}
        for i in range(args.runs + 1):
            for name, argv in (("floor", floor), ("verify", verify)):
                start = time.perf_counter()
                proc = subprocess.run(argv, env=env, cwd=folder, capture_output=True, text=True)
                ms = (time.perf_counter() - start) * 1000
                if name == "verify" and proc.returncode != 0:
                    raise SystemExit(f"verify failed: {proc.stdout}{proc.stderr}")
                if i:
                    times[name].append(ms)
        f, v = statistics.median(times["floor"]), statistics.median(times["verify"])
        print(f"chained event write: {per_event:.0f} µs per event (in-process, one transaction)")
        print(f"floor (python + sqlite insert/commit): {f:.1f} ms median of {args.runs}")
        print(
            f"loopx verify, {args.events:,} events ({args.events // 100:,} signed): {v:.0f} ms = {v / f:.1f}x floor (target <= 2000 ms)"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
