"""PostgreSQL fixtures: one fresh schema per test on the server named by
LOOPX_TEST_PG (default postgresql://postgres@127.0.0.1:5432/test)."""

from __future__ import annotations

import os
import uuid
from urllib.parse import quote

import pytest

DEFAULT = "postgresql://postgres@127.0.0.1:5432/test"
SKIP_HINT = (
    "PostgreSQL tests skipped: no server answered at {url} ({why}). "
    "Point them at one with LOOPX_TEST_PG=postgresql://user@host:5432/db"
)


def server_url() -> str:
    return os.environ.get("LOOPX_TEST_PG", DEFAULT)


def _probe(url: str) -> str | None:
    try:
        import psycopg
    except ImportError:
        return "psycopg is not installed"
    try:
        with psycopg.connect(url, connect_timeout=3) as conn:
            conn.execute("SELECT 1")
    except Exception as exc:  # any failure means: no usable server
        return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return None


@pytest.fixture(scope="session")
def pg_server() -> str:
    url = server_url()
    why = _probe(url)
    if why:
        pytest.skip(SKIP_HINT.format(url=url, why=why))
    return url


@pytest.fixture
def pg_url(pg_server):
    """A board URL in a schema of its own, dropped afterwards."""
    import psycopg

    schema = "lxt_" + uuid.uuid4().hex[:12]
    with psycopg.connect(pg_server, autocommit=True) as conn:
        conn.execute(f'CREATE SCHEMA "{schema}"')
    sep = "&" if "?" in pg_server else "?"
    yield f"{pg_server}{sep}options={quote('-csearch_path=' + schema)}"
    with psycopg.connect(pg_server, autocommit=True) as conn:
        conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
