"""Lists come a page at a time: a default size, --limit, a cursor in the JSON
(next_after; events: next_since), short rows unless --full, and text that says
how to get the next page. Paging through a list returns every row once."""

from __future__ import annotations

import shlex

from .conftest import refused


def _add(team, n: int, **kw) -> None:
    for i in range(n):
        team.ok("card", "add", f"card {i}", **kw)


def _all_pages(team, *argv: str) -> list[dict]:
    rows, after, pages = [], None, 0
    while True:
        data = team.ok(*argv, *(["--after", after] if after else []))
        rows += data["cards"]
        pages += 1
        after = data["next_after"]
        if after is None:
            return rows
        assert pages < 50


def test_card_list_pages_through_every_card_once_in_id_order(team):
    _add(team, 7)
    team.ok("claim", "LX-2", agent="a1")
    first = team.ok("card", "list", "--limit", "3")
    assert [c["id"] for c in first["cards"]] == ["LX-1", "LX-2", "LX-3"] and first["next_after"] == "LX-3"
    assert [c["id"] for c in _all_pages(team, "card", "list", "--limit", "3")] == [f"LX-{i}" for i in range(1, 8)]
    ready = _all_pages(team, "card", "list", "--status", "ready", "--limit", "2")
    assert [c["id"] for c in ready] == ["LX-1", "LX-3", "LX-4", "LX-5", "LX-6", "LX-7"]
    last = team.ok("card", "list", "--after", "LX-6", "--limit", "3")
    assert [c["id"] for c in last["cards"]] == ["LX-7"] and last["next_after"] is None
    # A page that ends exactly on the last card says there is no next page.
    assert team.ok("card", "list", "--after", "LX-4", "--limit", "3")["next_after"] is None


def test_card_list_has_a_default_page_of_fifty(team):
    _add(team, 52)
    data = team.ok("card", "list")
    assert len(data["cards"]) == 50 and data["next_after"] == "LX-50"
    assert [c["id"] for c in team.ok("card", "list", "--after", "LX-50")["cards"]] == ["LX-51", "LX-52"]


def test_card_list_rows_are_short_unless_full(team):
    team.ok("card", "add", "one", "--body", "b" * 5000)
    team.ok("claim", "LX-1", agent="a1")
    team.ok("writeback", "LX-1", "--summary", "s", "--todo-add", "t", agent="a1")
    row = team.ok("card", "list")["cards"][0]
    assert row == {
        "id": "LX-1", "title": "one", "status": "active", "owner": "a1", "priority": 2, "pending_gate": None,
        "paused_reason": None, "blocked_reason": None, "version": row["version"], "updated_at": row["updated_at"],
    }
    assert not any(isinstance(v, (dict, list)) for v in row.values())
    full = team.ok("card", "list", "--full")["cards"][0]
    assert full == team.ok("card", "show", "LX-1")["card"]  # --full is the record `card show` prints
    assert full["body"] == "b" * 5000 and full["todos"][0]["text"] == "t"


def test_text_output_says_how_to_get_the_next_page(team):
    _add(team, 3)
    res = team.cli("card", "list", "--status", "ready", "--limit", "2", json_out=False)
    assert res.code == 0
    last = res.out.strip().splitlines()[-1]
    assert last == "more: `loopx card list --status ready --limit 2 --after LX-2` for the next page"
    command = shlex.split(last.split("`")[1])[1:]
    nxt = team.cli(*command, json_out=False)
    assert "LX-3" in nxt.out and "LX-1" not in nxt.out and "more:" not in nxt.out


def test_bad_pages_are_refused_and_change_nothing(team):
    _add(team, 1)
    for argv in (("card", "list", "--limit", "0"), ("card", "list", "--limit", "1001"), ("gate", "list", "--limit", "0"), ("agent", "list", "--limit", "5000"), ("events", "--limit", "1001")):
        refused(team, 3, *argv)
    refused(team, 3, "card", "list", "--after", "G-1")
    refused(team, 3, "gate", "list", "--after", "LX-1")
    refused(team, 2, "card", "list", "--limit", "x")


def test_gate_list_pages(team):
    _add(team, 1)
    team.ok("claim", "LX-1", agent="a1")
    for i in range(4):  # a1 may push: approved at once, so a1 may ask again
        team.ok("gate", "ask", "LX-1", "--question", f"q{i}", "--scope", "git:push", agent="a1")
    assert team.cli("gate", "ask", "LX-1", "--question", "deploy?", "--scope", "deploy:prod", agent="a1").code == 6
    first = team.ok("gate", "list", "--limit", "2")
    assert [g["id"] for g in first["gates"]] == ["G-1", "G-2"] and first["next_after"] == "G-2"
    rest = team.ok("gate", "list", "--limit", "10", "--after", "G-2")
    assert [g["id"] for g in rest["gates"]] == ["G-3", "G-4", "G-5"] and rest["next_after"] is None
    pending = team.ok("gate", "list", "--pending", "--limit", "2")  # a page of approved gates: empty, but not the last
    assert pending == {"gates": [], "next_after": "G-2"}
    assert [g["id"] for g in team.ok("gate", "list", "--pending", "--after", "G-2")["gates"]] == ["G-5"]
    text = team.cli("gate", "list", "--limit", "4", json_out=False).out
    assert text.strip().splitlines()[-1] == "more: `loopx gate list --limit 4 --after G-4` for the next page"


def test_agent_list_pages(team):
    ids = [a["id"] for a in team.ok("agent", "list")["agents"]]
    assert len(ids) >= 2 and team.ok("agent", "list")["next_after"] is None
    first = team.ok("agent", "list", "--limit", "1")
    assert [a["id"] for a in first["agents"]] == ids[:1] and first["next_after"] == ids[0]
    assert [a["id"] for a in team.ok("agent", "list", "--after", ids[0])["agents"]] == ids[1:]


def test_events_page_with_next_since(team):
    _add(team, 4)
    every = team.ok("events")
    assert every["next_since"] is None
    seqs = [e["seq"] for e in every["events"]]
    page = team.ok("events", "--limit", "2")
    assert [e["seq"] for e in page["events"]] == seqs[:2] and page["next_since"] == seqs[1]
    assert [e["seq"] for e in team.ok("events", "--since", str(page["next_since"]))["events"]] == seqs[2:]
    text = team.cli("events", "--limit", "2", json_out=False).out
    assert text.strip().splitlines()[-1] == f"more: `loopx events --limit 2 --since {seqs[1]}` for the next page"
