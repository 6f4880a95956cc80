"""One card, several tries (#26): a person gives a card to several agents at
once; each try is a card of its own with its own workspace and branch; the
person compares them and keeps one; the others are archived under LoopX refs
and cancelled, nothing deleted. On SQLite and PostgreSQL, with real git."""

from __future__ import annotations

from tests.conftest import git
from tests.gitrepo import commit, head, open_workspace

from .conftest import card, held, refused, worked


def _events(board, key, kind):
    return [e for e in board.ok("events", "--card", key)["events"] if e["kind"] == kind]


def test_card_add_with_tries_makes_linked_cards_of_their_own(repo_team):
    out = repo_team.ok("card", "add", "Speed up login", "--verify", "true", "--max-turns", "5", "--tries", "3")
    assert out["card"]["id"] == "LX-1" and [t["id"] for t in out["tries"]] == ["LX-2", "LX-3"]
    for n, t in ((2, out["tries"][0]), (3, out["tries"][1])):
        assert (
            t["title"] == f"Speed up login (try {n} of LX-1)"
            and t["status"] == "ready"
            and t["quota"]["turns"]["limit"] == 5
        )
        added = _events(repo_team, t["id"], "card_added")[0]
        assert added["data"]["try_of"] == "LX-1" and added["data"]["try_no"] == n and added["signed"] is True
    assert repo_team.cli("verify").code == 0


def test_only_a_person_gives_a_card_several_tries(repo_team):
    refused(repo_team, 10, "card", "add", "mine", "--tries", "2", agent="a1")
    repo_team.ok("card", "add", "one")
    refused(repo_team, 10, "card", "try", "LX-1", agent="a1")
    refused(repo_team, 10, "card", "keep", "LX-1", agent="a1")
    refused(repo_team, 3, "card", "add", "many", "--tries", "9")


def test_tries_are_worked_apart_compared_and_one_is_kept(repo_team):
    repo_team.ok("agent", "add", "a3")
    repo_team.ok("card", "add", "Speed up login", "--tries", "2")
    extra = repo_team.ok("card", "try", "LX-1", "--to", "a3")["card"]
    assert extra["id"] == "LX-3" and extra["owner"] == "a3" and "(try 3 of LX-1)" in extra["title"]
    refused(repo_team, 3, "card", "try", "LX-2")  # a try of a try: try the first card again
    # Three agents, three workspaces from the same base, three branches.
    base = head(repo_team.root)
    trees = {}
    for key, agent, files in (
        ("LX-1", "a1", {"src/app.py": "fast = 1\n"}),
        ("LX-2", "a2", {"src/app.py": "fast = 2\n", "src/cache.py": "c = {}\n"}),
        ("LX-3", "a3", {"README.md": "faster\n"}),
    ):
        held(repo_team, key, agent)
        trees[key] = open_workspace(repo_team, int(key[3:]), agent)
        assert git(trees[key], "merge-base", "HEAD", "main").strip() == base
        commit(trees[key], files, f"{agent}'s way")
        worked(repo_team, key, agent, f"{agent}'s way", "--tokens", "1000")
    assert (trees["LX-1"] / "src/app.py").read_text() == "fast = 1\n" and (
        trees["LX-2"] / "src/app.py"
    ).read_text() == "fast = 2\n"

    side = repo_team.ok("card", "tries", "LX-2")  # from any try: the whole family
    assert side["card"] == "LX-1" and [t["card"] for t in side["tries"]] == ["LX-1", "LX-2", "LX-3"]
    by = {t["card"]: t for t in side["tries"]}
    assert by["LX-2"]["diff"] == {"files": 2, "added": 2, "removed": 1} and by["LX-3"]["diff"]["files"] == 1
    assert (
        by["LX-1"]["quota"]["turns"]["used"] == 1
        and by["LX-1"]["quota"]["tokens"]["used"] == 1000
        and by["LX-1"]["verify"] is None
    )
    assert by["LX-3"]["owner"] == "a3" and by["LX-2"]["workspace"] == str(trees["LX-2"])

    tips = {key: head(repo_team.root, f"loopx/{key}") for key in ("LX-1", "LX-3")}
    kept = repo_team.ok("card", "keep", "LX-2")
    assert kept["card"]["id"] == "LX-2" and kept["card"]["status"] == "active"
    assert sorted(c["id"] for c in kept["cancelled"]) == ["LX-1", "LX-3"]
    for key in ("LX-1", "LX-3"):
        assert card(repo_team, key)["status"] == "cancelled"
        refs = git(
            repo_team.root, "for-each-ref", "--format=%(refname) %(objectname)", f"refs/loopx/{key}/archive"
        ).split()
        assert refs and refs[1] == tips[key]  # archived, not deleted: the branch's work is under a LoopX ref
        assert head(repo_team.root, f"loopx/{key}") == tips[key]
    decided = _events(repo_team, "LX-1", "try_kept")[-1]
    assert (
        decided["data"]["kept"] == "LX-2"
        and decided["signed"] is True
        and set(decided["data"]["archived"]) == {"LX-1", "LX-3"}
    )
    refused(
        repo_team, 5, "writeback", "LX-1", "--summary", "still going", agent="a1"
    )  # the cancelled try's agent is fenced off
    assert repo_team.cli("verify").code == 0


def test_keeping_needs_another_try(repo_team):
    repo_team.ok("card", "add", "alone")
    refused(repo_team, 3, "card", "keep", "LX-1")


def test_one_agent_is_never_given_two_tries_of_the_same_card(team):
    team.ok("agent", "add", "a3")
    team.ok("card", "add", "Speed up login", "--tries", "2")  # LX-1 and its try LX-2
    team.ok("card", "add", "Something else")  # LX-3
    held(team, "LX-1", "a1")
    worked(team, "LX-1", "a1", "a1's way")
    team.ok("release", "LX-1", agent="a1")
    err = refused(team, 5, "claim", "LX-2", agent="a1")  # worked on try 1: not try 2 as well
    assert err["code"] == "other_try" and "LX-1" in err["message"] and "one try" in err["message"]
    assert "loopx next --agent a1 --claim" in err["hint"]
    held(team, "LX-1", "a2")  # another agent carries try 1 on
    assert refused(team, 5, "claim", "LX-2", agent="a2")["code"] == "other_try"  # holding try 1: not try 2 as well
    offered = team.ok("next", "--claim", agent="a1")  # LX-2 comes first by order, but it is another try for a1
    assert offered["action"] == "work" and offered["card"]["id"] == "LX-3"
    assert held(team, "LX-2", "a3")["id"] == "LX-2"  # a third agent may take the other try
    assert team.cli("verify").code == 0


def test_a_handoff_never_gives_an_agent_a_second_try_of_a_card(team):
    """One agent, one try — by a handoff, by a person's reassign, or by an
    accept after the receiver took another try meanwhile: exit 5 ``other_try``,
    the board unchanged."""
    team.ok("agent", "add", "a3")
    team.ok("card", "add", "Speed up login", "--tries", "2")  # LX-1 and its try LX-2
    held(team, "LX-1", "a1")
    worked(team, "LX-1", "a1", "a1's way")
    held(team, "LX-2", "a2")
    err = refused(team, 5, "handoff", "LX-2", "--to", "a1", "--summary", "yours now", agent="a2")
    assert (
        err["code"] == "other_try"
        and "a1" in err["message"]
        and "LX-1" in err["message"]
        and "one try" in err["message"]
    )
    assert "hand it to an agent" in err["hint"]
    err = refused(team, 5, "card", "assign", "LX-2", "--to", "a1", as_person=True)  # a person's reassign of a held try
    assert err["code"] == "other_try"
    # The receiver was clean when the card was handed over, then took the other try: its accept is refused.
    team.ok("handoff", "LX-2", "--to", "a3", "--summary", "yours now", agent="a2")
    team.ok("release", "LX-1", agent="a1")
    held(team, "LX-1", "a3")
    err = refused(team, 5, "accept", "LX-2", agent="a3")
    assert err["code"] == "other_try" and "LX-1" in err["message"]
    assert card(team, "LX-2")["status"] == "handoff"
    assert team.cli("verify").code == 0


def test_next_claim_finds_tries_by_index_with_the_same_answers(team, tester, monkeypatch):
    """The claim path reads a card's tries from ``card_try`` (v8), one indexed
    read, whatever the size of the log: the same answers as the log gives, and
    no read of the event log by kind and text."""
    from loopx_core.ops import try_family
    from loopx_core.store import records

    team.ok("agent", "add", "a3")
    store = team.store()
    try:
        from loopx_core.ops.cards import add_card
        from loopx_core.ops.tries import add_tries

        person = tester
        for n in range(400):  # a board with many cards, many of them tries
            first = add_card(store, {"title": f"card {n}", "priority": 3}, person)
            if n % 4 == 0:
                add_tries(store, first.id, person, [None, None])
        first = add_card(store, {"title": "urgent", "priority": 0}, person)
        tries = add_tries(store, first.id, person, [None, None])
    finally:
        store.close()
    key = f"LX-{first.id}"
    held(team, key, "a1")
    worked(team, key, "a1", "a1's way")
    team.ok("release", key, agent="a1")
    assert team.ok("next", "--claim", agent="a2")["card"]["id"] == key  # released: back at the top, for another agent
    offered = team.ok("next", "--claim", agent="a1")  # the urgent card's tries come next, but they are tries for a1
    assert offered["card"]["id"] == "LX-1"  # the first card of the rest, as the log-scanning lookup answered
    assert team.ok("next", "--claim", agent="a3")["card"]["id"] == f"LX-{tries[0].id}"
    assert team.ok("card", "tries", f"LX-{tries[1].id}")["card"] == key
    store = team.store()
    seen: list[str] = []
    try:
        with store.read():
            import json

            log = {}
            for cid, text in store.query('SELECT "card", "data" FROM "event" WHERE "kind" = ?', ("card_added",)):
                data = json.loads(text)
                if data.get("try_of"):
                    log[cid] = (int(data["try_of"][3:]), data["try_no"])
            index = {
                cid: (of, no) for cid, of, no in store.query('SELECT "card_id", "try_of", "try_no" FROM "card_try"')
            }
            assert index == log and len(index) == 202  # the index says what the signed events say
            real = records.rows

            def rows(sql, params=()):
                seen.append(sql)
                return real(sql, params)

            with monkeypatch.context() as mp:
                mp.setattr(records, "rows", rows)
                assert try_family.family(first.id) == [(1, first.id), (2, tries[0].id), (3, tries[1].id)]
                assert try_family.first_of(tries[1].id) == first.id
                assert try_family.other_try_of(tries[0].id, "a1") == first.id
    finally:
        store.close()
    assert seen and not any('"event"' in sql and "LIKE" in sql for sql in seen)
    assert not any('"kind"' in sql for sql in seen)  # no read of the log by kind: the index answers


def test_a_board_from_before_the_index_finds_its_tries_after_the_upgrade(team):
    """A v7 board's tries live only in its log: opening it (v8) fills
    ``card_try`` from the signed ``card_added`` events, so one agent still
    gets one try."""
    if team.backend != "sqlite":
        import pytest

        pytest.skip("a real old board is made by undoing the later steps of a SQLite file")
    from tests.conftest import downgrade_sqlite

    team.ok("card", "add", "Speed up login", "--tries", "3")
    held(team, "LX-1", "a1")
    downgrade_sqlite(team.db, 7)  # no card_try table: the link is in the log alone
    assert refused(team, 5, "claim", "LX-3", agent="a1")["code"] == "other_try"  # (opened: upgraded, then asked)
    assert team.ok("card", "tries", "LX-3")["card"] == "LX-1"
    assert [t["card"] for t in team.ok("card", "tries", "LX-1")["tries"]] == ["LX-1", "LX-2", "LX-3"]
    assert team.ok("export")["board"]["settings"]["schema_version"] == "8"
    assert team.cli("verify").code == 0
