"""Artifacts are judged by where their bytes really are: symlinks, ``..`` and
symlinked folders are resolved before the "inside the project?" check, and a
file outside the project is never hashed (DESIGN §5 "Evidence")."""

from __future__ import annotations

import hashlib
import json
import os

import pytest

from .conftest import held, refused


@pytest.fixture
def turn(team):
    team.ok("card", "add", "one")
    held(team, "LX-1", "a1")
    return team


@pytest.fixture
def secret(tmp_path):
    """A file outside the project whose size and hash must never reach the board."""
    path = tmp_path / "outside" / "secret.txt"
    path.parent.mkdir()
    path.write_text("hunter2\n" * 7)
    return path


def never_hashed(board, path) -> None:
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    assert digest not in json.dumps(board.snapshot())


def test_a_symlink_to_a_file_outside_is_refused_like_the_file(turn, secret):
    (turn.root / "x").symlink_to(secret)
    err = refused(turn, 3, "writeback", "LX-1", "--summary", "s", "--artifact", "x", agent="a1")
    assert err["code"] == "artifact_outside_project" and "'x'" in err["message"]
    assert "symlinks are followed" in err["hint"]
    never_hashed(turn, secret)


def test_a_symlinked_folder_and_dot_dot_through_it_are_resolved(turn, secret):
    (turn.root / "docs").symlink_to(secret.parent, target_is_directory=True)
    (turn.root / "src").mkdir()
    refused(turn, 3, "writeback", "LX-1", "--summary", "s", "--artifact", "docs/secret.txt", agent="a1")
    refused(turn, 3, "writeback", "LX-1", "--summary", "s", "--artifact", "src/../docs/secret.txt", agent="a1")
    refused(
        turn, 3, "writeback", "LX-1", "--summary", "s", "--artifact", str(turn.root / "docs" / "secret.txt"), agent="a1"
    )
    never_hashed(turn, secret)


def test_a_dangling_link_pointing_outside_is_refused_too(turn, tmp_path):
    (turn.root / "later").symlink_to(tmp_path / "not-yet-there.txt")
    refused(turn, 3, "writeback", "LX-1", "--summary", "s", "--artifact", "later", agent="a1")


def test_a_link_inside_the_project_records_the_file_it_points_at(turn):
    (turn.root / "build").mkdir()
    (turn.root / "build" / "v3.txt").write_text("release three\n")
    (turn.root / "latest").symlink_to("build/v3.txt")
    ev = turn.ok("writeback", "LX-1", "--summary", "s", "--artifact", "latest", agent="a1")["evidence"]
    assert ev["artifacts"] == [
        {"path": "build/v3.txt", "size": 14, "sha256": hashlib.sha256(b"release three\n").hexdigest()}
    ]


def test_an_input_document_is_held_to_the_same_rule(turn, secret):
    (turn.root / "x").symlink_to(secret)
    doc = turn.root / "turn.json"
    doc.write_text(json.dumps({"summary": "s", "artifacts": ["x"]}))
    refused(turn, 3, "writeback", "LX-1", "--input", str(doc), agent="a1")
    refused(
        turn,
        3,
        "writeback",
        "LX-1",
        "--input",
        "-",
        agent="a1",
        stdin=json.dumps({"summary": "s", "artifacts": [str(turn.root / "x")]}),
    )
    never_hashed(turn, secret)


def test_a_fifo_is_recorded_missing_without_blocking(turn):
    os.mkfifo(turn.root / "pipe")
    ev = turn.ok("writeback", "LX-1", "--summary", "s", "--artifact", "pipe", agent="a1")["evidence"]
    assert ev["artifacts"] == [{"path": "pipe", "size": None, "sha256": None, "missing": True}]


def test_a_project_reached_through_a_symlink(tmp_path, monkeypatch, backend, request):
    """/tmp -> /private/tmp style: the board's project folder is a link; paths
    given through the link, or through the real folder, are both inside."""
    from tests.conftest import Board

    real_root = tmp_path / "private" / "project"
    real_root.mkdir(parents=True)
    (tmp_path / "tmp").symlink_to(tmp_path / "private", target_is_directory=True)
    root = tmp_path / "tmp" / "project"
    url = request.getfixturevalue("pg_url") if backend == "postgresql" else str(root / ".loopx" / "board.db")
    board = Board(root, monkeypatch, url if backend == "postgresql" else None)
    board.url = url
    board.ok("init", "--test-board")
    board.ok("agent", "add", "a1")
    board.ok("card", "add", "one")
    held(board, "LX-1", "a1")
    (real_root / "out.txt").write_text("made it\n")
    for given in ("out.txt", str(root / "out.txt"), str(real_root / "out.txt")):
        ev = board.ok("writeback", "LX-1", "--summary", "s", "--artifact", given, agent="a1")["evidence"]
        assert ev["artifacts"][0]["path"] == "out.txt" and ev["artifacts"][0]["size"] == 8, given
    refused(
        board,
        3,
        "writeback",
        "LX-1",
        "--summary",
        "s",
        "--artifact",
        str(tmp_path / "private" / "elsewhere.txt"),
        agent="a1",
    )
