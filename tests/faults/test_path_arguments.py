"""Every path a person or an agent passes is judged before it is opened (#44):
a named pipe, a folder, a device or a link to nothing, given to each path
argument of the verb table in a real, cold ``loopx`` under a timeout — a
clear refusal with a documented exit code, nothing blocks, the board unchanged.
(Before the rule, ``verify --file FIFO`` waited for a writer forever.)"""

from __future__ import annotations

import json
import os
import sys

import pytest

pytestmark = pytest.mark.parametrize("backend", ["sqlite"], indirect=True)

KINDS = ("fifo", "folder", "device", "dangling")
SAID = {"fifo": "named pipe", "folder": "folder", "device": "device", "dangling": "link to a missing"}


def _make(tmp_path, kind: str) -> str:
    path = tmp_path / f"given-{kind}"
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "folder":
        path.mkdir()
    elif kind == "device":
        path.symlink_to("/dev/zero")
    else:
        path.symlink_to(tmp_path / "nowhere")
    return str(path)


def _refused(res, code: int, kind: str, *, said: str | None = None) -> None:
    assert "Traceback" not in res.stderr, res.stderr
    assert res.returncode == code, res
    message = json.loads(res.stdout.strip().splitlines()[-1])["error"]["message"]
    assert (said or SAID[kind]) in message, message


def _set_up(board) -> None:
    board.ok("agent", "add", "a1")
    board.ok("card", "add", "t")
    board.ok("claim", "LX-1", agent="a1")


@pytest.mark.parametrize("kind", KINDS)
def test_a_file_argument_that_is_not_a_file_is_refused_at_once(board, tmp_path, kind):
    _set_up(board)
    given = _make(tmp_path, kind)
    before = board.snapshot()
    # (timeout: a blocked open is the failure this test exists for)
    _refused(board.spawn("--json", "verify", "--file", given, timeout=60), 2, kind)
    _refused(board.spawn("--json", "writeback", "LX-1", "--input", given, agent="a1", timeout=60), 3, kind)
    if kind != "folder":  # (a folder given as --db names the board inside it, as documented)
        _refused(board.spawn("--json", "--db", given, "card", "list", timeout=60), 4, kind)
        _refused(board.spawn("--json", "migrate", "--to", given, timeout=60), 4, kind)
    _refused(
        board.spawn(
            "--json", "run", "--agent", "a1", "--runtime", "shell", "--log-file", given, "--", "/bin/true", timeout=60
        ),
        2,
        kind,
    )
    _refused(
        board.spawn("--json", "run", "--agent", "a1", "--runtime", "claude-code", "--bin", given, timeout=60),
        2,
        kind,
        said="a program" if kind == "device" else None,
    )
    _refused(
        board.spawn("--json", "notify", "set", "--", given, timeout=60),
        3,
        kind,
        said="a program" if kind == "device" else None,
    )
    _refused(board.spawn("--json", "key", "show", env={"LOOPX_KEY": given}, timeout=60), 3, kind)
    assert board.snapshot() == before


@pytest.mark.parametrize("kind", ("fifo", "device", "dangling"))
def test_a_folder_argument_that_is_not_a_folder_is_refused_at_once(board, tmp_path, kind):
    given = _make(tmp_path, kind)
    before = board.snapshot()
    _refused(board.spawn("--json", "demo", "--script", "--keep", given, timeout=60), 2, kind)
    _refused(board.spawn("--json", "agent", "add", "w1", "--watch", given, timeout=60), 3, kind)
    assert board.snapshot() == before


@pytest.mark.parametrize("kind", KINDS)
def test_a_policy_file_that_is_not_a_file_never_blocks_the_hook_or_policy_show(board, tmp_path, kind):
    policy = board.root / ".loopx" / "policy.json"
    os.replace(_make(tmp_path, kind), policy) if kind != "dangling" else policy.symlink_to(tmp_path / "nowhere")
    _refused(board.spawn("--json", "policy", "show", timeout=60), 3, kind)
    # What the PreToolUse hook reads, cold: the built-in rules, the problem said, no wait.
    probe = f"from loopx_core.adapters import policy; print(policy.load({str(board.root)!r}).problems)"
    res = __import__("subprocess").run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert res.returncode == 0 and SAID[kind] in res.stdout, res


@pytest.mark.parametrize(
    "kind", ("fifo", "folder", "dangling")
)  # (a link to /dev/zero is outside the project: refused as such)
def test_an_artifact_that_is_not_a_file_is_recorded_unhashed_at_once(board, tmp_path, kind):
    _set_up(board)
    inside = board.root / "out"
    inside.mkdir()
    given = _make(inside, kind)
    res = board.spawn("--json", "writeback", "LX-1", "--summary", "s", "--artifact", given, agent="a1", timeout=60)
    assert res.returncode == 0, res
    (artifact,) = json.loads(res.stdout)["evidence"]["artifacts"]
    assert artifact["sha256"] is None and artifact["missing"] is True, artifact
