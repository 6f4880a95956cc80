"""``loopx demo``: the simulated agents go through the real operators and,
within a short run, show every mechanism the board has."""

from __future__ import annotations

import time

import pytest

from loopx_core import cards, gates
from loopx_core.board import export
from loopx_core.demo import DemoAgents, build_demo_board
from loopx_core.demo.agent import SimulatedAgent
from loopx_core.demo.scenario import AGENTS, CARDS
from loopx_core.errors import LoopxError
from loopx_core.store import Store


def test_the_demo_story_shows_every_mechanism(tmp_path):
    root = tmp_path / "demo"
    location, person = build_demo_board(root)
    store = Store.open(location)
    try:
        agents = [SimulatedAgent(store, spec.id, root, log=lambda _: None) for spec in AGENTS]
        paused: set[str] = set()
        for _ in range(80):
            for agent in agents:
                try:
                    agent.turn()
                except LoopxError:
                    pass
            for gate in gates.list_gates(store, pending=True):  # the person at the board presses y
                gates.answer(store, gate.id, "approve", person)
            for card in cards.list_cards(store, status="paused"):  # ... and + on a paused card
                paused.add(card.paused_reason)
                cards.budget_card(store, card.id, {"add_turns": 3}, person)
            if all(c.status in ("done", "backlog") for c in cards.list_cards(store)):
                break
        board = export(store)
    finally:
        store.close()
    status = {c["title"]: c["status"] for c in board["cards"]}
    assert status.pop("Refactor the session store") == "backlog"  # left for the person to drag to Ready
    assert set(status.values()) == {"done"}, status
    kinds = {e["kind"] for e in board["events"]}
    for kind in ("claimed", "evidence_added", "gate_asked", "gate_answered", "handoff_created", "handoff_accepted", "paused", "unblocked", "done"):
        assert kind in kinds, kind
    assert paused == {"budget", "no_progress"}
    gate_kinds = {g["kind"] for g in board["gates"]}
    assert gate_kinds == {"permission", "question"}
    arts = [a for e in board["evidence"] for a in e["artifacts"]]
    assert arts and all(a["sha256"] and (root / a["path"]).is_file() for a in arts)
    assert {e["agent"] for e in board["evidence"]} == {spec.id for spec in AGENTS}
    assert len(board["cards"]) == len(CARDS)


def test_build_demo_board_twice_keeps_the_board(tmp_path):
    location, _ = build_demo_board(tmp_path / "demo")
    build_demo_board(tmp_path / "demo")
    store = Store.open(location)
    try:
        assert len(cards.list_cards(store)) == len(CARDS)
    finally:
        store.close()


@pytest.mark.slow
def test_the_agents_run_as_separate_processes(tmp_path):
    root = tmp_path / "demo"
    location, _ = build_demo_board(root)
    agents = DemoAgents(location, root, pace=0.05, turns=12, delay=0.05)
    agents.start()
    try:
        deadline = time.monotonic() + 60
        while any(p.poll() is None for p in agents.procs) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert all(p.returncode == 0 for p in agents.procs)
    finally:
        agents.stop()
    store = Store.open(location)
    try:
        board = export(store)
    finally:
        store.close()
    writers = {e["agent"] for e in board["evidence"]}
    assert len(writers) >= 4
    assert any(g["status"] == "pending" for g in board["gates"])  # waiting for the person at the board
    assert (root / ".loopx" / "demo-claude-1.log").read_text().strip()
