"""A PostgreSQL server of the test's own (#30): initdb into a fresh folder with
the Debian binaries (/usr/lib/postgresql/*/bin), on a free loopback port, so a
test can stop it (`pg_ctl stop -m immediate`) and start it again without
touching the machine's shared server. Skipped where those binaries are not."""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import tempfile
from pathlib import Path

import pytest


def _bin() -> Path | None:
    found = sorted(
        glob.glob("/usr/lib/postgresql/*/bin/initdb"),
        key=lambda p: int(p.split("/")[4]) if p.split("/")[4].isdigit() else 0,
    )
    return Path(found[-1]).parent if found else None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class OwnServer:
    def __init__(self, bindir: Path, folder: Path, as_user: list[str]):
        self.bindir, self.folder, self.as_user = bindir, folder, as_user
        self.data, self.port = folder / "data", _free_port()
        self.url = f"postgresql://postgres@127.0.0.1:{self.port}/test"

    def _run(self, *argv: str, timeout: float = 120) -> None:
        subprocess.run(
            [*self.as_user, str(self.bindir / argv[0]), *argv[1:]], check=True, capture_output=True, timeout=timeout
        )

    def init(self) -> None:
        self._run("initdb", "-D", str(self.data), "-U", "postgres", "--auth=trust", "-E", "UTF8", "-N")

    def start(self) -> None:
        options = f"-p {self.port} -k {self.folder} -c listen_addresses=127.0.0.1 -c fsync=off -c full_page_writes=off"
        self._run(
            "pg_ctl", "-D", str(self.data), "-o", options, "-l", str(self.folder / "log"), "-w", "-t", "60", "start"
        )

    def stop(self) -> None:
        self._run("pg_ctl", "-D", str(self.data), "-m", "immediate", "-w", "stop")

    def create_db(self) -> None:
        import psycopg

        with psycopg.connect(f"postgresql://postgres@127.0.0.1:{self.port}/postgres", autocommit=True) as conn:
            conn.execute('CREATE DATABASE "test"')


@pytest.fixture
def own_pg():
    bindir = _bin()
    if bindir is None:
        pytest.skip("no PostgreSQL server binaries under /usr/lib/postgresql/*/bin")
    folder = Path(tempfile.mkdtemp(prefix="loopx-pg-", dir="/tmp"))  # (the server's user must reach it)
    as_user: list[str] = []
    if os.geteuid() == 0:  # initdb refuses root: run the server as the postgres user
        shutil.chown(folder, "postgres")
        as_user = ["runuser", "-u", "postgres", "--"]
    server = OwnServer(bindir, folder, as_user)
    try:
        server.init()
        server.start()
        server.create_db()
        yield server
    finally:
        try:
            server.stop()
        except subprocess.SubprocessError:
            pass
        shutil.rmtree(folder, ignore_errors=True)
