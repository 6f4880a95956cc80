"""A card's verify command runs when `loopx done` is called — in the agent's
name, outside its sandbox, with no PreToolUse hook in between. The attack: an
agent adds a card with `--verify 'git push …'`, claims it, writes back and
runs `loopx done`. A verify command no person set is checked as the agent's
own shell command (DESIGN §5 "A card's verify command"); a person's, signed
with the card, runs as set. Every step is a real `loopx` process; the remote
is a real bare repository."""

from __future__ import annotations

import subprocess

import pytest

PUSH = "git push origin HEAD:main"


def git(cwd, *argv) -> subprocess.CompletedProcess:
    return subprocess.run(["git", *argv], cwd=cwd, check=True, capture_output=True, text=True, timeout=60)


@pytest.fixture
def repo(team, tmp_path):
    """The project is a git repository whose `origin` is a bare repository with no `main` yet."""
    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", str(remote))
    git(team.root, "init", "-q", "-b", "main")
    git(team.root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", "start")
    git(team.root, "remote", "add", "origin", str(remote))
    team.remote = remote
    return team


def pushed(remote) -> bool:
    return (
        subprocess.run(
            ["git", "rev-parse", "--verify", "-q", "refs/heads/main"], cwd=remote, capture_output=True, timeout=60
        ).returncode
        == 0
    )


def as_agent(board, agent: str, *argv: str) -> subprocess.CompletedProcess:
    return board.spawn(*argv, agent=agent)


def claim_and_write_back(board, agent: str, card: str = "LX-1") -> None:
    assert as_agent(board, agent, "next", "--claim").returncode == 0
    assert as_agent(board, agent, "writeback", card, "--summary", "did the work").returncode == 0


def test_an_agents_verify_command_cannot_push(repo):
    added = as_agent(repo, "a2", "card", "add", "Tidy the docs", "--verify", PUSH)
    assert added.returncode == 0, added.stderr
    claim_and_write_back(repo, "a2")
    finished = as_agent(repo, "a2", "done", "LX-1", "--summary", "tidied")
    assert finished.returncode == 5, finished.stderr
    assert "`git:push`" in finished.stderr and "G-1" in finished.stderr
    assert not pushed(repo.remote)  # the push did not land
    [gate] = repo.ok("gate", "list")["gates"]
    assert gate["scope"] == "git:push" and gate["status"] == "pending"
    assert repo.ok("card", "show", "LX-1")["card"]["status"] == "waiting"  # on the gate, not done


def test_an_agents_verify_command_that_touches_the_ground_is_refused(repo):
    (repo.root / "evil.json").write_text("{}")
    as_agent(repo, "a2", "card", "add", "Tidy", "--verify", "cp evil.json .claude/settings.json && true")
    claim_and_write_back(repo, "a2")
    finished = as_agent(repo, "a2", "done", "LX-1", "--summary", "tidied")
    assert finished.returncode == 10, finished.stderr
    assert "never lets an agent do" in finished.stderr
    assert not (repo.root / ".claude" / "settings.json").exists()


def test_an_agents_verify_command_runs_once_a_person_approves_its_scope(repo, person_key):
    as_agent(repo, "a2", "card", "add", "Release", "--verify", PUSH)
    claim_and_write_back(repo, "a2")
    assert as_agent(repo, "a2", "done", "LX-1", "--summary", "ready").returncode == 5
    repo.ok("gate", "answer", "G-1", "approve")  # a person decides
    finished = as_agent(repo, "a2", "done", "LX-1", "--summary", "ready")
    assert finished.returncode == 0, finished.stderr
    assert pushed(repo.remote)


def test_an_agent_that_may_push_runs_its_own_push(repo):
    as_agent(repo, "a1", "card", "add", "Release", "--verify", PUSH)
    claim_and_write_back(repo, "a1")
    finished = as_agent(repo, "a1", "done", "LX-1", "--summary", "released")
    assert finished.returncode == 0, finished.stderr
    assert pushed(repo.remote)


def test_a_persons_verify_command_runs_as_set(repo):
    repo.ok("card", "add", "Release", "--verify", PUSH)  # signed by the person with the card
    claim_and_write_back(repo, "a2")
    finished = as_agent(repo, "a2", "done", "LX-1", "--summary", "released")
    assert finished.returncode == 0, finished.stderr
    assert pushed(repo.remote)


def test_a_persons_verify_command_edited_in_the_database_is_checked_again(repo):
    """The row says what the person's signed card_added does not: the agent's text."""
    from tests.security.conftest import sql

    repo.ok("card", "add", "Test", "--verify", "true")
    sql(repo, f"UPDATE card SET verify = '{PUSH}' WHERE id = 1")
    claim_and_write_back(repo, "a2")
    finished = as_agent(repo, "a2", "done", "LX-1", "--summary", "tested")
    assert finished.returncode == 5, finished.stderr
    assert not pushed(repo.remote)


def test_an_everyday_verify_command_runs(repo):
    # (In the card's workspace, a git worktree: its .git is a file, DESIGN §12.)
    as_agent(repo, "a2", "card", "add", "Fix", "--verify", "test -e .git && echo ok")
    claim_and_write_back(repo, "a2")
    finished = as_agent(repo, "a2", "done", "LX-1", "--summary", "fixed")
    assert finished.returncode == 0, finished.stderr
