"""Runner benchmark (DESIGN §10 "Runners"): what a sleeping runner costs, and
how fast it wakes.

Prints, for this machine:
- idle cost: the CPU a `loopx run` uses while it sleeps on a board with nothing
  to do, as a percentage of one core (its /proc utime+stime over the window),
  on a quiet board and on a board another agent writes to every second.
  Target: ≤ 1 % of one core.
- wake latency: from a person's answer to a gate being committed to the
  waiting runner's next turn starting (its `turn_started` event), and from a
  card being added to an idle runner's turn starting, each 1.5–3 s after the
  runner fell asleep (its probe has backed off by then); median and p90 of N,
  and the ratio to the waker's slowest probe interval (the designed bound).
  Target: median ≤ 1 s.

Usage: python bench/runner_bench.py [--samples 20] [--idle 20] [--db URL]
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import person_env

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

TURN = r"""
import os, subprocess, sys
card = os.environ["LOOPX_CARD"]
loopx = [sys.executable, "-m", "loopx_core"]
if os.environ.get("BENCH_MODE") == "gate":
    subprocess.run(loopx + ["gate", "ask", card, "--question", "go on?"], stdout=subprocess.DEVNULL)
    subprocess.run(loopx + ["writeback", card, "--summary", "asked"], check=True, stdout=subprocess.DEVNULL)
else:
    subprocess.run(loopx + ["writeback", card, "--summary", "did it"], check=True, stdout=subprocess.DEVNULL)
    subprocess.run(loopx + ["done", card, "--summary", "done"], check=True, stdout=subprocess.DEVNULL)
"""


def cpu_seconds(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as fh:
        fields = fh.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class Bench:
    def __init__(self, folder: Path, db: str | None):
        self.folder = folder
        self.env = dict(person_env(folder), LOOPX_DB=db or str(folder / ".loopx" / "board.db"))
        self.loopx(["init", "--objective", "runner bench"])
        self.loopx(["agent", "add", "a1"])
        self.loopx(["agent", "add", "other"])
        (folder / "turn.py").write_text(TURN)
        from loopx_core.authority.keys import unlock
        from loopx_core.authority.people import member
        from loopx_core.store.backends import Store
        from loopx_core.store.discovery import parse_target

        os.environ.update({k: v for k, v in self.env.items() if k.startswith(("LOOPX_", "XDG_"))})
        self.store = Store.open(parse_target(self.env["LOOPX_DB"], "env"))
        self.person = member(self.store, unlock())

    def loopx(self, args: list[str]) -> None:
        subprocess.run(
            [sys.executable, "-m", "loopx_core", *args],
            cwd=self.folder,
            env=self.env,
            check=True,
            stdout=subprocess.DEVNULL,
        )

    def runner(self, mode: str) -> subprocess.Popen:
        return subprocess.Popen(
            [
                sys.executable,
                "-m",
                "loopx_core",
                "run",
                "--agent",
                "a1",
                "--runtime",
                "shell",
                "--",
                sys.executable,
                str(self.folder / "turn.py"),
            ],
            cwd=self.folder,
            env=dict(self.env, BENCH_MODE=mode),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )

    def runner_state(self) -> tuple[str | None, str | None]:
        from loopx_core.store.models import Runner

        with self.store.read():
            row = Runner.get_or_none(Runner.agent == "a1")
        return (row.state, row.detail) if row else (None, None)

    def wait(self, what, predicate, timeout: float = 120.0):
        end = time.monotonic() + timeout
        while not (value := predicate()):
            if time.monotonic() > end:
                raise SystemExit(f"timed out waiting for {what}")
            time.sleep(0.01)
        return value

    def turn_after(self, seq: int):
        from loopx_core.store import events

        with self.store.read():
            return next((e for e in events.since(seq) if e.kind == "turn_started"), None)

    def seq(self) -> int:
        with self.store.read():
            return self.store.max_seq()


def idle_cost(bench: Bench, seconds: float, busy: bool) -> float:
    proc = bench.runner("none")
    try:
        bench.wait(
            "the runner asleep", lambda: bench.runner_state()[0] == "asleep" and bench.runner_state()[1] != "starting"
        )
        time.sleep(1.0)
        if busy:  # another agent writes to the board every second (its own card, heartbeats)
            from loopx_core.ops import cards, claims

            card = cards.add_card(bench.store, {"title": "the other agent's", "owner": "other"}, "agent:other")
            claims.claim(bench.store, card.id, "other")
        start_cpu, start = cpu_seconds(proc.pid), time.monotonic()
        while time.monotonic() - start < seconds:
            if busy:
                claims.heartbeat(bench.store, card.id, "other")
            time.sleep(1.0)
        used = cpu_seconds(proc.pid) - start_cpu
        elapsed = time.monotonic() - start
        return 100.0 * used / elapsed
    finally:
        proc.terminate()
        proc.wait(timeout=60)


def gate_latency(bench: Bench, samples: int) -> list[float]:
    from loopx_core.ops import cards, gates
    from loopx_core.store.models import Gate

    cards.add_card(bench.store, {"title": "asks every turn", "owner": "a1"}, bench.person)
    proc = bench.runner("gate")
    out = []
    try:
        for _ in range(samples):
            bench.wait("the runner waiting on a gate", lambda: bench.runner_state()[0] == "waiting")
            with bench.store.read():
                gate = Gate.select().where(Gate.status == "pending").order_by(Gate.id.desc()).first()
            time.sleep(random.uniform(1.5, 3.0))  # a person answers a while later: the waker has backed off
            seq = bench.seq()
            gates.answer(bench.store, gate.id, "approve", bench.person)
            answered = time.time()
            started = bench.wait("the next turn", lambda: bench.turn_after(seq))
            out.append(started.at - answered)
    finally:
        proc.terminate()
        proc.wait(timeout=60)
    return out


def ready_latency(bench: Bench, samples: int) -> list[float]:
    from loopx_core.ops import cards
    from loopx_core.store.models import Card

    with bench.store.read():  # the gate bench's card is left waiting: take it away
        left = [c.id for c in Card.select().where((Card.assignee == "a1") & Card.status.not_in(("done", "cancelled")))]
    for card_id in left:
        cards.move_card(bench.store, card_id, "cancelled", bench.person)
    proc = bench.runner("ready")
    out = []
    try:
        for i in range(samples):
            bench.wait(
                "the runner idle", lambda: bench.runner_state()[0] == "asleep" and bench.runner_state()[1] != "starting"
            )
            time.sleep(random.uniform(1.5, 3.0))
            seq = bench.seq()
            cards.add_card(bench.store, {"title": f"ready {i}", "owner": "a1"}, bench.person)
            added = time.time()
            started = bench.wait("its turn", lambda: bench.turn_after(seq))
            out.append(started.at - added)
            bench.wait(
                "the card done",
                lambda: (
                    bench.runner_state()[0] == "asleep" and bench.turn_after(started.seq) is None and _done(bench, i)
                ),
            )
    finally:
        proc.terminate()
        proc.wait(timeout=60)
    return out


def _done(bench: Bench, i: int) -> bool:
    from loopx_core.store.models import Card

    with bench.store.read():
        return Card.select().where((Card.title == f"ready {i}") & (Card.status == "done")).exists()


def report(name: str, values: list[float], slow: float) -> None:
    values = sorted(values)
    median = statistics.median(values)
    p90 = values[int(0.9 * (len(values) - 1))]
    print(
        f"{name}: median {median * 1000:.0f} ms, p90 {p90 * 1000:.0f} ms, max {values[-1] * 1000:.0f} ms over {len(values)} "
        f"({median / slow:.2f}× the slowest probe interval of {slow * 1000:.0f} ms; target median ≤ 1 s: {'met' if median <= 1.0 else 'NOT met'})"
    )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--samples", type=int, default=20)
    ap.add_argument("--idle", type=float, default=20.0, help="seconds to measure an idle runner")
    ap.add_argument("--db", help="a PostgreSQL URL (default: a SQLite board in a temporary folder)")
    args = ap.parse_args()
    from loopx_core.runner.waker import SLOW

    with tempfile.TemporaryDirectory(prefix="loopx-runner-bench-") as tmp:
        bench = Bench(Path(tmp), args.db)
        quiet = idle_cost(bench, args.idle, busy=False)
        busy = idle_cost(bench, args.idle, busy=True)
        print(
            f"idle runner, quiet board: {quiet:.2f} % of one core · board written every second: {busy:.2f} % (target ≤ 1 %: {'met' if max(quiet, busy) <= 1.0 else 'NOT met'})"
        )
        report("gate answered → next turn", gate_latency(bench, args.samples), SLOW)
        report("card added → idle runner's turn", ready_latency(bench, args.samples), SLOW)
        bench.store.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
