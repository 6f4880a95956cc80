"""A board whose storage refuses writes (#30): a full disk, a read-only file
system. Writes get exit 12 and the reason, reads go on. A small tmpfs of the
test's own (mounting needs root: skipped otherwise)."""

from __future__ import annotations

import json
import os
import subprocess

import pytest

from tests.conftest import Board


@pytest.fixture
def small_disk(tmp_path):
    mount = tmp_path / "disk"
    mount.mkdir()
    made = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=3m", "tmpfs", str(mount)], capture_output=True)
    if made.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here (needs root): {made.stderr.decode().strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


@pytest.fixture
def board_on_disk(small_disk, monkeypatch):
    root = small_disk / "project"
    root.mkdir()
    b = Board(root, monkeypatch)
    b.ok("init", "--objective", "small disk", "--test-board")
    b.ok("card", "add", "one")
    return b


def _fill(folder) -> None:
    with open(folder / "filler", "wb") as fh:
        try:
            while True:
                fh.write(b"\0" * 65536)
                fh.flush()
        except OSError:
            pass


def _call(b, *argv, agent=None):
    res = b.spawn("--json", *argv, agent=agent, timeout=60)
    assert "Traceback" not in res.stderr, res.stderr
    return res.returncode, json.loads(res.stdout)


def test_a_full_disk_refuses_writes_with_its_reason_and_reads_go_on(board_on_disk, small_disk):
    _fill(small_disk)
    code, out = _call(board_on_disk, "card", "add", "two")
    assert code == 12 and out["error"]["code"] == "disk_full", out
    assert "full" in out["error"]["message"]
    code, out = _call(board_on_disk, "card", "list", "--full")
    assert code == 0 and [c["title"] for c in out["cards"]] == ["one"]
    code, out = _call(board_on_disk, "card", "show", "LX-1")
    assert code == 0 and out["card"]["title"] == "one"
    os.remove(small_disk / "filler")
    code, out = _call(board_on_disk, "card", "add", "two")
    assert code == 0, out


def test_a_read_only_file_system_refuses_writes_and_reads_go_on(board_on_disk, small_disk):
    subprocess.run(["mount", "-o", "remount,ro", str(small_disk)], check=True)
    code, out = _call(board_on_disk, "card", "add", "two")
    assert code == 12 and out["error"]["code"] == "read_only", out
    code, out = _call(board_on_disk, "card", "list", "--full")
    assert code == 0 and [c["title"] for c in out["cards"]] == ["one"]
    code, out = _call(board_on_disk, "verify")
    assert code == 0, out
