"""The suite's own home: nothing of the real user's is read or written, and
nothing the suite started outlives it (issue #44).

Imported by ``tests/conftest.py`` before anything else, so before any module
computes a path from HOME (``shell/posix_words`` does at import) or asks
platformdirs: ``enter()`` points HOME and every XDG folder (config, data,
state, cache, runtime) into a per-run folder of the suite's own, for the whole
run. That folder (``choose_base``) is beside the checkout, or where
``LOOPX_TEST_BASE`` says: not under /tmp or /var/tmp (Codex's sandbox lets the
agent write those, and LoopX refuses a Codex home there; the e2e tests keep
their runtimes' homes under HOME) and not in the checkout LoopX is installed
from (the hook keeps that read-only to agents). pytest-xdist's workers are
started after this ran, so they inherit it (the same HOME: test ids made
from its paths must agree among workers). Every process the suite starts inherits it too, and also
``LOOPX_SUITE_RUN``: the marker by which the end of the run finds what is
still alive.

At the end (the process that made the folder — xdist's controller, or the one
process of ``-n 0``): the run FAILS, naming the paths, when anything of the
real HOME that LoopX or the runtimes it drives would write changed (``WATCHED``,
and the names directly in HOME); and it FAILS, naming them, when a process
carrying this run's marker is still alive (they are killed). Then the folder
is removed. A folder left by a killed run is removed by the next one.
"""

from __future__ import annotations

import os
import shutil
import signal
import sys
import tempfile
import time
import uuid
from pathlib import Path

import pytest

RUN_ENV = "LOOPX_SUITE_RUN"  # the run's marker, inherited by every process it starts (comma-separated when runs nest)
DIR_ENV = "LOOPX_SUITE_DIR"  # the run's own folder
OWNER_ENV = "LOOPX_SUITE_PID"  # the process that made it (and removes it)
TEST_ENV = "LOOPX_SUITE_TEST"  # the test running when a process started (to name it if it outlives the run)
REAL_HOME_ENV = "LOOPX_SUITE_REAL_HOME"  # the HOME the run started with: the one it must leave untouched
BASE_ENV = "LOOPX_TEST_BASE"  # where the run's folder is made, when given
CHECKOUT = Path(__file__).resolve().parent.parent
TEMPORARY = (
    "/tmp",
    "/var/tmp",
)  # LoopX refuses a Codex home in these (runtimes/codex_settings.py), and so the e2e tests would fail
PREFIX = ".loopx-suite-"
XDG = ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME", "XDG_RUNTIME_DIR")

# What of a person's HOME LoopX itself, the runtimes it drives (Claude Code,
# Codex) or git would write: a test that reaches any of these reaches the
# person's key, boards' pins, workspaces, runtime settings or git identity.
# Not the whole HOME: the person's own tools (their editor, their own Claude
# Code session, pip's and uv's caches — a second suite's set-up beside this
# one installs with them) write it while the suite runs. Plus the names
# directly in HOME: a test must not make a new one either.
WATCHED = (
    ".config/loopx",
    ".local/share/loopx",
    ".local/state/loopx",
    ".cache/loopx",
    ".cache/loopx-e2e",
    ".cache/loopx-tests",
    ".claude/settings.json",
    ".claude/settings.local.json",
    ".claude/CLAUDE.md",
    ".codex/config.toml",
    ".codex/hooks.json",
    ".codex/auth.json",
    ".codex/AGENTS.md",
    ".gitconfig",
    ".config/git",
    ".ssh",
    ".bashrc",
    ".profile",
)
MAX_ENTRIES = 50_000  # per watched folder: a snapshot stays cheap however big it is


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _sweep_stale(base: str) -> None:
    """Remove the folders of killed runs (their maker's pid is gone)."""
    try:
        names = os.listdir(base)
    except OSError:
        return
    for name in names:
        if not name.startswith(PREFIX):
            continue
        pid = name[len(PREFIX) :].split("-", 1)[0]
        if pid.isdigit() and not _alive(int(pid)):
            remove(os.path.join(base, name))


def temporary(path: str) -> bool:
    real = os.path.realpath(path)
    return any(real == t or real.startswith(t + os.sep) for t in {*TEMPORARY, os.path.realpath(tempfile.gettempdir())})


def choose_base() -> str:
    """Where the run's folder goes: ``LOOPX_TEST_BASE`` if given; else beside
    the checkout (its parent folder: neither a temporary folder nor the
    checkout, which the hook keeps read-only to agents, nor the person's
    HOME folders LoopX uses); else, the checkout itself being in a temporary
    folder, the system's temporary folder (the e2e tests that put a Codex home
    in a card's workspace then fail with LoopX's reason: set LOOPX_TEST_BASE)."""
    given = os.environ.get(BASE_ENV)
    if given:
        os.makedirs(given, exist_ok=True)
        return os.path.realpath(given)
    beside = str(CHECKOUT.parent)
    if not temporary(beside) and os.access(beside, os.W_OK):
        return beside
    return "/var/tmp" if os.path.isdir("/var/tmp") and os.access("/var/tmp", os.W_OK) else tempfile.gettempdir()


def _is_worker_of_run() -> bool:
    """An xdist worker of the run that made the folder (its direct child);
    not a pytest that a test started (that one gets a folder of its own)."""
    owner = os.environ.get(OWNER_ENV, "")
    return (
        bool(os.environ.get("PYTEST_XDIST_WORKER"))
        and owner.isdigit()
        and os.getppid() == int(owner)
        and os.path.isdir(os.environ.get(DIR_ENV, ""))
    )


def enter() -> Path:
    """Point HOME and the XDG folders into the run's own folder (idempotent)."""
    if _is_worker_of_run():
        suite = Path(os.environ[DIR_ENV])
    elif os.environ.get(OWNER_ENV) == str(os.getpid()) and os.path.isdir(os.environ.get(DIR_ENV, "")):
        return Path(os.environ[DIR_ENV])  # already entered (conftest imported twice)
    else:
        base = choose_base()
        _sweep_stale(base)
        suite = Path(tempfile.mkdtemp(prefix=f"{PREFIX}{os.getpid()}-", dir=base)).resolve()
        os.environ[DIR_ENV] = str(suite)
        os.environ[OWNER_ENV] = str(os.getpid())
        os.environ[REAL_HOME_ENV] = os.environ.get("HOME") or os.path.expanduser("~")
        token = uuid.uuid4().hex[:12]
        outer = os.environ.get(RUN_ENV)
        os.environ[RUN_ENV] = f"{outer},{token}" if outer else token
    # One HOME for the whole run, workers included: test ids made from these paths
    # (a path in a parametrised command) must be the same in every worker, or
    # xdist refuses the run. Each test still gets config and data folders of its own.
    # The XDG folders where they are by default under that HOME (~/.config …): a
    # path a test computes at import from one must be the path the other names.
    home = suite / "home"
    places = dict(
        zip(
            XDG,
            (
                home / ".config",
                home / ".local" / "share",
                home / ".local" / "state",
                home / ".cache",
                suite / "runtime",
            ),
        )
    )
    for folder in (home, *places.values()):
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    os.environ["HOME"] = str(home)
    for name, folder in places.items():
        os.environ[name] = str(folder)
    return suite


def _own_token() -> str:
    return os.environ.get(RUN_ENV, "").rsplit(",", 1)[-1]


def is_owner() -> bool:
    return os.environ.get(OWNER_ENV) == str(os.getpid())


# -- the real HOME, untouched --------------------------------------------------------------


def snapshot(home: str) -> dict[str, tuple]:
    """What the watched part of ``home`` looks like: path -> (kind, size, mtime)."""
    names = [
        n for n in _listdir(home) if not n.startswith(PREFIX)
    ]  # (a run's own folder, should the checkout be right in HOME)
    seen: dict[str, tuple] = {"": ("names", tuple(sorted(names)))}
    for rel in WATCHED:
        path = os.path.join(home, rel)
        seen[rel] = _stat(path)
        if seen[rel][0] != "dir":
            continue
        count = 0
        for top, dirs, files in os.walk(path):
            for name in dirs + files:
                full = os.path.join(top, name)
                seen[os.path.relpath(full, home)] = _stat(full)
                count += 1
            if count > MAX_ENTRIES:
                break
    return seen


def _listdir(path: str) -> list[str]:
    try:
        return os.listdir(path)
    except OSError:
        return []


def _stat(path: str) -> tuple:
    try:
        st = os.lstat(path)
    except OSError:
        return ("missing",)
    kind = "dir" if os.path.isdir(path) and not os.path.islink(path) else "file"
    return (kind, 0 if kind == "dir" else st.st_size, st.st_mtime_ns, st.st_ino)


def changed(before: dict[str, tuple], after: dict[str, tuple]) -> list[str]:
    """The watched paths that differ (a name made or removed directly in HOME is named as such)."""
    out = []
    if before.get("") != after.get(""):
        old, new = set(before.get("", ("", ()))[1]), set(after.get("", ("", ()))[1])
        out += [f"~/{n} (made)" for n in sorted(new - old)] + [f"~/{n} (removed)" for n in sorted(old - new)]
    named: list[str] = []
    for rel in sorted(set(before) | set(after)):
        if rel and before.get(rel, ("missing",)) != after.get(rel, ("missing",)):
            if not any(rel.startswith(parent + "/") for parent in named):  # a folder's changes: the folder named once
                named.append(rel)
    return out + [f"~/{rel}" for rel in named]


# -- nothing left running ---------------------------------------------------------------------


def marked_processes(token: str) -> list[tuple[int, str]]:
    """(pid, what it is) of the live processes carrying the run's marker, but
    this one: its command line, and the test that was running when it started."""
    needle, test = f"{RUN_ENV}=".encode(), f"{TEST_ENV}=".encode()
    found = []
    for entry in _listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        environ = _environ(int(entry))
        if environ is None:
            continue  # gone, or not ours
        variables = environ.split(b"\0")
        for var in variables:
            if var.startswith(needle) and token.encode() in var[len(needle) :].split(b","):
                started = [v[len(test) :].decode(errors="replace") for v in variables if v.startswith(test)]
                found.append(
                    (int(entry), _cmdline(int(entry)) + (f" (started during {started[0]})" if started else ""))
                )
                break
    return found


def _read(path: str) -> bytes | None:
    try:
        with open(path, "rb") as fh:
            return fh.read()
    except OSError:
        return None


def _environ(pid: int, patience: float = 2.0) -> bytes | None:
    """The environment ``pid`` started with. A process in the middle of an
    ``exec`` reads as having none, and no command line either, for a moment
    (the kernel fills both in only once the new program is loaded): such a
    one is read again until it has them — a daemon a test just started
    ``setsid sleep …`` is two execs away from its program — rather than
    passed over (the cause of a leftover missed under load). A program that
    was given no environment at all shows a command line and still none,
    read after it: that is its answer."""
    deadline = time.monotonic() + patience
    while True:
        environ = _read(f"/proc/{pid}/environ")
        if environ or environ is None:
            return environ
        stat = _read(f"/proc/{pid}/stat")
        if stat is None or _zombie_or_kernel(stat) or time.monotonic() > deadline:
            return environ
        if _read(f"/proc/{pid}/cmdline"):
            again = _read(f"/proc/{pid}/environ")
            if again or again is None or _read(f"/proc/{pid}/cmdline"):
                return again  # its program is loaded: this is its environment
        time.sleep(0.005)


def _zombie_or_kernel(stat: bytes) -> bool:
    try:
        fields = stat.rsplit(b")", 1)[1].split()
        return fields[0] in (b"Z", b"X") or bool(int(fields[6]) & 0x00200000)  # state; flags: PF_KTHREAD
    except (IndexError, ValueError):
        return True


def _cmdline(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            return fh.read().replace(b"\0", b" ").decode(errors="replace").strip()[:200]
    except OSError:
        return "?"


def _xdist_worker(pid: int) -> bool:
    """One of this run's own xdist workers (still shutting down: not a leftover)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            ppid = int(fh.read().rsplit(b")", 1)[1].split()[1])
        with open(f"/proc/{pid}/environ", "rb") as fh:
            worker = b"PYTEST_XDIST_WORKER=" in fh.read()
    except (OSError, ValueError, IndexError):
        return False
    return worker and ppid == os.getpid()


def leftovers(token: str) -> list[tuple[int, str]]:
    return [(pid, cmd) for pid, cmd in marked_processes(token) if not _xdist_worker(pid)]


def kill(pids) -> None:
    """SIGKILL each and the process group it leads or sits in (never this run's own group)."""
    own = os.getpgid(0)
    for pid in pids:
        try:
            group = os.getpgid(pid)
            if group != own:
                os.killpg(group, signal.SIGKILL)
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass  # gone meanwhile


# -- the hooks (re-exported by tests/conftest.py) -------------------------------------------------

_state: dict = {}


def pytest_runtest_setup(item):
    os.environ[TEST_ENV] = item.nodeid


def pytest_configure(config):
    if is_owner() and "before" not in _state:
        _state["before"] = snapshot(os.environ[REAL_HOME_ENV])


@pytest.hookimpl(trylast=True)  # after xdist's, which shuts its workers down
def pytest_sessionfinish(session):
    if not is_owner() or "before" not in _state:
        return
    problems = []
    touched = changed(_state["before"], snapshot(os.environ[REAL_HOME_ENV]))
    if touched:
        problems.append(f"the run changed the real HOME ({os.environ[REAL_HOME_ENV]}): " + ", ".join(touched[:40]))
    alive = leftovers(_own_token())
    if alive:
        kill(pid for pid, _ in alive)
        problems.append(
            "processes the run started outlived it (now killed): "
            + "; ".join(f"{pid} {cmd}" for pid, cmd in alive[:20])
        )
    if problems:
        _state["problems"] = problems
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_terminal_summary(terminalreporter):
    for problem in _state.get("problems", ()):
        terminalreporter.write_sep("!", "the suite's home (tests/suite_home.py)", red=True, bold=True)
        terminalreporter.write_line(problem, red=True)


def _writable_then_retry(func, path, _exc):
    """A folder a test made read-only (a permissions test): made writable, then removed."""
    try:
        os.chmod(os.path.dirname(path), 0o700)
        if os.path.isdir(path) and not os.path.islink(path):
            os.chmod(path, 0o700)
        func(path)
    except OSError:
        pass


def remove(folder: str) -> None:
    if folder and os.path.isdir(folder):
        if sys.version_info >= (3, 12):
            shutil.rmtree(folder, onexc=_writable_then_retry)
        else:
            shutil.rmtree(folder, onerror=_writable_then_retry)


def pytest_unconfigure(config):
    if is_owner():
        remove(os.environ.get(DIR_ENV, ""))
