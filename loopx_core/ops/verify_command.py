"""A command run for a card outside any transaction, bounded by a timeout:
its verify command (``done``) and a new workspace's setup command
(``workspace_open``). It runs in a session of its own, so a timeout kills
what it started too; the result is its exit, time and the output's tail.
Nothing here reads or writes the board."""

from __future__ import annotations

import os
import time

TYPE_CHECKING = False  # (annotations only: typing is not imported on the cold path; checkers read this as typing's)
if TYPE_CHECKING:
    import subprocess

OUTPUT_TAIL = 4000


def _kill_group(proc: subprocess.Popen) -> None:
    """Kill the verify command and everything it started (it leads its own session)."""
    import signal

    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        proc.kill()


def run_verify(command: str, cwd: str, timeout: float, env_extra: dict, prefix: list[str] | None = None) -> dict:
    """``prefix``: the argv that confines it (``adapters/confine``), before ``/bin/sh -c``."""
    import subprocess  # only a card with a verify command pays for it

    started = time.monotonic()
    env = dict(os.environ, **env_extra)
    argv: str | list[str] = [*prefix, "/bin/sh", "-c", command] if prefix else command
    # A session of its own, so a timeout kills the command's children too (a shell's
    # `pytest -n 4` or `sleep &` would otherwise outlive the timeout, still running).
    proc = subprocess.Popen(
        argv,
        shell=not prefix,
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        output, _ = proc.communicate(timeout=timeout)
        code, timed_out = proc.returncode, False
    except subprocess.TimeoutExpired:
        _kill_group(proc)
        output, _ = proc.communicate()
        code, timed_out = None, True
    except BaseException:
        _kill_group(proc)
        proc.wait()
        raise
    text = output.decode("utf-8", "replace") if isinstance(output, bytes) else (output or "")
    return {
        "command": command,
        "exit_code": code,
        "passed": code == 0 and not timed_out,
        "timed_out": timed_out,
        "seconds": round(time.monotonic() - started, 3),
        "output": text[-OUTPUT_TAIL:],
    }
