"""Operations SIGKILLed and retried by several agents at once lose nothing
(#30): ``bench/kill_retry.py`` — the script whose figures README quotes — run
small, on both backends. Every acknowledged operation is on the board exactly
once, none in part, no answer is exit 1, and ``verify`` is clean."""

from __future__ import annotations

import os
from types import SimpleNamespace

import pytest

from bench import kill_retry


@pytest.mark.parametrize("backend", ["sqlite", pytest.param("postgresql", marks=pytest.mark.slow)])
def test_operations_killed_and_retried_by_several_agents_are_on_the_board_once(backend, tmp_path, request):
    folder = tmp_path / "project"
    folder.mkdir()
    url = request.getfixturevalue("pg_url") if backend == "postgresql" else str(folder / ".loopx" / "board.db")
    env = {
        k: v for k, v in os.environ.items() if k not in ("LOOPX_NOW", "LOOPX_AGENT")
    }  # a real board on the real clock
    report = kill_retry.one(backend, url, folder, env, SimpleNamespace(seed=7, agents=3, ops=24, seconds=300, kill=0.5))
    assert report["kills"] > 0 and report["acknowledged"] > 0, report
    assert (report["lost"], report["duplicated"], report["partial"], report["internal"], report["verify"]) == (
        0,
        0,
        0,
        0,
        0,
    ), report
