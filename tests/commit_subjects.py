"""Every commit since the rule came has a subject of at most 72 characters.

``./dev check`` runs this (``python tests/commit_subjects.py``): the subject —
git's first paragraph of the message, what ``git log --oneline`` shows — says
what changed in one short line; the detail goes in the body. It reads the
commits reachable from HEAD and not from ``FLOOR``. Where there is nothing to
read it says so and passes: no git (a tarball), a folder that is not this
repository's root (a tarball unpacked inside another repository), or a
history without ``FLOOR`` (a shallow clone). CI clones main fully, so there it
reads every commit since. Exit codes: 0 checked (or nothing to check), 1 a
subject too long (each named, with its length)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

LIMIT = 72
# main's tip when the rule came (2026-12-07, issue #41). The commits before it
# are published history, which cannot be rewritten: their subjects (a median of
# 121 characters) stay as they are, and only the commits after are held to it.
FLOOR = "3e950b5fa3fe886d721f262084d70f8a878aaf0b"
REPO = Path(__file__).resolve().parent.parent


def _git(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["git", "-C", str(repo), *args], capture_output=True, text=True, encoding="utf-8", errors="replace", timeout=60
    )


def check(repo: Path = REPO, floor: str = FLOOR, limit: int = LIMIT) -> tuple[int, str]:
    """(exit code, what to say) for the commits of ``repo`` after ``floor``."""
    try:
        top = _git(repo, "rev-parse", "--show-toplevel")
    except FileNotFoundError:
        return 0, "commit subjects not checked: git is not installed"
    if top.returncode != 0:
        return 0, "commit subjects not checked: no git history here (a tarball?)"
    if Path(top.stdout.strip()).resolve() != repo.resolve():
        return (
            0,
            f"commit subjects not checked: {repo} is not a repository's root (a tarball unpacked inside {top.stdout.strip()}?)",
        )
    if _git(repo, "cat-file", "-e", f"{floor}^{{commit}}").returncode != 0:
        return (
            0,
            f"commit subjects not checked: the history has no commit {floor[:12]} (a shallow clone? `git fetch --unshallow`)",
        )
    log = _git(repo, "log", "-z", "--format=%H %s", f"{floor}..HEAD")
    if log.returncode != 0:
        return 1, f"cannot read the commits after {floor[:12]}: {log.stderr.strip()}"
    commits = [entry.strip("\n").partition(" ")[::2] for entry in log.stdout.split("\0") if entry.strip()]
    long = [(sha, subject) for sha, subject in commits if len(subject) > limit]
    if long:
        lines = [f"{sha[:12]} {len(subject)} characters: {subject}" for sha, subject in long]
        return (
            1,
            f"commit subjects longer than {limit} characters (say it shorter; the detail goes in the body — `git commit --amend`, or `git rebase -i` and reword):\n"
            + "\n".join(lines),
        )
    return 0, f"commit subjects: the {len(commits)} commit(s) after {floor[:12]} are each at most {limit} characters"


def main() -> int:
    code, said = check()
    print(said, file=sys.stderr if code else sys.stdout)
    return code


if __name__ == "__main__":
    sys.exit(main())
