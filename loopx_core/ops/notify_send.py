"""Running the person's notification command (notify.py says what and when).

A process started for the person, so rules/spawn.py's principles: the program
by the absolute path the person signed (never a PATH search), no shell unless
the person's command is one (``loopx notify set --shell`` stores ``/bin/sh -c
CMD``: the person wrote that shell text; the message never becomes part of it,
it arrives as ``$1`` and ``$2``), the working directory ``/`` (never the
project, which an agent writes), an environment of a few named variables (no
``LOOPX_*``, no ``PYTHON*``, no runtime's API key, only absolute PATH entries),
bounded in time: past ``timeout`` its whole process group is killed. The
message comes twice: as two arguments (title, body) and as one JSON object on
stdin; both terminal-safe."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import threading
import time

from ..rules import faults, spawn
from . import notify

TYPE_CHECKING = False  # (annotations only: typing is not imported on the cold path; checkers read this as typing's)
if TYPE_CHECKING:
    from collections.abc import Callable

    from ..store.base import Store

KEPT = (
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "LANG",
    "LC_ALL",
    "TZ",
    "DISPLAY",
    "WAYLAND_DISPLAY",
    "XDG_RUNTIME_DIR",
    "DBUS_SESSION_BUS_ADDRESS",
)
OUTPUT_KEPT = 300  # characters of the command's output kept in the error
POLL = 2.0  # seconds between a deliverer's looks at the board


def command_env() -> dict[str, str]:
    return spawn.person_env({k: v for k, v in os.environ.items() if k in KEPT})


def phone_link(notice: notify.Notice) -> str | None:
    """The phone's page at this gate (``LOOPX_PHONE_URL``: the address ``loopx
    serve`` is reached at, set in the person's own environment), or None."""
    base = os.environ.get("LOOPX_PHONE_URL", "").strip().rstrip("/")
    if not notice.key.startswith("gate:") or not base.startswith(("https://", "http://localhost")):
        return None
    if any(c.isspace() or not c.isprintable() for c in base):
        return None
    return f"{base}/#g-{notice.key[5:]}"


def run(cmd: notify.Command, notice: notify.Notice) -> tuple[bool, str | None, float]:
    """Run the command for ``notice``: (worked, why not, seconds)."""
    started = time.monotonic()
    link = phone_link(notice)
    message = json.dumps({**notice.to_json(), **({"link": link} if link else {})})
    body = f"{notice.body} {link}" if link else notice.body
    try:
        proc = subprocess.Popen(
            [*cmd.argv, notice.title, body],
            cwd="/",
            env=command_env(),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    except OSError as exc:
        return False, f"could not start {cmd.argv[0]}: {exc.strerror or exc}", time.monotonic() - started
    try:
        out, _ = proc.communicate(message.encode(), timeout=cmd.timeout)
    except subprocess.TimeoutExpired:
        try:
            os.killpg(proc.pid, signal.SIGKILL)  # the command and whatever it started
        except ProcessLookupError:
            pass
        proc.communicate()
        return False, f"timed out after {cmd.timeout:g} s (killed)", time.monotonic() - started
    if proc.returncode != 0:
        tail = " ".join(out.decode("utf-8", "replace").split())[-OUTPUT_KEPT:]
        return False, f"exit {proc.returncode}" + (f": {tail}" if tail else ""), time.monotonic() - started
    return True, None, time.monotonic() - started


def deliver(store: Store, by: str) -> list[tuple[notify.Notice, bool, str | None]]:
    """Claim what needs the person now; for each, mark it started, run the
    command, record the outcome (notify.py: a claim given back, exactly once)."""
    with store.read():
        cmd = notify.command(store)
    if cmd is None:
        return []
    out = []
    claimed = notify.claim(store, cmd, by)
    if claimed.notices:
        faults.point("notify_claimed")  # (a test kills a deliverer here: its claim must be given back)
    for notice in claimed.notices:
        if not notify.start(store, claimed, notice):
            continue  # taken back by another deliverer, which thought this one gone
        ok, error, seconds = run(cmd, notice)
        notify.record(store, notice, ok, error, seconds)
        out.append((notice, ok, error))
    return out


class Deliverer(threading.Thread):
    """A long-running process's deliverer (a runner, the watcher): a look every
    ``POLL`` seconds on its own connection, off the process's main work."""

    def __init__(self, store: Store, by: str, log: Callable[[str], None] | None = None) -> None:
        super().__init__(name=f"notify {by}", daemon=True)
        self.store, self.by, self.log = store, by, log
        self.stopped = threading.Event()

    def run(self) -> None:
        try:
            while not self.stopped.wait(POLL):
                try:
                    for notice, ok, error in deliver(self.store, self.by):
                        if self.log is not None:
                            self.log(f"notified {notice.key}: {'ok' if ok else error}")
                except Exception as exc:  # the board busy or gone a moment: the next look tries again
                    if self.log is not None:
                        self.log(f"notification not delivered: {type(exc).__name__}: {exc}")
        finally:
            self.store.close()

    def stop(self) -> None:
        self.stopped.set()
