"""The board rules without a screen: columns, filters, what a drop means."""

from __future__ import annotations

from loopx_core.shapes.values import CardView, Limit, Quota
from loopx_tui.state import OWNER, UNASSIGNED, BoardModel, Query


def card(
    id: int, status: str = "ready", owner: str | None = None, title: str = "a card", version: int = 1, **kw
) -> CardView:
    quota = Quota(Limit(0, None), Limit(0, None), Limit(0, None))
    return CardView(
        id=id,
        title=title,
        status=status,
        owner=owner,
        assignee=owner,
        needs=(),
        priority=kw.pop("priority", 2),
        next_action=None,
        todos=(),
        quota=quota,
        lease=None,
        version=version,
        paused_reason=None,
        blocked_reason=None,
        after=(),
        evidence_count=0,
        pending_gate=None,
        **kw,
    )


def model(*cards: CardView, agents=("a1", "a2")) -> BoardModel:
    from loopx_core.shapes.values import AgentView

    m = BoardModel()
    m.load(cards, [AgentView(a, None, (), (), None, None, 0) for a in agents], [], 0)
    return m


def test_status_columns_follow_the_kernel_grouping():
    m = model(
        card(1, "backlog"),
        card(2, "waiting"),
        card(3, "paused"),
        card(4, "monitoring"),
        card(5, "cancelled"),
        card(6, "ready", priority=0),
    )
    grouped = m.grouped()
    assert [c.id for c in grouped["ready"]] == [6, 1]  # ready before backlog
    assert {c.id for c in grouped["needs_you"]} == {2, 3}
    assert [c.id for c in grouped["active"]] == [4]
    assert [c.id for c in grouped["done"]] == [5]


def test_owner_columns_have_every_agent_and_unassigned():
    m = model(card(1, owner="a2"), card(2))
    m.mode = OWNER
    assert [c.key for c in m.columns()] == ["a1", "a2", UNASSIGNED]
    assert m.column_of(m.cards[1]) == "a2" and m.column_of(m.cards[2]) == UNASSIGNED


def test_query_words_owner_and_status():
    q = Query.parse("login @a1 status:needs-you")
    assert q.words == ("login",) and q.owners == ("a1",) and q.statuses == ("needs_you",)
    assert q.matches(card(1, "waiting", "a1", "the login form"))
    assert not q.matches(card(2, "waiting", "a2", "the login form"))
    assert not q.matches(card(3, "ready", "a1", "the login form"))
    assert Query.parse("@none").matches(card(4)) and not Query.parse("@none").matches(card(5, owner="a1"))
    assert Query.parse("lx-7").matches(card(7))


def test_a_drop_means_an_operator_or_a_reason():
    m = model(card(1, "active", "a1"), card(2, "backlog"))
    assert m.drop(m.cards[2], "ready") == ("move", "ready", "")
    assert m.drop(m.cards[2], "done") == ("move", "cancelled", "")
    refused = m.drop(m.cards[2], "active")
    assert refused.op is None and "claims" in refused.reason
    assert m.drop(m.cards[1], "active").op is None and m.drop(m.cards[1], "active").reason == ""
    m.mode = OWNER
    assert m.drop(m.cards[1], "a2") == ("assign", "a2", "")
    assert m.drop(m.cards[1], UNASSIGNED) == ("assign", None, "")


def test_an_older_view_never_replaces_a_newer_one():
    m = model(card(1, version=5, title="new"))
    assert m.apply_cards([card(1, version=4, title="old")]) == set()
    assert m.cards[1].title == "new"
    assert m.apply_cards([card(1, version=6, title="newer")]) == {1}


# -- the board in hand: first pages, counts, history on demand ---------------------------


def started(*cards: CardView, limits=None, agents=("a1",)):
    """A model as the board opens: the counts of ``cards`` and, per column in
    ``limits``, its first cards (the store's order is the model's own)."""
    from loopx_core.ops.board_pages import Page, Tally
    from loopx_core.shapes.values import AgentView

    whole = model(*cards, agents=agents)
    limits = limits or {"ready": 2, "active": 2, "needs_you": 2, "blocked": 2}
    first = [c for key, n in limits.items() for c in whole.column_cards(key)[:n]]
    rows: dict = {}
    for c in cards:
        rows[(c.status, c.owner)] = rows.get((c.status, c.owner), 0) + 1
    tally = Tally(tuple((s, o, n) for (s, o), n in rows.items()))
    m = BoardModel()
    m.start(
        Page(1, tally, tally, tuple(first)),
        [AgentView(a, None, (), (), None, None, 0) for a in agents],
        [],
        "",
        "status",
        limits,
    )
    return m, whole


def test_a_column_shows_its_first_cards_and_counts_the_rest():
    m, whole = started(*(card(i, priority=i % 3) for i in range(1, 8)))
    assert m.column_total("ready") == 7 and m.unread("ready")
    assert [c.id for c in m.column_cards("ready")] == [c.id for c in whole.column_cards("ready")][:2]
    assert m.next_offset("ready") == 2
    rest = whole.column_cards("ready")[2:]
    m.add_more("status", "ready", 2, 2, rest[:2])
    m.add_more("status", "ready", 4, 2, rest[2:4])
    assert m.unread("ready")
    m.add_more("status", "ready", 6, 2, rest[4:])  # fewer than asked: the end
    assert not m.unread("ready") and m.column_cards("ready") == whole.column_cards("ready")


def test_a_card_that_sorts_past_the_read_part_is_counted_not_shown():
    m, _ = started(*(card(i) for i in range(1, 6)))
    m.apply_cards([card(9, priority=4)])  # a new card, last in Ready: not read that far
    assert 9 not in [c.id for c in m.column_cards("ready")]
    m.apply_cards([card(8, priority=0)])  # first in Ready: shown at once
    assert [c.id for c in m.column_cards("ready")][0] == 8


def test_done_is_counted_and_shows_only_what_moved_there_until_asked_for():
    m, whole = started(
        card(1), card(2), card(3, "done", done_at=5.0, updated_at=5.0), card(4, "cancelled", updated_at=6.0)
    )
    assert m.column_total("done") == 2 and m.column_cards("done") == [] and m.unread("done")
    assert m.counts()["done"] == 2 and m.total() == 4
    m.apply_cards([card(1, "cancelled", version=2, updated_at=9.0)])  # cancelled on this screen
    assert [c.id for c in m.column_cards("done")] == [1]
    assert m.column_total("done") == 3 and m.column_total("ready") == 1  # moved its count at once
    m.add_more("status", "done", 0, 24, [m.cards[1]] + whole.column_cards("done"))
    assert [c.id for c in m.column_cards("done")] == [3, 1, 4] and not m.unread("done")
    assert "done" in m.asked  # read with the rest from now on (a new filter, a new view)


def test_a_page_read_for_a_filter_counts_what_passes_it():
    from loopx_core.ops.board_pages import Page, Tally

    m, whole = started(card(1, title="login"), card(2), card(3, title="login too"))
    m.query = Query.parse("login")
    shown = Tally((("ready", None, 2),))
    m.forget_pages("status")
    m.add_page(Page(2, m.tally, shown, (whole.cards[1], whole.cards[3])), "status", {"ready": 24})
    assert m.column_total("ready") == 2 and [c.id for c in m.column_cards("ready")] == [1, 3]
    assert m.total() == 3  # the header still counts the board
