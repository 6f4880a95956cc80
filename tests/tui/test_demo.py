"""``loopx demo``: real runners drive simulated agents through the real
operators and, within a short run, show every mechanism the board has."""

from __future__ import annotations

import pytest

from loopx_core.demo import DemoAgents, build_demo_board
from loopx_core.demo.agent import SimulatedAgent
from loopx_core.demo.scenario import AGENTS, CARDS
from loopx_core.ops import cards, gates
from loopx_core.ops.board import export
from loopx_core.shapes.errors import LoopxError
from loopx_core.store.backends import Store
from tests.polling import until


def test_the_demo_story_shows_every_mechanism(tmp_path):
    root = tmp_path / "demo"
    location, person = build_demo_board(root, windows=False)  # (its clock does not move: no window would refill)
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
    for kind in (
        "claimed",
        "evidence_added",
        "gate_asked",
        "gate_answered",
        "handoff_created",
        "handoff_accepted",
        "paused",
        "unblocked",
        "done",
    ):
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
def test_real_runners_drive_the_demo_agents_and_stop_cleanly(tmp_path):
    root = tmp_path / "demo"
    location, _ = build_demo_board(root)
    agents = DemoAgents(location, root, pace=0.05)
    agents.start()
    store = Store.open(location)
    try:

        def moving():  # the board shows the loop moving: work by most agents, a person asked
            board = export(store)
            writers = {e["agent"] for e in board["evidence"]}
            return (writers, len(writers) >= 4 and any(g["status"] == "pending" for g in board["gates"]))

        def died():
            codes = [p.poll() for p in agents.procs]
            return f"a demo agent exited ({codes})" if any(c is not None for c in codes) else None

        until(
            lambda: moving()[1],
            what="work by four agents and a pending gate",
            timeout=120,
            interval=0.2,
            abort=died,
            explain=lambda: f"writers so far: {moving()[0]}",
        )
    finally:
        agents.stop()
    try:
        board = export(store)
    finally:
        store.close()
    started = {e["data"]["agent"] for e in board["events"] if e["kind"] == "runner_started"}
    exited = [e for e in board["events"] if e["kind"] == "runner_exited"]
    assert started == {spec.id for spec in AGENTS} and len(exited) == len(AGENTS)
    assert all(e["data"]["why"] == "SIGTERM received" for e in exited)
    assert not [c for c in board["cards"] if c["status"] == "active"]  # every runner gave its card back
    assert {e["kind"] for e in board["events"]} >= {"turn_started", "turn_finished", "runner_state"}
    assert (root / ".loopx" / "demo-claude-1.log").read_text().strip()
