"""Real git repositories for the workspace tests: a project that is a repository
with a ``main`` branch, and a card's branch ``loopx/LX-N`` in a work tree of its own."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

IDENTITY = {"GIT_AUTHOR_NAME": "tester", "GIT_AUTHOR_EMAIL": "t@example.invalid", "GIT_COMMITTER_NAME": "tester", "GIT_COMMITTER_EMAIL": "t@example.invalid"}


def git(cwd, *args: str) -> str:
    env = dict(os.environ, **IDENTITY)
    proc = subprocess.run(["git", "-C", str(cwd), *args], capture_output=True, text=True, env=env, timeout=60)
    assert proc.returncode == 0, (args, proc.stderr)
    return proc.stdout.strip()


def make_repo(root: Path, files: dict[str, str] | None = None) -> str:
    """``root`` becomes a repository on ``main`` with one commit of ``files``; returns its head."""
    git(root, "init", "-q", "-b", "main")
    git(root, "config", "user.email", "person@example.invalid")
    git(root, "config", "user.name", "person")
    (root / ".gitignore").write_text(".loopx/\n")
    for name, text in (files or {"app.py": "print('hello')\n"}).items():
        (root / name).write_text(text)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "start")
    return git(root, "rev-parse", "HEAD")


def workspace(root: Path, card: str, where: Path) -> Path:
    """The card's branch in a work tree of its own, from ``main``."""
    git(root, "worktree", "add", "-q", "-b", f"loopx/{card}", str(where), "main")
    return where


def commit(tree: Path, files: dict[str, str], message: str) -> str:
    for name, text in files.items():
        path = tree / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    git(tree, "add", *files)
    git(tree, "commit", "-q", "-m", message)
    return git(tree, "rev-parse", "HEAD")


def head(root: Path, branch: str = "main") -> str:
    return git(root, "rev-parse", f"refs/heads/{branch}")
