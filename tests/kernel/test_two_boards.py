"""Two boards open in one process never mix (issue #15: ``models.database`` was
one proxy per process, so the peewee models ran on whichever board was opened
last). A test suite, a tool that copies one board into another (``migrate``) or
a board and a watcher each with their store all hold two stores at once: what
runs inside ``a.run``/``a.read`` must reach board ``a``, by the record layer and
by the peewee models alike, in any thread."""

from __future__ import annotations

import threading

import pytest

from loopx_core.ops.agents import find_agent, list_agents
from loopx_core.store import models
from loopx_core.store.backends import Store
from loopx_core.store.discovery import parse_target


@pytest.fixture
def two_stores(tmp_path, backend, request):
    first = request.getfixturevalue("pg_url") if backend == "postgresql" else str(tmp_path / "a" / "board.db")
    a = Store.open(parse_target(first, "flag"), create=True, frozen_ok=True)
    b = Store.open(parse_target(str(tmp_path / "b" / "board.db"), "flag"), create=True, frozen_ok=True)  # opened last
    yield a, b
    a.close()
    b.close()


def _add_agent(store, name: str) -> None:
    store.run(lambda: models.Agent.create(id=name, created_at=1.0))  # through the peewee models


def test_the_models_write_to_the_board_whose_transaction_runs_not_the_last_opened(two_stores):
    a, b = two_stores
    _add_agent(a, "only-in-a")
    _add_agent(b, "only-in-b")
    assert [v.id for v in list_agents(a)] == ["only-in-a"]
    assert [v.id for v in list_agents(b)] == ["only-in-b"]
    assert find_agent(b, "only-in-a") is None and find_agent(a, "only-in-b") is None
    # the record layer, in the same transactions
    assert a.run(lambda: a.execute("SELECT id FROM agent").fetchall()) == [("only-in-a",)]


def test_two_threads_on_two_boards_each_see_their_own(two_stores):
    a, b = two_stores
    _add_agent(a, "only-in-a")
    _add_agent(b, "only-in-b")
    start = threading.Barrier(2)
    seen: dict[str, set] = {"a": set(), "b": set()}

    def reader(name, store):
        start.wait()
        for _ in range(40):
            seen[name].update(v.id for v in list_agents(store))
        store.close()  # this thread's connection

    threads = [threading.Thread(target=reader, args=("a", a)), threading.Thread(target=reader, args=("b", b))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert seen == {"a": {"only-in-a"}, "b": {"only-in-b"}}
