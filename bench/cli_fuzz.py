"""Fuzzed command lines over the verb table, on SQLite and (with --pg URL) a
PostgreSQL board: prints how many calls ran, their exit codes, and each one
that ended in exit 1 (an internal error) or changed the board although it was
refused. Seeded and bounded in count and time (tests/faults/cli_fuzz.py; the
suite runs the same, smaller: tests/faults/test_cli_fuzz.py).

Usage: python bench/cli_fuzz.py [--seed 1] [--count 6000] [--seconds 120] [--pg postgresql://postgres@127.0.0.1:5432/test --pg-count 2500]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import uuid
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from tests.faults import cli_fuzz  # noqa: E402


class Board:
    """A project folder and its board, driven through ``cli.main`` in this process."""

    def __init__(self, root: Path, url: str | None):
        self.root, self.db = root, root / ".loopx" / "board.db"
        self.url, self.backend = url or str(self.db), "postgresql" if url else "sqlite"

    def cli(self, *argv, agent=None):
        os.environ["LOOPX_DB"] = self.url
        if agent:
            os.environ["LOOPX_AGENT"] = agent
        else:
            os.environ.pop("LOOPX_AGENT", None)
        try:
            return cli_fuzz.run_once([str(a) for a in argv], agent)
        finally:
            os.environ.pop("LOOPX_AGENT", None)

    def ok(self, *argv, agent=None):
        code, out, err = self.cli(*argv, agent=agent)
        assert code == 0, (argv, out, err)
        return json.loads(out)


def one(url: str | None, seed: int, count: int, seconds: float) -> dict:
    with tempfile.TemporaryDirectory(prefix="loopx-fuzz-") as folder:
        root = Path(folder) / "project"
        root.mkdir()
        os.chdir(root)
        board = Board(root, url)
        board.ok("init", "--objective", "fuzz", "--test-board")
        cli_fuzz.prepare(board)
        return cli_fuzz.fuzz(cli_fuzz.board_state(board), seed, count, seconds)


def _schema(server: str) -> str:
    import psycopg

    schema = "lxfuzz_" + uuid.uuid4().hex[:10]
    with psycopg.connect(server, autocommit=True) as conn:
        conn.execute(f'CREATE SCHEMA "{schema}"')
    from urllib.parse import quote

    return f"{server}{'&' if '?' in server else '?'}options={quote('-csearch_path=' + schema)}", schema


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--count", type=int, default=6000)
    parser.add_argument("--seconds", type=float, default=120)
    parser.add_argument("--pg", metavar="URL")
    parser.add_argument("--pg-count", type=int, default=2500)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="loopx-fuzz-home-") as home:
        from loopx_core.authority import keys

        os.environ.update(LOOPX_KEY=str(Path(home) / "key.json"), XDG_CONFIG_HOME=str(Path(home) / "config"))
        keys.create(Path(home) / "key.json", "fuzzer", None)
        runs = [("sqlite", None, args.count)]
        if args.pg:
            url, schema = _schema(args.pg)
            runs.append(("postgresql", url, args.pg_count))
        bad = 0
        for name, url, count in runs:
            report = one(url, args.seed, count, args.seconds)
            bad += len(report["internal"]) + len(report["changed"])
            print(
                f"{name}: {report['calls']} calls in {report['seconds']} s, exit codes {report['codes']}; "
                f"internal errors: {len(report['internal'])}, refusals that changed the board: {len(report['changed'])}"
            )
            for finding in report["internal"][:20] + report["changed"][:20]:
                print("  " + repr(finding).replace("\n", "\n  "))
        if args.pg:
            import psycopg

            with psycopg.connect(args.pg, autocommit=True) as conn:
                conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
