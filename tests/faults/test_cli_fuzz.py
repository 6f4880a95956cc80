"""Fuzzed command lines over the verb table (tests/faults/cli_fuzz.py): never
exit 1, and a refusal leaves the board as it was (#30). A short run on every
suite run; the long one (thousands on SQLite, fewer on PostgreSQL) is slow."""

from __future__ import annotations

import pytest

from tests.faults import cli_fuzz


@pytest.fixture(autouse=True)
def _throwaway_folder(tmp_path, monkeypatch):
    """A fuzzed `migrate --to 1h` or `export > x` names a relative path: in a folder of
    the test's own, never the checkout the suite runs from."""
    monkeypatch.chdir(tmp_path)


def _check(board, seed, count, seconds):
    cli_fuzz.prepare(board)
    report = cli_fuzz.fuzz(cli_fuzz.board_state(board), seed, count, seconds)
    assert not report["internal"], "\n".join(map(repr, report["internal"][:10]))
    assert not report["changed"], "refused but the board changed:\n" + "\n".join(map(repr, report["changed"][:10]))
    assert report["calls"] >= min(count, 50), report  # it ran, not only timed out
    return report


def test_fuzzed_command_lines_never_reach_an_internal_error(board):
    _check(board, seed=30, count=300 if board.backend == "sqlite" else 100, seconds=20)


@pytest.mark.slow
@pytest.mark.parametrize("seed", [1, 2])
def test_thousands_of_fuzzed_command_lines(board, seed):
    _check(board, seed=seed, count=1500 if board.backend == "sqlite" else 400, seconds=25)
