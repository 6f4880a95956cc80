"""Both backends side by side: SQLite file vs a PostgreSQL team board.

Uses LOOPX_TEST_PG (default postgresql://postgres@127.0.0.1:5432/test), in a
throwaway schema. Prints:
- per turn (``--per-turn``, the default): the CPU time (user + system) of a
  cold process of every per-turn verb on each backend, sampled interleaved —
  the floor (python + a SQLite insert), the verb on SQLite, the same verb on
  PostgreSQL, and on PostgreSQL as before #42 (``LOOPX_PG_CLIENT=psycopg``:
  psycopg and peewee), in turn — so load on this shared machine hits all
  alike; the medians, against the floor, and the ratio PostgreSQL/SQLite (the
  target: <= 1.3x); and how many modules each one's `next` imports.
- the 8-agent drain (``--drain``, the default): throughput and errors.
- turns side by side (``--writers``, the default): eight agents' per-turn
  writes (a writeback and a heartbeat each round) on cards of their own, one
  warm process each, all at once: writes per second on SQLite, on PostgreSQL,
  and on PostgreSQL as before (``LOOPX_PG_WRITES=serial``: every write had
  the board alone), in interleaved rounds, with the ratio to before.

Usage: python bench/pg_bench.py [--runs N] [--per-turn | --drain | --writers]"""

from __future__ import annotations

import argparse
import contextlib
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import uuid
from pathlib import Path
from urllib.parse import quote

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import floor_argv  # noqa: E402
from run import CYCLE, LOOPX, VERBS, drain, setup_board  # noqa: E402

SERVER = os.environ.get("LOOPX_TEST_PG", "postgresql://postgres@127.0.0.1:5432/test")


def cpu_ms(argv, env, cwd) -> tuple[float, int]:
    """The CPU time (user + system, ms) of one child process, and its exit code."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    proc = subprocess.run(argv, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ((after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)) * 1000, proc.returncode


@contextlib.contextmanager
def pg_schema():
    """A throwaway schema on the server: the board URL in it (None when no server)."""
    try:
        import psycopg

        schema = "lxbench_" + uuid.uuid4().hex[:8]
        with psycopg.connect(SERVER, autocommit=True, connect_timeout=3) as conn:
            conn.execute(f'CREATE SCHEMA "{schema}"')
    except Exception as exc:
        print(f"postgresql: skipped, no server at {SERVER} ({exc}); set LOOPX_TEST_PG")
        yield None
        return
    try:
        yield f"{SERVER}{'&' if '?' in SERVER else '?'}options={quote('-csearch_path=' + schema)}"
    finally:
        with psycopg.connect(SERVER, autocommit=True) as conn:
            conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')


def modules(env, cwd) -> int:
    """How many modules a cold `next` imports."""
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "loopx_core", "next"],
        env=dict(env, LOOPX_AGENT="solo"),
        cwd=cwd,
        capture_output=True,
        text=True,
    )
    return sum(line.startswith("import time:") for line in proc.stderr.splitlines()) - 1


def per_turn(runs: int) -> None:
    with pg_schema() as url, pg_schema() as before, tempfile.TemporaryDirectory() as tmp:
        if url is None or before is None:
            return
        boards = {}
        for backend, db in (("sqlite", None), ("postgresql", url)):
            folder = Path(tmp) / backend
            folder.mkdir()
            env = setup_board(folder, db, 0)
            for agent in (["solo", "--can", "git:push"], ["solo2"]):
                subprocess.run(LOOPX + ["agent", "add", *agent], env=env, cwd=folder, check=True, capture_output=True)
            boards[backend] = (folder, env)
            if backend == "postgresql":  # the code before #42: a board of its own, through psycopg and peewee
                folder = Path(tmp) / "psycopg"
                folder.mkdir()
                env = dict(setup_board(folder, before, 0), LOOPX_PG_CLIENT="psycopg")
                for agent in (["solo", "--can", "git:push"], ["solo2"]):
                    subprocess.run(
                        LOOPX + ["agent", "add", *agent], env=env, cwd=folder, check=True, capture_output=True
                    )
                boards["psycopg"] = (folder, env)
        floor = floor_argv(Path(tmp))
        times: dict[str, list[float]] = {"floor": []}
        failures: list[str] = []
        for i in range(runs + 2):
            for name, agent, argv, codes in CYCLE:
                args = [a.format(i=i, card=f"LX-{i + 1}", gate=i + 1) for a in argv]
                sample = {"floor": cpu_ms(floor, boards["sqlite"][1], tmp)[0]}
                for backend, (folder, env) in boards.items():
                    sample[backend], code = cpu_ms(LOOPX + args, dict(env, LOOPX_AGENT=agent), folder)
                    if code not in codes:
                        failures.append(f"{backend} {name} exit {code}")
                if i >= 2:  # the first rounds warm the page cache and .pyc files
                    times["floor"].append(sample["floor"])
                    for backend in boards:
                        times.setdefault(f"{backend} {name}", []).append(sample[backend])
        med = {k: statistics.median(v) for k, v in times.items()}
        floor_ms = med["floor"]
        print(
            f"CPU time, cold process, median of {runs} interleaved rounds; floor (python + sqlite insert/commit) {floor_ms:.1f} ms"
        )
        print(
            f"{'verb':<12} {'sqlite ms':>10} {'x floor':>8} {'pg ms':>8} {'x floor':>8} {'pg/sqlite':>10} {'before ms':>10} {'before/sqlite':>14}"
        )
        worst = 0.0
        for verb in VERBS:
            lite, pg, old = med[f"sqlite {verb}"], med[f"postgresql {verb}"], med[f"psycopg {verb}"]
            worst = max(worst, pg / lite)
            print(
                f"{verb:<12} {lite:10.1f} {lite / floor_ms:8.2f} {pg:8.1f} {pg / floor_ms:8.2f} {pg / lite:9.2f}x {old:10.1f} {old / lite:13.2f}x"
            )
        print(f"worst pg/sqlite: {worst:.2f}x (target <= 1.3x)")
        print(
            "modules a cold `next` imports: "
            + ", ".join(f"{backend} {modules(env, folder)}" for backend, (folder, env) in boards.items())
        )
        print(f"errors: {len(failures)}" + (f" ({', '.join(sorted(set(failures)))})" if failures else ""))


def drains() -> None:
    d = drain(8, 24, None)
    print(
        f"sqlite     8 agents, 24 cards: {d['seconds']} s = {d['cards_per_second']} cards/s, errors {d['errors']}, every card done once: {d['done_once']}"
    )
    with pg_schema() as url:
        if url is not None:
            d = drain(8, 24, url)
            print(
                f"postgresql 8 agents, 24 cards: {d['seconds']} s = {d['cards_per_second']} cards/s, errors {d['errors']}, every card done once: {d['done_once']}"
            )


WRITERS, WRITER_ROUNDS = 8, 25


def writer(card: int, agent: str, rounds: int) -> None:
    """One agent's turns on its own card (a child process of ``writers``)."""
    from loopx_core.ops import claims
    from loopx_core.ops.writeback import writeback
    from loopx_core.store.backends import Store
    from loopx_core.store.discovery import parse_target

    store = Store.open(parse_target(os.environ["LOOPX_DB"], "flag", Path.cwd()))
    print("ready", flush=True)
    sys.stdin.readline()  # (the parent starts every writer at once)
    for n in range(rounds):
        writeback(store, card, agent, {"summary": f"turn {n}", "turn_id": f"t{n}", "next": f"step {n + 1}"}, code=None)
        claims.heartbeat(store, card, agent)
    store.close()


def writes_per_second(folder: Path, env: dict) -> tuple[float, int]:
    """All writers at once on the board in ``folder``: (writes/s, failed writers)."""
    import time

    procs = [
        subprocess.Popen(
            [sys.executable, __file__, "--writer", str(card), f"agent-{card - 1}", str(WRITER_ROUNDS)],
            env=env,
            cwd=folder,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        for card in range(1, WRITERS + 1)
    ]
    for proc in procs:  # every writer has its board open: the time counts writes only
        assert proc.stdout is not None
        proc.stdout.readline()
    started = time.monotonic()
    for proc in procs:
        assert proc.stdin is not None
        proc.stdin.write("go\n")
        proc.stdin.close()
    failed = sum(proc.wait() != 0 for proc in procs)
    return 2 * WRITERS * WRITER_ROUNDS / (time.monotonic() - started), failed


def writers(runs: int) -> None:
    kinds = {"sqlite": {}, "postgresql": {}, "before": {"LOOPX_PG_WRITES": "serial"}}
    with contextlib.ExitStack() as stack, tempfile.TemporaryDirectory() as tmp:
        rates: dict[str, list[float]] = {kind: [] for kind in kinds}
        failures = 0
        for i in range(runs):
            for kind, extra in kinds.items():
                db = None if kind == "sqlite" else stack.enter_context(pg_schema())  # a board of its own
                if kind != "sqlite" and db is None:
                    return
                folder = Path(tmp) / f"{kind}-{i}"
                folder.mkdir()
                env = dict(setup_board(folder, db, 0), **extra)
                for card in range(1, WRITERS + 1):
                    for argv in (["card", "add", f"card {card}"], ["claim", f"LX-{card}"]):
                        subprocess.run(
                            LOOPX + argv,
                            env=dict(env, LOOPX_AGENT=f"agent-{card - 1}"),
                            cwd=folder,
                            check=True,
                            capture_output=True,
                        )
                rate, failed = writes_per_second(folder, env)
                rates[kind].append(rate)
                failures += failed
        med = {kind: statistics.median(values) for kind, values in rates.items()}
        print(
            f"{WRITERS} agents' turns on their own cards, {WRITER_ROUNDS} rounds of writeback + heartbeat each, "
            f"median of {runs} interleaved runs:"
        )
        print(
            f"  sqlite {med['sqlite']:.0f} writes/s; postgresql {med['postgresql']:.0f} writes/s; "
            f"postgresql before (every write alone) {med['before']:.0f} writes/s; "
            f"now/before {med['postgresql'] / med['before']:.2f}x; postgresql/sqlite {med['postgresql'] / med['sqlite']:.2f}x"
        )
        print(f"  failed writers: {failures}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--per-turn", action="store_true", help="only the per-turn CPU times")
    ap.add_argument("--drain", action="store_true", help="only the 8-agent drain")
    ap.add_argument("--writers", action="store_true", help="only the turns side by side")
    ap.add_argument("--writer", nargs=3, help=argparse.SUPPRESS)  # (one writer: a child process)
    args = ap.parse_args()
    if args.writer:
        writer(int(args.writer[0]), args.writer[1], int(args.writer[2]))
        return 0
    only = args.per_turn or args.drain or args.writers
    if args.per_turn or not only:
        per_turn(args.runs)
    if args.drain or not only:
        drains()
    if args.writers or not only:
        writers(max(3, args.runs // 3))
    return 0


if __name__ == "__main__":
    sys.exit(main())
