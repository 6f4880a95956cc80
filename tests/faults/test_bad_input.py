"""The issue's bad inputs (#30), each in a real process: bounded before it is
read, answered with a documented code, the board unchanged."""

from __future__ import annotations

import json

import pytest

from tests.kernel.conftest import refused


def _error(res) -> dict:
    assert "Traceback" not in res.stderr, res.stderr
    return json.loads(res.stdout)["error"]


def test_verify_refuses_a_device_instead_of_reading_it_forever(board):
    res = board.spawn("--json", "verify", "--file", "/dev/zero", timeout=30)
    assert res.returncode == 2, res
    assert "device" in _error(res)["message"]


def test_writeback_input_is_bounded(board):
    board.ok("agent", "add", "a1")
    board.ok("card", "add", "t")
    board.ok("claim", "LX-1", agent="a1")
    before = board.snapshot()
    res = board.spawn("--json", "writeback", "LX-1", "--input", "/dev/zero", agent="a1", timeout=30)
    assert res.returncode == 3 and "device" in _error(res)["message"], res
    res = board.spawn("--json", "writeback", "LX-1", "--input", "-", agent="a1", input="x" * (2 << 20), timeout=30)
    assert res.returncode == 3 and "larger than" in _error(res)["message"], res
    assert board.snapshot() == before


def test_an_argument_that_is_not_utf8_is_invalid_input(board):
    import os
    import subprocess
    import sys

    env = dict(os.environ, LOOPX_DB=board.url)
    argv = [sys.executable.encode(), b"-m", b"loopx_core", b"--json", b"person", b"revoke", b"\xff\xfe"]
    res = subprocess.run(argv, cwd=board.root, env=env, capture_output=True, timeout=60)
    assert res.returncode == 3, res
    assert json.loads(res.stdout)["error"]["code"] == "not_utf8"


@pytest.mark.parametrize("backend", ["sqlite"], indirect=True)
def test_migrate_to_a_name_too_long_is_invalid_input(board):
    err = refused(board, 3, "migrate", "--to", "x" * 300)
    assert "too long" in err["message"]
