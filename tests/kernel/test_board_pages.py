"""The board read a screenful at a time (``board_pages``): counts from one
GROUP BY, a column's cards a page at a time in the board's order, the filter
the same in SQL as on a card in hand, and changes that carry fresh counts."""

from __future__ import annotations

import pytest

from loopx_core.ops import board, board_pages
from loopx_core.ops.board_pages import CardFilter
from loopx_core.ops.cards import list_cards
from loopx_tui.state import OWNER, STATUS, UNASSIGNED, BoardModel, Query
from tests.conftest import person_ok

from .conftest import held, last_seq, worked


@pytest.fixture
def busy(team):
    """Cards in every column: ready (two priorities), backlog, active by a1
    and a2, waiting, done, cancelled; words to filter on."""
    for i in range(6):
        team.ok("card", "add", f"login step {i}" if i % 2 else f"billing step {i}", "--priority", str(i % 3))
    team.ok("card", "add", "parked", "--backlog")
    team.ok("card", "add", "ship it", "--needs", "deploy:prod", "--next", "run the pipeline")
    held(team, "LX-1", "a1")
    held(team, "LX-2", "a2")
    held(team, "LX-3", "a1")
    assert team.cli("gate", "ask", "LX-3", "--question", "ok?", agent="a1").code == 6  # (6: waiting for a person)
    worked(team, "LX-2", "a2", "did it")
    team.ok("done", "LX-2", "--summary", "all done", agent="a2")
    person_ok(team, "card", "move", "LX-4", "--to", "cancelled")
    return team


def every_card(team):
    store = team.store()
    try:
        return store, list_cards(store)
    finally:
        pass


def test_counts_are_the_cards_by_column_without_reading_them(busy):
    store, cards = every_card(busy)
    model = BoardModel()
    with store.read():
        tally = board_pages.tally()
    assert tally.total() == len(cards) == 8
    for mode in (STATUS, OWNER):
        expected: dict = {}
        for c in cards:
            key = BoardModel._column_of(mode, c)
            key = None if key == UNASSIGNED else key
            expected[key] = expected.get(key, 0) + 1
        assert tally.by_column(mode) == expected, mode
    model.load(cards, [], [], 0)
    assert model.tally.by_column(STATUS) == tally.by_column(STATUS)
    with store.read():
        by_status = board_pages.tally(by_owner=False)  # the cheap count: the status index alone
    assert by_status.by_column(STATUS) == tally.by_column(STATUS) and not by_status.by_owner
    store.close()


def test_a_column_read_page_by_page_is_the_column_in_the_boards_order(busy):
    """Every column of both views, read two cards at a time, is exactly what
    the board shows when it holds every card (the view model's own order)."""
    store, cards = every_card(busy)
    whole = BoardModel()
    whole.load(cards, [], [], 0)
    for mode in (STATUS, OWNER):
        whole.mode = mode
        for col in whole.columns():
            key = None if col.key == UNASSIGNED else col.key
            paged, offset = [], 0
            while True:
                page = board_pages.more_of_column(store, mode, key, offset, 2)
                paged += page
                offset += len(page)
                if len(page) < 2:
                    break
            assert [c.id for c in paged] == [c.id for c in whole.column_cards(col.key)], (mode, col.key)
    store.close()


@pytest.mark.parametrize(
    "text",
    [
        "login",
        "@a1",
        "@none",
        "@un",
        "status:needs-you",
        "is:done",
        "status:act",
        "lx-3",
        "deploy:prod",
        "pipeline",
        "login @a1",
        "billing status:ready",
        "@a2 is:done",
    ],
)
def test_the_filter_says_the_same_in_the_store_and_on_a_card_in_hand(busy, text):
    store, cards = every_card(busy)
    card_filter = Query.parse(text).card_filter
    assert card_filter
    wanted = {c.id for c in cards if card_filter.matches(c)}
    page = board_pages.board_page(
        store, STATUS, {key: 100 for key in ("ready", "active", "needs_you", "blocked", "done")}, card_filter
    )
    assert {c.id for c in page.cards} == wanted
    assert page.shown.total() == len(wanted) and page.tally.total() == len(cards)
    store.close()


def test_the_first_page_of_the_board_leaves_history_unread(busy):
    store, cards = every_card(busy)
    snap = board.board_snapshot(
        store, STATUS, {"ready": 2, "active": 10, "needs_you": 10, "blocked": 10, "done": 0}, reap=False
    )
    statuses = {c.status for c in snap.page.cards}
    assert not statuses & {"done", "cancelled"}  # counted, not read
    assert snap.page.tally.by_column(STATUS)["done"] == 2
    assert sum(1 for c in snap.page.cards if c.status in ("ready", "backlog")) == 2  # a page, not the column
    store.close()


def test_a_change_carries_fresh_counts_only_when_a_card_can_have_moved(busy):
    store = busy.store()
    seq = last_seq(busy)
    worked(busy, "LX-1", "a1", "another step")
    delta = board.board_delta(store, seq)
    assert [c.id for c in delta.cards] == [1] and delta.tally is None  # evidence moves no card
    seq = delta.seq
    busy.ok("card", "add", "one more")
    delta = board.board_delta(store, seq, CardFilter(words=("more",)))
    assert delta.tally.total() == 9 and delta.shown.total() == 1
    store.close()
