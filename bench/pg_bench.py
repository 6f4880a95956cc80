"""The 8-agent drain on both backends: SQLite file vs a PostgreSQL team board.

Uses LOOPX_TEST_PG (default postgresql://postgres@127.0.0.1:5432/test), in a
throwaway schema. Prints throughput and errors for each."""

from __future__ import annotations

import os
import sys
import uuid
from pathlib import Path
from urllib.parse import quote

sys.path.insert(0, str(Path(__file__).resolve().parent))
from run import drain  # noqa: E402


def main() -> int:
    server = os.environ.get("LOOPX_TEST_PG", "postgresql://postgres@127.0.0.1:5432/test")
    for label, url in (("sqlite", None), ("postgresql", server)):
        schema = None
        if url:
            try:
                import psycopg

                schema = "lxbench_" + uuid.uuid4().hex[:8]
                with psycopg.connect(url, autocommit=True, connect_timeout=3) as conn:
                    conn.execute(f'CREATE SCHEMA "{schema}"')
            except Exception as exc:
                print(f"postgresql: skipped, no server at {url} ({exc}); set LOOPX_TEST_PG")
                continue
            url = f"{url}{'&' if '?' in url else '?'}options={quote('-csearch_path=' + schema)}"
        try:
            d = drain(8, 24, url)
            print(f"{label:<10} 8 agents, 24 cards: {d['seconds']} s = {d['cards_per_second']} cards/s, errors {d['errors']}, every card done once: {d['done_once']}")
        finally:
            if schema:
                with psycopg.connect(server, autocommit=True) as conn:
                    conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
    return 0


if __name__ == "__main__":
    sys.exit(main())
