"""The board reads what is on screen: a column knows its count without
holding its cards, reaches the rest when the person goes down it, shows done
cards when asked for, and follows a change without reading the board again."""

from __future__ import annotations

from contextlib import asynccontextmanager

import pytest

from loopx_core.authority.keys import ephemeral
from loopx_core.ops import board_pages
from loopx_core.ops.board import init_board
from loopx_core.ops.cards import add_card, list_cards, move_card
from loopx_core.store.discovery import parse_target
from loopx_tui.state import PAGE, UNASSIGNED

from .conftest import board_app_class, feed, settled, show_done

SCREENFUL = 8  # the cards on a column's screen at 100×40 (36 rows: 7 and part of an 8th)

READY, DONE = 70, 30  # more than a page (PAGE) in each


@pytest.fixture(scope="module")
def big_template(tmp_path_factory):
    """A board with more cards in Ready and in Done than one read brings."""
    from loopx_core.rules import clock

    root = tmp_path_factory.mktemp("big") / "project"
    location = parse_target(str(root / ".loopx" / "board.db"), "flag")
    me = ephemeral("tester")
    clock.freeze(1_800_000_000.0)
    try:
        store, _ = init_board(location, "a long board", me, pin=False, test_board=True)
        for i in range(READY + DONE):
            add_card(store, {"title": f"card {i + 1}", "priority": 2}, me)
        for card_id in range(READY + 1, READY + DONE + 1):
            move_card(store, card_id, "cancelled", me)
        store.close()
    finally:
        clock.set_clock(None)
    return root, me


@pytest.fixture
def big(big_template, tmp_path):
    import shutil

    from loopx_core.rules import clock

    root = tmp_path / "project"
    shutil.copytree(big_template[0], root)
    clock.freeze(1_800_000_000.0)
    yield parse_target(str(root / ".loopx" / "board.db"), "flag"), big_template[1]
    clock.set_clock(None)


async def elsewhere(location, change) -> None:
    """``change(store)`` through another connection, as another process's write is."""
    import asyncio

    from loopx_core.store.backends import Store

    def run():
        store = Store.open(location)
        try:
            change(store)
        finally:
            store.close()

    await asyncio.to_thread(run)


def app_on(location, person, **kw):
    kw.setdefault("background", False)
    return board_app_class()(location, person=person, **kw)


@asynccontextmanager
async def opened(big, size=(100, 40)):
    """The big board open in the app: (app, pilot)."""
    location, me = big
    app = app_on(location, me)
    async with app.run_test(size=size) as pilot:
        yield app, pilot


class Reads:
    """Counts the board's reads of whole columns (first pages, the next cards)."""

    def __init__(self, monkeypatch):
        self.pages = 0
        self.columns: list[tuple] = []
        page, more = board_pages.board_page, board_pages.more_of_column

        def counted_page(*a, **kw):
            self.pages += 1
            return page(*a, **kw)

        def counted_more(store, mode, key, offset, limit, *rest):
            self.columns.append((mode, key, offset))
            return more(store, mode, key, offset, limit, *rest)

        monkeypatch.setattr(board_pages, "board_page", counted_page)
        monkeypatch.setattr(board_pages, "more_of_column", counted_more)
        from loopx_core.ops import board as kernel_board

        monkeypatch.setattr(kernel_board, "board_page", counted_page)


async def test_a_column_longer_than_a_read_shows_its_true_count_and_reaches_the_rest(big, monkeypatch):
    reads = Reads(monkeypatch)
    async with opened(big) as (app, pilot):
        ready = app.board_screen.board.column("ready")
        assert ready.total == READY and "Ready 70" in ready.header
        in_hand = [c for c in app.model.cards.values() if c.status == "ready"]
        assert len(in_hand) == PAGE < READY  # only the first page was read
        assert ready.body.end_of_view() == SCREENFUL
        assert f"+{READY - SCREENFUL} more" in ready.more
        assert app.board_screen.select_card(ready.card_ids()[0])
        for _ in range(READY - 1):
            await pilot.press("down")
            await app.reads_idle()
        await pilot.pause()
        assert app.focused.selected.id == READY  # the last card of the column, reached by ↓ alone
        assert ready.card_ids() == list(range(1, READY + 1))  # in order, none skipped, none twice
        assert [offset for mode, key, offset in reads.columns if key == "ready"] == [
            PAGE,
            2 * PAGE,
        ]  # read on as the person went down
        assert not ready.more and len(ready.cards) == READY  # nothing below the last card


async def test_the_wheel_scrolls_a_column_counts_what_is_below_and_reads_on(big, monkeypatch):
    from textual.events import MouseScrollDown

    reads = Reads(monkeypatch)
    async with opened(big) as (app, pilot):
        ready = app.board_screen.board.column("ready")
        assert ready.more.startswith(f"+{READY - SCREENFUL} more")
        seen = []
        for _ in range(200):  # (bounded: a wheel notch scrolls a few rows)
            if reads.columns:
                break
            # The mouse wheel, through the screen as the driver sends it (Pilot has no wheel of its own).
            await pilot._post_mouse_events([MouseScrollDown], ready.body, offset=(3, 3))
            await app.reads_idle()
            seen.append(int(ready.more.split()[0][1:]))
        assert [key for _, key, _ in reads.columns] == ["ready"]  # the end of the cards in hand read on
        await pilot.pause()
        assert len(ready.cards) == 2 * PAGE and ready.body.first_in_view() > 0
        assert seen == sorted(seen, reverse=True) and seen[-1] < READY - SCREENFUL  # "+N more" counted down as it went


async def test_done_cards_are_counted_on_open_and_read_when_asked_for(big, monkeypatch):
    reads = Reads(monkeypatch)
    async with opened(big) as (app, pilot):
        done = app.board_screen.board.column("done")
        assert done.total == DONE and not done.cards
        assert "d/click shows 30" in done.more
        assert not any(
            c.status == "cancelled" for c in app.model.cards.values()
        )  # none read (the owner view's first pages included)
        assert not any(key == "done" for _, key, _ in reads.columns)
        await show_done(app, pilot)
        assert len(done.cards) == PAGE and app.focused is done.body and app.focused.selected.id == done.card_ids()[0]
        assert [key for _, key, _ in reads.columns] == ["done"]
    async with opened(big) as (app, pilot):  # → from the columns before it gets there too
        ready = app.board_screen.board.column("ready")
        assert app.board_screen.select_card(ready.card_ids()[0])
        await pilot.press("right", "right", "right", "right")  # Active, Needs you and Blocked are empty: Done
        await app.reads_idle()
        await pilot.pause()
        assert app.focused is app.board_screen.board.column("done").body and app.focused.selected is not None


async def test_a_click_on_the_column_footer_shows_the_next_cards(big):
    async with opened(big) as (app, pilot):
        done = app.board_screen.board.column("done")
        await pilot.click(done, offset=(2, done.outer_size.height - 1))  # "d/click shows 30", the bottom edge
        await app.reads_idle()
        await pilot.pause()
        assert len(done.cards) == PAGE  # read on: the next cards in hand and drawn
        assert done.body.drawn(done.card_ids()[0]) is not None
        ready = app.board_screen.board.column("ready")
        assert ready.more.startswith(f"+{READY - SCREENFUL} more") and ready.body.first_in_view() == 0
        await pilot.click(ready, offset=(2, ready.outer_size.height - 1))  # "+62 more · ↓/click"
        assert ready.body.first_in_view() == SCREENFUL  # the first card below the screen, now at the top
        assert (
            ready.more.startswith(f"+{READY - 2 * SCREENFUL} more") and len(ready.cards) == PAGE
        )  # scrolled, nothing read


async def test_page_keys_move_the_selection_a_screenful_and_read_on_at_the_end(big, monkeypatch):
    reads = Reads(monkeypatch)
    async with opened(big) as (app, pilot):
        ready = app.board_screen.board.column("ready")
        assert app.board_screen.select_card(ready.card_ids()[0])
        await pilot.press("pagedown")
        assert (
            app.focused.cursor == SCREENFUL - 1 and ready.body.end_of_view() > SCREENFUL - 1
        )  # seven whole cards on screen: the eighth
        await pilot.press("pageup")
        assert app.focused.cursor == 0
        await pilot.press("end")
        await app.reads_idle()
        await pilot.pause()
        assert app.focused.selected.id == PAGE  # the last card in hand, on screen …
        assert ready.body.first_in_view() <= PAGE - 1 < ready.body.end_of_view()
        assert [key for _, key, _ in reads.columns] == ["ready"]  # … and, the column scrolled to its end, the next read
        await pilot.press("pagedown")
        assert app.focused.selected.id == PAGE + SCREENFUL - 1
        await pilot.press("end")
        await app.reads_idle()
        await pilot.pause()
        assert app.focused.selected.id == 2 * PAGE and [key for _, key, _ in reads.columns] == ["ready", "ready"]
        await pilot.press("end", "pagedown")  # every card in hand: the last one stays selected
        assert app.focused.selected.id == READY and len(ready.cards) == READY
        await pilot.press("home")
        assert app.focused.cursor == 0 and ready.body.first_in_view() == 0


async def test_the_scrollbar_shows_where_the_column_is_and_moves_it(big, monkeypatch):
    reads = Reads(monkeypatch)
    async with opened(big) as (app, pilot):
        cards = app.board_screen.board.column("ready").body
        bar_x = cards.size.width - 1  # the list's last cell: its scrollbar

        def bar(y: int):
            return list(cards.render_line(y))[-1].style.bgcolor  # the colour of the row's last cell

        top, length = cards.thumb()
        assert top == 0 and 1 <= length < cards.size.height
        thumb, track = bar(0), bar(cards.size.height - 1)
        assert thumb != track
        # drawn at the top, as long as the screen's share of the cards in hand
        assert [y for y in range(cards.size.height) if bar(y) == thumb] == list(range(length))
        assert all(
            len(line) == cards.size.width - 1 for line in cards.card_text(1).splitlines()
        )  # the cards leave the bar its cell

        await pilot.click(cards, offset=(bar_x, cards.size.height - 2))  # the track below the thumb: a page down
        await pilot.pause()
        assert cards.first_in_view() == SCREENFUL - 1  # whole cards: the seven wholly shown were paged past
        assert type(app.screen).__name__ == "BoardScreen"  # a click on the bar opens nothing
        assert (
            bar(0) == track and cards.thumb()[0] > 0 and bar(cards.thumb()[0]) == thumb
        )  # the thumb went down with the cards

        await pilot.mouse_down(cards, offset=(bar_x, cards.thumb()[0]))  # hold the thumb …
        await pilot.hover(cards, offset=(bar_x, cards.size.height - 1))  # … and drag it to the bottom
        await pilot.mouse_up(cards, offset=(bar_x, cards.size.height - 1))
        await app.reads_idle()
        await pilot.pause()
        # at the end of the cards in hand: read on (again when the release comes after the next cards: still at the end)
        assert {key for _, key, _ in reads.columns} == {"ready"} and len(cards.cards) > PAGE
        assert type(app.screen).__name__ == "BoardScreen"
        await pilot.click(cards, offset=(4, 2))  # the press on the bar is over: a click on a card opens it
        await pilot.pause()
        assert type(app.screen).__name__ == "CardScreen"


async def test_a_change_elsewhere_arrives_without_reading_the_board_again(big, monkeypatch):
    location, me = big
    reads = Reads(monkeypatch)
    async with opened(big) as (app, pilot):
        pages = reads.pages
        await elsewhere(location, lambda store: add_card(store, {"title": "from elsewhere", "priority": 0}, me))
        await feed(app)
        await pilot.pause()
        ready = app.board_screen.board.column("ready")
        assert ready.card_ids()[0] == READY + DONE + 1  # priority 0: first in Ready
        assert ready.total == READY + 1 and "101 cards" in str(app.board_screen.query_one("#board-header").render())
        await elsewhere(location, lambda store: move_card(store, 2, "cancelled", me))  # a card in hand
        await elsewhere(location, lambda store: move_card(store, 60, "cancelled", me))  # one not read yet
        await feed(app)
        await pilot.pause()
        assert ready.total == READY - 1 and app.board_screen.board.column("done").total == DONE + 2
        assert 2 not in ready.card_ids()
        assert reads.pages == pages and reads.columns == []  # counts came with the change: no column read again
        truth = {c.id: c for c in list_cards(app.store)}
        assert all(card == truth[cid] for cid, card in app.model.cards.items())
        await pilot.press("v")  # counted by status only meanwhile: the owner view reads its counts again
        await app.reads_idle()
        await pilot.pause()
        assert app.board_screen.board.column(UNASSIGNED).total == len(truth) == READY + DONE + 1


async def test_the_filter_counts_and_reads_from_the_store(big):
    async with opened(big) as (app, pilot):
        await pilot.press(
            "slash", *"card 6"
        )  # "6" in the key: LX-6, LX-16 … LX-56, LX-60 … LX-69 ready; LX-76, 86, 96 cancelled
        await app.reads_idle()
        await pilot.pause()
        ready = app.board_screen.board.column("ready")
        wanted = [6, 16, 26, 36, 46, 56] + list(range(60, 70))
        assert ready.total == len(wanted) and ready.card_ids() == wanted
        done = app.board_screen.board.column("done")
        assert done.total == 3 and done.card_ids() == [
            76,
            86,
            96,
        ]  # a filter searches the history too (cancelled at one instant: by id)
        await pilot.press("escape")
        await app.reads_idle()
        await pilot.pause()
        assert ready.total == READY


def test_a_long_column_says_how_to_reach_the_rest(big, snap_compare):
    location, me = big
    assert snap_compare(app_on(location, me), terminal_size=(100, 30), run_before=settled)
