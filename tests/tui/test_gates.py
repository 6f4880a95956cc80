"""Gates answered with keystrokes, recorded as the human, one at a time."""

from __future__ import annotations

from loopx_core.ops import gates
from loopx_core.store.models import Grant
from loopx_tui.modals.gate import GateModal

from .conftest import HUMAN, feed


def gate_row(app, gate_id):
    return gates.status(app.store, gate_id)


async def test_y_approves_the_gate_as_the_human(make_app, seeded):
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("g")
        assert isinstance(app.screen, GateModal) and app.screen.gate_id == seeded.gate
        await pilot.press("y")
        await app.ops_idle()
        await pilot.pause()
        gate = gate_row(app, seeded.gate)
        assert gate.status == "approved"
        assert gate.answered_by == HUMAN
        assert app.model.cards[gate.card].status == "active"
        assert not isinstance(app.screen, GateModal)
        assert seeded.gate not in app.model.pending


async def test_n_rejects_with_a_note(make_app, seeded):
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("g", "n")
        assert app.screen.stage == "note"
        await pilot.press(*"not before the demo", "enter")
        await app.ops_idle()
        await pilot.pause()
        gate = gate_row(app, seeded.gate)
        assert (gate.status, gate.note, gate.answered_by) == ("rejected", "not before the demo", HUMAN)
        card = app.model.cards[gate.card]
        assert card.status == "blocked" and "not before the demo" in card.blocked_reason


async def test_capital_a_approves_and_remembers_a_grant(make_app, seeded):
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("g", "A")
        assert app.screen.stage == "remember"
        await pilot.press("a")  # this agent, any card
        await app.ops_idle()
        await pilot.pause()
        assert gate_row(app, seeded.gate).status == "approved"
        with app.store.read():
            grant = Grant.get(Grant.gate == seeded.gate)
        assert (grant.scope, grant.agent, grant.card, grant.created_by) == ("deploy:staging", "codex-1", None, HUMAN)


async def test_escape_leaves_it_for_later_and_g_brings_it_back(make_app, seeded):
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("g", "escape")
        await pilot.pause()
        assert not isinstance(app.screen, GateModal)
        assert seeded.gate in app.gates.deferred
        assert gate_row(app, seeded.gate).status == "pending"
        card = app.model.cards[gate_row(app, seeded.gate).card]
        assert app.model.column_of(card) == "needs_you"
        await pilot.press("g")
        assert isinstance(app.screen, GateModal) and app.screen.gate_id == seeded.gate


async def test_escape_in_the_note_goes_back_not_away(make_app, seeded):
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("g", "n", "escape")
        assert isinstance(app.screen, GateModal) and app.screen.stage == "choose"
        await pilot.press("y")
        await app.ops_idle()
        assert gate_row(app, seeded.gate).status == "approved"


async def test_a_new_gate_pops_the_modal_and_rings_the_bell(make_app, seeded):
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        assert not isinstance(app.screen, GateModal)  # gates pending at start wait for g
        # claude-1 (holding LX-6) asks a gate: the poller's delta pops it.
        gate, _, _ = gates.ask(app.store, 6, "claude-1", {"question": "Use GitHub first?", "scope": "oauth:github"})
        await feed(app)
        await pilot.pause()
        assert isinstance(app.screen, GateModal) and app.screen.gate_id == gate.id
        assert app.bells == 1
        text = str(app.screen.query_one("#gate-question").render())
        assert "Use GitHub first?" in text


async def test_gates_come_one_at_a_time_in_order(make_app, seeded):
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        g1, _, _ = gates.ask(app.store, 6, "claude-1", {"question": "first?", "scope": "oauth:github"})
        g2, _, _ = gates.ask(app.store, 6, "claude-1", {"question": "second?", "scope": "oauth:google"})
        await feed(app)
        await pilot.pause()
        assert app.screen.gate_id == g1.id and app.gates.queue == [g2.id]
        await pilot.press("y")
        await app.ops_idle()
        await pilot.pause()
        assert isinstance(app.screen, GateModal) and app.screen.gate_id == g2.id
        await pilot.press("n", "enter")
        await app.ops_idle()
        await pilot.pause()
        assert not isinstance(app.screen, GateModal)
        assert [gate_row(app, g).status for g in (g1.id, g2.id)] == ["approved", "rejected"]
        assert gate_row(app, seeded.gate).status == "pending"  # pending before the board opened: waits for g


async def test_a_gate_answered_elsewhere_leaves_the_queue(make_app, seeded):
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("g")
        assert isinstance(app.screen, GateModal)
        gates.answer(app.store, seeded.gate, "approve", seeded.person)  # the person, in another window
        await feed(app)
        await pilot.pause()
        assert not isinstance(app.screen, GateModal)
        assert seeded.gate not in app.model.pending and seeded.gate not in app.gates.queue
        assert any("answered elsewhere" in msg for _, msg in app.notices)
        assert gate_row(app, seeded.gate).answered_by == "human:seed"


async def test_a_queued_gate_answered_elsewhere_never_shows(make_app, seeded):
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("g")  # the seeded gate is on screen
        g2, _, _ = gates.ask(app.store, 6, "claude-1", {"question": "next?", "scope": "oauth:github"})
        await feed(app)
        await pilot.pause()
        assert app.gates.queue == [g2.id]
        gates.answer(app.store, g2.id, "reject", seeded.person)
        await feed(app)
        await pilot.pause()
        assert app.gates.queue == []
        await pilot.press("y")
        await app.ops_idle()
        await pilot.pause()
        assert not isinstance(app.screen, GateModal)
        assert gate_row(app, seeded.gate).status == "approved"
