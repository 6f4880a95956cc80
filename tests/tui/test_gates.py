"""Gates answered with keystrokes, recorded as the human, one at a time."""

from __future__ import annotations

from loopx_core.ops import gates
from loopx_core.store.models import Grant
from loopx_tui.modals.gate import GateModal
from tests.polling import until_async

from .conftest import HUMAN, arm, feed, gate_dialog, idle


def gate_row(app, gate_id):
    return gates.status(app.store, gate_id)


async def test_y_approves_the_gate_as_the_human(make_app, seeded):
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("g")
        await gate_dialog(pilot)
        assert isinstance(app.screen, GateModal) and app.screen.gate_id == seeded.gate
        await arm(pilot)
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
        await pilot.press("g")
        await gate_dialog(pilot)
        await arm(pilot)
        await pilot.press("n")
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
        await pilot.press("g")
        await gate_dialog(pilot)
        await arm(pilot)
        await pilot.press("A")
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
        await gate_dialog(pilot)
        assert isinstance(app.screen, GateModal) and app.screen.gate_id == seeded.gate


async def test_escape_in_the_note_goes_back_not_away(make_app, seeded):
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("g")
        await gate_dialog(pilot)
        await arm(pilot)
        await pilot.press("n", "escape")
        assert isinstance(app.screen, GateModal) and app.screen.stage == "choose"
        await pilot.press("y")
        await app.ops_idle()
        assert gate_row(app, seeded.gate).status == "approved"


async def test_a_new_gate_pops_the_modal_and_rings_the_bell(make_app, seeded):
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        assert not isinstance(app.screen, GateModal)  # the person just started the board: nothing pops yet
        await idle(pilot)  # the gate pending at start opens once they are idle
        assert isinstance(app.screen, GateModal) and app.screen.gate_id == seeded.gate
        await pilot.press("escape")
        await pilot.pause()
        # claude-1 (holding LX-6) asks a gate: the poller's delta pops it once the person is idle.
        gate, _, _ = gates.ask(app.store, 6, "claude-1", {"question": "Use GitHub first?", "scope": "oauth:github"})
        await feed(app)
        await pilot.pause()
        assert not isinstance(app.screen, GateModal)  # (Esc was a key a moment ago)
        await idle(pilot)
        assert isinstance(app.screen, GateModal) and app.screen.gate_id == gate.id
        assert app.bells == 1  # (for the new gate: the one pending at start was there before)
        text = str(app.screen.query_one("#gate-question").render())
        assert "Use GitHub first?" in text


async def test_gates_come_one_at_a_time_in_order(make_app, seeded):
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        app.gates.deferred.add(seeded.gate)  # (left for later: this test is about the new ones)
        g1, _, _ = gates.ask(app.store, 6, "claude-1", {"question": "first?", "scope": "oauth:github"})
        g2, _, _ = gates.ask(app.store, 6, "claude-1", {"question": "second?", "scope": "oauth:google"})
        await feed(app)
        await idle(pilot)
        assert app.screen.gate_id == g1.id and app.gates.queue == [g2.id]
        await arm(pilot)
        await pilot.press("y")
        await app.ops_idle()
        # The person is answering: the next one opens at once (the clock of keys does
        # not move here, so an idle timer cannot open it). Its brief is read in a
        # thread, which a loaded machine may not have run when the key is handled.
        await until_async(
            lambda: isinstance(app.screen, GateModal) and app.screen.gate_id == g2.id,
            what="G2's dialog",
            pause=lambda: pilot.pause(0.05),
        )
        await arm(pilot)
        await pilot.press("n", "enter")
        await app.ops_idle()
        await until_async(
            lambda: not isinstance(app.screen, GateModal), what="the dialog closed", pause=lambda: pilot.pause(0.05)
        )
        assert [gate_row(app, g).status for g in (g1.id, g2.id)] == ["approved", "rejected"]
        assert gate_row(app, seeded.gate).status == "pending"  # left for later: waits for g


async def test_a_gate_answered_elsewhere_leaves_the_queue(make_app, seeded):
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("g")
        await gate_dialog(pilot)
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
        await gate_dialog(pilot)
        g2, _, _ = gates.ask(app.store, 6, "claude-1", {"question": "next?", "scope": "oauth:github"})
        await feed(app)
        await pilot.pause()
        assert app.gates.queue == [g2.id]
        gates.answer(app.store, g2.id, "reject", seeded.person)
        await feed(app)
        await pilot.pause()
        assert app.gates.queue == []
        await arm(pilot)
        await pilot.press("y")
        await app.ops_idle()
        await pilot.pause()
        assert not isinstance(app.screen, GateModal)
        assert gate_row(app, seeded.gate).status == "approved"


# -- a key typed before the question was seen never decides it (#25) -----------------------
def header(app) -> str:
    return str(app.board_screen.query_one("#board-header").render())


def drop_table_gate(app):
    """claude-1 (holding LX-6) asks to drop a table, as in the issue."""
    gate, _, _ = gates.ask(app.store, 6, "claude-1", {"question": "Drop the prod sessions table?", "scope": "db:drop"})
    return gate


async def test_keys_typed_into_the_filter_never_answer_a_gate_that_arrives(make_app, seeded):
    """The person types "deploy" into the filter; the gate arrives after "dep".
    It does not take the keys: the rest of the word, a `y` and Enter go to the
    filter, the gate stays pending (the CLI in another process says so) and
    the header says it waits; it opens once the person stops typing."""
    from .conftest import loopx

    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("slash", *"dep")
        gate = drop_table_gate(app)
        await feed(app)
        await pilot.pause()
        await pilot.press(*"loy", "y", "enter")
        await app.ops_idle()
        await pilot.pause()
        assert not isinstance(app.screen, GateModal)
        assert app.model.query.text == "deployy"
        status = loopx(seeded.location, "gate", "status", gate.key)
        assert status.returncode == 6 and '"pending"' in status.stdout  # 6: still waiting for a person
        assert f"⚑ G-{seeded.gate} +1 waiting — g" in header(app)  # (the one pending at open first, then this one)
        assert gate.id in app.gates.queue
        await idle(pilot)  # two seconds without a key: the queue opens the first gate waiting
        assert isinstance(app.screen, GateModal)


async def test_a_key_before_the_dialog_is_armed_is_dropped(make_app, seeded):
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("g")
        await gate_dialog(pilot)
        modal = app.screen
        assert isinstance(modal, GateModal) and not modal.armed
        assert "keys work in 1.0 s" in str(modal.query_one("#gate-keys").render())
        await pilot.press("y", "n", "A")  # at once: dropped, not kept for later
        await app.ops_idle()
        await pilot.pause()
        assert app.screen is modal and modal.stage == "choose"
        app.ticks.step(0.9)
        await pilot.press("y")  # 0.9 s: still too early, and the countdown starts again
        app.ticks.step(0.5)
        modal.arm_tick()
        assert not modal.armed and "keys work in 0.5 s" in str(modal.query_one("#gate-keys").render())
        await arm(pilot)
        assert modal.armed and "keys work" not in str(modal.query_one("#gate-keys").render())
        assert gate_row(app, seeded.gate).status == "pending"  # nothing typed early was kept
        await pilot.press("y")
        await app.ops_idle()
        await pilot.pause()
        assert gate_row(app, seeded.gate).status == "approved"


async def test_q_and_escape_mean_later_armed_or_not(make_app, seeded):
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("g")
        await gate_dialog(pilot)
        await pilot.press("q")  # not armed yet: still "later", never an answer, and the board stays open
        await pilot.pause()
        assert app.is_running and not isinstance(app.screen, GateModal)
        assert seeded.gate in app.gates.deferred
        assert f"⚑ G-{seeded.gate} waiting — g" in header(app)
        await pilot.press("g")
        await gate_dialog(pilot)
        await arm(pilot)
        await pilot.press("q")
        await pilot.pause()
        assert app.is_running and not isinstance(app.screen, GateModal)
        assert gate_row(app, seeded.gate).status == "pending"


async def test_the_footer_shows_the_dialogs_keys_dimmed_until_armed(make_app, seeded):
    from loopx_tui.widgets.footer import KeyBar, shown_keys

    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("g")
        await gate_dialog(pilot)
        modal = app.screen
        bar = modal.query_one(KeyBar)
        assert bar.keys == ["y", "n", "A", "t", "escape"] and bar.region.y == 29  # the bottom line: over the board's
        enabled = {binding.key: on for binding, on, _ in shown_keys(modal)[0]}
        assert enabled == {"y": False, "n": False, "A": False, "t": False, "escape": True}
        await arm(pilot)
        enabled = {binding.key: on for binding, on, _ in shown_keys(modal)[0]}
        assert all(enabled.values())


async def test_a_gate_pending_when_the_board_opens_opens_once_the_person_is_idle(make_app, seeded):
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        assert app.history is not None  # the history was checked first
        assert not isinstance(app.screen, GateModal)  # the passphrase may still be arriving
        assert f"⚑ G-{seeded.gate} waiting — g" in header(app)
        await idle(pilot)
        assert isinstance(app.screen, GateModal) and app.screen.gate_id == seeded.gate and not app.screen.armed


async def test_a_dangerous_scope_takes_a_second_different_key(make_app, seeded):
    """The person marked db:* dangerous (a signed setting, set with the CLI in
    another process): y alone does not approve db:drop; Y after it does."""
    from .conftest import loopx

    marked = loopx(seeded.location, "dangerous", "set", "db:*", "deploy:prod")
    assert marked.returncode == 0, marked.stderr
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        gate = drop_table_gate(app)
        await feed(app)
        await pilot.pause()
        app.gates.show_first(gate.id)
        await app.reads_idle()
        await pilot.pause()
        modal = app.screen
        assert isinstance(modal, GateModal) and modal.dangerous
        assert "DANGEROUS" in str(modal.query_one("#gate-facts").render())
        await arm(pilot)
        await pilot.press("y", "y")
        await app.ops_idle()
        await pilot.pause()
        assert app.screen is modal and modal.stage == "confirm"
        assert "Y approve db:drop" in str(modal.query_one("#gate-keys").render())
        assert gate_row(app, gate.id).status == "pending"
        await pilot.press("Y")
        await app.ops_idle()
        await pilot.pause()
        assert gate_row(app, gate.id).status == "approved"
        # The seeded gate's deploy:staging is not dangerous: y alone approves it.
        app.gates.show_first(seeded.gate)
        await app.reads_idle()
        await pilot.pause()
        assert not app.screen.dangerous
        await arm(pilot)
        await pilot.press("y")
        await app.ops_idle()
        assert gate_row(app, seeded.gate).status == "approved"


def test_how_long_idle_is_a_setting(monkeypatch, seeded):
    from loopx_tui.app import LoopxApp

    monkeypatch.setenv("LOOPX_GATE_IDLE", "5")
    assert LoopxApp(seeded.location).gate_idle == 5
    for bad in ("soon", "-1", "1e9"):
        monkeypatch.setenv("LOOPX_GATE_IDLE", bad)
        assert LoopxApp(seeded.location).gate_idle == 2.0  # (the default; a bad value is not "never" nor "at once")


async def test_remembering_a_dangerous_scope_takes_the_second_key_too(make_app, seeded):
    from .conftest import loopx

    assert loopx(seeded.location, "dangerous", "set", "deploy:*").returncode == 0
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("g")
        await gate_dialog(pilot)
        await arm(pilot)
        await pilot.press("A", "a")  # remember for this agent: asks Y first
        await app.ops_idle()
        await pilot.pause()
        assert app.screen.stage == "confirm" and gate_row(app, seeded.gate).status == "pending"
        await pilot.press("escape")  # back to the choice, nothing decided
        assert app.screen.stage == "choose"
        await pilot.press("A", "a", "Y")
        await app.ops_idle()
        await pilot.pause()
        assert gate_row(app, seeded.gate).status == "approved"
        with app.store.read():
            assert Grant.get(Grant.gate == seeded.gate).agent == "codex-1"


def ask_with_options(app, *options, scope=None):
    """A new gate on LX-6 (claude-1's) offering ``options``; returns its id."""
    data = {"question": "Which region do we deploy to?", "options": list(options)}
    if scope:
        data["scope"] = scope
    gate, _, _ = gates.ask(app.store, 6, "claude-1", data)
    return gate.id


async def open_gate(pilot, app, gid):
    await feed(app)
    await pilot.pause()
    app.gates.show_first(gid)
    await app.reads_idle()
    await pilot.pause()
    assert isinstance(app.screen, GateModal) and app.screen.gate_id == gid


async def test_a_number_key_chooses_that_option(make_app, seeded):
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        gid = ask_with_options(app, "eu-west", "us-east", "ap-south")
        await open_gate(pilot, app, gid)
        await pilot.press("2")  # typed before the dialog armed: dropped, never an answer
        assert isinstance(app.screen, GateModal) and gate_row(app, gid).status == "pending"
        await arm(pilot)
        await pilot.press("2")
        await app.ops_idle()
        await pilot.pause()
        gate = gate_row(app, gid)
        assert (gate.status, gate.choice, gate.answered_by) == ("approved", "us-east", HUMAN)
        assert any("with option 2" in text for _, text in app.notices)


async def test_t_answers_in_words(make_app, seeded):
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        gid = ask_with_options(app, "eu-west", "us-east")
        await open_gate(pilot, app, gid)
        await arm(pilot)
        await pilot.press("t")
        assert app.screen.stage == "words"
        await pilot.press("enter")  # empty: nothing is sent
        assert isinstance(app.screen, GateModal) and gate_row(app, gid).status == "pending"
        await pilot.press(*"both, eu first", "enter")
        await app.ops_idle()
        await pilot.pause()
        gate = gate_row(app, gid)
        assert (gate.status, gate.text, gate.choice) == ("approved", "both, eu first", None)


async def test_a_number_on_a_dangerous_scope_still_asks_for_the_second_key(make_app, seeded):
    from .conftest import loopx

    assert loopx(seeded.location, "dangerous", "set", "db:*").returncode == 0
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        gid = ask_with_options(app, "drop", "keep", scope="db:drop")
        await open_gate(pilot, app, gid)
        assert app.screen.dangerous
        await arm(pilot)
        await pilot.press("1")
        assert app.screen.stage == "confirm" and gate_row(app, gid).status == "pending"
        await pilot.press("Y")
        await app.ops_idle()
        assert gate_row(app, gid).choice == "drop"


async def test_number_keys_do_nothing_on_a_gate_without_options(make_app, seeded):
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("g")
        await arm(pilot)
        await pilot.press("1")
        assert isinstance(app.screen, GateModal) and gate_row(app, seeded.gate).status == "pending"


async def test_the_dialog_says_when_the_notification_command_told_the_person(make_app, seeded):
    """#29: "Told you 01-05 09:35:00 ✓", or the error, from the `notified` event."""
    from loopx_core.ops import notify

    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        notice = notify.Notice(f"gate:G-{seeded.gate}", "gate_asked", None, gate_row(app, seeded.gate).card, "t", "b")
        notify.record(app.store, notice, False, "exit 3: no route", 0.1)
        await pilot.press("g")
        await app.reads_idle()
        await pilot.pause()
        facts = str(app.screen.query_one("#gate-facts").render())
        assert "Told you" in facts and "✗ exit 3: no route" in facts


async def test_a_phone_sized_board_answers_with_the_same_keys(make_app, seeded):
    """#29: at 50×16 (a phone over ssh) the queue opens with g, its question,
    keys and countdown are on screen, and y / a number answer."""
    app = make_app()
    async with app.run_test(size=(50, 16)) as pilot:
        gid = ask_with_options(app, "eu-west", "us-east")
        await open_gate(pilot, app, gid)
        modal = app.screen
        assert modal.has_class("-small")
        for part in ("#gate-question", "#gate-keys"):
            region = modal.query_one(part).region
            assert region.height and region.bottom <= 15, part  # inside the screen, above the footer
        assert "keys work in" in str(modal.query_one("#gate-keys").render())
        await arm(pilot)
        await pilot.press("2")
        await app.ops_idle()
        await pilot.pause()
        assert gate_row(app, gid).choice == "us-east"
        await pilot.press("g")
        await app.reads_idle()
        await pilot.pause()
        assert isinstance(app.screen, GateModal) and app.screen.gate_id == seeded.gate
        await arm(pilot)
        await pilot.press("y")
        await app.ops_idle()
        assert gate_row(app, seeded.gate).status == "approved"
