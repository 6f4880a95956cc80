"""A retry of a finished operation gets the first answer (#30).

Each operator runs in a real process that SIGKILLs itself at a fault point
(``LOOPX_FAULT``, loopx_core/rules/faults.py): before a write transaction's
COMMIT and right after it, at each of the operator's transactions in turn.
The retry, with the same ``--op-id`` and no fault, must answer what an
unkilled run answers, and the board must hold the operation once.
"""

from __future__ import annotations

import signal

import pytest

from tests.conftest import person_ok
from tests.kernel.conftest import kinds

AGENT = "a1"


def _card(board, title: str, **flags) -> str:
    argv = ["card", "add", title]
    for key, value in flags.items():
        argv += [f"--{key.replace('_', '-')}", value]
    return person_ok(board, *argv)["card"]["id"]


def _claimed(board, title: str) -> str:
    key = _card(board, title)
    board.ok("claim", key, agent=AGENT)
    return key


def _reported(board, title: str) -> str:
    key = _claimed(board, title)
    board.ok("writeback", key, "--summary", "did it", agent=AGENT)
    return key


# name -> (set a card up, the argv run with --op-id, the event kinds it adds once, as agent?)
OPERATIONS = {
    "card add": (lambda b, n: None, lambda key, n: ["card", "add", f"task {n}"], ["card_added"], False),
    "claim": (lambda b, n: _card(b, f"c{n}"), lambda key, n: ["claim", key], ["claimed"], True),
    "writeback": (
        lambda b, n: _claimed(b, f"w{n}"),
        lambda key, n: ["writeback", key, "--summary", "step", "--next", "more"],
        ["evidence_added"],
        True,
    ),
    "release": (lambda b, n: _claimed(b, f"r{n}"), lambda key, n: ["release", key], ["released"], True),
    "done": (lambda b, n: _reported(b, f"d{n}"), lambda key, n: ["done", key, "--summary", "finished"], ["done"], True),
    "done with verify": (
        lambda b, n: (
            lambda key: (b.ok("claim", key, agent=AGENT), b.ok("writeback", key, "--summary", "x", agent=AGENT), key)[
                -1
            ]
        )(_card(b, f"v{n}", verify="true")),
        lambda key, n: ["done", key, "--summary", "verified"],
        ["done"],
        True,
    ),
}


def _spawn(board, argv, agent, fault=None):
    return board.spawn("--json", *argv, agent=agent, env={"LOOPX_FAULT": fault} if fault else None)


def _kill_points(board, name, setup, make_argv, added, as_agent, points=("commit", "committed")):
    """Kill ``name`` at every fault point it reaches; after each, retry it."""
    agent = AGENT if as_agent else None
    n = 0
    for point in points:
        for count in range(1, 12):
            n += 1
            key = setup(board, n)
            argv = [*make_argv(key, n), "--op-id", f"op-{name.replace(' ', '-')}-{n}"]
            since = board.ok("events")["events"][-1]["seq"]
            first = _spawn(board, argv, agent, f"{point}:{count}")
            if first.returncode != -signal.SIGKILL:  # ran to the end: no more points to kill at
                assert first.returncode == 0, (name, point, count, first.stdout, first.stderr)
                break
            retry = board.cli(*argv, agent=agent)
            assert retry.code == 0, (name, point, count, retry)
            again = board.cli(*argv, agent=agent)
            assert (again.code, again.data) == (0, retry.data), (name, point, count)
            after = kinds(board, since=since)
            for kind in added:
                assert after.count(kind) == 1, (name, point, count, after)
        else:
            pytest.fail(f"{name} never finished under {point}")
    return n


def test_done_killed_after_each_commit_answers_the_retry_as_done(board):
    """The issue's case: ``done --op-id`` killed after its last commit, before
    its answer; the retry said "LX-… is done and not leased" (exit 5)."""
    board.ok("agent", "add", AGENT)
    setup, make_argv, added, as_agent = OPERATIONS["done"]
    _kill_points(board, "done", setup, make_argv, added, as_agent, points=("committed",))


@pytest.mark.slow
@pytest.mark.parametrize("name", list(OPERATIONS))
def test_every_operator_killed_at_every_point_answers_the_retry_once(board, name):
    board.ok("agent", "add", AGENT)
    setup, make_argv, added, as_agent = OPERATIONS[name]
    _kill_points(board, name, setup, make_argv, added, as_agent)
