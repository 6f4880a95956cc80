"""A card waiting on its merge does not hold its agent (#39 item 6), with real
git and real worktrees on both backends: the agent whose card waits on the
person's merge gate gets the next ready card from ``next --claim``; the merge
happens meanwhile without disturbing it; a merge that now conflicts sends the
card back to the same agent, who takes it again in priority order once its
current card is finished."""

from __future__ import annotations

from tests.gitrepo import commit, head, open_workspace

from .conftest import card, events, worked


def workspace(board, key):
    return open_workspace(board, int(key.split("-")[1]))


def answer(board, gate, *extra):
    return board.cli("gate", "answer", gate, "approve", *extra, tty=True)


def claimed(board, agent):
    """``next --claim``'s answer (exit 6 when it says wait, 9 when idle)."""
    res = board.cli("next", "--claim", agent=agent)
    assert res.code in (0, 6, 9), res
    return res.data


def finish(board, key, agent, tree, files, message):
    commit(tree, files, message)
    worked(board, key, agent, message)
    return board.ok("done", key, "--summary", message, agent=agent)["card"]


def test_an_agent_whose_card_waits_on_its_merge_takes_the_next_ready_card(repo_team):
    repo = repo_team
    repo.ok("card", "add", "one")
    repo.ok("card", "add", "two")
    t1, t2 = workspace(repo, "LX-1"), workspace(repo, "LX-2")
    first = claimed(repo, "a1")
    assert first["action"] == "work" and first["card"]["id"] == "LX-1"
    assert finish(repo, "LX-1", "a1", t1, {"src/one.py": "one = 1\n"}, "one")["status"] == "waiting"

    # Its part is done: the person decides the merge, the agent takes the next card.
    second = claimed(repo, "a1")
    assert second["action"] == "work" and second["card"]["id"] == "LX-2" and second["claimed"] is True, second
    assert repo.ok("next", agent="a1")["card"]["id"] == "LX-2"  # its card now is the new one
    one = card(repo, "LX-1")
    assert one["status"] == "waiting" and one["pending_gate"] == "G-1" and one["owner"] == "a1"
    assert one["lease"]["expires_at"] is None  # a lease does not run out while a person decides

    # The person merges LX-1 meanwhile; the agent's work on LX-2 goes on.
    before = head(repo.root)
    assert answer(repo, "G-1").data["card"]["status"] == "done"
    assert head(repo.root) != before and (repo.root / "src/one.py").exists()
    assert repo.ok("next", agent="a1")["card"]["id"] == "LX-2"
    assert finish(repo, "LX-2", "a1", t2, {"src/two.py": "two = 2\n"}, "two")["pending_gate"] == "G-2"

    # Nothing left to claim: the agent waits on its merge, as on any gate.
    waits = claimed(repo, "a1")
    assert waits["action"] == "wait" and waits["card"]["id"] == "LX-2" and waits["gate"]["id"] == "G-2", waits
    assert answer(repo, "G-2").data["card"]["status"] == "done"
    assert claimed(repo, "a1")["action"] == "idle"
    assert repo.cli("verify").code == 0


def test_a_merge_that_now_conflicts_comes_back_to_its_agent_in_priority_order(repo_team):
    repo = repo_team
    repo.ok("card", "add", "greet", "--priority", "1")
    repo.ok("card", "add", "tidy", "--priority", "1")
    t1, t2 = workspace(repo, "LX-1"), workspace(repo, "LX-2")
    assert claimed(repo, "a1")["card"]["id"] == "LX-1"
    finish(repo, "LX-1", "a1", t1, {"src/app.py": "print('one')\n"}, "greet")
    assert claimed(repo, "a1")["card"]["id"] == "LX-2"
    repo.ok("card", "add", "later", "--priority", "3")  # LX-3: ready, less urgent than LX-1

    # The person's own commit to the same file: their yes is refused, the branch
    # now conflicts, and LX-1 goes back to a1 — who is busy with LX-2.
    (repo.root / "src").mkdir(exist_ok=True)
    commit(repo.root, {"src/app.py": "print('mine')\n"}, "the person's own edit")
    res = answer(repo, "G-1")
    assert (
        res.code == 5 and res.data["error"]["code"] == "merge_moved" and "went back to a1" in res.data["error"]["hint"]
    ), res
    back = card(repo, "LX-1")
    assert back["status"] == "ready" and back["owner"] == "a1" and back["lease"] is None
    assert repo.ok("next", agent="a1")["card"]["id"] == "LX-2"  # its card now stays its card
    other = claimed(repo, "a2")
    assert other["card"]["id"] == "LX-3"  # another agent never gets a1's conflict

    # LX-2 finished (no commits: done at once), a1 takes LX-1 again: it comes first.
    worked(repo, "LX-2", "a1", "nothing to change")
    assert repo.ok("done", "LX-2", "--summary", "nothing to change", agent="a1")["card"]["status"] == "done"
    again = claimed(repo, "a1")
    assert again["action"] == "work" and again["card"]["id"] == "LX-1", again
    assert "src/app.py" in again["card"]["next"] and "git merge main" in again["card"]["next"]
    conflict = [e for e in events(repo, "LX-1") if e["kind"] == "merge_conflict"][-1]
    assert conflict["data"]["agent"] == "a1" and conflict["signed"] is True
    assert t2.exists() and repo.cli("verify").code == 0


def test_a_rejected_merge_leaves_its_agent_at_work(repo_team):
    repo = repo_team
    repo.ok("card", "add", "one")
    repo.ok("card", "add", "two")
    t1 = workspace(repo, "LX-1")
    claimed(repo, "a1")
    finish(repo, "LX-1", "a1", t1, {"src/one.py": "one = 1\n"}, "one")
    assert claimed(repo, "a1")["card"]["id"] == "LX-2"
    res = repo.cli("gate", "answer", "G-1", "reject", "--note", "not this way", tty=True)
    assert res.data["card"]["status"] == "blocked"
    nxt = repo.ok("next", agent="a1")
    assert nxt["action"] == "work" and nxt["card"]["id"] == "LX-2"
    assert repo.cli("verify").code == 0


def test_a_handoff_reaches_an_agent_whose_card_waits_on_its_merge(repo_team):
    repo = repo_team
    repo.ok("card", "add", "one")
    repo.ok("card", "add", "two")
    t1 = workspace(repo, "LX-1")
    claimed(repo, "a1")
    finish(repo, "LX-1", "a1", t1, {"src/one.py": "one = 1\n"}, "one")
    assert claimed(repo, "a2")["card"]["id"] == "LX-2"
    worked(repo, "LX-2", "a2", "half of it")
    repo.ok("handoff", "LX-2", "--to", "a1", "--summary", "half done", agent="a2")
    offered = repo.cli("next", agent="a1").data
    assert offered["action"] == "accept" and offered["card"]["id"] == "LX-2", offered
    repo.ok("accept", "LX-2", agent="a1")
    assert repo.ok("next", agent="a1")["card"]["id"] == "LX-2"
    assert card(repo, "LX-1")["pending_gate"] == "G-1" and repo.cli("verify").code == 0
