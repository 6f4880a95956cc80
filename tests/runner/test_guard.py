"""The turn's keeper (loopx_core/runner/guard.py) on its own: the runtime's
exit is the keeper's, and nothing the runtime started outlives it — a helper
that ``setsid``s away, a runtime that ignores SIGTERM (issue #44). Real
processes, real signals."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import pytest

from loopx_core.rules.spawn import python_argv

from .conftest import alive

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="the keeper is Linux's (elsewhere the runtime starts directly)"
)


def kept(*argv: str, **kw) -> subprocess.Popen:
    return subprocess.Popen(
        [*python_argv("loopx_core.runner.guard", str(os.getpid()), "--"), *argv], start_new_session=True, **kw
    )


def test_the_keeper_exits_as_the_runtime_did():
    assert kept("sh", "-c", "exit 7").wait(timeout=60) == 7
    assert kept("sh", "-c", "kill -TERM $$").wait(timeout=60) == -signal.SIGTERM


def test_a_helper_that_setsids_away_ends_when_the_runtime_exits(tmp_path):
    pidfile = tmp_path / "helper.pid"
    proc = kept("sh", "-c", f"setsid sleep 600 </dev/null >/dev/null 2>&1 & echo $! > {pidfile}")
    assert proc.wait(timeout=60) == 0
    helper = int(pidfile.read_text())
    assert not alive(helper)  # killed and reaped before the keeper exited


def test_a_stopped_runtime_that_ignores_sigterm_is_killed_with_its_helpers(tmp_path):
    pidfile = tmp_path / "helper.pid"
    proc = kept(
        "sh",
        "-c",
        f"trap '' TERM; setsid sleep 600 </dev/null >/dev/null 2>&1 & echo $! > {pidfile}; echo ready; while :; do sleep 1; done",
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None and proc.stdout.readline() == "ready\n"
    helper = int(pidfile.read_text())
    os.killpg(proc.pid, signal.SIGTERM)  # what the runner's stop does first
    proc.wait(timeout=60)
    assert not alive(helper)
    assert (
        subprocess.run(["pgrep", "-g", str(proc.pid)], capture_output=True).stdout == b""
    )  # nothing left in the turn's group
