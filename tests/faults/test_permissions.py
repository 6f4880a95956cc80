"""A board this user may not write, a document the watcher may not read (#30),
tried for real. The suite runs as root, whom file permissions do not stop, so
when it is root the ``loopx`` processes here run as an unprivileged user
(``setpriv`` to nobody, 65534) over a project handed to that user; as anyone
else, taking the permission away (chmod) is enough.

- A read-only board file: every write exits 12 ``read_only`` naming what to
  make writable, reads go on, the board is unchanged; made writable as the
  message says, writes work again.
- A PostgreSQL board whose server takes no writes (a read-only transaction,
  as on a standby) is the same refusal on the other backend.
- A watched document the watcher cannot read: refused once (one
  ``ingest_error``), not again on later passes nor by another watcher, and
  read when it changes.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

import pytest

from tests.conftest import NO_KEY, Board
from tests.polling import until

NOBODY = 65534


def _as_user() -> list[str]:
    """The argv prefix that runs a process as a user permissions apply to."""
    if os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip(
            "running as root, and without setpriv (util-linux) no process here can be a user that permissions stop"
        )
    prefix = [setpriv, f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups"]
    _runs_as_that_user(prefix)
    return prefix


@functools.cache
def _probe(prefix: tuple[str, ...]) -> str:
    proc = subprocess.run([*prefix, sys.executable, "-c", "pass"], capture_output=True, text=True, timeout=60)
    return "" if proc.returncode == 0 else (proc.stderr.strip() or f"exit {proc.returncode}")


def _runs_as_that_user(prefix: list[str]) -> None:
    """This interpreter must be one the unprivileged user can run: pyenv's
    3.12/3.13 under a 0700 /root load libpython through a RUNPATH there, which
    that user cannot reach (`./dev py 3.12` here)."""
    problem = _probe(tuple(prefix))
    if problem:
        pytest.skip(
            f"{sys.executable} cannot run as user {NOBODY} ({problem}): these tests need an interpreter every user can run"
        )


def _hand_over(folder: Path) -> None:
    """Make ``folder`` (and all in it) the unprivileged user's when we are root."""
    if os.geteuid() != 0:
        return
    for where, dirs, files in os.walk(folder):
        for name in [where, *(os.path.join(where, n) for n in dirs + files)]:
            os.chown(name, NOBODY, NOBODY)


@pytest.fixture
def shared(monkeypatch):
    """A folder the unprivileged user can reach (pytest's own are root's, 0700),
    holding the project and the config folder its board is pinned in."""
    folder = Path(tempfile.mkdtemp(prefix="loopx-perm-"))
    folder.chmod(0o755)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(folder / "config"))
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def project(shared, monkeypatch, backend, request):
    """A board with agent a1 and card LX-1, in ``shared``; on PostgreSQL, a schema of its own."""
    root = shared / "project"
    root.mkdir()
    url = request.getfixturevalue("pg_url") if backend == "postgresql" else None
    board = Board(root, monkeypatch, url)
    board.ok("init", "--objective", "permissions", "--test-board")
    board.ok("agent", "add", "a1", "--watch", "out")
    board.ok("card", "add", "one")
    for where, dirs, files in os.walk(shared):  # readable by all; the user's own once handed over
        for name in [where, *(os.path.join(where, n) for n in dirs + files)]:
            os.chmod(
                name,
                os.stat(name).st_mode
                | stat.S_IRUSR
                | stat.S_IRGRP
                | stat.S_IROTH
                | (0o111 if os.path.isdir(name) else 0),
            )
    return board


def _env(board, url: str | None = None, agent: str | None = None) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "LOOPX_AGENT"}
    env.update(NO_KEY, LOOPX_DB=url or board.url, HOME=str(board.root.parent))
    if agent:
        env["LOOPX_AGENT"] = agent
    return env


def loopx(board, *argv, agent=None, url=None) -> tuple[int, dict, str]:
    """``loopx --json ARGV`` as the unprivileged user."""
    proc = subprocess.run(
        [*_as_user(), sys.executable, "-m", "loopx_core", "--json", *argv],
        cwd=board.root,
        env=_env(board, url, agent),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert "Traceback" not in proc.stderr, proc.stderr
    lines = proc.stdout.strip().splitlines()
    return proc.returncode, (json.loads(lines[-1]) if lines else {}), proc.stdout


def _export(board, url=None) -> dict:
    code, data, _ = loopx(board, "export", url=url)
    assert code == 0, data
    data["board"].pop("exported_at", None)
    return data


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_a_read_only_board_file_refuses_writes_naming_what_to_change_and_reads_go_on(project):
    if project.backend != "sqlite":
        pytest.skip("a board file is SQLite's; PostgreSQL's read-only board is the next test")
    _hand_over(project.root.parent)  # the project and the config folder: the user's own
    project.db.chmod(0o444)
    before, on_disk = _export(project), _digest(project.db)
    for argv, agent in ((["claim", "LX-1"], "a1"), (["card", "add", "two"], "a1"), (["next", "--claim"], "a1")):
        code, out, _ = loopx(project, *argv, agent=agent)
        assert code == 12 and out["error"]["code"] == "read_only", (argv, out)
        assert str(project.db) in out["error"]["message"] and "writable" in out["error"]["hint"], out
    code, out, _ = loopx(project, "card", "list", "--full", agent="a1")
    assert code == 0 and [c["title"] for c in out["cards"]] == ["one"]
    assert loopx(project, "card", "show", "LX-1", agent="a1")[0] == 0
    code, out, _ = loopx(project, "verify")
    assert code == 0, out
    assert _export(project) == before and _digest(project.db) == on_disk
    # The person does what the message says, for each part it names (SQLite
    # made the WAL files beside the board with its read-only mode): writes work.
    project.db.chmod(0o644)
    for _ in range(4):
        code, out, _ = loopx(project, "claim", "LX-1", agent="a1")
        if code != 12:
            break
        named = out["error"]["message"].split("read-only for this user: ", 1)[1].split(", ")
        assert named and all(Path(n).exists() for n in named), out
        for part in named:
            Path(part).chmod(0o644)
    assert code == 0 and out["card"]["status"] == "active", out


def test_a_postgresql_board_whose_server_takes_no_writes_refuses_them_and_reads_go_on(project):
    if project.backend != "postgresql":
        pytest.skip("PostgreSQL's read-only transaction; a SQLite board's read-only file is the test above")
    read_only = project.url.replace("options=", "options=" + "-cdefault_transaction_read_only%3Don%20", 1)
    assert read_only != project.url
    _hand_over(project.root.parent)  # the project and the config folder: the user's own
    before = _export(project)
    for argv in (["claim", "LX-1"], ["card", "add", "two"]):
        code, out, _ = loopx(project, *argv, agent="a1", url=read_only)
        assert code == 12 and out["error"]["code"] == "read_only", (argv, out)
        assert "takes no writes" in out["error"]["message"] and "primary" in out["error"]["hint"], out
    code, out, _ = loopx(project, "card", "list", "--full", agent="a1", url=read_only)
    assert code == 0 and [c["title"] for c in out["cards"]] == ["one"]
    code, out, _ = loopx(project, "verify", url=read_only)
    assert code == 0, out
    assert _export(project) == before


# -- a document the watcher cannot read ---------------------------------------------------


class Watching:
    """``loopx watch`` as the unprivileged user, its stdout lines collected."""

    def __init__(self, board):
        self.proc = subprocess.Popen(
            [*_as_user(), sys.executable, "-m", "loopx_core", "watch"],
            cwd=board.root,
            env=_env(board),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.out: list[str] = []
        self.err: list[str] = []
        for stream, sink in ((self.proc.stdout, self.out), (self.proc.stderr, self.err)):
            threading.Thread(
                target=lambda s=stream, k=sink: [k.append(line.rstrip("\n")) for line in s], daemon=True
            ).start()

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(20)


def _ingest_errors(board) -> list[dict]:
    return [e for e in board.ok("events", "--limit", "500")["events"] if e["kind"] == "ingest_error"]


def test_an_unreadable_document_is_refused_once_and_read_when_it_changes(project):
    project.ok("claim", "LX-1", agent="a1")
    out = project.root / "out"
    out.mkdir()
    secret = out / "secret.loopx.json"
    secret.write_text(json.dumps({"card": "LX-1", "agent": "a1", "summary": "from the locked file"}))
    _hand_over(project.root.parent)  # the project and the config folder: the user's own
    if os.geteuid() == 0:
        os.chown(secret, 0, 0)  # root's, 0600: the watcher's user cannot read it
    secret.chmod(0o600 if os.geteuid() == 0 else 0o000)

    code, report, _ = loopx(project, "watch", "--once")
    assert code == 0 and report["refused"] == 1, report
    (said,) = report["results"]
    assert said["message"] == "cannot read out/secret.loopx.json: Permission denied" and "readable" in said["hint"], (
        said
    )
    (refusal,) = _ingest_errors(project)
    assert refusal["data"]["code"] == "unreadable" and refusal["data"]["file"] == "out/secret.loopx.json", refusal
    # Another watcher's pass over the same, unchanged document: nothing again.
    code, report, _ = loopx(project, "watch", "--once")
    assert code == 0 and report["refused"] == 0 and report["results"] == [], report
    watching = Watching(project)
    try:
        until(
            lambda: any("following" in line for line in watching.err) or watching.proc.poll() is not None,
            what="loopx watch to start",
        )
        assert watching.proc.poll() is None, watching.err
        # Its passes over the folder (a new document each) leave the unreadable one alone.
        for n in range(3):
            (out / f"turn-{n}.loopx.json").write_text(
                json.dumps({"card": "LX-1", "agent": "a1", "summary": f"turn {n}", "next": f"step {n}"})
            )
            if os.geteuid() == 0:
                os.chown(out / f"turn-{n}.loopx.json", NOBODY, NOBODY)
            until(
                lambda n=n: any(line.startswith("ingested") and f"turn-{n}" in line for line in watching.out),
                what=f"turn {n} ingested",
            )
        assert len(_ingest_errors(project)) == 1
        # It changes (readable now, rewritten): read, and ingested.
        if os.geteuid() == 0:
            os.chown(secret, NOBODY, NOBODY)
        secret.chmod(0o644)
        secret.write_text(
            json.dumps(
                {
                    "card": "LX-1",
                    "agent": "a1",
                    "summary": "from the locked file, readable now",
                    "next": "the last step",
                }
            )
        )
        until(
            lambda: any(line.startswith("ingested") and "secret" in line for line in watching.out),
            what="the document, changed, ingested",
            explain=lambda: (watching.out[-6:], watching.err[-6:]),
        )
    finally:
        watching.stop()
    assert len(_ingest_errors(project)) == 1
    summaries = [e["summary"] for e in project.ok("log", "LX-1")["evidence"]]
    assert "from the locked file, readable now" in summaries and "from the locked file" not in summaries
