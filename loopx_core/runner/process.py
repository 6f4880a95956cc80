"""One turn's process: started in a session (process group) of its own, its
output read line by line without blocking the runner, stopped as a whole.

- The group: ``start_new_session`` puts the runtime and everything it starts
  in one process group, so a time limit, a spent budget or an abandoned turn
  ends all of it (``stop``: SIGTERM to the group, SIGKILL after ``KILL_AFTER``).
- The whole tree, on Linux: the turn runs under its keeper (``guard``), the
  subreaper of everything the runtime starts. Sandbox helpers that leave the
  group (Claude Code's ``socat`` bridge ``setsid``s, Codex's ``bwrap``) are
  still found and killed when the turn ends, is stopped, or the runner dies —
  even by SIGKILL: the keeper gets SIGTERM from the kernel
  (``PR_SET_PDEATHSIG``) and ends the turn, so no turn goes on writing under a
  lease nobody renews (its writes would be refused anyway, DESIGN §4), and
  nothing of it is left on the person's machine (issue #44).
- The runtime is looked up on PATH's absolute entries only: the others
  resolve against the project, which the agent writes (``rules/spawn``).
- The output: one thread per stream. Complete stdout lines go to a queue (the
  runtime's JSON events); everything, stdout and stderr, is kept as a bounded
  tail for the record of a failed turn.
"""

from __future__ import annotations

import collections
import errno
import os
import queue
import shutil
import signal
import subprocess
import sys
import threading
import time

from ..rules.spawn import python_argv, safe_path

TYPE_CHECKING = False  # (annotations only; checkers read this as typing's)
if TYPE_CHECKING:
    from typing import IO

KILL_AFTER = 3.0  # seconds between SIGTERM and SIGKILL when a turn is stopped
TAIL_BYTES = 16 * 1024
LINE_MAX = 4 * 1024 * 1024  # a longer line is cut (a runtime's event is far smaller)


def die_with_parent(sig: int = signal.SIGKILL) -> None:
    """In a child, before exec: receive ``sig`` when its parent dies (Linux only)."""
    if sys.platform.startswith("linux"):
        try:
            import ctypes

            ctypes.CDLL(None, use_errno=True).prctl(1, int(sig))  # PR_SET_PDEATHSIG
        except Exception:  # no prctl here: the pipe closing still ends most runtimes
            pass


def _found(program: str, env: dict, cwd: str) -> str:
    """``program`` as the runtime would be executed (looked up on the env's PATH; a
    path with a slash from ``cwd``), or OSError now, in the runner, as before."""
    if os.sep in program:
        full = os.path.join(cwd, program)
        if os.path.isfile(full) and os.access(full, os.X_OK):
            return program
    else:
        found = shutil.which(program, path=env.get("PATH", os.defpath))
        if found:
            return found
    raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), program)


class TurnProcess:
    def __init__(self, argv: list[str], env: dict, cwd: str, stdin_text: str | None):
        self.argv = argv
        self.lines: queue.Queue[bytes | None] = queue.Queue()
        self._tail: collections.deque[bytes] = collections.deque()
        self._tail_size = 0
        self._lock = threading.Lock()
        self.started = time.monotonic()
        if "PATH" in env:  # the runtime is looked up on it, from the project: absolute entries only
            env = dict(env, PATH=safe_path(env["PATH"]))
        kept = sys.platform.startswith("linux")
        command = (
            [*python_argv("loopx_core.runner.guard", str(os.getpid()), "--"), _found(argv[0], env, cwd), *argv[1:]]
            if kept and argv
            else argv
        )
        self.proc = subprocess.Popen(
            command,
            cwd=cwd,
            env=env,
            stdin=subprocess.PIPE if stdin_text is not None else subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
            preexec_fn=None if kept else die_with_parent,
        )
        self._readers = [
            threading.Thread(target=self._read, args=(self.proc.stdout, True), daemon=True, name="turn stdout"),
            threading.Thread(target=self._read, args=(self.proc.stderr, False), daemon=True, name="turn stderr"),
        ]
        for reader in self._readers:
            reader.start()
        if stdin_text is not None:
            assert self.proc.stdin is not None  # opened as a pipe for the text
            try:
                self.proc.stdin.write(stdin_text.encode("utf-8", "replace"))
            except (BrokenPipeError, OSError):
                pass  # it did not read its input: its business
            finally:
                try:
                    self.proc.stdin.close()
                except OSError:
                    pass

    def _keep(self, chunk: bytes) -> None:
        with self._lock:
            self._tail.append(chunk)
            self._tail_size += len(chunk)
            while self._tail_size > TAIL_BYTES and len(self._tail) > 1:
                self._tail_size -= len(self._tail.popleft())

    def _read(self, stream: IO[bytes], is_stdout: bool) -> None:
        try:
            while True:
                line = stream.readline(LINE_MAX)
                if not line:
                    break
                self._keep(line)
                if is_stdout:
                    self.lines.put(line)
        except (OSError, ValueError):
            pass
        finally:
            if is_stdout:
                self.lines.put(None)

    def next_lines(self, timeout: float) -> list[bytes]:
        """The stdout lines that arrived, waiting up to ``timeout`` for the first."""
        out = []
        try:
            item = self.lines.get(timeout=timeout)
            while True:
                if item is not None:
                    out.append(item)
                item = self.lines.get_nowait()
        except queue.Empty:
            pass
        return out

    @property
    def running(self) -> bool:
        return self.proc.poll() is None

    @property
    def seconds(self) -> float:
        return time.monotonic() - self.started

    def stop(self) -> None:
        """End the turn's whole process group: SIGTERM, then SIGKILL."""
        self._signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout=KILL_AFTER)
        except subprocess.TimeoutExpired:
            self._signal(signal.SIGKILL)
            self.proc.wait(timeout=KILL_AFTER)
        self._signal(signal.SIGKILL)  # whatever it started and left behind in its group

    def _signal(self, sig: int) -> None:
        try:
            os.killpg(self.proc.pid, sig)
        except (ProcessLookupError, PermissionError):
            pass

    def finish(self, timeout: float = 5.0) -> int | None:
        """Its exit code once it ended, its output read to the end."""
        try:
            code = self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.stop()
            code = self.proc.returncode
        for reader in self._readers:
            reader.join(timeout=timeout)
        return code

    def tail(self) -> str:
        with self._lock:
            data = b"".join(self._tail)
        return data[-TAIL_BYTES:].decode("utf-8", "replace")
