"""A workspace per card (issue #26): real git, real worktrees, on both backends."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.conftest import git
from tests.kernel.conftest import kinds, refused


def _open(board, card="LX-1", agent="a1"):
    from loopx_core.ops import workspace_open

    store = board.store()
    try:
        return workspace_open.open_workspace(store, int(card.split("-")[1]), f"agent:{agent}")
    finally:
        store.close()


def _ops(board, fn, *args):
    store = board.store()
    try:
        return fn(store, *args)
    finally:
        store.close()


def test_a_workspace_is_a_worktree_on_the_cards_own_branch_outside_the_project(repo_team):
    repo_team.ok("card", "add", "one")
    ws = _open(repo_team)
    path = Path(ws.path)
    assert ws.branch == "loopx/LX-1" and ws.state == "open" and ws.base == "main"
    assert git(path, "rev-parse", "--abbrev-ref", "HEAD").strip() == "loopx/LX-1"
    assert (path / "src" / "app.py").read_text() == "print('hi')\n"
    assert repo_team.root not in path.parents  # not inside the project (nor its read-only .loopx/)
    assert str(path) in git(repo_team.root, "worktree", "list")
    again = _open(repo_team)  # opening again returns the same workspace
    assert again.path == ws.path
    events = [e["kind"] for e in repo_team.ok("events")["events"]]
    assert events.count("workspace_opened") == 1
    assert repo_team.cli("verify").code == 0


def test_code_state_saves_uncommitted_and_untracked_work_under_a_loopx_ref_without_touching_the_tree(repo_team):
    from loopx_core.ops import workspaces

    repo_team.ok("card", "add", "one")
    ws = _open(repo_team)
    path = Path(ws.path)
    (path / "src" / "app.py").write_text("print('edited')\n")
    (path / "new.txt").write_text("brand new\n")
    before = git(path, "status", "--porcelain")
    code = _ops(repo_team, workspaces.record, 1, "agent:a1")
    assert git(path, "status", "--porcelain") == before  # work tree and index as they were
    assert code["wip"] and code["head"] == ws.base_commit and code["branch"] == "loopx/LX-1"
    assert code["diff"] == {"files": 2, "insertions": 2, "deletions": 1}
    refs = git(path, "for-each-ref", "--format=%(refname)", "refs/loopx/")
    assert f"refs/loopx/LX-1/wip/{code['wip']}" in refs
    assert git(path, "show", f"{code['wip']}:new.txt") == "brand new\n"
    # a commit, then another record: the commit is named, the tree is clean again
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", "work")
    code2 = _ops(repo_team, workspaces.record, 1, "agent:a1")
    assert code2["wip"] is None and code2["commits"] == [git(path, "rev-parse", "HEAD").strip()]
    kinds = [e["kind"] for e in repo_team.ok("events")["events"]]
    assert kinds.count("code_state") == 2
    assert repo_team.cli("verify").code == 0


def test_saved_work_is_put_back_when_the_work_tree_lost_it_and_never_over_newer_work(repo_team):
    from loopx_core.ops import workspaces

    repo_team.ok("card", "add", "one")
    path = Path(_open(repo_team).path)
    (path / "src" / "app.py").write_text("print('edited')\n")
    (path / "new.txt").write_text("n\n")
    _ops(repo_team, workspaces.record, 1, "agent:a1")
    git(path, "checkout", "--", ".")
    os.unlink(path / "new.txt")
    assert _ops(repo_team, workspaces.restore, 1) is True
    assert (path / "src" / "app.py").read_text() == "print('edited')\n" and (path / "new.txt").read_text() == "n\n"
    (path / "src" / "app.py").write_text("print('newer')\n")
    assert _ops(repo_team, workspaces.restore, 1) is False  # newer edits are kept
    assert (path / "src" / "app.py").read_text() == "print('newer')\n"


def test_two_workspaces_never_see_each_others_edits(repo_team):
    repo_team.ok("card", "add", "one")
    repo_team.ok("card", "add", "two")
    one, two = Path(_open(repo_team, "LX-1").path), Path(_open(repo_team, "LX-2").path)
    (one / "README.md").write_text("from one\n")
    (two / "README.md").write_text("from two\n")
    assert (one / "README.md").read_text() == "from one\n"
    assert (two / "README.md").read_text() == "from two\n"
    assert (repo_team.root / "README.md").read_text() == "hello\n"


def test_remove_is_refused_until_merged_or_archived_and_loses_nothing(repo_team):
    from loopx_core.ops import workspaces
    from loopx_core.shapes.errors import Conflict

    repo_team.ok("card", "add", "one")
    path = Path(_open(repo_team).path)
    (path / "work.txt").write_text("uncommitted\n")
    with pytest.raises(Conflict):
        _ops(repo_team, workspaces.remove, 1, "agent:a1")
    assert path.is_dir()
    archived = _ops(repo_team, workspaces.archive, 1, "agent:a1")
    assert archived.state == "archived" and archived.archive_ref.startswith("refs/loopx/LX-1/archive/")
    removed = _ops(repo_team, workspaces.remove, 1, "agent:a1")
    assert removed.state == "removed" and not path.exists()
    assert git(repo_team.root, "show", f"{archived.archive_ref}:work.txt") == "uncommitted\n"
    assert repo_team.cli("verify").code == 0


def test_a_merged_branch_is_removed(repo_team):
    from loopx_core.ops import workspaces

    repo_team.ok("card", "add", "one")
    path = Path(_open(repo_team).path)
    (path / "work.txt").write_text("done\n")
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", "work")
    git(repo_team.root, "merge", "-q", "--ff-only", "loopx/LX-1")
    assert _ops(repo_team, workspaces.remove, 1, "agent:a1").state == "removed"
    assert not path.exists()
    again = _open(repo_team)  # reopened: the card's branch checked out again, where it was
    assert again.state == "open" and (path / "work.txt").read_text() == "done\n"
    assert again.head == git(repo_team.root, "rev-parse", "loopx/LX-1").strip()
    assert repo_team.cli("verify").code == 0


def test_a_project_that_is_no_repository_has_no_workspaces(team):
    from loopx_core.ops import workspace_open, workspaces
    from loopx_core.shapes.errors import InvalidInput

    team.ok("card", "add", "one")
    with pytest.raises(InvalidInput, match="not a git repository"):
        _open(team)
    assert _ops(team, workspace_open.ensure, 1, "agent:a1") is None
    assert _ops(team, workspaces.capture, 1) is None


def _loopx_in(folder: Path, *argv: str, agent: str | None = None, db: str | None = None):
    """A real, cold ``loopx`` run in ``folder`` with no --db or LOOPX_DB: it finds its board itself
    (``db``: a team board's URL, which nothing finds by itself; the checkout is found from ``folder``)."""
    import json
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k not in ("LOOPX_DB", "LOOPX_AGENT")}
    if agent:
        env["LOOPX_AGENT"] = agent
    if db:
        env["LOOPX_DB"] = db
    done = subprocess.run(
        [sys.executable, "-m", "loopx_core", "--json", *argv],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    return done.returncode, json.loads(done.stdout.strip().splitlines()[-1]) if done.stdout.strip() else {}


def test_from_inside_a_workspace_loopx_finds_the_projects_one_board_and_says_why(repo_team):
    from loopx_core.adapters.hooks import board_target

    if repo_team.backend != "sqlite":
        pytest.skip(
            "discovery finds .loopx/board.db files; a team board's checkout from a workspace: tests/kernel/test_team_workspaces.py"
        )
    repo_team.ok("card", "add", "one")
    path = Path(_open(repo_team).path)
    code, where = _loopx_in(path / "src", "where")
    assert code == 0 and where["board"]["source"] == "worktree"
    assert where["board"]["path"] == str(repo_team.db)
    code, nxt = _loopx_in(path / "src", "next", "--claim", agent="a1")
    assert code == 0 and nxt["card"]["id"] == "LX-1"  # the agent identity works there as in the main checkout
    assert board_target(None, str(path / "src")) == ("sqlite", str(repo_team.db))  # the hook's cold path: the same rule


def test_a_board_or_a_git_file_an_agent_plants_in_its_workspace_is_not_its_board(repo_team):
    """An agent can write its workspace: a ``.loopx/board.db`` of its own making
    there, or a ``.git`` file pointing at a folder it made, never becomes the
    board its hooks check it against."""
    from loopx_core.adapters.hooks import board_target

    if repo_team.backend != "sqlite":
        pytest.skip(
            "discovery finds .loopx/board.db files; a team board's checkout from a workspace: tests/kernel/test_team_workspaces.py"
        )
    repo_team.ok("card", "add", "one")
    path = Path(_open(repo_team).path)
    fake = path / "sub"
    (fake / ".loopx").mkdir(parents=True)
    (fake / ".loopx" / "board.db").write_bytes(b"")  # a board of the agent's own making
    assert board_target(None, str(fake)) == ("sqlite", str(repo_team.db))
    # a forged worktree: a .git file naming a gitdir the agent made, whose commondir names another project
    other = repo_team.root.parent / "other"
    (other / ".loopx").mkdir(parents=True)
    (other / ".loopx" / "board.db").write_bytes(b"")
    (other / ".git").mkdir()
    forged = repo_team.root.parent / "forged"
    (forged / "gitdir").mkdir(parents=True)
    (forged / "gitdir" / "commondir").write_text(str(other / ".git"))
    (forged / "gitdir" / "gitdir").write_text(str(forged / "work" / ".git"))
    (forged / "work").mkdir()
    (forged / "work" / ".git").write_text(f"gitdir: {forged / 'gitdir'}\n")
    assert board_target(None, str(forged / "work")) == ("user", None)


def test_verify_says_history_altered_when_a_recorded_commit_vanished(repo_team):
    from loopx_core.ops import workspaces

    repo_team.ok("card", "add", "one")
    path = Path(_open(repo_team).path)
    (path / "work.txt").write_text("work\n")
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", "work")
    lost = git(path, "rev-parse", "HEAD").strip()
    _ops(repo_team, workspaces.record, 1, "agent:a1", None, "a1.t1")
    assert repo_team.cli("verify").code == 0
    # the branch rewritten and the old commit collected: the history the evidence names is gone
    git(path, "reset", "-q", "--hard", "HEAD~1")
    git(repo_team.root, "reflog", "expire", "--expire=now", "--all")
    git(repo_team.root, "gc", "-q", "--prune=now")
    res = repo_team.cli("verify")
    assert res.code == 11
    problems = res.data["verify"]["problems"]
    said = [p for p in problems if lost[:12] in p["what"]]
    assert said and said[0]["where"] == "card LX-1" and "turn a1.t1" in said[0]["what"]
    code = _ops(
        repo_team, workspaces.record, 1, "agent:a1"
    )  # recording goes on from the base, not stuck on the lost HEAD
    assert "error" not in code and code["head"] == git(path, "rev-parse", "HEAD").strip() and code["commits"] == []


def test_workspace_verbs_open_list_archive_gc_and_the_cleanup_is_a_persons(repo_team):
    from tests.conftest import person, person_ok

    repo_team.ok("card", "add", "one")
    repo_team.ok("card", "add", "two")
    nxt = repo_team.ok("next", "--claim", agent="a1")  # the first claim makes the workspace and names it
    one = Path(nxt["workspace"]["path"])
    assert nxt["workspace"]["branch"] == "loopx/LX-1" and one.is_dir()
    two = repo_team.ok("workspace", "open", "LX-2")["workspace"]
    (one / "wip.txt").write_text("not committed\n")
    listed = {w["card"]: w for w in repo_team.ok("workspace", "list")["workspaces"]}
    assert (
        listed["LX-1"]["card_status"] == "active" and listed["LX-1"]["size"] > 0 and listed["LX-1"]["merged"] is False
    )
    assert listed["LX-2"]["removable"] == "merged"  # nothing on its branch yet: all of it is in main
    for verb in (["workspace", "gc"], ["workspace", "archive", "LX-1"]):
        refused = repo_team.cli(*verb, agent="a1")
        assert refused.code == 10  # cleanup is a person's
    gc = person_ok(repo_team, "workspace", "gc")
    assert [r["card"] for r in gc["removed"]] == ["LX-2"] and [k["card"] for k in gc["kept"]] == ["LX-1"]
    assert not Path(two["path"]).exists() and one.is_dir()
    archived = person_ok(repo_team, "workspace", "archive", "LX-1")["workspace"]
    gc = person(repo_team, "workspace", "gc")
    assert gc.code == 0 and [r["card"] for r in gc.data["removed"]] == ["LX-1"]
    assert git(repo_team.root, "show", f"{archived['archive_ref']}:wip.txt") == "not committed\n"  # nothing lost
    assert repo_team.cli("verify").code == 0


def test_a_handoff_carries_the_branch_head_and_saved_work_under_its_digest_and_accept_restores_it(repo_team):
    import hashlib
    import json

    repo_team.ok("card", "add", "one")
    path = Path(repo_team.ok("next", "--claim", agent="a1")["workspace"]["path"])
    (path / "half.txt").write_text("half\n")
    h = repo_team.ok("handoff", "LX-1", "--to", "a2", "--summary", "yours now", agent="a1")["handoff"]
    code = h["packet"]["code"]
    assert (
        code["branch"] == "loopx/LX-1"
        and code["path"] == str(path)
        and code["head"] == git(path, "rev-parse", "HEAD").strip()
    )
    assert git(path, "show", f"{code['wip']}:half.txt") == "half\n"
    text = json.dumps(h["packet"], sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    assert hashlib.sha256(text.encode()).hexdigest() == h["digest"]  # the digest covers the code
    os.unlink(path / "half.txt")  # the work tree lost it
    repo_team.ok("accept", "LX-1", agent="a2")
    assert (path / "half.txt").read_text() == "half\n"  # the receiver finds the work as it was handed over
    ctx = repo_team.ok("context", "LX-1", "--format", "json", agent="a2")
    assert ctx["context"]["workspace"]["path"] == str(path)


def test_writeback_evidence_names_the_code_state(repo_team):
    repo_team.ok("card", "add", "one")
    path = Path(repo_team.ok("next", "--claim", agent="a1")["workspace"]["path"])
    (path / "src" / "app.py").write_text("print('changed')\n")
    git(path, "commit", "-qam", "change")
    (path / "notes.txt").write_text("uncommitted\n")
    ev = repo_team.ok("writeback", "LX-1", "--summary", "changed the app", "--turn-id", "t1", agent="a1")["evidence"]
    code = ev["extra"]["code"]
    assert code["branch"] == "loopx/LX-1" and code["head"] == git(path, "rev-parse", "HEAD").strip()
    assert code["commits"] == [code["head"]] and code["diff"]["files"] == 2 and code["wip"]
    (event,) = [e for e in repo_team.ok("events")["events"] if e["kind"] == "code_state"]
    assert event["data"]["turn_id"] == "t1" and event["data"]["wip"] == code["wip"]


def test_done_runs_the_verify_command_in_the_workspace_and_records_the_final_code(repo_team):
    repo_team.ok("card", "add", "one", "--verify", "test -f feature.txt")  # a person's verify command
    path = Path(repo_team.ok("next", "--claim", agent="a1")["workspace"]["path"])
    (path / "feature.txt").write_text("the feature\n")
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", "feature")
    repo_team.ok("writeback", "LX-1", "--summary", "made the feature", agent="a1")
    done = repo_team.ok("done", "LX-1", "--summary", "finished", agent="a1")
    assert (
        done["card"]["status"] == "waiting"
    )  # verified in the workspace; its new commit waits for the person's merge (test_merge.py)
    assert not (repo_team.root / "feature.txt").exists()
    code = done["evidence"]["extra"]["code"]
    assert code["head"] == git(path, "rev-parse", "HEAD").strip() and code["wip"] is None


def test_a_persons_setup_command_runs_once_in_each_new_workspace_bounded_and_recorded(repo_team):
    from tests.conftest import person_ok

    assert repo_team.cli("workspace", "setup", "touch installed", agent="a1").code == 10  # a person's decision
    person_ok(repo_team, "workspace", "setup", "echo installing; touch installed.txt", "--timeout", "1m")
    repo_team.ok("card", "add", "one")
    repo_team.ok("card", "add", "two")
    one = Path(repo_team.ok("workspace", "open", "LX-1")["workspace"]["path"])
    assert (one / "installed.txt").exists() and not (repo_team.root / "installed.txt").exists()
    (opened,) = [e for e in repo_team.ok("events")["events"] if e["kind"] == "workspace_opened"]
    assert opened["data"]["setup"]["passed"] and "installing" in opened["data"]["setup"]["output"]
    repo_team.ok("workspace", "open", "LX-1")  # already open: not run again
    person_ok(repo_team, "workspace", "setup", "sleep 30", "--timeout", "1s")
    repo_team.ok("workspace", "open", "LX-2")
    second = [e for e in repo_team.ok("events")["events"] if e["kind"] == "workspace_opened"][-1]
    assert second["data"]["setup"]["timed_out"] and not second["data"]["setup"]["passed"]
    assert repo_team.cli("verify").code == 0  # the signed setting verifies


def test_an_agents_branch_checked_out_again_never_runs_the_persons_setup(repo_team):
    """The attack: an agent commits a file the setup command would run, then
    deletes its own workspace folder; the next open checks its branch out again.
    The person's setup command must not run in that tree (it would run the
    agent's code as the person, outside the sandbox)."""
    import shutil
    import subprocess

    from tests.conftest import person_ok

    person_ok(repo_team, "workspace", "setup", "test -x ./install.sh && ./install.sh; true", "--timeout", "1m")
    repo_team.ok("card", "add", "one")
    one = Path(repo_team.ok("workspace", "open", "LX-1")["workspace"]["path"])
    (one / "install.sh").write_text(f"#!/bin/sh\ntouch {repo_team.root / 'owned'}\n")
    (one / "install.sh").chmod(0o755)
    git = ["git", "-C", str(one), "-c", "user.name=a1", "-c", "user.email=a1@x"]
    subprocess.run([*git, "add", "install.sh"], check=True)
    subprocess.run([*git, "commit", "-qm", "an install script"], check=True)
    shutil.rmtree(one)
    subprocess.run(["git", "-C", str(repo_team.root), "worktree", "prune"], check=True)
    again = Path(repo_team.ok("workspace", "open", "LX-1")["workspace"]["path"])
    assert (again / "install.sh").exists()  # the agent's branch, checked out again
    assert not (repo_team.root / "owned").exists()
    opened = [e for e in repo_team.ok("events")["events"] if e["kind"] == "workspace_opened"]
    assert sum("setup" in e["data"] for e in opened) == 1  # the first open's, on the base's tree


def test_a_hand_run_claim_whose_workspace_cannot_be_made_is_refused_with_nothing_written(repo_team, tmp_path):
    """`claim CARD` by hand (here: from a sandbox that may not write the workspaces'
    folder): the claim is refused, exit 5 `no_workspace`, the board unchanged — no
    agent works a card outside its workspace by accident. `--in-project` asks for
    the project folder on purpose: the card, and the reason as a warning."""
    blocked = tmp_path / "not-a-folder"
    blocked.write_text("a file where the data folder would be\n")  # (as root too: no folder can be made under it)
    repo_team.ok("card", "add", "one")
    away = {"XDG_DATA_HOME": str(blocked)}
    err = refused(repo_team, 5, "claim", "LX-1", agent="a1", env=away)
    assert err["code"] == "no_workspace" and "no workspace for LX-1" in err["message"]
    assert (
        "loopx workspace open" in err["hint"] and "--in-project" in err["hint"]
    )  # what to do: make it from outside, or say so
    res = repo_team.cli("claim", "LX-1", "--in-project", agent="a1", env=away)
    assert res.code == 0 and res.data["card"]["id"] == "LX-1" and "workspace" not in res.data
    assert "no workspace for LX-1" in res.err and "--in-project" in res.err


def test_next_claim_whose_workspace_cannot_be_made_gives_the_card_back(repo_team, tmp_path):
    """`next --claim` picks its card inside its transaction, so it claims first: a
    workspace that cannot be made releases the card again (ready, unleased, its log
    says both) and refuses, exit 5; with `--in-project` the agent keeps it."""
    blocked = tmp_path / "not-a-folder"
    blocked.write_text("a file where the data folder would be\n")
    repo_team.ok("card", "add", "one")
    away = {"XDG_DATA_HOME": str(blocked)}
    res = repo_team.cli("next", "--claim", agent="a1", env=away)
    assert (
        res.code == 5
        and res.data["error"]["code"] == "no_workspace"
        and "released again" in res.data["error"]["message"]
    )
    card = repo_team.ok("card", "show", "LX-1")["card"]
    assert card["status"] == "ready" and card["lease"] is None and card["assignee"] is None
    assert [k for k in kinds(repo_team, "LX-1") if k in ("claimed", "released")] == ["claimed", "released"]
    res = repo_team.cli("next", "--claim", "--in-project", agent="a1", env=away)
    assert (
        res.code == 0
        and res.data["card"]["id"] == "LX-1"
        and "workspace" not in res.data
        and "no workspace for LX-1" in res.err
    )
    # where the workspace can be made, nothing changes: the card and its workspace
    repo_team.ok("card", "add", "two")
    assert repo_team.ok("claim", "LX-2", agent="a2")["workspace"]["branch"] == "loopx/LX-2"


def test_gc_removes_the_codex_homes_no_agent_at_work_here_needs_and_never_the_persons_own(
    repo_team, tmp_path, monkeypatch
):
    """LoopX writes a Codex home per project and agent for Codex turns in
    workspaces (`<data>/loopx/codex-home/<project>/<agent>`); nothing removed them.
    `workspace gc` removes those of agents with no open workspace here and no live
    runner — their links into the person's own Codex home as links: the person's
    login and sessions stay."""
    from loopx_core.runtimes import codex_settings as setup_codex
    from tests.conftest import person_ok

    person = tmp_path / "person-codex"
    (person / "sessions" / "2026").mkdir(parents=True)
    (person / "config.toml").write_text('model = "gpt-5"\n')
    (person / "auth.json").write_text('{"token": "theirs"}\n')
    (person / "sessions" / "2026" / "rollout-1.jsonl").write_text("{}\n")
    monkeypatch.setenv("CODEX_HOME", str(person))
    monkeypatch.setattr(
        setup_codex, "_outside_the_sandbox", lambda home: None
    )  # (the test's data folder is under /tmp)
    for card in ("one", "two"):
        repo_team.ok("card", "add", card)
    for card, agent in (("LX-1", "a1"), ("LX-2", "a2")):
        path = Path(repo_team.ok("claim", card, agent=agent)["workspace"]["path"])
        (path / "wip.txt").write_text("not committed\n")  # (a workspace with nothing in it would be gc'd as merged)
    homes = {
        a: setup_codex.workspace_home(setup_codex.home_for(str(repo_team.root), a), person, {}, str(repo_team.root))
        for a in ("a1", "a2", "a3")
    }
    assert (homes["a2"] / "auth.json").is_symlink() and (homes["a2"] / "sessions").is_symlink()
    (homes["a2"] / "log").mkdir()  # what Codex writes in the home itself
    (homes["a2"] / "log" / "codex-tui.log").write_text("x\n")

    dry = person_ok(repo_team, "workspace", "gc", "--dry-run")
    assert [h["agent"] for h in dry["codex_homes"]] == ["a3"] and homes["a3"].is_dir()  # a1, a2 hold open workspaces
    gc = person_ok(repo_team, "workspace", "gc")
    assert [h["agent"] for h in gc["codex_homes"]] == ["a3"] and not homes["a3"].exists()
    assert homes["a1"].is_dir() and homes["a2"].is_dir()

    person_ok(repo_team, "workspace", "archive", "LX-2")  # a2's workspace archived: its home is no longer needed
    gc = person_ok(repo_team, "workspace", "gc")
    assert [r["card"] for r in gc["removed"]] == ["LX-2"] and [h["agent"] for h in gc["codex_homes"]] == ["a2"]
    assert not os.path.lexists(homes["a2"]) and homes["a1"].is_dir()
    # the person's own home: untouched, links removed not followed
    assert (person / "auth.json").read_text() == '{"token": "theirs"}\n'
    assert (person / "sessions" / "2026" / "rollout-1.jsonl").is_file() and (person / "config.toml").is_file()
    with pytest.raises(setup_codex.ConfigError):
        setup_codex.remove_home(person, person)
    # a home is only ever one of LoopX's: the person's own home linked in its place is left alone
    os.symlink(person, homes["a2"])
    gc = person_ok(repo_team, "workspace", "gc")
    assert gc["codex_homes"] == [] and os.path.islink(homes["a2"]) and (person / "auth.json").is_file()
