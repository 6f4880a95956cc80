"""The facts a person chooses between are in the chained log (#38 §5): a try's
verify result, its turns and cost, and the summary of a ``done`` that waits on
its merge gate. An agent with the board file edits the evidence and card rows
with the database's own client: ``card tries`` still shows what happened and
``loopx verify`` names the edit (exit 11). Real git, real worktrees, SQLite
and PostgreSQL."""

from __future__ import annotations

import json

from tests.gitrepo import commit, open_workspace

from .conftest import sql as edit
from .conftest import sql_rows, sqlite_client


def sql(board, statement: str) -> None:
    """Edit the board behind LoopX's back with the database's own client (sqlite3 waiting on a busy board, psql)."""
    import subprocess

    if board.backend != "sqlite":
        edit(board, statement)
        return
    proc = subprocess.run(sqlite_client(board.db, statement), capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr


def _two_tries(board) -> dict:
    """LX-1 (a1) passes its verify command and waits on its merge; LX-2 (a2) fails it."""
    board.ok("card", "add", "Speed up login", "--verify", "test -f fast.txt", "--tries", "2")
    for key, agent, files in (("LX-1", "a1", {"fast.txt": "fast\n"}), ("LX-2", "a2", {"slow.txt": "slow\n"})):
        assert board.ok("claim", key, agent=agent)["action"] == "work"
        commit(open_workspace(board, int(key[3:]), agent), files, f"{agent}'s way")
        board.ok("writeback", key, "--summary", f"{agent}'s way", "--tokens", "1000", agent=agent)
    assert board.ok("done", "LX-1", "--summary", "login is fast now", agent="a1")["card"]["status"] == "waiting"
    assert board.cli("done", "LX-2", "--summary", "tried", agent="a2").code == 5  # its verify failed
    return {t["card"]: t for t in board.ok("card", "tries", "LX-1")["tries"]}


def _problems(board) -> list[dict]:
    res = board.cli("verify")
    assert res.code == 11, res
    return res.data["verify"]["problems"]


def test_swapped_verify_results_change_nothing_in_card_tries_and_verify_names_them(repo_team):
    before = _two_tries(repo_team)
    assert before["LX-1"]["verify"] is True and before["LX-2"]["verify"] is False
    assert repo_team.cli("verify").code == 0
    rows = dict(sql_rows(repo_team, "SELECT card_id, extra FROM evidence WHERE source = 'verify' ORDER BY card_id"))
    one, two = (json.dumps(r) if not isinstance(r, str) else r for r in (rows[1], rows[2]))
    quoted = {k: v.replace("'", "''") for k, v in (("one", one), ("two", two))}
    sql(
        repo_team,
        f"UPDATE evidence SET extra = CASE card_id WHEN 1 THEN '{quoted['two']}' ELSE '{quoted['one']}' END WHERE source = 'verify'",
    )
    after = {t["card"]: t for t in repo_team.ok("card", "tries", "LX-1")["tries"]}
    assert after["LX-1"]["verify"] is True and after["LX-2"]["verify"] is False
    said = [p for p in _problems(repo_team) if p.get("row", {}).get("table") == "evidence"]
    assert {p["row"]["column"] for p in said} == {"verify"} and len(said) == 2, said


def test_verify_rows_moved_to_the_other_try_are_named(repo_team):
    _two_tries(repo_team)
    sql(repo_team, "UPDATE evidence SET card_id = CASE card_id WHEN 1 THEN 2 ELSE 1 END WHERE source = 'verify'")
    tries = {t["card"]: t for t in repo_team.ok("card", "tries", "LX-1")["tries"]}
    assert tries["LX-1"]["verify"] is True and tries["LX-2"]["verify"] is False
    assert any(p.get("row", {}).get("column") == "card_id" for p in _problems(repo_team))


def test_zeroed_counters_do_not_change_a_tries_turns_or_cost(repo_team):
    _two_tries(repo_team)
    sql(repo_team, "UPDATE card SET used_turns = 0, used_tokens = 0 WHERE id = 2")
    tries = {t["card"]: t for t in repo_team.ok("card", "tries", "LX-1")["tries"]}
    assert tries["LX-2"]["quota"]["turns"]["used"] == 1 and tries["LX-2"]["quota"]["tokens"]["used"] == 1000, tries[
        "LX-2"
    ]
    rows = {(p["row"]["table"], p["row"]["column"]) for p in _problems(repo_team) if "row" in p}
    assert ("card", "used_turns") in rows and ("card", "used_tokens") in rows


def test_the_summary_of_a_done_waiting_on_its_merge_is_in_the_log(repo_team):
    """The person reads the done's summary beside the merge dialog: an edit of it is history altered."""
    repo_team.ok("card", "add", "one")
    assert repo_team.ok("claim", "LX-1", agent="a1")["action"] == "work"
    commit(open_workspace(repo_team, 1), {"one.txt": "1\n"}, "one")
    repo_team.ok("writeback", "LX-1", "--summary", "made one", agent="a1")
    assert (
        repo_team.ok("done", "LX-1", "--summary", "adds one.txt, nothing else", agent="a1")["card"]["status"]
        == "waiting"
    )
    (reported,) = [e for e in repo_team.ok("events", "--card", "LX-1")["events"] if e["kind"] == "done_reported"]
    assert reported["data"]["summary"] == "adds one.txt, nothing else" and reported["data"]["outcome"] == "merge"
    assert repo_team.cli("verify").code == 0
    sql(
        repo_team,
        "UPDATE evidence SET summary = 'adds one.txt; the new postinstall.sh is reviewed' WHERE source = 'cli' AND summary LIKE 'adds one%'",
    )
    said = [p for p in _problems(repo_team) if p.get("row", {}).get("table") == "evidence"]
    assert said and said[0]["row"]["column"] == "summary" and said[0]["row"]["log"] == "adds one.txt, nothing else", (
        said
    )


def test_a_turns_tokens_edited_in_its_evidence_row_are_named(repo_team):
    """The windows sum evidence rows: a turn's tokens zeroed there is named."""
    repo_team.ok("card", "add", "one")
    assert repo_team.ok("claim", "LX-1", agent="a1")["action"] == "work"
    repo_team.ok("writeback", "LX-1", "--summary", "a big turn", "--tokens", "5000", agent="a1")
    sql(repo_team, "UPDATE evidence SET tokens = 0 WHERE card_id = 1")
    said = [p for p in _problems(repo_team) if p.get("row", {}).get("table") == "evidence"]
    assert [(p["row"]["column"], p["row"]["row"], p["row"]["log"]) for p in said] == [("tokens", 0, 5000)]
