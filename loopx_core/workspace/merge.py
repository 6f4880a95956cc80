"""Bringing a card's branch into the base, for the person (DESIGN §10, #26),
and the branch's diff for the person's eyes — over ``workspace/git.py``.

Standard library only. The merge never touches the person's work tree beyond
what a fast-forward does: the merge commit is made in the object store
(``git merge-tree --write-tree``, git ≥ 2.38, then ``commit-tree``); the base
moves by a compare-and-swap ``update-ref`` when no work tree has it checked
out, or by ``merge --ff-only`` to that commit in the work tree that has it —
refused first when that work tree has uncommitted changes. A conflict changes
nothing: the files are returned.

``git.py``'s calls already ignore hooks, an fsmonitor and external diff
drivers an agent could plant in the repository's configuration; a repository
whose own config sets a merge driver is refused here (its command would run
as the person)."""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

from .git import GitError, _call, _line, admitted, git, is_ancestor, resolve


class MergeRefused(Exception):
    """The merge cannot happen now; the message says why and what to do."""

    def __init__(self, message: str, hint: str):
        super().__init__(message)
        self.message, self.hint = message, hint


class Merged(NamedTuple):
    commit: str | None  # the base's new head (None: a conflict)
    conflicts: tuple[str, ...]  # the conflicted paths (empty: merged)
    already: bool = False  # the branch was already in the base: nothing to do


def tip(repo, branch: str) -> str | None:
    return resolve(repo, f"refs/heads/{branch}")


def ahead(repo, base: str, branch: str) -> int:
    """Commits on ``branch`` that ``base`` lacks (0: nothing to merge, or no such branch)."""
    if tip(repo, branch) is None or tip(repo, base) is None:
        return 0
    return int(_line(repo, "rev-list", "--count", f"refs/heads/{base}..refs/heads/{branch}") or 0)


def checked_out_in(repo, branch: str) -> Path | None:
    """The work tree that has ``branch`` checked out, if one does."""
    wanted, path = f"branch refs/heads/{branch}", None
    for line in git(repo, "worktree", "list", "--porcelain").splitlines():
        if line.startswith("worktree "):
            path = Path(line[9:])
        elif line == wanted:
            return path
    return None


def dirty(tree: Path) -> list[str]:
    """Tracked files with uncommitted changes in ``tree`` (untracked files are left alone)."""
    text = git(tree, "status", "--porcelain", "-z", "--untracked-files=no")
    return [entry[3:] for entry in text.split("\0") if len(entry) > 3 and entry[2] == " "]


def _merge_drivers(repo) -> list[str]:
    return _line(repo, "config", "--local", "--name-only", "--get-regexp", r"^merge\..*\.driver$", ok=(0, 1)).splitlines()


def preflight(repo, base: str, branch: str) -> Path | None:
    """Refuses (``MergeRefused``) what would make the merge unsafe for the person;
    returns the work tree that has ``base`` checked out, if one does."""
    admitted(repo)  # the turns' objects checked and in the store before anything is read (#38)
    if tip(repo, branch) is None:
        raise MergeRefused(f"there is no branch {branch} to merge", "the card's branch is gone; look at `git branch --list 'loopx/*'`")
    if tip(repo, base) is None:
        raise MergeRefused(f"there is no base branch {base}", f"create it first: `git branch {base}`")
    drivers = _merge_drivers(repo)
    if drivers:
        raise MergeRefused(
            f"the repository's own config sets a merge driver ({', '.join(drivers)}): its command would run as you",
            "merge it yourself with git after reading that command, or remove it from .git/config",
        )
    tree = checked_out_in(repo, base)
    if tree is not None:
        changed = dirty(tree)
        if changed:
            shown = ", ".join(changed[:5]) + (f" and {len(changed) - 5} more" if len(changed) > 5 else "")
            raise MergeRefused(
                f"{base} is checked out in {tree} with uncommitted changes ({shown}); merging would mix them in",
                f"commit or stash them in {tree}, then answer the gate again (it stays pending)",
            )
    return tree


def bring_in(repo, base: str, branch: str, message: str, who: str) -> Merged:
    """Merge ``branch`` into ``base`` (a merge commit; nothing changes on a
    conflict). ``who``: the person, as the commit's author when git has no identity."""
    tree = preflight(repo, base, branch)
    base_oid, branch_oid = tip(repo, base), tip(repo, branch)
    if base_oid is None or branch_oid is None:  # (the preflight found both: one was deleted since)
        raise MergeRefused(f"{branch if branch_oid is None else base} was deleted while merging", "look at `git branch`, then answer the gate again (it stays pending)")
    if is_ancestor(repo, branch_oid, base_oid):
        return Merged(base_oid, (), already=True)
    proc = _call(repo, ("merge-tree", "--write-tree", "--name-only", "--no-messages", base_oid, branch_oid), None, 120.0)
    lines = proc.stdout.decode("utf-8", "surrogateescape").splitlines()
    if proc.returncode == 1:
        return Merged(None, tuple(dict.fromkeys(p for p in lines[1:] if p)))
    if proc.returncode != 0 or not lines:
        said = proc.stderr.decode("utf-8", "replace").strip()[:300]
        raise MergeRefused(f"git merge-tree failed: {said}", "git ≥ 2.38 is needed; check `git --version`")
    identity = {}
    if not _line(repo, "config", "user.email", ok=(0, 1)):
        email = f"{who}@loopx.invalid"
        identity = {"GIT_AUTHOR_NAME": who, "GIT_AUTHOR_EMAIL": email, "GIT_COMMITTER_NAME": who, "GIT_COMMITTER_EMAIL": email}
    commit = _line(repo, "commit-tree", lines[0], "-p", base_oid, "-p", branch_oid, "-m", message, env=identity)
    try:
        if tree is None:
            git(repo, "update-ref", "-m", message, f"refs/heads/{base}", commit, base_oid)  # fails if the base moved meanwhile
        else:
            git(tree, "merge", "--ff-only", "--no-edit", commit)
    except GitError as err:
        raise MergeRefused(f"{base} could not be moved: {err.message}", "clean up what git names (an untracked file in the way?), then answer the gate again") from None
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


def _range(base: str, branch: str) -> str:
    return f"refs/heads/{base}...refs/heads/{branch}"  # from where the branch left the base


def summary(repo, base: str, branch: str) -> DiffSummary | None:
    """Files and line counts the branch changes since it left the base (None: no such branch)."""
    admitted(repo)
    if tip(repo, branch) is None or tip(repo, base) is None:
        return None
    text = git(repo, "diff", "--no-ext-diff", "--no-textconv", "--numstat", "-z", "--no-renames", _range(base, branch))
    files = []
    for item in text.split("\0"):
        parts = item.split("\t", 2)
        if len(parts) == 3:
            added, removed, path = parts
            files.append(FileStat(path, int(added) if added.isdigit() else None, int(removed) if removed.isdigit() else None))
    return DiffSummary(base, branch, tuple(files), ahead(repo, base, branch))


def patch(repo, base: str, branch: str, limit: int = 2_000_000) -> tuple[str, bool]:
    """The branch's patch since it left the base, and whether it was cut at ``limit`` bytes."""
    admitted(repo)
    data = _call(repo, ("diff", "--no-ext-diff", "--no-textconv", "--no-color", "--no-renames", _range(base, branch)), None, 120.0).stdout
    return data[:limit].decode("utf-8", "replace"), len(data) > limit
