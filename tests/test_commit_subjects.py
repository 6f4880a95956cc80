"""Commit subjects of at most 72 characters, from the day the rule came
(tests/commit_subjects.py, run by ``./dev check``)."""

from __future__ import annotations

from pathlib import Path

from tests import commit_subjects
from tests.conftest import git, make_repo

REPO = Path(__file__).resolve().parent.parent


def _commit(repo: Path, subject: str) -> str:
    git(
        repo,
        "commit",
        "-q",
        "--allow-empty",
        "-m",
        subject,
        "-m",
        "the detail, in the body, as long as it needs to be " * 4,
    )
    return git(repo, "rev-parse", "HEAD").strip()


def test_a_subject_over_72_characters_after_the_floor_fails_and_is_named(tmp_path):
    make_repo(tmp_path)
    _commit(tmp_path, "history: " + "a subject from before the rule, which nobody can rewrite now " * 2)
    floor = _commit(tmp_path, "the floor")
    fits = "board: the gate queue sees the app as a protocol — no circle ⇄ any more!"
    assert len(fits) == 72 and len(fits.encode()) > 72  # characters are counted, not bytes
    _commit(tmp_path, fits)
    assert commit_subjects.check(tmp_path, floor) == (
        0,
        f"commit subjects: the 1 commit(s) after {floor[:12]} are each at most 72 characters",
    )

    too_long = _commit(tmp_path, fits + ".")
    code, said = commit_subjects.check(tmp_path, floor)
    assert code == 1
    assert f"{too_long[:12]} 73 characters: {fits}." in said
    assert "history:" not in said  # the commits before the floor are not held to it


def test_a_subject_of_two_lines_is_one_subject(tmp_path):
    """git's subject is the first paragraph: two lines without a blank one between are read as one."""
    floor = make_repo(tmp_path)
    git(
        tmp_path,
        "commit",
        "-q",
        "--allow-empty",
        "-m",
        "board: a short first line\nand a second line that git joins to it, making it long",
    )
    code, said = commit_subjects.check(tmp_path, floor)
    assert code == 1 and "board: a short first line and a second line" in said


def test_without_git_history_it_is_skipped(tmp_path):
    """A tarball: no .git here (or, unpacked inside another repository, not its root)."""
    tarball = tmp_path / "loopx-1.0"
    (tarball / "tests").mkdir(parents=True)
    code, said = commit_subjects.check(tarball)
    assert code == 0 and said.startswith("commit subjects not checked"), said


def test_a_history_without_the_floor_is_skipped(tmp_path):
    """A shallow clone: the floor is not there, so which commits came after it cannot be told."""
    make_repo(tmp_path)
    _commit(tmp_path, "x" * 100)
    code, said = commit_subjects.check(tmp_path, "0123456789abcdef0123456789abcdef01234567")
    assert code == 0 and "has no commit 0123456789ab" in said, said


def test_this_repository_keeps_the_rule():
    code, said = commit_subjects.check()
    assert code == 0, said


def test_the_static_gate_runs_the_check():
    assert "tests/commit_subjects.py" in (REPO / "dev").read_text()
