"""Watcher benchmark: evidence from files (DESIGN §7), through a real `loopx watch`.

Prints, for this machine:
- burst: the time from the first of 1,000 `*.loopx.json` documents landing
  (atomic writes, as fast as Python can write them) to the 1,000th piece of
  evidence being in the board. Target: <= 3 s.
- latency: one document at a time (the next once the last is in), the time
  from its rename into the watched folder to its evidence being in the board:
  p50 / p95 / max over N documents. Target: p95 <= 250 ms.
- a 1,000-line `*.loopx.jsonl` burst, and a `--once` catch-up over a
  1,000-file backlog, for reference.
- the floor: the `writeback` operator alone, in-process, per document (every
  document goes through it; the rest is the watcher's own cost).

Usage: python bench/watch_bench.py [--burst 1000] [--latency 100]
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from common import person_env

HERE = Path(__file__).resolve().parent
LOOPX = [sys.executable, "-m", "loopx_core"]
_script = Path(sys.executable).with_name("loopx")
if _script.exists():
    LOOPX = [str(_script)]


def setup(folder: Path) -> tuple[dict, Path]:
    env = dict(person_env(folder), LOOPX_DB=str(folder / ".loopx" / "board.db"))
    run = lambda *a, agent=None: subprocess.run(
        LOOPX + list(a),
        env=dict(env, **({"LOOPX_AGENT": agent} if agent else {})),
        cwd=folder,
        check=True,
        capture_output=True,
    )
    run("init")
    (folder / "out").mkdir()
    run("agent", "add", "bench", "--watch", "out")
    run("card", "add", "Bench card")
    run("claim", "LX-1", agent="bench")
    return env, folder / ".loopx" / "board.db"


class Watch:
    def __init__(self, env: dict, cwd: Path, *args: str):
        self.proc = subprocess.Popen(
            LOOPX + ["watch", *args], env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
        )
        self.started = threading.Event()
        self.err: list[str] = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.proc.stderr:
            self.err.append(line)
            if "following" in line:
                self.started.set()

    def stop(self):
        self.proc.terminate()
        self.proc.wait(30)


def count(con: sqlite3.Connection) -> int:
    return con.execute("SELECT count(*) FROM evidence").fetchone()[0]


def wait_count(con, n: int, timeout: float = 120.0, poll: float = 0.002) -> float:
    deadline = time.perf_counter() + timeout
    while True:
        if count(con) >= n:
            return time.perf_counter()
        if time.perf_counter() > deadline:
            raise SystemExit(f"timed out waiting for {n} pieces of evidence (have {count(con)})")
        time.sleep(poll)


_seq = 0


def document(i: int, tag: str) -> str:
    return json.dumps(
        {"card": "LX-1", "agent": "bench", "summary": f"{tag} turn {i}", "next": f"{tag} step {i}", "tokens": 100}
    )


def land(folder: Path, name: str, text: str) -> float:
    tmp = folder / f".{name}.tmp"
    tmp.write_text(text)
    os.replace(tmp, folder / name)
    return time.perf_counter()


def operator_floor(folder: Path, n: int = 200) -> float:
    """The writeback operator alone, in-process: the cost every document pays."""
    sys.path.insert(0, str(HERE.parent))
    from loopx_core.ops.writeback import writeback
    from loopx_core.store.backends import Store
    from loopx_core.store.discovery import parse_target

    folder.mkdir()
    env, db = setup(folder)
    store = Store.open(parse_target(str(db), "flag"))
    writeback(store, 1, "bench", {"summary": "warm", "next": "warm", "turn_id": "warm"}, source="file")
    start = time.perf_counter()
    for i in range(n):
        writeback(store, 1, "bench", {"summary": f"s{i}", "next": f"n{i}", "turn_id": f"t{i}"}, source="file")
    store.close()
    return (time.perf_counter() - start) / n * 1000


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--burst", type=int, default=1000)
    ap.add_argument("--latency", type=int, default=100)
    args = ap.parse_args()
    print(f"watch bench ({os.cpu_count()} CPUs, Python {sys.version.split()[0]})")

    with tempfile.TemporaryDirectory(prefix="loopx-watch-bench-") as tmp:
        floor_before = operator_floor(Path(tmp) / "floor-before")
        root = Path(tmp) / "live"
        root.mkdir()
        env, db = setup(root)
        watch = Watch(env, root)
        if not watch.started.wait(30):
            raise SystemExit("loopx watch did not start: " + "".join(watch.err))
        con = sqlite3.connect(db, timeout=10)
        out = root / "out"
        try:
            # 1. latency, one document at a time
            latencies = []
            for i in range(args.latency):
                have = count(con)
                landed = land(out, f"lat-{i:04}.loopx.json", document(i, "lat"))
                latencies.append((wait_count(con, have + 1, poll=0.001) - landed) * 1000)
                time.sleep(0.02)
            # 2. a burst of documents
            have = count(con)
            (out / "burst").mkdir()
            first = time.perf_counter()
            for i in range(args.burst):
                land(out / "burst", f"turn-{i:05}.loopx.json", document(i, "burst"))
            write_s = time.perf_counter() - first
            done = wait_count(con, have + args.burst, poll=0.02)
            burst_s = done - first
            # 3. a JSONL burst
            have = count(con)
            first = time.perf_counter()
            with open(out / "stream.loopx.jsonl", "w") as handle:
                for i in range(args.burst):
                    handle.write(document(i, "jsonl") + "\n")
                    if i % 50 == 49:
                        handle.flush()
            stream_s = wait_count(con, have + args.burst, poll=0.02) - first
        finally:
            watch.stop()
            con.close()

        # 4. --once over a backlog
        root2 = Path(tmp) / "backlog"
        root2.mkdir()
        env2, _ = setup(root2)
        for i in range(args.burst):
            (root2 / "out" / f"turn-{i:05}.loopx.json").write_text(document(i, "backlog"))
        start = time.perf_counter()
        subprocess.run(LOOPX + ["watch", "--once"], env=env2, cwd=root2, check=True, capture_output=True)
        once_s = time.perf_counter() - start

        floor_ms = min(floor_before, operator_floor(Path(tmp) / "floor-after"))

    lat = sorted(latencies)
    p95 = lat[max(0, int(round(0.95 * len(lat))) - 1)]
    print(
        f"  burst of {args.burst} documents : {burst_s:.2f} s to the last in the board ({args.burst / burst_s:.0f}/s; writing them took {write_s:.2f} s)   target <= 3 s   {'OK' if burst_s <= 3 else 'MISSED'}"
    )
    print(
        f"  latency, file -> board     : p50 {statistics.median(lat):.0f} ms · p95 {p95:.0f} ms · max {lat[-1]:.0f} ms over {len(lat)}   target p95 <= 250 ms   {'OK' if p95 <= 250 else 'MISSED'}"
    )
    print(f"  jsonl burst of {args.burst} lines  : {stream_s:.2f} s ({args.burst / stream_s:.0f}/s)")
    print(f"  --once over {args.burst} files     : {once_s:.2f} s (process start included)")
    print(
        f"  floor: writeback operator  : {floor_ms:.2f} ms per document in-process ({args.burst * floor_ms / 1000:.2f} s per {args.burst}; best of before/after)"
    )
    print(
        f"  watcher's own cost         : {burst_s * 1000 / args.burst - floor_ms:.2f} ms per document in the burst, on top of the operator (rough: measured at different moments)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
