"""Bringing a card's branch into the base, for the person (DESIGN §10, #26).

Standard library only: ``git`` itself does the work. The merge never touches
the person's work tree beyond what a fast-forward does: the merge commit is
made in the object store (``git merge-tree --write-tree``, git ≥ 2.38, then
``commit-tree``); the base moves by a compare-and-swap ``update-ref`` when no
work tree has it checked out, or by ``merge --ff-only`` to that commit in the
work tree that has it — refused first when that work tree has uncommitted
changes. A conflict changes nothing: the files are returned.

Every git this module runs for the person ignores what an agent could plant
in the repository's configuration to run a program in the person's process
(hooks, an fsmonitor, external diff and textconv drivers); a repository that
configures a merge driver of its own is refused (its command would run)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import NamedTuple

BRANCH_PREFIX = "loopx/"
# What an agent could set in .git/config to run a program when the person's process runs git.
SAFE = ("-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=false", "-c", "core.sshCommand=false", "-c", "diff.external=")
TIMEOUT = 120.0


class MergeRefused(Exception):
    """The merge cannot happen now; the message says why and what to do."""

    def __init__(self, message: str, hint: str):
        super().__init__(message)
        self.message, self.hint = message, hint


class Merged(NamedTuple):
    commit: str | None  # the base's new head (None: a conflict)
    conflicts: tuple[str, ...]  # the conflicted paths (empty: merged)
    already: bool = False  # the branch was already in the base: nothing to do


def git(root, *args: str, check: bool = True, env: dict | None = None, cwd=None) -> subprocess.CompletedProcess:
    full = dict(os.environ, GIT_TERMINAL_PROMPT="0", **(env or {}))
    for name in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE"):
        full.pop(name, None)  # the repository is ``root``'s, whatever the caller's environment says
    proc = subprocess.run(
        ["git", *SAFE, "-C", str(cwd or root), *args], stdin=subprocess.DEVNULL, capture_output=True, env=full, timeout=TIMEOUT
    )
    if check and proc.returncode != 0:
        raise MergeRefused(f"git {args[0]} failed: {proc.stderr.decode('utf-8', 'replace').strip()[:500]}", "check the repository with `git status`")
    return proc


def out(proc: subprocess.CompletedProcess) -> str:
    return proc.stdout.decode("utf-8", "replace").strip()


def is_repo(root) -> bool:
    try:
        return git(root, "rev-parse", "--git-dir", check=False).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def card_branch(card_key: str) -> str:
    return BRANCH_PREFIX + card_key


def oid(root, branch: str) -> str | None:
    proc = git(root, "rev-parse", "--verify", "--quiet", f"refs/heads/{branch}^{{commit}}", check=False)
    return out(proc) or None if proc.returncode == 0 else None


def default_base(root) -> str | None:
    """The branch checked out in the project's own work tree (None: detached or not a repository)."""
    proc = git(root, "symbolic-ref", "--quiet", "--short", "HEAD", check=False)
    return out(proc) or None if proc.returncode == 0 else None


def ahead(root, base: str, branch: str) -> int:
    """Commits on ``branch`` that ``base`` lacks (0: nothing to merge, or no such branch)."""
    if oid(root, branch) is None or oid(root, base) is None:
        return 0
    return int(out(git(root, "rev-list", "--count", f"refs/heads/{base}..refs/heads/{branch}")) or 0)


def checked_out_in(root, branch: str) -> Path | None:
    """The work tree that has ``branch`` checked out, if one does."""
    wanted, path = f"branch refs/heads/{branch}", None
    for line in out(git(root, "worktree", "list", "--porcelain")).splitlines():
        if line.startswith("worktree "):
            path = Path(line[9:])
        elif line == wanted:
            return path
    return None


def dirty(tree: Path) -> list[str]:
    """Tracked files with uncommitted changes in ``tree`` (untracked files are left alone)."""
    text = git(tree, "status", "--porcelain", "-z", "--untracked-files=no").stdout.decode("utf-8", "replace")
    return [entry[3:] for entry in text.split("\0") if len(entry) > 3 and entry[2] == " "]


def _merge_drivers(root) -> list[str]:
    proc = git(root, "config", "--local", "--name-only", "--get-regexp", r"^merge\..*\.driver$", check=False)
    return out(proc).splitlines() if proc.returncode == 0 else []


def preflight(root, base: str, branch: str) -> Path | None:
    """Refuses (``MergeRefused``) what would make the merge unsafe for the person;
    returns the work tree that has ``base`` checked out, if one does."""
    if oid(root, branch) is None:
        raise MergeRefused(f"there is no branch {branch} to merge", "the card's workspace is gone; look at `git branch --list 'loopx/*'`")
    if oid(root, base) is None:
        raise MergeRefused(f"there is no base branch {base}", f"create it, or set the board's base: `git branch {base}`")
    drivers = _merge_drivers(root)
    if drivers:
        raise MergeRefused(
            f"the repository's own config sets a merge driver ({', '.join(drivers)}): its command would run as you",
            "merge it yourself with git after reading that command, or remove it from .git/config",
        )
    tree = checked_out_in(root, base)
    if tree is not None:
        changed = dirty(tree)
        if changed:
            shown = ", ".join(changed[:5]) + (f" and {len(changed) - 5} more" if len(changed) > 5 else "")
            raise MergeRefused(
                f"{base} is checked out in {tree} with uncommitted changes ({shown}); merging would mix them in",
                f"commit or stash them in {tree}, then answer the gate again (it stays pending)",
            )
    return tree


def bring_in(root, base: str, branch: str, message: str, who: str) -> Merged:
    """Merge ``branch`` into ``base`` (a merge commit; nothing changes on a
    conflict). ``who``: the person, as the commit's author when git has no identity."""
    tree = preflight(root, base, branch)
    base_oid, branch_oid = oid(root, base), oid(root, branch)
    if git(root, "merge-base", "--is-ancestor", branch_oid, base_oid, check=False).returncode == 0:
        return Merged(base_oid, (), already=True)
    proc = git(root, "merge-tree", "--write-tree", "--name-only", "--no-messages", base_oid, branch_oid, check=False)
    lines = out(proc).splitlines()
    if proc.returncode == 1:
        return Merged(None, tuple(dict.fromkeys(p for p in lines[1:] if p)))
    if proc.returncode != 0 or not lines:
        raise MergeRefused(f"git merge-tree failed: {proc.stderr.decode('utf-8', 'replace').strip()[:500]}", "git ≥ 2.38 is needed; check `git --version`")
    identity = {}
    if git(root, "config", "user.email", check=False).returncode != 0:
        identity = {"GIT_AUTHOR_NAME": who, "GIT_AUTHOR_EMAIL": f"{who}@loopx.invalid", "GIT_COMMITTER_NAME": who, "GIT_COMMITTER_EMAIL": f"{who}@loopx.invalid"}
    commit = out(git(root, "commit-tree", lines[0], "-p", base_oid, "-p", branch_oid, "-m", message, env=identity))
    if tree is None:
        git(root, "update-ref", "-m", message, f"refs/heads/{base}", commit, base_oid)  # fails if the base moved meanwhile
    else:
        moved = git(tree, "merge", "--ff-only", "--no-edit", commit, check=False)
        if moved.returncode != 0:
            raise MergeRefused(
                f"{base} could not be moved in {tree}: {moved.stderr.decode('utf-8', 'replace').strip()[:300]}",
                f"clean up {tree} (an untracked file in the way?), then answer the gate again",
            )
    return Merged(commit, ())


# -- the diff, for the person's eyes -----------------------------------------------------

class FileStat(NamedTuple):
    path: str
    added: int | None  # None: a binary file
    removed: int | None


class DiffSummary(NamedTuple):
    base: str
    branch: str
    files: tuple[FileStat, ...]
    commits: int

    @property
    def added(self) -> int:
        return sum(f.added or 0 for f in self.files)

    @property
    def removed(self) -> int:
        return sum(f.removed or 0 for f in self.files)

    def to_json(self) -> dict:
        return {
            "base": self.base, "branch": self.branch, "commits": self.commits, "added": self.added, "removed": self.removed,
            "files": [{"path": f.path, "added": f.added, "removed": f.removed} for f in self.files],
        }


def _range(base: str, branch: str) -> str:
    return f"refs/heads/{base}...refs/heads/{branch}"  # from where the branch left the base


def summary(root, base: str, branch: str) -> DiffSummary | None:
    """Files and line counts the branch changes since it left the base (None: no such branch)."""
    if oid(root, branch) is None or oid(root, base) is None:
        return None
    text = git(root, "diff", "--no-ext-diff", "--no-textconv", "--numstat", "-z", "--no-renames", _range(base, branch)).stdout.decode("utf-8", "replace")
    files = []
    for item in text.split("\0"):
        parts = item.split("\t", 2)
        if len(parts) == 3:
            added, removed, path = parts
            files.append(FileStat(path, int(added) if added.isdigit() else None, int(removed) if removed.isdigit() else None))
    return DiffSummary(base, branch, tuple(files), ahead(root, base, branch))


def patch(root, base: str, branch: str, limit: int = 2_000_000) -> tuple[str, bool]:
    """The branch's patch since it left the base, and whether it was cut at ``limit`` bytes."""
    data = git(root, "diff", "--no-ext-diff", "--no-textconv", "--no-color", "--no-renames", _range(base, branch)).stdout
    return data[:limit].decode("utf-8", "replace"), len(data) > limit
