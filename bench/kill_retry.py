"""Operations killed with SIGKILL and retried, by several agents at once, on
SQLite and PostgreSQL: prints how many operations ran, how many processes were
killed, and what the board holds afterwards — acknowledged operations lost,
operations that took effect twice, operations that took effect in part — and
`loopx verify`'s answer (#30; README "Under faults").

Each agent is a thread driving real, cold ``loopx`` processes: ``next
--claim``, ``writeback``, ``done``, ``release``, and the person's ``card add``,
each with an ``--op-id`` of its own. An attempt is killed, by chance (seeded),
either at a fault point (``LOOPX_FAULT=commit|committed:N``: before or right
after one of the operation's commits, loopx_core/rules/faults.py) or by a
timer at a random moment of its run; it is then retried with the same op id,
until it answers (the fifth attempt is never killed). An operation answered
with exit 0 is acknowledged; the board must then hold its effect exactly once.

Checks, from ``loopx export`` at the end (each operation's text carries its op id):
- lost: an acknowledged operation whose effect is not on the board;
- duplicated: an effect found more than once (a row or its event twice);
- partial: a row without its event or an event without its row, or an effect
  of an operation that was refused in the end;
- internal: an answer of exit 1; verify: `loopx verify`'s exit code (0: clean).

Seeded and bounded in count and time. Usage:
    python bench/kill_retry.py [--seed 1] [--agents 6] [--ops 1400] [--seconds 900]
                               [--kill 0.35] [--pg postgresql://postgres@127.0.0.1:5432/test] [--no-sqlite]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from bench.common import person_env  # noqa: E402

ATTEMPTS = 5  # the last one is never killed: every operation gets an answer
POINTS = ("commit", "committed")


class Run:
    """One board and the agents working on it."""

    def __init__(
        self, folder: Path, url: str, env: dict, seed: int, agents: int, ops: int, seconds: float, kill: float
    ):
        self.folder, self.url, self.env = folder, url, env
        self.rng = random.Random(seed)
        self.agents = [f"a{i + 1}" for i in range(agents)]
        self.ops, self.deadline, self.kill = ops, time.monotonic() + seconds, kill
        self.lock = threading.Lock()
        self.done_ops: list[dict] = []  # every operation, with its answer
        self.kills = Counter()  # how: fault:commit, fault:committed, timer
        self.attempts = 0
        self.started = 0

    # -- one process -------------------------------------------------------------------
    def _call(self, argv: list[str], agent: str | None, fault: str | None = None, kill_after: float | None = None):
        env = dict(self.env, LOOPX_DB=self.url)
        env.pop("LOOPX_AGENT", None)
        if agent:
            env["LOOPX_AGENT"] = agent
        if fault:
            env["LOOPX_FAULT"] = fault
        proc = subprocess.Popen(
            [sys.executable, "-m", "loopx_core", "--json", *argv],
            cwd=self.folder,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        timer = None
        if kill_after is not None:
            timer = threading.Timer(kill_after, lambda: proc.poll() is None and proc.send_signal(signal.SIGKILL))
            timer.start()
        try:
            out, err = proc.communicate(timeout=120)
        finally:
            if timer is not None:
                timer.cancel()
        return proc.returncode, out, err

    def operate(self, rng: random.Random, kind: str, argv: list[str], agent: str | None) -> dict:
        """Run one operation until it answers: killed by chance, retried with its op id."""
        with self.lock:
            self.started += 1
            op_id = f"{kind}-{self.started}-{uuid.uuid4().hex[:6]}"
        argv = [*argv, "--op-id", op_id]
        kills = 0
        for attempt in range(ATTEMPTS):
            fault = kill_after = None
            if attempt < ATTEMPTS - 1 and rng.random() < self.kill:
                if rng.random() < 0.5:
                    fault = f"{rng.choice(POINTS)}:{rng.randint(1, 2)}"
                else:
                    kill_after = rng.uniform(0.05, 0.6)
            code, out, err = self._call(argv, agent, fault, kill_after)
            with self.lock:
                self.attempts += 1
            if code == -signal.SIGKILL:
                kills += 1
                with self.lock:
                    self.kills["fault:" + fault.split(":")[0] if fault else "timer"] += 1
                continue
            try:
                answer = json.loads(out.strip().splitlines()[-1]) if out.strip() else {}
            except ValueError:
                answer = {}
            record = {
                "kind": kind,
                "op_id": op_id,
                "argv": argv,
                "agent": agent,
                "code": code,
                "answer": answer,
                "kills": kills,
                "said": (out[-300:] + err[-500:]) if code == 1 else "",
            }
            with self.lock:
                self.done_ops.append(record)
            return record
        raise AssertionError("unreachable: the last attempt is never killed")

    # -- an agent --------------------------------------------------------------------
    def agent(self, name: str, seed: int) -> None:
        rng = random.Random(seed)
        holding: tuple[str, int] | None = None  # (card key, lease token)
        while time.monotonic() < self.deadline:
            with self.lock:
                if self.started >= self.ops:
                    return
            if holding is None:
                if rng.random() < 0.3:
                    tag = uuid.uuid4().hex[:8]
                    self.operate(rng, "card_add", ["card", "add", f"T {tag}"], None)
                    continue
                got = self.operate(rng, "next", ["next", "--claim"], name)
                card, lease = got["answer"].get("card") or {}, got["answer"].get("lease") or {}
                if got["code"] == 0 and card.get("id") and lease.get("holder") == name:
                    holding = (card["id"], lease["token"])
                    got["claimed"] = (card["id"], lease["token"]) if got["answer"].get("claimed") else None
                continue
            key, token = holding
            roll = rng.random()
            if roll < 0.6:
                tag = uuid.uuid4().hex[:8]  # (a new next action: progress, so the card is not paused for making none)
                got = self.operate(
                    rng, "writeback", ["writeback", key, "--summary", f"W {tag}", "--next", f"after {tag}"], name
                )
                if got["code"] != 0:
                    holding = None
            elif roll < 0.85:
                self.operate(rng, "done", ["done", key, "--summary", f"D {uuid.uuid4().hex[:8]}"], name)
                holding = None
            else:
                got = self.operate(rng, "release", ["release", key], name)
                got["released"] = (key, token)
                holding = None

    def go(self) -> float:
        started = time.monotonic()
        threads = [threading.Thread(target=self.agent, args=(a, self.rng.randrange(1 << 30))) for a in self.agents]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        return time.monotonic() - started


# -- what the board holds --------------------------------------------------------------


def _marker(op: dict) -> str | None:
    """The text an operation wrote (its title or summary), when it has one."""
    argv = op["argv"]
    for flag in ("--summary",):
        if flag in argv:
            return argv[argv.index(flag) + 1]
    if op["kind"] == "card_add":
        return argv[2]
    return None


def check(ops: list[dict], board: dict) -> dict:
    cards = Counter(c["title"] for c in board["cards"])
    evidence = Counter(e["summary"] for e in board["evidence"])
    events = board["events"]
    added = Counter(e["data"].get("title") for e in events if e["kind"] == "card_added")
    reported = Counter(e["data"].get("summary") for e in events if e["kind"] == "evidence_added")
    finished = Counter(e["data"].get("summary") for e in events if e["kind"] == "done")
    claimed = Counter((e["card"], e["data"].get("token")) for e in events if e["kind"] == "claimed")
    released = Counter((e["card"], e["data"].get("token")) for e in events if e["kind"] == "released")
    status = {c["id"]: c["status"] for c in board["cards"]}
    found = {"lost": [], "duplicated": [], "partial": []}

    def judge(op: dict, counts: list[int]) -> None:
        acked = op["code"] == 0
        if any(n > 1 for n in counts):
            found["duplicated"].append((op["op_id"], counts))
        elif acked and all(n == 0 for n in counts):
            found["lost"].append((op["op_id"], counts))
        elif len(set(counts)) > 1 or (not acked and any(counts)):
            found["partial"].append((op["op_id"], op["code"], counts))

    for op in ops:
        mark = _marker(op)
        if op["kind"] == "card_add":
            judge(op, [cards[mark], added[mark]])
        elif op["kind"] == "writeback":
            judge(op, [evidence[mark], reported[mark]])
        elif op["kind"] == "done":
            judge(op, [evidence[mark], finished[mark]])
            if op["code"] == 0 and finished[mark] == 1 and status.get(op["argv"][1]) != "done":
                found["partial"].append((op["op_id"], "card not done", status.get(op["argv"][1])))
        elif op["kind"] == "next" and op.get("claimed"):
            judge(op, [claimed[op["claimed"]]])
        elif op["kind"] == "release" and op["code"] == 0:
            judge(op, [released[op["released"]]])
    return found


def one(name: str, url: str, folder: Path, env: dict, args) -> dict:
    def cli(*argv, agent=None):
        full = dict(env, LOOPX_DB=url)
        full.pop("LOOPX_AGENT", None)
        if agent:
            full["LOOPX_AGENT"] = agent
        return subprocess.run(
            [sys.executable, "-m", "loopx_core", "--json", *argv],
            cwd=folder,
            env=full,
            capture_output=True,
            text=True,
            timeout=300,
        )

    made = cli("init", "--objective", f"kill and retry on {name}")
    assert made.returncode == 0, made.stderr
    run = Run(folder, url, env, args.seed, args.agents, args.ops, args.seconds, args.kill)
    for agent in run.agents:
        assert cli("agent", "add", agent).returncode == 0
    seconds = run.go()
    exported = cli("export")
    assert exported.returncode == 0, exported.stderr
    found = check(run.done_ops, json.loads(exported.stdout))
    verified = cli("verify")
    codes = Counter(op["code"] for op in run.done_ops)
    return {
        "backend": name,
        "operations": len(run.done_ops),
        "agents": len(run.agents),
        "attempts": run.attempts,
        "kills": sum(run.kills.values()),
        "kills_by": dict(run.kills),
        "acknowledged": codes.get(0, 0),
        "refused": {str(c): n for c, n in sorted(codes.items()) if c not in (0, 1)},
        "internal": codes.get(1, 0),
        "internal_errors": [(op["argv"], op["kills"], op["said"]) for op in run.done_ops if op["code"] == 1][:5],
        "lost": len(found["lost"]),
        "duplicated": len(found["duplicated"]),
        "partial": len(found["partial"]),
        "findings": {k: v[:10] for k, v in found.items() if v},
        "verify": verified.returncode,
        "seconds": round(seconds, 1),
    }


def _schema(server: str) -> tuple[str, str]:
    from urllib.parse import quote

    import psycopg

    schema = "lxkill_" + uuid.uuid4().hex[:10]
    with psycopg.connect(server, autocommit=True) as conn:
        conn.execute(f'CREATE SCHEMA "{schema}"')
    return f"{server}{'&' if '?' in server else '?'}options={quote('-csearch_path=' + schema)}", schema


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--agents", type=int, default=6)
    parser.add_argument("--ops", type=int, default=1400, help="operations per backend")
    parser.add_argument("--seconds", type=float, default=900, help="at most this long per backend")
    parser.add_argument("--kill", type=float, default=0.35, help="chance that an attempt is killed")
    parser.add_argument("--pg", metavar="URL", help="also on a PostgreSQL board (a schema of its own, dropped after)")
    parser.add_argument("--no-sqlite", action="store_true")
    args = parser.parse_args()
    bad = 0
    with tempfile.TemporaryDirectory(prefix="loopx-kill-") as home:
        home_path = Path(home)
        env = person_env(home_path)
        from loopx_core.authority import keys

        keys.create(Path(env["LOOPX_KEY"]), "bench", None)
        env["XDG_DATA_HOME"] = str(home_path / "data")
        runs = [] if args.no_sqlite else [("sqlite", None)]
        if args.pg:
            runs.append(("postgresql", args.pg))
        print(
            f"kill_retry: seed {args.seed}, {args.agents} agents, up to {args.ops} operations and {args.seconds:g} s per backend, "
            f"an attempt killed with chance {args.kill:g}, on {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, load {os.getloadavg()[0]:.1f}"
        )
        for name, server in runs:
            folder = home_path / name
            folder.mkdir()
            schema = None
            if server:
                url, schema = _schema(server)
            else:
                url = str(folder / ".loopx" / "board.db")
            try:
                report = one(name, url, folder, env, args)
            finally:
                if schema:
                    import psycopg

                    with psycopg.connect(server, autocommit=True) as conn:
                        conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
            bad += (
                report["lost"] + report["duplicated"] + report["partial"] + report["internal"] + (report["verify"] != 0)
            )
            print(
                f"{name}: {report['operations']} operations by {report['agents']} agents in {report['seconds']} s "
                f"({report['attempts']} processes), {report['kills']} SIGKILLs ({', '.join(f'{k} {v}' for k, v in sorted(report['kills_by'].items()))}) and retries; "
                f"{report['acknowledged']} acknowledged, refused {report['refused']}, internal errors {report['internal']}; "
                f"acknowledged lost {report['lost']}, duplicated {report['duplicated']}, partial {report['partial']}; "
                f"verify exit {report['verify']}" + (" (clean)" if report["verify"] == 0 else "")
            )
            if report["findings"] or report["internal_errors"]:
                print(
                    "  "
                    + json.dumps({"findings": report["findings"], "internal": report["internal_errors"]}, default=str)
                )
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
