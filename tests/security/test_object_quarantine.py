"""Nothing a turn writes into git's object store is trusted before LoopX
checked it (issue #38): a turn's git writes its objects into its workspace's
quarantine (the environment every runtime gets there, ``Runtime.environ``);
``quarantine.admit`` checks each one — a loose object's hash, a pack indexed
by git — and only then moves it into the shared store. Real git, real
worktrees; the "really" test shows the harm of a writable store."""

from __future__ import annotations

import os
import subprocess
import zlib
from pathlib import Path

import pytest

from loopx_core import runtimes
from loopx_core.workspace import merge, quarantine

ID = {
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@localhost",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@localhost",
}


def git(cwd, *args, env: dict | None = None) -> str:
    full = (
        {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
        | ID
        | {"GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
        | (env or {})
    )
    return subprocess.run(
        ["git", *args], cwd=cwd, env=full, capture_output=True, text=True, check=True, timeout=60
    ).stdout


def has(repo, oid: str) -> bool:
    """Does the shared store (alone) hold ``oid``?"""
    full = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    return subprocess.run(["git", "cat-file", "-e", oid], cwd=repo, env=full, capture_output=True).returncode == 0


@pytest.fixture
def repo(tmp_path):
    main = tmp_path / "project"
    main.mkdir()
    git(main, "init", "-q", "-b", "main")
    (main / "README.txt").write_text("the truth\n")
    git(main, "add", "README.txt")
    git(main, "commit", "-q", "-m", "first")
    git(main, "worktree", "add", "-q", "-b", "loopx/LX-1", str(tmp_path / "ws" / "LX-1"), "main")
    return main


def turn_env(ws: Path) -> dict:
    """The environment a turn in the workspace runs with (any runtime)."""
    return runtimes.make("shell", [], None, "a1").environ(str(ws))


def forged(text: bytes) -> bytes:
    return zlib.compress(b"blob %d\0" % len(text) + text)


def test_an_object_rewritten_in_the_shared_store_really_changes_what_git_shows(repo):
    """The harm: git does not re-hash what it reads."""
    blob = git(repo, "rev-parse", "main:README.txt").strip()
    path = repo / ".git" / "objects" / blob[:2] / blob[2:]
    path.chmod(0o644)
    path.write_bytes(forged(b"a lie\n"))
    assert git(repo, "show", "main:README.txt") == "a lie\n"


def test_a_turns_commit_waits_in_its_quarantine_until_checked(repo):
    ws = repo.parent / "ws" / "LX-1"
    env = turn_env(ws)
    assert env["GIT_OBJECT_DIRECTORY"].endswith("loopx-objects") and env["GIT_ALTERNATE_OBJECT_DIRECTORIES"] == str(
        repo / ".git" / "objects"
    )
    (ws / "work.txt").write_text("work\n")
    git(ws, "add", "work.txt", env=env)
    git(ws, "commit", "-q", "-m", "the agent's work", env=env)
    head = git(ws, "rev-parse", "HEAD", env=env).strip()
    assert not has(repo, head)  # the shared store never saw it
    got = quarantine.admit_all(str(repo / ".git"))
    assert got.moved == 3 and got.refused == []  # commit, tree, blob
    assert has(repo, head) and git(repo, "log", "--format=%s", "-1", "loopx/LX-1").strip() == "the agent's work"
    assert not any(Path(env["GIT_OBJECT_DIRECTORY"]).rglob("*/*"))


def test_a_forged_object_in_the_quarantine_never_reaches_the_store(repo):
    """Named as main's README blob, or as an object nobody has yet: refused,
    kept aside, the store as it was — and the person's diff of the branch,
    which checks the quarantine first, shows the truth."""
    ws = repo.parent / "ws" / "LX-1"
    q = Path(turn_env(ws)["GIT_OBJECT_DIRECTORY"])
    blob = git(repo, "rev-parse", "main:README.txt").strip()
    nobody = "ab" * 20
    for oid in (blob, nobody):
        (q / oid[:2]).mkdir(exist_ok=True)
        (q / oid[:2] / oid[2:]).write_bytes(forged(b"a lie\n"))
    got = quarantine.admit_all(str(repo / ".git"))
    assert got.moved == 0 and len(got.refused) == 2
    assert all("loopx-refused" in p for p in got.refused)
    assert git(repo, "show", "main:README.txt") == "the truth\n" and not has(repo, nobody)
    assert git(repo, "fsck", "--no-dangling").strip() == ""
    assert merge.summary(repo, "main", "loopx/LX-1").files == ()


def test_a_pack_the_turn_wrote_is_indexed_by_git_before_it_joins_the_store(repo):
    ws = repo.parent / "ws" / "LX-1"
    env = turn_env(ws)
    for i in range(3):
        (ws / f"f{i}.txt").write_text(f"{i}\n" * 100)
        git(ws, "add", ".", env=env)
        git(ws, "commit", "-q", "-m", f"c{i}", env=env)
    git(ws, "repack", "-a", "-d", "-l", env=env)  # the turn's own objects packed, inside its quarantine
    q = Path(env["GIT_OBJECT_DIRECTORY"])
    assert list((q / "pack").glob("pack-*.pack"))
    head = git(ws, "rev-parse", "HEAD", env=env).strip()
    got = quarantine.admit_all(str(repo / ".git"))
    assert got.refused == [] and got.moved >= 1
    assert has(repo, head) and git(repo, "log", "--format=%s", "loopx/LX-1").split()[:3] == ["c2", "c1", "c0"]
    assert not list((q / "pack").glob("pack-*"))


def test_a_corrupt_pack_in_the_quarantine_is_refused(repo):
    ws = repo.parent / "ws" / "LX-1"
    env = turn_env(ws)
    (ws / "f.txt").write_text("x\n" * 1000)
    git(ws, "add", ".", env=env)
    git(ws, "commit", "-q", "-m", "c", env=env)
    head = git(ws, "rev-parse", "HEAD", env=env).strip()
    git(ws, "repack", "-a", "-d", "-l", env=env)
    [pack] = (Path(env["GIT_OBJECT_DIRECTORY"]) / "pack").glob("pack-*.pack")
    data = bytearray(pack.read_bytes())
    data[len(data) // 2] ^= 0xFF
    pack.chmod(0o644)
    pack.write_bytes(bytes(data))
    got = quarantine.admit_all(str(repo / ".git"))
    assert len(got.refused) == 1 and not has(repo, head)
    assert git(repo, "show", "main:README.txt") == "the truth\n"


def test_verify_finds_a_commit_that_waits_in_a_quarantine(repo):
    """``loopx verify`` asks whether recorded commits are still there: one the
    turn made is checked and moved in first, never reported as gone."""
    from loopx_core.workspace import git as loopx_git

    ws = repo.parent / "ws" / "LX-1"
    env = turn_env(ws)
    git(ws, "commit", "-q", "--allow-empty", "-m", "recorded", env=env)
    head = git(ws, "rev-parse", "HEAD", env=env).strip()
    assert not has(repo, head)
    quarantine.admitted(repo)  # as verify (authority/verify.py) asks before git.missing
    assert loopx_git.missing(repo, [head]) == [] and has(repo, head)
