"""Recorded work never vanishes without the person (#38 §5): a receiver who
resets the card's branch to the base and finishes is asked about, not waved
through; the giver's commits are kept under LoopX's refs, ``workspace gc``
keeps the folder, ``loopx verify`` names them. Real git, real worktrees, on
SQLite and PostgreSQL."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import git, person, person_ok
from tests.gitrepo import commit

from .conftest import sql as edit
from .conftest import sqlite_client


def sql(board, statement: str) -> None:
    """Edit the board behind LoopX's back with the database's own client (sqlite3 waiting on a busy board, psql)."""
    import subprocess

    if board.backend != "sqlite":
        edit(board, statement)
        return
    proc = subprocess.run(sqlite_client(board.db, statement), capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr


def _handed_over_and_reset(board) -> tuple[Path, str]:
    """a1 commits on LX-1's branch and writes back (the commit recorded), hands
    the card to a2; a2 resets the branch to main. Returns (workspace, a1's commit)."""
    board.ok("card", "add", "the feature")
    path = Path(board.ok("next", "--claim", agent="a1")["workspace"]["path"])
    mine = commit(path, {"feature.py": "def feature():\n    return 42\n"}, "a1's feature")
    board.ok("writeback", "LX-1", "--summary", "wrote the feature", "--turn-id", "a1.t1", agent="a1")
    board.ok("handoff", "LX-1", "--to", "a2", "--summary", "finish it", agent="a1")
    board.ok("accept", "LX-1", agent="a2")
    git(path, "reset", "-q", "--hard", "main")  # the receiver hides the giver's work
    board.ok("writeback", "LX-1", "--summary", "nothing left to do", agent="a2")
    return path, mine


def _gates(board) -> list[dict]:
    return board.ok("gate", "list")["gates"]


def test_done_after_a_receiver_reset_the_branch_asks_the_person_and_keeps_the_commit(repo_team):
    path, mine = _handed_over_and_reset(repo_team)
    out = repo_team.ok("done", "LX-1", "--summary", "done", agent="a2")
    assert out["card"]["status"] == "waiting", out  # not done: the person is asked
    (gate,) = [g for g in _gates(repo_team) if g["status"] == "pending"]
    assert gate["kind"] == "vanished" and mine[:12] in gate["question"] and "turn a1.t1" in gate["question"], gate
    ref = f"refs/loopx/LX-1/kept/{mine}"
    assert git(repo_team.root, "rev-parse", ref).strip() == mine  # kept where no git gc collects it
    # gc keeps the folder while the giver's commit is on no branch … even after the reflogs are gone
    git(repo_team.root, "update-ref", "-d", ref)
    git(repo_team.root, "reflog", "expire", "--expire=now", "--all")
    gc = person_ok(repo_team, "workspace", "gc")
    assert [k["card"] for k in gc["kept"]] == ["LX-1"] and mine[:12] in gc["kept"][0]["why"] and path.is_dir(), gc
    res = repo_team.cli("verify")
    assert res.code == 0 and any(mine[:12] in n and "LX-1" in n for n in res.data["verify"]["notes"]), (
        res
    )  # an open card: named, not yet altered


def test_the_persons_approval_lets_exactly_those_commits_go_and_the_card_finishes(repo_team):
    path, mine = _handed_over_and_reset(repo_team)
    repo_team.ok("done", "LX-1", "--summary", "done", agent="a2")
    (gate,) = [g for g in _gates(repo_team) if g["status"] == "pending"]
    person_ok(repo_team, "gate", "answer", gate["id"], "approve")
    out = repo_team.ok("done", "LX-1", "--summary", "done", agent="a2")
    assert out["card"]["status"] == "done", out
    gc = person_ok(repo_team, "workspace", "gc")  # the commit is kept under LoopX's ref: the folder may go
    assert [r["card"] for r in gc["removed"]] == ["LX-1"] and not path.exists(), gc
    git(repo_team.root, "reflog", "expire", "--expire=now", "--all")
    git(repo_team.root, "gc", "-q", "--prune=now")
    assert git(repo_team.root, "cat-file", "-t", mine).strip() == "commit"
    assert repo_team.cli("verify").code == 0


def test_a_rejection_sends_the_card_back_and_nothing_is_done(repo_team):
    _handed_over_and_reset(repo_team)
    repo_team.ok("done", "LX-1", "--summary", "done", agent="a2")
    (gate,) = [g for g in _gates(repo_team) if g["status"] == "pending"]
    person_ok(repo_team, "gate", "answer", gate["id"], "reject", "--note", "bring a1's work back")
    assert repo_team.ok("card", "show", "LX-1")["card"]["status"] != "done"


def test_verify_names_a_done_cards_recorded_commits_that_left_without_the_person(repo_team):
    """The card was finished as before #38 (the row edited to done, as an older
    LoopX would have left it): verify names the commit on neither branch."""
    _, mine = _handed_over_and_reset(repo_team)
    sql(repo_team, "UPDATE card SET status = 'done', lease_holder = NULL, lease_token = NULL WHERE id = 1")
    res = repo_team.cli("verify")
    assert res.code == 11
    said = [p for p in res.data["verify"]["problems"] if mine[:12] in p["what"]]
    assert said and said[0]["where"] == "card LX-1" and "turn a1.t1" in said[0]["what"], res.data


def test_gc_removes_a_workspace_whose_branch_holds_its_recorded_work(repo_team):
    """The ordinary case still cleans up: a branch merged by the person."""
    repo_team.ok("card", "add", "one")
    path = Path(repo_team.ok("next", "--claim", agent="a1")["workspace"]["path"])
    commit(path, {"one.txt": "1\n"}, "one")
    repo_team.ok("writeback", "LX-1", "--summary", "one", agent="a1")
    repo_team.ok("done", "LX-1", "--summary", "done", agent="a1")
    (gate,) = [g for g in _gates(repo_team) if g["status"] == "pending"]
    assert gate["kind"] == "merge"
    person_ok(repo_team, "gate", "answer", gate["id"], "approve")
    gc = person(repo_team, "workspace", "gc")
    assert gc.code == 0 and [r["card"] for r in gc.data["removed"]] == ["LX-1"], gc
    assert repo_team.cli("verify").code == 0


def test_verify_checks_the_repository_the_board_sits_in_after_the_project_moved(repo_team, tmp_path):
    """The project folder moved (or restored elsewhere): verify checks the
    repository beside its ``.loopx/``, says which, and still names a recorded
    commit that is gone — not "not on this machine"."""
    import json
    import shutil

    from tests.kernel.conftest import loopx

    repo_team.ok("card", "add", "one")
    path = Path(repo_team.ok("next", "--claim", agent="a1")["workspace"]["path"])
    lost = commit(path, {"one.txt": "1\n"}, "one")
    repo_team.ok("writeback", "LX-1", "--summary", "one", "--turn-id", "a1.t1", agent="a1")
    moved = tmp_path / "moved" / "project"
    moved.parent.mkdir()
    shutil.move(str(repo_team.root), str(moved))
    env, drop = (
        ({}, ("LOOPX_DB", "LOOPX_AGENT"))
        if repo_team.backend == "sqlite"
        else ({"LOOPX_DB": repo_team.url}, ("LOOPX_AGENT",))
    )

    def verify():
        proc = loopx("--json", "verify", cwd=moved, env=env, drop=drop)
        return proc.returncode, json.loads(proc.stdout.strip().splitlines()[-1])["verify"]

    code, said = verify()
    assert code == 0 and any(str(moved) in n for n in said["notes"]), said
    shutil.rmtree(moved / ".git" / "worktrees")  # the commit made unreachable and collected in the moved repository
    git(moved, "branch", "-D", "loopx/LX-1")
    git(moved, "reflog", "expire", "--expire=now", "--all")
    git(moved, "gc", "-q", "--prune=now")
    code, said = verify()
    assert code == 11 and any(
        lost[:12] in p["what"] and "no longer in the repository" in p["what"] for p in said["problems"]
    ), said


def test_the_agent_is_told_its_done_waits_on_the_person_for_the_vanished_work(repo_team):
    _handed_over_and_reset(repo_team)
    proc = repo_team.spawn("done", "LX-1", "--summary", "done", agent="a2")
    assert (
        proc.returncode == 0 and "not finished" in proc.stdout and "neither its base nor its branch" in proc.stdout
    ), proc
    assert "merge" not in proc.stdout.split("→")[0], proc.stdout


def test_an_approval_appended_without_a_signature_lets_nothing_go(repo_team):
    """An agent with the board file appends a person's approval of the gate
    (chained, hash recomputed, no signature): done still waits."""
    from loopx_core.authority import chain

    from .conftest import sql_rows

    _handed_over_and_reset(repo_team)
    repo_team.ok("done", "LX-1", "--summary", "done", agent="a2")
    (gate,) = [g for g in _gates(repo_team) if g["status"] == "pending"]
    sql(
        repo_team,
        f"UPDATE gate SET status = 'approved', answer = 'approved', answered_by = 'human:tester', lease_token = 99 WHERE id = {gate['id'][2:]}",
    )
    sql(repo_team, "UPDATE card SET status = 'active' WHERE id = 1")
    seq, head, at = sql_rows(repo_team, "SELECT seq, hash, at FROM event ORDER BY seq DESC LIMIT 1")[0]
    text = chain.data_text(
        {
            "gate": gate["id"],
            "answer": "approved",
            "scope": gate["scope"],
            "agent": "a2",
            "note": None,
            "grant": None,
            "lease_token": 2,
        }
    )
    digest = chain.event_hash(head, seq + 1, at, "human:tester", 1, "gate_answered", text, None, None)
    sql(
        repo_team,
        f"INSERT INTO event (seq, at, actor, card, kind, data, op_id, prev, hash, key, sig) VALUES ({seq + 1}, {at!r}, 'human:tester', 1, 'gate_answered', '{text}', NULL, '{head}', '{digest}', NULL, NULL)",
    )
    res = repo_team.cli("done", "LX-1", "--summary", "done", agent="a2")
    assert res.code != 0 or res.data["card"]["status"] != "done", res
    assert repo_team.ok("card", "show", "LX-1")["card"]["status"] != "done"


def test_a_rebased_branch_is_not_work_that_vanished(repo_team):
    """The agent rebases its recorded commit onto a newer base: the same change
    is on its branch, so done asks only for the merge, and gc cleans up after it."""
    repo_team.ok("card", "add", "one")
    path = Path(repo_team.ok("next", "--claim", agent="a1")["workspace"]["path"])
    first = commit(path, {"one.txt": "1\n"}, "one")
    repo_team.ok("writeback", "LX-1", "--summary", "one", agent="a1")
    commit(repo_team.root, {"other.txt": "the person's\n"}, "meanwhile on main")
    git(path, "rebase", "-q", "main")
    assert git(path, "rev-parse", "HEAD").strip() != first
    repo_team.ok("writeback", "LX-1", "--summary", "rebased", agent="a1")
    repo_team.ok("done", "LX-1", "--summary", "done", agent="a1")
    (gate,) = [g for g in _gates(repo_team) if g["status"] == "pending"]
    assert gate["kind"] == "merge", gate
    person_ok(repo_team, "gate", "answer", gate["id"], "approve")
    gc = person_ok(repo_team, "workspace", "gc")
    assert [r["card"] for r in gc["removed"]] == ["LX-1"], gc
    assert repo_team.cli("verify").code == 0
