"""Moving cards with the mouse (and the same moves by key): every drop runs
the matching operator, and an illegal one is refused and changes nothing."""

from __future__ import annotations

from loopx_core.ops import cards as card_ops
from loopx_core.store.models import Handoff
from loopx_tui.screens.card import CardScreen
from loopx_tui.state import UNASSIGNED

from .conftest import HUMAN, card_spot, card_text, export, show_done


def board(app):
    return app.board_screen.board


async def drag(pilot, card_id: int, column: str, *, release: bool = True):
    app = pilot.app
    cards, spot = card_spot(app, card_id)
    target = board(app).column(column)
    assert target is not None
    await pilot.mouse_down(cards, offset=spot)
    await pilot.hover(target, offset=(4, 3))
    if release:
        await pilot.mouse_up(target, offset=(4, 3))
    await pilot.pause()


async def test_drag_to_another_owner_reassigns_with_a_handoff_packet(make_app, seeded):
    app = make_app()
    async with app.run_test(size=(110, 32)) as pilot:
        await pilot.press("v")
        await pilot.pause()
        assert app.model.cards[6].owner == "claude-1" and app.model.cards[6].lease is not None
        await drag(pilot, 6, "codex-1")
        await app.ops_idle()
        await pilot.pause()
        card = card_ops.show_card(app.store, 6)
        assert (card.status, card.owner, card.lease) == ("handoff", "codex-1", None)  # old lease revoked
        with app.store.read():
            packet = Handoff.select().where(Handoff.card == 6).order_by(Handoff.id.desc()).first()
        assert (packet.from_agent, packet.to_agent, packet.created_by) == ("claude-1", "codex-1", HUMAN)
        assert '"next":"ask which one"' in packet.packet  # built from the card's own state
        # On screen: the card now sits in codex-1's column, and nowhere else.
        assert 6 in board(app).column("codex-1").card_ids()
        assert 6 not in board(app).column("claude-1").card_ids()


async def test_drag_to_unassigned_unassigns(make_app, seeded):
    app = make_app()
    async with app.run_test(size=(110, 32)) as pilot:
        await pilot.press("v")
        await pilot.pause()
        await drag(pilot, 6, UNASSIGNED)
        await app.ops_idle()
        await pilot.pause()
        card = card_ops.show_card(app.store, 6)
        assert (card.status, card.owner, card.lease) == ("ready", None, None)
        assert 6 in board(app).column(UNASSIGNED).card_ids()


async def test_drag_in_status_view_runs_the_column_move(make_app, seeded):
    from loopx_tui.modals.confirm import ConfirmModal

    app = make_app()
    async with app.run_test(size=(110, 32)) as pilot:
        await drag(pilot, 9, "done")  # the backlog card, onto Done: cancelled — after asking
        assert isinstance(app.screen, ConfirmModal) and "LX-9" in app.screen.question
        await pilot.press("n")  # kept
        await app.ops_idle()
        assert not isinstance(app.screen, ConfirmModal) and card_ops.show_card(app.store, 9).status == "backlog"
        await drag(pilot, 9, "done")
        await pilot.press("y")
        await app.ops_idle()
        await pilot.pause()
        assert card_ops.show_card(app.store, 9).status == "cancelled"
        await drag(pilot, 9, "ready")  # and back
        await app.ops_idle()
        assert card_ops.show_card(app.store, 9).status == "ready"


async def test_an_illegal_drag_is_refused_with_the_reason_and_changes_nothing(make_app, seeded):
    before = export(seeded.location)
    app = make_app()
    async with app.run_test(size=(110, 32)) as pilot:
        await show_done(app, pilot)
        await drag(pilot, 1, "ready")  # LX-1 is done: the operator refuses
        await app.ops_idle()
        await pilot.pause()
        assert app.notices and app.notices[-1][0] == "error"
        assert "cannot move LX-1 from done to ready: it is done" in app.notices[-1][1]
        assert 1 in board(app).column("done").card_ids()  # snapped back
        await drag(pilot, 7, "active")  # no person's move makes a card active
        await app.ops_idle()
        assert "cannot move LX-7 to Active" in app.notices[-1][1]
        assert 7 in board(app).column("ready").card_ids()
        assert not isinstance(app.screen, CardScreen)  # a drag never opens the card
    assert export(seeded.location) == before


async def test_an_illegal_reassign_is_refused(make_app, seeded):
    before = export(seeded.location)
    app = make_app()
    async with app.run_test(size=(110, 32)) as pilot:
        await pilot.press("v")
        await pilot.pause()
        await drag(pilot, 1, "codex-1")  # a done card cannot be reassigned
        await app.ops_idle()
        assert "it is done" in app.notices[-1][1]
    assert export(seeded.location) == before


async def test_the_drag_shows_where_it_will_land_and_escape_cancels(make_app, seeded):
    before = export(seeded.location)
    app = make_app()
    async with app.run_test(size=(110, 32)) as pilot:
        await pilot.press("v")
        await pilot.pause()
        await drag(pilot, 6, "codex-1", release=False)
        target = board(app).column("codex-1")
        assert target.has_class("-drop-target") and "assign" in target.hint
        assert "reassign to codex-1" in app.board_screen.query_one("#board-header").note
        assert board(app).column("claude-1").body.dragged.id == 6
        assert "╍" in card_text(app, 6)  # drawn with a dashed edge while it moves
        await pilot.press("escape")
        await pilot.pause()
        assert not target.has_class("-drop-target")
        await pilot.mouse_up(target, offset=(4, 3))
        await app.ops_idle()
        await pilot.pause()
        assert app.model.cards[6].owner == "claude-1"
    assert export(seeded.location) == before


async def test_a_small_move_is_still_a_click_that_opens_the_card(make_app, seeded):
    app = make_app()
    async with app.run_test(size=(110, 32)) as pilot:
        cards, (x, y) = card_spot(app, 6)
        await pilot.mouse_down(cards, offset=(x, y))
        await pilot.hover(cards, offset=(x + 1, y))  # one cell: under the threshold
        await pilot.mouse_up(cards, offset=(x + 1, y))
        assert not cards.dragging
        await pilot.click(cards, offset=(x + 1, y))
        await pilot.pause()
        assert isinstance(app.screen, CardScreen) and app.screen.card_id == 6


async def test_the_card_under_the_pointer_is_lit(make_app, seeded):
    app = make_app()
    async with app.run_test(size=(110, 32)) as pilot:
        cards, (x, y) = card_spot(app, 6)  # LX-6 under LX-2 in Active
        background = lambda cid: next(iter(cards.drawn(cid)[1])).style.bgcolor  # noqa: E731  (its left edge)
        assert background(6) == background(2)
        await pilot.hover(cards, offset=(x, y))
        assert background(6) != background(2) and background(6) == (cards.look().face + cards.look().hover).bgcolor
        await pilot.hover(board(app).column("ready").body, offset=(x, y))  # elsewhere: no longer lit
        assert background(6) == background(2)


async def test_every_move_has_a_key(make_app, seeded):
    app = make_app()
    async with app.run_test(size=(110, 32)) as pilot:
        assert app.board_screen.select_card(9)  # backlog card
        await pilot.press("r")
        await app.ops_idle()
        assert card_ops.show_card(app.store, 9).status == "ready"
        await pilot.pause()
        assert app.board_screen.select_card(9)
        await pilot.press("x")
        await pilot.press("escape")  # the question, left: nothing happens
        await app.ops_idle()
        assert card_ops.show_card(app.store, 9).status == "ready"
        await pilot.press("x", "y")
        await app.ops_idle()
        assert card_ops.show_card(app.store, 9).status == "cancelled"
        await pilot.pause()
        assert app.board_screen.select_card(9)
        await pilot.press("shift+left")  # Done -> Blocked: refused, like the drag
        await app.ops_idle()
        assert "cannot move LX-9 to Blocked" in app.notices[-1][1]
        # Reassign by key: a, pick codex-1.
        assert app.board_screen.select_card(6)
        await pilot.press("a")
        await pilot.pause()
        options = app.screen.query_one("OptionList")
        index = [o.id for o in options.options].index("codex-1")
        options.highlighted = index
        await pilot.press("enter")
        await app.ops_idle()
        card = card_ops.show_card(app.store, 6)
        assert (card.status, card.owner) == ("handoff", "codex-1")


async def test_owner_view_shift_arrow_reassigns_to_the_next_agent(make_app, seeded):
    app = make_app()
    async with app.run_test(size=(110, 32)) as pilot:
        await pilot.press("v")
        await pilot.pause()
        assert app.board_screen.select_card(7)  # unassigned, ready
        await pilot.press("shift+left")  # Unassigned -> shell-1
        await app.ops_idle()
        assert card_ops.show_card(app.store, 7).assignee == "shell-1"
