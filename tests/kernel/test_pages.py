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
        "id": "LX-1",
        "title": "one",
        "status": "active",
        "owner": "a1",
        "priority": 2,
        "pending_gate": None,
        "paused_reason": None,
        "blocked_reason": None,
        "version": row["version"],
        "updated_at": row["updated_at"],
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
    for argv in (
        ("card", "list", "--limit", "0"),
        ("card", "list", "--limit", "1001"),
        ("gate", "list", "--limit", "0"),
        ("agent", "list", "--limit", "5000"),
        ("events", "--limit", "1001"),
    ):
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


# -- the peewee-free reader answers what the kernel answers ---------------------------------


def _board_in_every_state(team, clock):
    """Cards ready, active, waiting on a gate, handed off, paused, blocked, done, with owners."""
    _add(team, 9)
    team.ok("agent", "add", "a3")
    team.ok("claim", "LX-1", agent="a1")  # active, a1
    team.ok("claim", "LX-2", agent="a2")
    assert (
        team.cli("gate", "ask", "LX-2", "--question", "deploy?", "--scope", "deploy:prod", agent="a2").code == 6
    )  # waiting, G-1
    team.ok("claim", "LX-3", agent="a3")
    team.ok("handoff", "LX-3", "--to", "a2", "--summary", "yours", agent="a3")  # handoff to a2
    team.ok("card", "add", "budgeted", "--max-turns", "1")  # LX-10
    team.ok("claim", "LX-10", agent="a3")
    team.ok("writeback", "LX-10", "--summary", "one turn", agent="a3")  # paused: budget
    from tests.conftest import person

    person(team, "card", "assign", "LX-5", "--to", "a1")  # ready, assigned
    person(team, "card", "move", "LX-6", "--to", "backlog")
    person(team, "gate", "answer", "G-1", "reject", "--note", "no")  # LX-2 blocked
    team.ok("writeback", "LX-1", "--summary", "work", agent="a1")
    team.ok("done", "LX-1", "--summary", "ok", agent="a1")
    team.ok("claim", "LX-4", agent="a1")  # active, a1
    statuses = {c["status"] for c in team.ok("card", "list", "--full")["cards"]}
    assert statuses == {"ready", "active", "handoff", "paused", "blocked", "done", "backlog"}, statuses


def test_the_plain_sqlite_reader_answers_exactly_what_the_kernel_answers(team, clock, monkeypatch):
    if team.backend != "sqlite":
        return  # PostgreSQL boards always take the kernel's path
    from loopx_core.ops import cards
    from loopx_core.store import plainread

    _board_in_every_state(team, clock)
    queries = [
        (s, o, lim, after)
        for s in (None, "ready", "active", "paused", "blocked", "handoff", "done", "backlog")
        for o in (None, "a1", "a2", "a3")
        for lim, after in ((50, 0), (2, 0), (2, 3), (1, 9))
    ]
    monkeypatch.delenv(
        "LOOPX_NOW"
    )  # the reader leaves a frozen clock to the kernel; the board's times are ahead of the real one
    assert plainread.card_page(team.db, None, None, limit=50, after=0) is not None
    store = team.store()
    try:
        for status, owner, limit, after in queries:
            views, last = cards.card_page(store, status, owner, limit=limit, after=after)
            kernel = ([v.to_row() for v in views], last)
            assert plainread.card_page(team.db, status, owner, limit=limit, after=after) == kernel, (
                status,
                owner,
                limit,
                after,
            )
    finally:
        store.close()
    # And through the CLI, where --json takes the plain reader: the same answer as --full's kernel path, cut to rows.
    for status in (None, "paused", "blocked", "handoff"):
        argv = ["card", "list", "--limit", "4"] + (["--status", status] if status else [])
        rows = team.ok(*argv)
        full = team.ok(*argv, "--full")
        assert [r["id"] for r in rows["cards"]] == [c["id"] for c in full["cards"]] and rows["next_after"] == full[
            "next_after"
        ]
        assert all(r == {k: c[k] for k in r} for r, c in zip(rows["cards"], full["cards"]))


def test_the_plain_reader_knows_the_kernels_schema():
    """One constant (rules/schema_version): the migrations' last step reaches it."""
    from loopx_core.store import migrations, plainread

    assert plainread.SCHEMA_VERSION == migrations.SCHEMA_VERSION == migrations.STEPS[-1][0]


def test_the_plain_reader_leaves_due_reaps_and_frozen_clocks_to_the_kernel(team, clock, monkeypatch):
    if team.backend != "sqlite":
        return
    from loopx_core.store import plainread

    _add(team, 2)
    team.ok("claim", "LX-1", agent="a1")
    assert plainread.card_page(team.db, None, None, limit=5, after=0) is None  # LOOPX_NOW is set (the fixture's clock)
    clock.advance(3600)  # the lease has run out: a read reaps it first
    before = len(team.ok("events")["events"])
    assert [c["status"] for c in team.ok("card", "list")["cards"]] == ["ready", "ready"]
    assert "lease_expired" in [e["kind"] for e in team.ok("events")["events"][before:]]
    monkeypatch.delenv("LOOPX_NOW")
    assert plainread.card_page(team.root / "nowhere.db", None, None, limit=5, after=0) is None
    (team.root / "not-a-board.db").write_text("hello")
    assert plainread.card_page(team.root / "not-a-board.db", None, None, limit=5, after=0) is None
