"""Helpers for the kernel suite: a frozen clock, refusals that must change
nothing, and event queries. The ``board``/``team`` fixtures come from
tests/conftest.py (every test runs on SQLite and on PostgreSQL)."""

from __future__ import annotations

import pytest

T0 = 1_800_000_000.0  # 2027-01-15T08:00:00Z: far from the real clock on purpose


class Clock:
    """Freezes "now" for in-process calls and for every spawned process
    (``LOOPX_NOW`` is read by loopx_core/rules/clock.py on each call)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch):
        self._mp = monkeypatch
        self.now = T0
        self._apply()

    def _apply(self) -> None:
        self._mp.setenv("LOOPX_NOW", repr(self.now))

    def advance(self, seconds: float) -> float:
        self.now += seconds
        self._apply()
        return self.now

    def env(self, offset: float = 0.0) -> dict:
        """The environment of a call made ``offset`` seconds from now (clock not moved)."""
        return {"LOOPX_NOW": repr(self.now + offset)}


@pytest.fixture(autouse=True)
def clock(monkeypatch: pytest.MonkeyPatch) -> Clock:
    """Every kernel test runs on a frozen clock: no test depends on wall time."""
    return Clock(monkeypatch)


def refused(board, code: int, *argv, as_person: bool = False, **kw) -> dict:
    """Run a command that must be refused with ``code``: the documented error
    JSON, nothing on stdout but that object, no traceback, and the board unchanged.
    ``as_person``: run it as a person's action (``tests.conftest.person``)."""
    from tests.conftest import person

    before = board.snapshot()
    res = person(board, *argv, **kw) if as_person else board.cli(*argv, **kw)
    assert res.code == code, (argv, res)
    assert set(res.data) == {"error"}, res.data
    err = res.data["error"]
    assert isinstance(err["code"], str) and err["code"]
    assert isinstance(err["message"], str) and err["message"]
    assert "hint" in err
    assert "Traceback" not in res.err
    after = board.snapshot()
    assert after == before, f"refused {argv} but the board changed"
    return err


def kinds(board, card: str | None = None, since: int = 0) -> list[str]:
    """The kinds of the events after ``since`` (optionally only one card's)."""
    return [e["kind"] for e in events(board, card, since)]


def events(board, card: str | None = None, since: int = 0) -> list[dict]:
    argv = ["events", "--since", str(since)] + (["--card", card] if card else [])
    return board.ok(*argv)["events"]


def last_seq(board) -> int:
    found = board.ok("events")["events"]
    return found[-1]["seq"] if found else 0


def card(board, key: str) -> dict:
    return board.ok("card", "show", key)["card"]


def held(board, key: str, agent: str, *extra: str) -> dict:
    """Claim ``key`` for ``agent`` (it must succeed with work)."""
    res = board.ok("claim", key, *extra, agent=agent)
    assert res["action"] == "work", res
    return res["card"]


def worked(board, key: str, agent: str, summary: str = "did a step", *extra: str) -> dict:
    return board.ok("writeback", key, "--summary", summary, *extra, agent=agent)


def loopx(
    *argv, cwd, env: dict | None = None, drop: tuple[str, ...] = ("LOOPX_DB", "LOOPX_AGENT"), timeout: float = 60
):
    """A cold ``python -m loopx_core`` with full control of cwd and environment
    (``board.spawn`` always sets LOOPX_DB and the project folder)."""
    import os
    import subprocess
    import sys

    full = {k: v for k, v in os.environ.items() if k not in drop}
    full.update(env or {})
    return subprocess.run(
        [sys.executable, "-m", "loopx_core", *map(str, argv)],
        cwd=cwd,
        env=full,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


# -- PostgreSQL: one schema for the whole kernel session, emptied per test ------
# The shared fixture creates and migrates a fresh schema for every test (~0.3 s
# each, most of the kernel suite's PostgreSQL time). Emptying the tables of one
# schema and restarting its sequences gives every test the same fresh board:
# ids restart at 1 and, with the schema version row gone, `init` creates the
# board again (its CREATE ... IF NOT EXISTS steps find the tables in place).


@pytest.fixture(scope="session")
def _kernel_pg(pg_server):
    import uuid
    from urllib.parse import quote

    import psycopg

    schema = "lxk_" + uuid.uuid4().hex[:12]
    with psycopg.connect(pg_server, autocommit=True) as conn:
        conn.execute(f'CREATE SCHEMA "{schema}"')
    sep = "&" if "?" in pg_server else "?"
    yield schema, f"{pg_server}{sep}options={quote('-csearch_path=' + schema)}"
    with psycopg.connect(pg_server, autocommit=True) as conn:
        conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')


@pytest.fixture
def pg_url(_kernel_pg):
    """Overrides tests/conftest.py's ``pg_url`` for this folder: same URL shape, an emptied schema."""
    return empty_schema(*_kernel_pg)


def empty_schema(schema: str, url: str) -> str:
    """Empty every table of ``schema`` and restart its sequences; returns ``url``."""
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("SET lock_timeout = '20s'")
        tables = [r[0] for r in conn.execute("SELECT tablename FROM pg_tables WHERE schemaname = %s", (schema,))]
        seqs = [r[0] for r in conn.execute("SELECT sequencename FROM pg_sequences WHERE schemaname = %s", (schema,))]
        with conn.transaction():
            for table in tables:  # child rows go with their card (ON DELETE CASCADE) or first
                conn.execute(f'DELETE FROM "{schema}"."{table}"')
            for seq in seqs:
                conn.execute(f'ALTER SEQUENCE "{schema}"."{seq}" RESTART')
    return url
