"""Several hosts on one team board, on this machine (issue #42): each host is a
network namespace of its own (``ip netns``: its own loopback, no route to the
machine's 127.0.0.1) with its own git checkout (a clone of one origin), its
own HOME and its own runners, ``LOOPX_HOST`` naming it. They reach the one
PostgreSQL server through its unix socket folder (the file system is shared):
``postgresql://postgres@/test?host=/socket/folder&port=N``.

Used by tests/pg/test_hosts.py and bench/hosts_bench.py. Needs root (``ip
netns add``); ``Hosts.missing()`` says why not when it cannot run here."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

TURN = Path(__file__).resolve().parent / "host_turn.py"
LOOPX = [sys.executable, "-m", "loopx_core"]
GIT_ENV = {
    "GIT_AUTHOR_NAME": "Tester",
    "GIT_AUTHOR_EMAIL": "tester@localhost",
    "GIT_COMMITTER_NAME": "Tester",
    "GIT_COMMITTER_EMAIL": "tester@localhost",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_CONFIG_NOSYSTEM": "1",
}


def socket_url(server) -> str:
    """The board's URL through the server's unix socket folder (tests/faults/pgserver.OwnServer)."""
    return f"postgresql://postgres@/test?host={server.folder}&port={server.port}"


def missing() -> str | None:
    """Why namespaced hosts cannot run here, or None."""
    if os.geteuid() != 0:
        return "network namespaces need root (`ip netns add`)"
    if shutil.which("ip") is None:
        return "no `ip` (iproute2) on PATH"
    name = f"lxprobe{os.getpid()}"
    made = subprocess.run(["ip", "netns", "add", name], capture_output=True, text=True)
    if made.returncode != 0:
        return f"`ip netns add` failed: {made.stderr.strip()[:200]}"
    subprocess.run(["ip", "netns", "del", name], capture_output=True)
    return None


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(
        ["git", *args], cwd=cwd, env=dict(os.environ, **GIT_ENV), check=True, capture_output=True, timeout=60
    )


class Host:
    """One machine: a namespace, a checkout, a HOME, runners."""

    def __init__(self, name: str, folder: Path, url: str | None, tag: str, namespaced: bool = True):
        self.name, self.url = name, url  # (url None: the checkout's own SQLite board, .loopx/board.db)
        self.netns = (
            f"lx{tag}{name}" if namespaced else None
        )  # (unique per run: parallel test workers each make their own)
        self.folder = folder / name
        self.checkout = self.folder / "checkout"
        self.home = self.folder / "home"
        self.runners: list[subprocess.Popen] = []
        self.logs: list[Path] = []

    def env(self, **extra: str) -> dict:
        home = str(self.home)
        env = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith(("LOOPX_", "XDG_")) or k in ("LOOPX_KEY", "LOOPX_SUITE_RUN", "LOOPX_SUITE_TEST")
        }
        env.update(
            GIT_ENV,
            HOME=home,
            XDG_CONFIG_HOME=f"{home}/.config",
            XDG_DATA_HOME=f"{home}/.local/share",
            XDG_STATE_HOME=f"{home}/.local/state",
            XDG_CACHE_HOME=f"{home}/.cache",
            LOOPX_HOST=self.name,
            PYTHONPATH=os.pathsep.join(sys.path),
        )
        if self.url:
            env["LOOPX_DB"] = self.url
        env.update(extra)
        return env

    def exec_argv(self, argv: list[str]) -> list[str]:
        return ["ip", "netns", "exec", self.netns, *argv] if self.netns else argv

    def loopx(self, *args: str, check: bool = True, timeout: float = 120) -> dict:
        """A cold ``loopx --json`` on this host, in its checkout."""
        done = subprocess.run(
            self.exec_argv([*LOOPX, "--json", *args]),
            cwd=self.checkout,
            env=self.env(),
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        if check and done.returncode != 0:
            raise AssertionError(
                f"{self.name}: loopx {' '.join(args)} exit {done.returncode}: {done.stdout[-500:]} {done.stderr[-1500:]}"
            )
        return {"code": done.returncode, **(json.loads(done.stdout) if done.stdout.strip().startswith("{") else {})}

    def start(self, agent: str, lease: str, hold: Path | None = None) -> None:
        log = self.folder / f"run-{agent}-{len(self.logs)}.log"
        self.logs.append(log)
        env = self.env(**({"HOSTS_HOLD": str(hold)} if hold else {}))
        argv = [
            *LOOPX,
            "run",
            "--agent",
            agent,
            "--runtime",
            "shell",
            "--lease",
            lease,
            "--",
            sys.executable,
            str(TURN),
        ]
        with open(log, "w") as out:
            self.runners.append(
                subprocess.Popen(self.exec_argv(argv), cwd=self.checkout, env=env, stdout=out, stderr=subprocess.STDOUT)
            )

    def pids(self) -> list[int]:
        """Every process of this host: its namespace's (else its runners and their turns, by process group)."""
        if self.netns is None:
            return [p.pid for p in self.runners if p.poll() is None]
        found = subprocess.run(["ip", "netns", "pids", self.netns], capture_output=True, text=True)
        return [int(p) for p in found.stdout.split()]

    def kill(self) -> None:
        """SIGKILL every process of this host (its namespace), as a machine lost."""
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            pids = self.pids()
            if not pids:
                break
            for pid in pids:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            time.sleep(0.05)
        for proc in self.runners:
            proc.wait(timeout=10)
        self.runners = []

    def stop(self, grace: float = 30) -> list[int]:
        """SIGTERM the runners (they end their turn and give their cards back); their exit codes."""
        for proc in self.runners:
            proc.send_signal(signal.SIGTERM)
        codes = []
        for proc in self.runners:
            try:
                codes.append(proc.wait(timeout=grace))
            except subprocess.TimeoutExpired:
                codes.append(None)
        return codes

    def log_tail(self, chars: int = 1500) -> str:
        return "\n".join(
            f"--- {log.name}\n{log.read_text(errors='replace')[-chars:]}" for log in self.logs if log.exists()
        )


class Hosts:
    """``names`` hosts on one PostgreSQL team board at ``url``, each ``init``-ed
    by the person in its own clone of one origin; a context manager that
    removes every namespace and process, even when the test fails."""

    def __init__(self, folder: Path, url: str | None, names=("host-a", "host-b", "host-c"), namespaced: bool = True):
        self.folder, self.url = folder, url
        tag = uuid.uuid4().hex[:6]
        self.hosts = [Host(name, folder, url, tag, namespaced) for name in names]
        self.origin = folder / "origin"

    def __enter__(self) -> Hosts:
        try:
            self.origin.mkdir(parents=True)
            _git(self.origin, "init", "-q", "-b", "main")
            (self.origin / "README.md").write_text("one project, three hosts\n")
            _git(self.origin, "add", "-A")
            _git(self.origin, "commit", "-q", "-m", "first")
            for host in self.hosts:
                if host.netns:
                    subprocess.run(["ip", "netns", "add", host.netns], check=True, capture_output=True)
                    subprocess.run(["ip", "-n", host.netns, "link", "set", "lo", "up"], check=True, capture_output=True)
                host.home.mkdir(parents=True)
                _git(self.folder, "clone", "-q", str(self.origin), str(host.checkout))
                (host.checkout / ".git" / "info" / "exclude").write_text(".loopx/\n")
            first, *others = self.hosts
            first.loopx("init", "--objective", "one board, several hosts")
            for host in others:
                host.loopx("init")  # (the person sets up each machine's checkout)
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def __exit__(self, *exc) -> None:
        for host in self.hosts:
            try:
                host.kill()
            finally:
                if host.netns:
                    subprocess.run(["ip", "netns", "del", host.netns], capture_output=True)

    @property
    def first(self) -> Host:
        return self.hosts[0]

    def events(self) -> list[dict]:
        """The whole event log, a page at a time."""
        found: list[dict] = []
        since: int | None = 0
        while since is not None:
            page = self.first.loopx("events", "--since", str(since))
            found += page["events"]
            since = page["next_since"]
        return found

    def count(self, where: str) -> int:
        """Cards matching ``where`` (SQL), read straight from the server: a
        cheap probe for waiting, where a cold ``loopx`` per look would load the machine."""
        sql = f'SELECT count(*) FROM "card" WHERE {where}'
        if self.url is None:
            import sqlite3

            conn = sqlite3.connect(f"file:{self.first.checkout / '.loopx' / 'board.db'}?mode=ro", uri=True, timeout=5)
            try:
                return conn.execute(sql).fetchone()[0]
            finally:
                conn.close()
        import psycopg

        with psycopg.connect(self.url, connect_timeout=5) as conn:
            return conn.execute(sql).fetchone()[0]

    def wait_for(self, check, what: str, limit: float) -> None:
        deadline = time.monotonic() + limit
        while time.monotonic() < deadline:
            try:
                if check():
                    return
            except Exception:  # (the server restarting: look again)
                pass
            time.sleep(0.25)
        raise AssertionError(f"not within {limit:g} s: {what}\n{self.log_tails()}")

    def log_tails(self) -> str:
        return "\n".join(host.log_tail() for host in self.hosts)
