"""Several hosts, one board (#42): the same drain three ways, side by side.

Each host is a network namespace of this machine with its own git checkout,
HOME and two `loopx run` runners (shell turns: writeback, done), LOOPX_HOST
naming it; the board is one PostgreSQL server of the bench's own (initdb into a
fresh folder), reached through its socket folder (tests/pg/hosts.py). Prints,
per run and as medians:

- three hosts on one PostgreSQL board: cards/s from the runners' start to the
  last card done;
- the same drain while a host is killed outright (every process of its
  namespace) and the server restarts (`pg_ctl stop -m immediate`, start): the
  other hosts drain the rest; the killed host's cards wait for it (their work
  is in its checkout) until it comes back after their lease (`--lease`), so
  two figures: the whole drain, and the rest drained by the two hosts left;
- three runner groups on one host on SQLite (one checkout, the same six
  runners, the same turns): cards/s;
- the ratios: PostgreSQL hosts / SQLite, faulted / not.

Runs are interleaved (one of each in turn), so load on this shared machine
hits all alike. Needs root (`ip netns`) and the PostgreSQL server binaries
(/usr/lib/postgresql/*/bin).

Usage: python bench/hosts_bench.py [--runs N] [--cards N] [--lease DUR]"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
from tests.faults.pgserver import OwnServer, _bin  # noqa: E402
from tests.pg import hosts as namespaced  # noqa: E402

RUNNERS = 2  # per host
HOSTS = ("host-a", "host-b", "host-c")


def _agents(names) -> list[tuple[str, str]]:
    """(host, agent) of every runner: two per host, named after it."""
    return [(name, f"{name[-1]}{i}") for name in names for i in range(1, RUNNERS + 1)]


def _setup(hosts: namespaced.Hosts, agents, cards: int, seed: int) -> None:
    first = hosts.first
    for _, agent in agents:
        first.loopx("agent", "add", agent)
    rng = random.Random(seed)
    for i in range(cards):
        first.loopx("card", "add", f"card {i}", "--priority", str(rng.randint(0, 3)))


def _drain(hosts: namespaced.Hosts, agents, cards: int, lease: str, server: OwnServer | None = None) -> dict:
    """Start every runner, wait for every card done; with ``server``: kill the
    first host mid-drain, restart the server, bring the host back after its lease."""
    by_name = {h.name: h for h in hosts.hosts}
    hold = hosts.folder / "hold"
    start = time.perf_counter()
    for host_name, agent in agents:
        by_name[host_name].start(
            agent, lease, hold=hold if server is not None and by_name[host_name] is hosts.first else None
        )
    done = "\"status\" = 'done'"
    rest, stranded = None, 0
    if server is not None:
        hosts.wait_for(lambda: hosts.count(done) >= cards // 6, "a sixth of the cards done", 600)
        hold.touch()
        held = lambda: list(hosts.folder.glob("hold.LX-*"))  # noqa: E731
        hosts.wait_for(lambda: len(held()) == RUNNERS, "the doomed host's runners each hold a card", 600)
        hosts.first.kill()
        server.stop()
        server.start()
        stranded = len(held())
        hosts.wait_for(lambda: hosts.count(done) >= cards - stranded, "the other hosts drained the rest", 900)
        rest = time.perf_counter() - start
        hosts.wait_for(lambda: hosts.count("\"status\" = 'ready'") == stranded, "the doomed host's leases ran out", 600)
        hold.unlink()
        for host_name, agent in agents:
            if by_name[host_name] is hosts.first:
                hosts.first.start(agent, lease)
    hosts.wait_for(lambda: hosts.count(done) == cards, "every card done", 900)
    wall = time.perf_counter() - start
    for host in hosts.hosts:
        host.stop()
    done_events = [e["card"] for e in hosts.events() if e["kind"] == "done"]
    once = len(done_events) == len(set(done_events)) == cards
    return {"seconds": wall, "rate": cards / wall, "rest": (cards - stranded) / rest if rest else None, "once": once}


def _pg_run(folder: Path, cards: int, lease: str, seed: int, faults: bool) -> dict:
    bindir = _bin()
    assert bindir is not None
    pgdir = Path(tempfile.mkdtemp(prefix="loopx-pg-", dir="/tmp"))
    shutil.chown(pgdir, "postgres")
    server = OwnServer(bindir, pgdir, ["runuser", "-u", "postgres", "--"])
    try:
        server.init()
        server.start()
        server.create_db()
        with namespaced.Hosts(folder, namespaced.socket_url(server), HOSTS) as hosts:
            _setup(hosts, _agents(HOSTS), cards, seed)
            return _drain(hosts, _agents(HOSTS), cards, lease, server if faults else None)
    finally:
        try:
            server.stop()
        except Exception:  # (already stopped)
            pass
        shutil.rmtree(pgdir, ignore_errors=True)


def _sqlite_run(folder: Path, cards: int, lease: str, seed: int) -> dict:
    with namespaced.Hosts(folder, None, ("host-1",), namespaced=False) as hosts:
        agents = [("host-1", f"{h[-1]}{i}") for h, i in ((h, i) for h in HOSTS for i in range(1, RUNNERS + 1))]
        _setup(hosts, agents, cards, seed)
        return _drain(hosts, agents, cards, lease)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument("--cards", type=int, default=24)
    ap.add_argument("--lease", default="20s", help="the runners' lease: how long a killed host's cards stay its own")
    ap.add_argument("--seed", type=int, default=42)
    args = ap.parse_args()
    why = namespaced.missing() or (None if _bin() else "no PostgreSQL server binaries under /usr/lib/postgresql/*/bin")
    if why:
        print(f"skipped: {why}")
        return 0
    env_home = tempfile.mkdtemp(prefix="loopx-hosts-bench-")
    os.environ.setdefault("LOOPX_KEY", str(Path(env_home) / "person-key.json"))
    if not Path(os.environ["LOOPX_KEY"]).exists():
        from loopx_core.authority import keys

        keys.create(Path(os.environ["LOOPX_KEY"]), "bench", None)
    results: dict[str, list[dict]] = {"pg": [], "pg+faults": [], "sqlite": []}
    print(
        f"{args.cards} cards, {len(HOSTS)} x {RUNNERS} runners, lease {args.lease}, load {os.getloadavg()[0]:.1f} at the start"
    )
    try:
        for run in range(args.runs):
            for kind in results:
                folder = Path(env_home) / f"{kind}-{run}"
                if kind == "sqlite":
                    got = _sqlite_run(folder, args.cards, args.lease, args.seed + run)
                else:
                    got = _pg_run(folder, args.cards, args.lease, args.seed + run, faults=kind == "pg+faults")
                results[kind].append(got)
                rest = f", the rest by two hosts {got['rest']:.2f} cards/s" if got["rest"] else ""
                print(
                    f"run {run + 1} {kind:<10} {got['seconds']:7.1f} s = {got['rate']:.2f} cards/s{rest}, every card done once: {got['once']}",
                    flush=True,
                )
    finally:
        shutil.rmtree(env_home, ignore_errors=True)
    med = {kind: statistics.median(r["rate"] for r in rows) for kind, rows in results.items()}
    rest = statistics.median(r["rest"] for r in results["pg+faults"])
    print(f"{'drain':<44} {'cards/s':>8} {'x sqlite':>9}")
    print(f"{'SQLite, 3 runner groups on one host':<44} {med['sqlite']:8.2f} {1.0:8.2f}x")
    print(f"{'PostgreSQL, 3 namespaced hosts':<44} {med['pg']:8.2f} {med['pg'] / med['sqlite']:8.2f}x")
    print(
        f"{'  + a host killed, the server restarted':<44} {med['pg+faults']:8.2f} {med['pg+faults'] / med['sqlite']:8.2f}x  ({med['pg+faults'] / med['pg']:.2f}x without; includes the {args.lease} lease)"
    )
    print(
        f"{'    the rest, drained by the two hosts left':<44} {rest:8.2f} {rest / med['sqlite']:8.2f}x  ({rest / med['pg']:.2f}x three hosts)"
    )
    print(f"load {os.getloadavg()[0]:.1f} at the end")
    return 0


if __name__ == "__main__":
    sys.exit(main())
