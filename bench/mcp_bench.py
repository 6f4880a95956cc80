"""MCP start-up: how long `loopx mcp`, started cold, takes to answer `initialize`.

A runtime may send its first model request before a slow server is up (Codex
does, unless the entry says `required = true`), so the answer must come fast.
Each run starts a fresh `loopx mcp` process, writes the `initialize` request
a client sends, and times the round trip to the answer; then the first tool
call (`next`, which imports the kernel and opens the board). The floor is a
bare python process started and read the same way. Target: initialize < 1 s.

Usage: python bench/mcp_bench.py [--runs N]
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

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from common import compiled_env  # noqa: E402
from hook_bench import LOOPX  # noqa: E402

INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "bench", "version": "0"}},
}
NEXT = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "next", "arguments": {}}}
FLOOR = [
    sys.executable,
    "-c",
    "import sys\nsys.stdin.readline()\nsys.stdout.write('{}\\n')\nsys.stdout.flush()\nsys.stdin.readline()\nsys.stdout.write('{}\\n')\nsys.stdout.flush()",
]


def round_trips(argv, env, cwd) -> tuple[float, float]:
    """(ms to the initialize answer, ms from then to the first tool answer)."""
    start = time.perf_counter()
    proc = subprocess.Popen(
        argv, env=env, cwd=cwd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
    )
    try:
        proc.stdin.write((json.dumps(INIT) + "\n").encode())
        proc.stdin.flush()
        first = proc.stdout.readline()
        init = (time.perf_counter() - start) * 1000
        if not first:
            raise SystemExit("no answer to initialize")
        mark = time.perf_counter()
        proc.stdin.write(
            (
                json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}) + "\n" + json.dumps(NEXT) + "\n"
            ).encode()
        )
        proc.stdin.flush()
        if not proc.stdout.readline():
            raise SystemExit("no answer to the first tool call")
        call = (time.perf_counter() - mark) * 1000
    finally:
        proc.stdin.close()
        proc.wait(timeout=30)
    return init, call


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=15)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        env = dict(compiled_env(), LOOPX_HUMAN="bench")
        env.pop("LOOPX_DB", None)
        env.pop("LOOPX_AGENT", None)
        subprocess.run(LOOPX + ["init"], env=env, cwd=folder, check=True, capture_output=True)
        subprocess.run(LOOPX + ["agent", "add", "bench"], env=env, cwd=folder, check=True, capture_output=True)
        server_env = dict(env, LOOPX_AGENT="bench")
        times = {"floor": [], "initialize": [], "first tool call": []}
        for i in range(args.runs + 2):
            floor, _ = round_trips(FLOOR, env, folder)
            init, call = round_trips(LOOPX + ["mcp"], server_env, folder)
            if i >= 2:  # warm the page cache and .pyc files first
                times["floor"].append(floor)
                times["initialize"].append(init)
                times["first tool call"].append(call)
        floor = statistics.median(times["floor"])
        print(f"floor (python started, one line read and answered): {floor:.0f} ms median of {args.runs}")
        for name in ("initialize", "first tool call"):
            values = times[name]
            print(
                f"loopx mcp, {name}: median {statistics.median(values):.0f} ms, worst {max(values):.0f} ms = {statistics.median(values) / floor:.1f}x floor"
                + (" (target < 1000 ms)" if name == "initialize" else "")
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
