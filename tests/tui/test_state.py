"""The board rules without a screen: columns, filters, what a drop means."""

from __future__ import annotations

from loopx_core.shapes.values import CardView, Limit, Quota
from loopx_tui.state import OWNER, UNASSIGNED, BoardModel, Query


def card(id: int, status: str = "ready", owner: str | None = None, title: str = "a card", version: int = 1, **kw) -> CardView:
    quota = Quota(Limit(0, None), Limit(0, None), Limit(0, None))
    return CardView(id=id, title=title, status=status, owner=owner, assignee=owner, needs=(), priority=kw.pop("priority", 2), next_action=None, todos=(), quota=quota, lease=None, version=version, paused_reason=None, blocked_reason=None, after=(), evidence_count=0, pending_gate=None, **kw)


def model(*cards: CardView, agents=("a1", "a2")) -> BoardModel:
    from loopx_core.shapes.values import AgentView

    m = BoardModel()
    m.load(cards, [AgentView(a, None, (), (), None, None, 0) for a in agents], [], 0)
    return m


def test_status_columns_follow_the_kernel_grouping():
    m = model(card(1, "backlog"), card(2, "waiting"), card(3, "paused"), card(4, "monitoring"), card(5, "cancelled"), card(6, "ready", priority=0))
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
