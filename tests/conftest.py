"""Shared fixtures: a throwaway project with a board, and ways to drive the real CLI.

The ``board`` fixture (and ``team`` on top of it) is parametrised over both
backends: every kernel test runs on SQLite and on PostgreSQL (one fresh schema
per test on LOOPX_TEST_PG, default postgresql://postgres@127.0.0.1:5432/test).
Without a server the PostgreSQL cases are skipped with a message saying how to
point them at one. ``LOOPX_TEST_BACKENDS=sqlite`` runs only SQLite.
A test that only makes sense for one backend checks ``board.backend``."""

from __future__ import annotations

import contextlib
import io
import json
import os
import subprocess
import sys
import uuid
from pathlib import Path
from typing import NamedTuple
from urllib.parse import quote, urlsplit, urlunsplit

import pytest

# First of all, before anything computes a path from HOME: the run's own HOME and
# XDG folders, and the end-of-run checks that the real HOME is untouched and
# nothing the run started is left running (tests/suite_home.py, issue #44).
from tests import suite_home

suite_home.enter()
pytest_configure = suite_home.pytest_configure
pytest_sessionfinish = suite_home.pytest_sessionfinish
pytest_terminal_summary = suite_home.pytest_terminal_summary
pytest_unconfigure = suite_home.pytest_unconfigure
pytest_runtest_setup = suite_home.pytest_runtest_setup

# Tests open SQLite and PostgreSQL boards in one process: the PostgreSQL driver
# is imported before peewee, so that peewee finds it (store/orm.py).
with contextlib.suppress(ImportError):
    import psycopg  # noqa: F401

REPO = Path(__file__).resolve().parent.parent


class Result(NamedTuple):
    code: int
    data: dict
    out: str
    err: str


class Board:
    """A project folder with ``.loopx/board.db``, driven through ``loopx`` itself."""

    def __init__(self, root: Path, monkeypatch: pytest.MonkeyPatch, url: str | None = None):
        self.root = root
        self.db = root / ".loopx" / "board.db"  # the SQLite file (unused on PostgreSQL)
        self.url = url or str(self.db)  # what LOOPX_DB is set to
        self.backend = "postgresql" if url else "sqlite"
        self._mp = monkeypatch

    # In-process: the real argument parsing, dispatch, output and exit codes,
    # without paying a cold interpreter per call.
    def cli(
        self,
        *argv: str,
        agent: str | None = None,
        stdin: str | None = None,
        tty: bool = False,
        json_out: bool = True,
        env: dict | None = None,
    ) -> Result:
        from loopx_core.cli.main import main

        args = (["--json"] if json_out else []) + [str(a) for a in argv]
        out, err = io.StringIO(), io.StringIO()
        with self._mp.context() as mp:
            mp.chdir(self.root)
            mp.setenv("LOOPX_DB", self.url)
            if agent:
                mp.setenv("LOOPX_AGENT", agent)
            else:
                mp.delenv("LOOPX_AGENT", raising=False)
            for key, value in (env or {}).items():
                mp.setenv(key, value)
            fake_in = io.StringIO(stdin or "")
            fake_in.isatty = lambda: tty  # type: ignore[method-assign]
            mp.setattr(sys, "stdin", fake_in)
            mp.setattr(sys, "stdout", out)
            mp.setattr(sys, "stderr", err)
            code = main(args)
        text = out.getvalue()
        data = {}
        if json_out and text.strip():
            data = json.loads(text.strip().splitlines()[-1])
        return Result(code, data, text, err.getvalue())

    def ok(self, *argv: str, **kw) -> dict:
        res = self.cli(*argv, **kw)
        assert res.code == 0, (argv, res)
        return res.data

    def spawn(
        self, *argv: str, agent: str | None = None, env: dict | None = None, timeout: float = 60, **kw
    ) -> subprocess.CompletedProcess:
        """A real, cold ``loopx`` process (for concurrency, crashes and ttys)."""
        full = dict(os.environ, LOOPX_DB=self.url, **(env or {}))
        full.pop("LOOPX_AGENT", None)
        if agent:
            full["LOOPX_AGENT"] = agent
        return subprocess.run(
            [sys.executable, "-m", "loopx_core", *map(str, argv)],
            cwd=self.root,
            env=full,
            capture_output=True,
            text=True,
            timeout=timeout,
            **kw,
        )

    def store(self):
        from loopx_core.store.backends import Store
        from loopx_core.store.discovery import parse_target

        return Store.open(
            parse_target(self.url, "flag", self.root)
        )  # (a team board: this project is its checkout here)

    def snapshot(self) -> dict:
        """Everything in the board, to assert that a refusal changed nothing."""
        data = self.ok("export")
        data["board"].pop("exported_at", None)
        return data


def downgrade_sqlite(path: Path, version: int) -> None:
    """Turn a board made by this LoopX back into what schema ``version`` made (a
    real old board, to test that it opens): each later step undone, newest first."""
    from tests import board_sql

    con = board_sql.connect(path)
    try:
        if version < 8:
            con.executescript("DROP TABLE IF EXISTS card_try;")
            if version >= 7:
                con.executescript("ALTER TABLE workspace DROP COLUMN checkout;")
        if version < 7:
            con.executescript("DROP TABLE IF EXISTS workspace;")
        if version < 4:
            con.executescript(
                "DROP TABLE runner;"
                + "".join(
                    f"ALTER TABLE card DROP COLUMN {c};"
                    for c in ("window_seconds", "window_tokens", "window_usd", "window_turns", "window_seq", "wake_at")
                )
                + "ALTER TABLE agent DROP COLUMN window_usd; ALTER TABLE agent DROP COLUMN window_turns;"
            )
        if version < 3:
            con.executescript(
                "DROP TABLE person; DELETE FROM setting WHERE key IN ('board_uid', 'signed_from');"
                "ALTER TABLE event DROP COLUMN prev; ALTER TABLE event DROP COLUMN hash; ALTER TABLE event DROP COLUMN key; ALTER TABLE event DROP COLUMN sig;"
                "ALTER TABLE setting DROP COLUMN decided_seq; ALTER TABLE agent DROP COLUMN decided_seq; ALTER TABLE card DROP COLUMN budget_seq;"
                'ALTER TABLE gate DROP COLUMN answer_seq; ALTER TABLE "grant" DROP COLUMN decided_seq;'
                "ALTER TABLE evidence DROP COLUMN unverified; ALTER TABLE card DROP COLUMN unverified_evidence;"
            )
        if version < 2:
            con.executescript("DROP TABLE ingest_seen; DROP TABLE ingest_stream;")
        con.execute("UPDATE setting SET value=? WHERE key='schema_version'", (str(version),))
        con.commit()
    finally:
        con.close()


# An environment without the person's key: what an agent has (SECURITY.md).
NO_KEY = {"LOOPX_KEY": "/nonexistent/loopx/key.json"}

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


def _host_tag() -> str:
    """This machine (hostname and kernel boot): a process id means something only here."""
    import hashlib
    import socket

    try:
        with open("/proc/sys/kernel/random/boot_id") as fh:
            boot = fh.read().strip()
    except OSError:
        boot = ""
    return hashlib.sha256(f"{socket.gethostname()}|{boot}".encode()).hexdigest()[:6]


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # someone else's process: alive
    return True


def worker_database_name(base: str, worker: str, run: str, host: str, pid: int) -> str:
    return f"{base}_{worker}_{run}_{host}_{pid}"


def stale_databases(names, base: str, host: str, alive=_alive) -> list[str]:
    """The worker databases a killed run left behind: made on this machine
    (``host``) by a process that is gone. Another machine's or a live run's
    database is never among them (its pid is alive, or its host differs)."""
    import re

    pattern = re.compile(re.escape(f"{base}_") + r"gw\d+_[0-9a-f]{1,8}_" + re.escape(host) + r"_(\d+)")
    stale = []
    for name in names:
        found = pattern.fullmatch(name)
        if found and not alive(int(found.group(1))):
            stale.append(name)
    return stale


def _sweep(conn, base: str, host: str) -> None:
    """Drop the stale worker databases of killed runs (best effort: another worker may drop them first)."""
    import psycopg

    names = [
        row[0]
        for row in conn.execute(
            "SELECT datname FROM pg_database WHERE datname LIKE %s", (base.replace("_", r"\_") + r"\_gw%",)
        )
    ]
    for name in stale_databases(names, base, host):
        try:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        except psycopg.Error:
            pass


@contextlib.contextmanager
def _worker_database(url: str, worker: str, run: str):
    """A database of this pytest-xdist worker's own for the run (the URL's
    database name plus worker and run ids), dropped afterwards. Schemas already
    keep tests apart; a database per worker also keeps apart what schemas share:
    the board's advisory write lock (loopx_core/store/pg.py) is per database, so
    without this the workers would queue behind each other's writes. The run id
    keeps two runs on one machine (two worktrees) apart. The name also carries
    this machine's tag and the worker's pid: a run that was killed cannot drop
    its databases, so each new run drops those whose process is gone
    (``stale_databases``). A server that refuses CREATE DATABASE keeps the shared one."""
    import psycopg

    parts = urlsplit(url)
    base, host = parts.path.lstrip("/") or "postgres", _host_tag()
    name = worker_database_name(base, worker, run, host, os.getpid())
    if len(name) > 63:  # PostgreSQL's limit: a long base name is not swept
        name = f"{base}_{worker}_{run}"[:63]
    try:
        with psycopg.connect(url, autocommit=True) as conn:
            _sweep(conn, base, host)
            conn.execute(f'CREATE DATABASE "{name}"')
    except psycopg.Error:
        yield url
        return
    try:
        yield urlunsplit(parts._replace(path="/" + name))
    finally:
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture(scope="session")
def pg_server():
    url = server_url()
    why = _probe(url)
    if why:
        pytest.skip(SKIP_HINT.format(url=url, why=why))
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    if not worker:
        yield url
        return
    with _worker_database(url, worker, os.environ.get("PYTEST_XDIST_TESTRUNUID", uuid.uuid4().hex)[:8]) as own:
        yield own


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


BACKENDS = [b for b in os.environ.get("LOOPX_TEST_BACKENDS", "sqlite,postgresql").split(",") if b]


@pytest.fixture(params=BACKENDS)
def backend(request) -> str:
    return request.param


@pytest.fixture
def board(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, backend: str, request) -> Board:
    """A test board (``init --test-board``: LOOPX_NOW may freeze its clock) whose
    first person is the tester — the holder of the session's key (``person``)."""
    root = tmp_path / "project"
    root.mkdir()
    url = request.getfixturevalue("pg_url") if backend == "postgresql" else None
    b = Board(root, monkeypatch, url)
    b.ok("init", "--objective", "test board", "--test-board")
    return b


# -- the person ---------------------------------------------------------------------
# Every test runs as a person who holds a key (SECURITY.md): one unsealed key for
# the session (made once: key generation is cheap, but not free), found through
# LOOPX_KEY, and a config folder of the test's own (where boards' roots are
# pinned). Processes the tests spawn inherit both. (HOME and every XDG folder
# are the run's own from the start: suite_home.) Agents are the same OS user: tests of what an agent
# can do unset or replace LOOPX_KEY, exactly as an agent's environment would.


@pytest.fixture(scope="session")
def person_key(tmp_path_factory) -> Path:
    from loopx_core.authority import keys

    path = tmp_path_factory.mktemp("person") / "key.json"
    keys.create(path, "tester", None)
    return path


@pytest.fixture(autouse=True)
def _person_env(person_key: Path, tmp_path_factory, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("LOOPX_KEY", str(person_key))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path_factory.mktemp("config")))
    # Workspaces (issue #26) are made under the user's data folder: never the real one.
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path_factory.mktemp("data")))
    monkeypatch.delenv("LOOPX_HUMAN", raising=False)


@pytest.fixture
def tester(person_key: Path):
    """The tester as a ``keys.Person`` (for calling human operators in-process)."""
    from loopx_core.authority import keys

    return keys.unlock(person_key)


GIT_ID = {
    "GIT_AUTHOR_NAME": "Tester",
    "GIT_AUTHOR_EMAIL": "tester@localhost",
    "GIT_COMMITTER_NAME": "Tester",
    "GIT_COMMITTER_EMAIL": "tester@localhost",
}


def git(cwd: Path, *args: str) -> str:
    """Real git in ``cwd`` (a tester's identity, no global config), its stdout."""
    env = dict(os.environ, **GIT_ID, GIT_CONFIG_GLOBAL=os.devnull, GIT_CONFIG_NOSYSTEM="1")
    return subprocess.run(
        ["git", *args], cwd=cwd, env=env, check=True, capture_output=True, text=True, timeout=60
    ).stdout


def make_repo(root: Path, files: dict[str, str] | None = None) -> str:
    """Make ``root`` a git repository on ``main`` with one commit (``.loopx/``
    excluded, as a person would); returns that commit."""
    git(root, "init", "-q", "-b", "main")
    (root / ".git" / "info" / "exclude").write_text(".loopx/\n")
    for name, text in (files or {"README.md": "hello\n", "src/app.py": "print('hi')\n"}).items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "first")
    return git(root, "rev-parse", "HEAD").strip()


@pytest.fixture
def repo_team(team: Board) -> Board:
    """``team`` on a project that is a git repository (workspaces on, issue #26).
    On PostgreSQL the project is the checkout ``init`` ran in (its
    ``.loopx/team.json``), as for a person setting up a team board."""
    make_repo(team.root)
    return team


@pytest.fixture
def team(board: Board) -> Board:
    """A board with two agents: ``a1`` may push, ``a2`` may not."""
    board.ok("agent", "add", "a1", "--can", "git:push")
    board.ok("agent", "add", "a2")
    return board


@pytest.fixture(autouse=True)
def _reset_clock():
    from loopx_core.rules import clock

    yield
    clock.set_clock(None)


# -- a person's actions ------------------------------------------------------------
# Every human action in a test (gate answer, card budget/move/assign/unassign,
# price) goes through these two, so how a person proves who they are is
# switched in one place: the tester's key (``_person_env``) and no agent identity.


def person(board: Board, *argv: str, **kw) -> Result:
    """Run ``loopx ARGV`` as the person: no agent identity, the tester's key."""
    return board.cli(*argv, **kw)


def person_ok(board: Board, *argv: str, **kw) -> dict:
    res = person(board, *argv, **kw)
    assert res.code == 0, (argv, res)
    return res.data
