"""Snapshots of the main screens: seeded board, frozen clock, workers off,
one fixed terminal size each. Regenerate with ``--snapshot-update`` after a
deliberate change, and look at the diff report before accepting it."""

from __future__ import annotations

from .conftest import arm, feed
from .conftest import settled as _settle


def test_status_view(make_app, snap_compare):
    assert snap_compare(make_app(), terminal_size=(120, 36), run_before=_settle)


def test_owner_view(make_app, snap_compare):
    assert snap_compare(make_app(), press=["v"], terminal_size=(120, 36), run_before=_settle)


def test_gate_modal(make_app, snap_compare):
    """Just opened: its answer keys dimmed, the countdown until they work."""

    async def gate(pilot):
        await _settle(pilot)
        await pilot.press("g")
        await pilot.app.reads_idle()
        await pilot.pause()

    assert snap_compare(make_app(), terminal_size=(120, 36), run_before=gate)


def test_gate_modal_armed(make_app, snap_compare):
    """A second later: the keys work; the footer shows the dialog's keys."""

    async def gate(pilot):
        await _settle(pilot)
        await pilot.press("g")
        await pilot.app.reads_idle()
        await arm(pilot)

    assert snap_compare(make_app(), terminal_size=(120, 36), run_before=gate)


def test_gate_waiting_while_typing(make_app, snap_compare):
    """A gate arrives while the person types a filter: it waits, said in the header."""
    from loopx_core.ops import gates

    async def typing(pilot):
        await _settle(pilot)
        await pilot.press("slash", *"dep")
        gates.ask(pilot.app.store, 6, "claude-1", {"question": "Drop the prod sessions table?", "scope": "db:drop"})
        await feed(pilot.app)
        await pilot.pause()
        await pilot.press(*"loy")
        await pilot.app.reads_idle()
        await pilot.pause()

    assert snap_compare(make_app(), terminal_size=(120, 36), run_before=typing)


def test_card_detail(make_app, snap_compare):
    async def open_card(pilot):
        await _settle(pilot)
        pilot.app.open_card(1)
        await pilot.pause()
        await pilot.app.reads_idle()
        await pilot.pause()

    assert snap_compare(make_app(), terminal_size=(120, 36), run_before=open_card)


def test_small_terminal(make_app, snap_compare):
    assert snap_compare(make_app(), terminal_size=(80, 24), run_before=_settle)


def test_artifact_viewer(make_app, snap_compare):
    """An artifact opened from a card's evidence, read in its thread and
    checked against the recorded sha256."""
    from loopx_tui.widgets.evidence_log import EvidenceLog

    from .test_card_screen import first_artifact

    async def open_artifact(pilot):
        await _settle(pilot)
        pilot.app.open_card(1)
        await pilot.pause()
        await pilot.app.reads_idle()
        await pilot.pause()
        log = pilot.app.screen.query_one(EvidenceLog)
        log.focus()
        log.highlighted = first_artifact(log)
        await pilot.press("enter")
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()

    assert snap_compare(make_app(), terminal_size=(100, 30), run_before=open_artifact)


def test_board_timeline(make_app, snap_compare):
    """``t``: the whole board's trajectory — figures, lanes, burn per hour."""

    async def open_timeline(pilot):
        await _settle(pilot)
        await pilot.press("t")
        await pilot.app.reads_idle()
        await pilot.pause()

    assert snap_compare(make_app(), terminal_size=(120, 36), run_before=open_timeline)


def test_card_timeline(make_app, snap_compare):
    async def open_timeline(pilot):
        await _settle(pilot)
        pilot.app.open_card(1)
        await pilot.app.reads_idle()
        await pilot.press("t")
        await pilot.app.reads_idle()
        await pilot.pause()

    assert snap_compare(make_app(), terminal_size=(100, 30), run_before=open_timeline)


def test_cancel_asks_first(make_app, snap_compare):
    async def cancel(pilot):
        await _settle(pilot)
        pilot.app.board_screen.select_card(9)
        await pilot.press("x")
        await pilot.pause()

    assert snap_compare(make_app(), terminal_size=(80, 24), run_before=cancel)


def test_gate_modal_small_terminal(make_app, snap_compare):
    """At 80×24 the question is not covered: notices wait until it is answered."""

    async def gate(pilot):
        await _settle(pilot)
        await pilot.press("g")
        await pilot.app.reads_idle()
        pilot.app.notice("LX-7 moved to ready")
        await pilot.pause()

    assert snap_compare(make_app(), terminal_size=(80, 24), run_before=gate)


def test_add_card_form(make_app, snap_compare):
    assert snap_compare(make_app(), press=["n", *"Ship it"], terminal_size=(100, 30), run_before=_settle)


def test_help_says_how_to_close_it(make_app, snap_compare):
    """`?` covers the footer: the dialog's own edge says Esc/? closes it."""
    assert snap_compare(make_app(), press=["question_mark"], terminal_size=(80, 24), run_before=_settle)


def test_read_only_refusal_small_terminal(make_app, snap_compare):
    """A deciding key on a read-only board: the toast says why and the right
    next step, whole, at 80×24."""

    async def refused(pilot):
        await _settle(pilot)
        await pilot.press("g")
        await pilot.app.reads_idle()
        await arm(pilot)
        await pilot.press("y")
        await pilot.pause()

    app = make_app(
        person=None,
        read_only="3 wrong passphrases for your key",
        read_only_hint="quit (q), run `loopx board` again and type the passphrase of ~/.config/loopx/key.json",
    )
    assert snap_compare(app, terminal_size=(80, 24), run_before=refused)


def test_gate_modal_with_options(make_app, snap_compare):
    """A gate offering options: each with its number key, and t for words."""
    from loopx_core.ops import gates

    async def gate(pilot):
        await _settle(pilot)
        asked, _, _ = gates.ask(
            pilot.app.store,
            6,
            "claude-1",
            {"question": "Which region do we deploy to?", "options": ["eu-west", "us-east", "ap-south"]},
        )
        await feed(pilot.app)
        await pilot.pause()
        pilot.app.gates.show_first(asked.id)
        await pilot.app.reads_idle()
        await pilot.pause()
        await arm(pilot)

    assert snap_compare(make_app(), terminal_size=(100, 30), run_before=gate)


def _gate_on_screen(armed: bool):
    async def gate(pilot):
        await _settle(pilot)
        await pilot.press("g")
        await pilot.app.reads_idle()
        await pilot.pause()
        if armed:
            await arm(pilot)

    return gate


def test_phone_board_60x20(make_app, snap_compare):
    """#29: the board over ssh from a phone: the header says a gate waits and g opens it."""
    assert snap_compare(make_app(), terminal_size=(60, 20), run_before=_settle)


def test_phone_gate_60x20(make_app, snap_compare):
    assert snap_compare(make_app(), terminal_size=(60, 20), run_before=_gate_on_screen(armed=True))


def test_phone_board_50x16(make_app, snap_compare):
    assert snap_compare(make_app(), terminal_size=(50, 16), run_before=_settle)


def test_phone_gate_50x16(make_app, snap_compare):
    assert snap_compare(make_app(), terminal_size=(50, 16), run_before=_gate_on_screen(armed=True))


def test_runtime_notice_on_a_card(make_app, snap_compare):
    """#29: Claude Code (claude-1) asked for its person: the toast, and LX-6's corner."""
    from loopx_core.ops.turns import note

    async def noticed(pilot):
        await _settle(pilot)
        note(
            pilot.app.store,
            "claude-1",
            "runtime_notice",
            6,
            runtime="claude-code",
            agent_id="claude-1",
            type="permission_prompt",
            message="Claude needs your permission to use Bash",
            title="Claude Code",
            session=None,
        )
        await feed(pilot.app)
        await pilot.app.reads_idle()
        await pilot.pause()

    assert snap_compare(make_app(), terminal_size=(120, 36), run_before=noticed)
