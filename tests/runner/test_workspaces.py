"""The runner starts every turn in the card's workspace (issue #26): real
runner processes (shell runtime), real git, real worktrees, real kills."""

from __future__ import annotations

import contextlib
import os
import signal
import sys
from pathlib import Path

from tests.conftest import git

HERE = Path(__file__).resolve().parent
TURN = [sys.executable, str(HERE / "workspace_turn.py")]


def test_two_agents_editing_the_same_file_in_their_own_workspaces_never_see_each_others_edits(repo_team, watch):
    repo_team.ok("card", "add", "one")
    repo_team.ok("card", "add", "two")
    first = watch.run("a1", "--turns", "1", rest=[*TURN, "edit"])
    second = watch.run("a2", "--turns", "1", rest=[*TURN, "edit"])
    assert watch.ended(first) == 0 and watch.ended(second) == 0
    said = {}
    for card in ("LX-1", "LX-2"):
        (ev,) = [e for e in watch.evidence(card) if e["summary"].startswith("read back")]
        said[ev["agent"]] = ev
        code = ev["extra"]["code"]
        assert code["branch"] == f"loopx/{card}" and code["wip"]  # the evidence names the branch and the saved edit
        ws = Path(code["path"])
        assert (
            ev["summary"] == f"read back: written by {ev['agent']} in {ws}"
        )  # the turn ran there, and saw its own edit only
        assert git(ws, "show", f"{code['wip']}:shared.txt") == f"written by {ev['agent']}\n"
    assert set(said) == {"a1", "a2"}
    assert not (repo_team.root / "shared.txt").exists()  # the main checkout is untouched
    kinds = [e.kind for e in watch.events()]
    assert kinds.count("workspace_opened") == 2 and kinds.count("code_state") >= 4  # each writeback and each turn's end
    assert repo_team.cli("verify").code == 0


def test_a_runner_killed_mid_turn_loses_no_edit_and_the_next_agent_resumes_from_it(repo_team, watch, tmp_path):
    repo_team.ok("card", "add", "one")
    pid_file = tmp_path / "half.pid"
    first = watch.run("a1", "--lease", "3s", rest=[*TURN, "half"], env={"HALF_PID_FILE": str(pid_file)})
    wip = watch.until(
        "the half-done edits saved under a LoopX ref while the turn runs",
        lambda: next((e.data["wip"] for e in watch.events("code_state") if e.data.get("wip")), None),
    )
    ws = Path(
        watch.until("the workspace", lambda: next((e.data["path"] for e in watch.events("workspace_opened")), None))
    )
    assert f"refs/loopx/LX-1/wip/{wip}" in git(repo_team.root, "for-each-ref", "--format=%(refname)", "refs/loopx/")
    assert git(ws, "show", f"{wip}:half.txt") == "half done by a1\n"
    # kill -9: the runner, and the turn it started (its keeper, runner/guard.py,
    # ends the turn when the runner dies; the kill makes sure, whichever is first)
    turn_pid = int(watch.until("the turn's pid", lambda: pid_file.exists() and pid_file.read_text()))
    first.expected_exit = True
    os.kill(first.pid, signal.SIGKILL)
    with contextlib.suppress(ProcessLookupError):
        os.kill(turn_pid, signal.SIGKILL)
    watch.ended(first)
    # and the work tree loses the edits (a cleanup, another tool): only the saved ref holds them now
    git(ws, "checkout", "--", ".")
    git(ws, "clean", "-fdq")
    assert not (ws / "half.txt").exists()
    second = watch.run("a2", "--turns", "1", rest=[*TURN, "resume"])  # claims the card once a1's lease is reaped
    assert watch.ended(second) == 0
    (ev,) = [e for e in watch.evidence("LX-1") if e["agent"] == "a2" and e["summary"].startswith("half.txt")]
    assert ev["summary"] == f"half.txt: half done by a1 | README: hello / edited by a1 | cwd {ws}"
    assert repo_team.cli("verify").code == 0


def test_a_refused_workspace_runs_no_turn_and_the_runner_retries_once_the_person_makes_room(repo_team, watch):
    repo_team.ok("card", "add", "one")
    repo_team.ok("card", "add", "two")
    other = Path(repo_team.ok("workspace", "open", "LX-2")["workspace"]["path"])
    (other / "draft.txt").write_text("work no ref keeps yet: its folder may not go\n")
    repo_team.ok("workspace", "cap", "1")  # the person's: LX-2's folder fills it
    runner = watch.run("a1", "--turns", "1", rest=[*TURN, "edit"])
    said = watch.until(
        "the runner says why LX-1 gets no turn",
        lambda: next(
            (
                e.data["detail"]
                for e in watch.events("runner_state")
                if "no workspace for LX-1" in (e.data.get("detail") or "")
            ),
            None,
        ),
    )
    assert "over the cap" in said and "loopx workspace cap" in said  # why, and what the person can do
    card = watch.card(1)
    assert card.status == "ready" and card.lease_holder is None  # given back, not worked on in the project folder
    assert watch.turns_started() == 0 and not (repo_team.root / "shared.txt").exists()
    # Something that cannot make room (a new card) does not make it try again: no busy loop.
    repo_team.ok("card", "add", "three")
    seq = watch.seq()
    watch.until("the runner read the new card", lambda: watch.seen("a1", seq))
    assert len([e for e in watch.events("claimed") if e.card == 1]) == 1 and watch.turns_started() == 0
    # The person lifts the cap: the runner tries again at once, and the turn runs in LX-1's workspace.
    repo_team.ok("workspace", "cap", "none")
    assert watch.ended(runner) == 0
    (ev,) = [e for e in watch.evidence("LX-1") if e["summary"].startswith("read back")]
    assert (
        ev["summary"] == f"read back: written by a1 in {ev['extra']['code']['path']}"
        and ev["extra"]["code"]["branch"] == "loopx/LX-1"
    )
    assert not (repo_team.root / "shared.txt").exists()
    assert repo_team.cli("verify").code == 0


def test_a_workspace_open_the_boards_restart_cut_off_keeps_the_card_and_runs_its_turn(repo_team, watch):
    """#42: the server going away under the open is not the workspace refused:
    the runner does not give the card back (another host would take it), it
    begins its loop again once the board is back and works the card it holds."""
    repo_team.ok("card", "add", "one")
    argv = [sys.executable, str(HERE / "cut_off_open.py"), "run", "--agent", "a1", "--runtime", "shell"]
    env = dict(os.environ, LOOPX_DB=repo_team.url)
    env.pop("LOOPX_AGENT", None)
    runner = watch.spawn("a1", [*argv, "--turns", "1", "--", *TURN, "edit"], env, repo_team.root)
    assert watch.ended(runner) == 0, watch.explain()
    assert "the board went away under the runner" in watch.explain()
    (started,) = watch.events("turn_started")
    assert not [e for e in watch.events("released") if e.seq < started.seq]  # (it gives it back as it stops)
    assert not any("no workspace" in (e.data.get("detail") or "") for e in watch.events("runner_state"))
    assert len(watch.events("claimed")) == 1  # the one claim, worked
    (ev,) = [e for e in watch.evidence("LX-1") if e["summary"].startswith("read back")]
    assert ev["extra"]["code"]["branch"] == "loopx/LX-1"  # in its workspace, opened the second time
    assert repo_team.cli("verify").code == 0


def test_a_repository_without_a_commit_yet_runs_the_turn_in_the_project_folder(team, watch):
    git(team.root, "init", "-q", "-b", "main")
    (team.root / ".git" / "info" / "exclude").write_text(".loopx/\n")
    team.ok("card", "add", "one")
    assert watch.ended(watch.run("a1", "--turns", "1", rest=[*TURN, "edit"])) == 0
    (ev,) = [e for e in watch.evidence("LX-1") if e["summary"].startswith("read back")]
    assert ev["summary"] == f"read back: written by a1 in {team.root}"
    assert not watch.events("workspace_opened")


def test_a_runner_whose_card_waits_on_its_merge_goes_on_with_the_next_ready_card(repo_team, watch):
    """#39 item 6: the agent's part of LX-1 is done once its merge gate is
    asked; the runner does not sit idle on it while LX-2 is ready."""
    repo_team.ok("card", "add", "one")
    repo_team.ok("card", "add", "two")
    runner = watch.run("a1", "--turns", "2", rest=[*TURN, "finish"])
    watch.until("LX-2 finished too, while LX-1's merge waits", lambda: watch.card(2).status == "waiting")
    assert watch.ended(runner) == 0  # its two turns: LX-1, then LX-2
    assert [e.card for e in watch.events("turn_started")] == [1, 2]
    for key, gate in (("LX-1", "G-1"), ("LX-2", "G-2")):
        shown = repo_team.ok("card", "show", key)["card"]
        assert shown["status"] == "waiting" and shown["pending_gate"] == gate and shown["owner"] == "a1"
    # The person merges both, in their own time (G-2 was asked before main moved: asked again, G-3).
    assert repo_team.cli("gate", "answer", "G-1", "approve", tty=True).data["card"]["status"] == "done"
    assert repo_team.cli("gate", "answer", "G-2", "approve", tty=True).data["error"]["code"] == "merge_moved"
    assert repo_team.cli("gate", "answer", "G-3", "approve", tty=True).data["card"]["status"] == "done"
    assert (repo_team.root / "LX-1.txt").read_text() == "LX-1 by a1\n" and (
        repo_team.root / "LX-2.txt"
    ).read_text() == "LX-2 by a1\n"
    assert repo_team.cli("verify").code == 0


def test_what_a_turns_program_creates_in_the_shared_git_folder_is_moved_out_after_it(repo_team, watch):
    """Issue #38: MERGE_HEAD, shallow, a stash, new branches written by a program
    (no sandbox can deny a path that does not exist yet) are gone from the
    repository after the runner's turn, kept aside, and named on the card; the
    turn's own commit on its branch stays."""
    repo_team.ok("card", "add", "one")
    runner = watch.run("a1", "--turns", "1", rest=[*TURN, "plant"])
    assert watch.ended(runner) == 0
    common = repo_team.root / ".git"
    planted = (
        "MERGE_HEAD",
        "shallow",
        "refs/stash",
        "logs/refs/stash",
        "refs/heads/evil",
        "refs/heads/loopx/LX-99",
        "refs/heads/loopx/LX-99x",
    )
    assert [p for p in planted if (common / p).exists()] == []
    (event,) = watch.events("git_refused")
    assert sorted(event.data["moved"]) == sorted(planted) and event.actor == "runner:a1"
    kept = Path(event.data["kept_in"])
    assert (kept / "MERGE_HEAD").read_text() == "0" * 40 + "\n" and kept.parent.name == "loopx-refused"
    # the person's git shows nothing of it, and works
    assert git(repo_team.root, "stash", "list") == ""
    assert git(repo_team.root, "branch", "--format=%(refname:short)").split() == ["loopx/LX-1", "main"]
    assert git(repo_team.root, "log", "--format=%s", "-1", "loopx/LX-1").strip() == "own work"  # the turn's own
    (repo_team.root / "mine.txt").write_text("the person's\n")
    git(repo_team.root, "add", "mine.txt")
    git(repo_team.root, "commit", "-q", "-m", "the person's commit")
    assert git(repo_team.root, "rev-list", "--count", "HEAD").strip() == "2"  # no merge commit: MERGE_HEAD was not read
    assert "moved out" in watch.explain()  # the runner's WARNING line
    assert not any((common / "loopx-turns").iterdir())  # no turn runs now: nothing is swept until the next
