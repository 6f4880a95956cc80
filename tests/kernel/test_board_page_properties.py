"""The board's SQL (``board_pages``: the filter, the counts by status and by
owner, each column's order read a page at a time) says what a plain Python
reading of the same cards says, over random boards on both backends:
statuses, assignees, lease holders (held or left behind), handoff targets,
titles with the filter's words in either case, priorities and finishing
times. The reference here is written out on its own: the owner is
``holding.owner_of``, the filter ``CardFilter.matches`` on a card in hand."""

from __future__ import annotations

from collections import Counter

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from loopx_core.ops import board_pages
from loopx_core.ops.board_pages import OWNER_MODE, STATUS_MODE, CardFilter
from loopx_core.rules.columns import COLUMN_OF, STATUS_COLUMNS
from loopx_core.store import records
from loopx_core.store.rows import card_views

BOARDS = settings(
    max_examples=60,
    deadline=None,
    database=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)

AGENTS = st.sampled_from([None, "a1", "a2", "ab", ""])
WORDS = ("login", "Login", "bill", "LX", "a1", "deploy")

cards_st = st.lists(
    st.fixed_dictionaries(
        {
            "status": st.sampled_from(
                sorted(COLUMN_OF) + ["done", "done", "active", "waiting"]
            ),  # (more of the columns with two orders)
            "assignee": AGENTS,
            "lease_holder": AGENTS,
            "handoff_to": AGENTS,
            "title": st.lists(st.sampled_from(WORDS + ("x", "step")), min_size=1, max_size=3).map(" ".join),
            "priority": st.integers(0, 3),
            "needs": st.sampled_from([[], ["deploy:prod"]]),
            "next_action": st.sampled_from([None, "bill them", "Ready"]),
            "updated_at": st.integers(1, 5).map(float),
            "done_at": st.sampled_from([None, 2.0, 7.0]),
        }
    ),
    max_size=12,
)

filters_st = st.builds(
    CardFilter,
    words=st.lists(
        st.sampled_from(("login", "bill", "lx-1", "a1", "deploy:prod", "ready", "gin", "step")), max_size=2
    ).map(tuple),
    owners=st.lists(st.sampled_from(("a1", "a", "ab", "none", "un", "-", "a2")), max_size=2).map(tuple),
    statuses=st.lists(
        st.sampled_from(("active", "act", "needs_you", "done", "ready", "re", "wait", "b")), max_size=2
    ).map(tuple),
)

# -- the reference: plain Python over the cards in hand -----------------------------

STATUS_RANK = {
    s: i
    for i, s in enumerate(
        ("waiting", "paused", "active", "handoff", "monitoring", "ready", "blocked", "backlog", "done", "cancelled")
    )
}


def finished_at(c) -> float:
    return c.done_at if c.done_at is not None else c.updated_at


def column_key(mode: str, c):
    return COLUMN_OF[c.status] if mode == STATUS_MODE else (c.owner or None)


def order(mode: str, key):
    if mode == OWNER_MODE:
        return lambda c: (
            STATUS_RANK[c.status],
            -finished_at(c) if c.status in ("done", "cancelled") else 0,
            c.priority,
            c.id,
        )
    first = {"ready": "ready", "needs_you": "waiting", "done": "done"}.get(key)
    if key == "done":
        return lambda c: (c.status != "done", -finished_at(c), c.id)
    if first:
        return lambda c: (c.status != first, c.priority, c.id)
    return lambda c: (c.priority, c.id)


def counts(cards, by_owner: bool) -> dict:
    return dict(Counter((c.status, (c.owner or None) if by_owner else None) for c in cards))


# -- the property ----------------------------------------------------------------------


def fill(store, cards) -> list:
    def body():
        records.execute('DELETE FROM "card"')
        for values in cards:
            records.Card.create(created_at=0.0, **values)
        return card_views(records.Card.where('ORDER BY "id"'))

    return store.run(body)


@BOARDS
@given(cards=cards_st, card_filter=filters_st, page_size=st.integers(1, 4))
def test_the_boards_sql_reads_what_python_reads_of_the_same_cards(board, cards, card_filter, page_size):
    store = board.store()
    try:
        check(store, cards, card_filter, page_size)
    finally:
        store.close()


def check(store, cards, card_filter, page_size):
    every = fill(store, cards)
    passing = [c for c in every if card_filter.matches(c)]
    with store.read():
        for by_owner in (True, False):
            assert {(s, o): n for s, o, n in board_pages.tally(by_owner=by_owner).rows} == counts(every, by_owner)
            assert {(s, o): n for s, o, n in board_pages.tally(card_filter, by_owner).rows} == counts(
                passing, by_owner
            ), card_filter
    owners = {c.owner or None for c in every} | {"a1", None}
    for mode, keys in (
        (STATUS_MODE, [key for key, _, _ in STATUS_COLUMNS]),
        (OWNER_MODE, sorted(owners, key=lambda o: o or "")),
    ):
        for key in keys:
            wanted = sorted((c for c in passing if column_key(mode, c) == key), key=order(mode, key))
            paged, offset = [], 0
            while True:
                page = board_pages.more_of_column(store, mode, key, offset, page_size, card_filter)
                paged += page
                offset += len(page)
                if len(page) < page_size:
                    break
            assert [c.id for c in paged] == [c.id for c in wanted], (mode, key, card_filter)
    page = board_pages.board_page(store, STATUS_MODE, {"ready": 100, "done": 100}, card_filter)
    assert page.shown.total() == len(passing) and page.tally.total() == len(every)
    assert {c.id for c in page.cards} == {c.id for c in passing if COLUMN_OF[c.status] in ("ready", "done")}
