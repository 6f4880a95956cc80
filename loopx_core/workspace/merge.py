"""Bringing a card's branch into the base, for the person (DESIGN §12),
and the branch's diff for the person's eyes — over ``workspace/git.py``.

Standard library only. The merge never touches the person's work tree beyond
what a fast-forward does: the merge commit is made in the object store
(``git merge-tree --write-tree``, git ≥ 2.38, then ``commit-tree``); the base
moves by a compare-and-swap ``update-ref`` when no work tree has it checked
out, or by ``merge --ff-only`` to that commit in the work tree that has it —
refused first when that work tree has uncommitted changes. A conflict changes
nothing: the files are returned. The merge is of the exact commits the person
was shown (``Pin``: the branch's head and the base's): when either branch
moved since, it is refused (``Moved``) — never the newer tip in their place.

The diff for the person's eyes is read in bounded time and memory: git's
output is streamed and cut (``git.stream``), blobs over
``core.bigFileThreshold`` count as binary, and what was left out is said.

``git.py``'s calls already ignore hooks, an fsmonitor and external diff
drivers an agent could plant in the repository's configuration; a repository
whose own config sets a merge driver or a clean/smudge filter is refused
here (its command would run as the person); the git calls ignore replace refs
(``git.py``)."""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

from .git import GitError, _call, _line, git, is_ancestor, resolve, stream
from .quarantine import admitted

TYPE_CHECKING = False  # (annotations only; checkers read this as typing's)
if TYPE_CHECKING:
    from collections.abc import Iterable

    from .git import StrPath


class MergeRefused(Exception):
    """The merge cannot happen now; the message says why and what to do."""

    def __init__(self, message: str, hint: str):
        super().__init__(message)
        self.message, self.hint = message, hint


class Moved(MergeRefused):
    """The branch or the base is no longer at the commit the person was shown."""

    def __init__(self, message: str, hint: str, head: str | None, base_commit: str | None):
        super().__init__(message, hint)
        self.head, self.base_commit = head, base_commit


class Pin(NamedTuple):
    """The commits a merge gate asked about: the branch's head and the base's."""

    head: str
    base_commit: str


class Merged(NamedTuple):
    commit: str | None  # the base's new head (None: a conflict)
    conflicts: tuple[str, ...]  # the conflicted paths (empty: merged)
    already: bool = False  # the branch was already in the base: nothing to do


def tip(repo: StrPath, branch: str) -> str | None:
    return resolve(repo, f"refs/heads/{branch}")


def ahead(repo: StrPath, base: str, branch: str) -> int:
    """Commits on ``branch`` that ``base`` lacks (0: nothing to merge, or no such branch)."""
    if tip(repo, branch) is None or tip(repo, base) is None:
        return 0
    return int(_line(repo, "rev-list", "--count", f"refs/heads/{base}..refs/heads/{branch}") or 0)


def checked_out_in(repo: StrPath, branch: str) -> Path | None:
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


def _merge_drivers(repo: StrPath) -> list[str]:
    """Commands the repository's own config names for a merge driver or a
    filter (a fast-forward of the person's checkout runs its smudge filter)."""
    pattern = r"^(merge\..*\.driver|filter\..*\.(clean|smudge|process))$"
    return _line(repo, "config", "--local", "--name-only", "--get-regexp", pattern, ok=(0, 1)).splitlines()


def preflight(repo: StrPath, base: str, branch: str) -> Path | None:
    """Refuses (``MergeRefused``) what would make the merge unsafe for the person;
    returns the work tree that has ``base`` checked out, if one does."""
    admitted(repo)  # the turns' objects checked and in the store before anything is read (#38)
    if tip(repo, branch) is None:
        raise MergeRefused(
            f"there is no branch {branch} to merge", "the card's branch is gone; look at `git branch --list 'loopx/*'`"
        )
    if tip(repo, base) is None:
        raise MergeRefused(f"there is no base branch {base}", f"create it first: `git branch {base}`")
    drivers = _merge_drivers(repo)
    if drivers:
        raise MergeRefused(
            f"the repository's own config sets a merge driver or filter ({', '.join(drivers)}): its command would run as you",
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


def pin(repo: StrPath, base: str, branch: str) -> Pin | None:
    """The branch's and the base's commits now (None: one of them is missing)."""
    admitted(repo)  # a turn's commits are in its quarantine until checked: pinned as they will be merged
    head, base_commit = tip(repo, branch), tip(repo, base)
    return Pin(head, base_commit) if head and base_commit else None


def moved(repo: StrPath, base: str, branch: str, pinned: Pin) -> Moved | None:
    """Why the branch or the base is no longer what was pinned (None: both are)."""
    head, base_commit = tip(repo, branch), tip(repo, base)
    if head == pinned.head and base_commit == pinned.base_commit:
        return None
    if head == pinned.head and base_commit and is_ancestor(repo, head, base_commit):
        return None  # the pinned head is in the base already (a retry after a crash): nothing new would merge
    said = []
    if head != pinned.head:
        said.append(f"{branch} moved from {pinned.head[:12]} to {(head or 'nothing')[:12]}")
    if base_commit != pinned.base_commit:
        said.append(f"{base} moved from {pinned.base_commit[:12]} to {(base_commit or 'nothing')[:12]}")
    return Moved(
        "; ".join(said) + " since you were asked: nothing merged",
        "you are asked again with the new diff: read it, then answer the new gate",
        head,
        base_commit,
    )


def merge_tree(repo: StrPath, base_oid: str, branch_oid: str) -> tuple[str | None, tuple[str, ...]]:
    """The merged tree of two commits, made in the object store only (git ≥
    2.38): (its tree, ()) or (None, the conflicted paths)."""
    proc = _call(
        repo, ("merge-tree", "--write-tree", "--name-only", "--no-messages", base_oid, branch_oid), None, 120.0
    )
    lines = proc.stdout.decode("utf-8", "surrogateescape").splitlines()
    if proc.returncode == 1:
        return None, tuple(dict.fromkeys(p for p in lines[1:] if p))
    if proc.returncode != 0 or not lines:
        said = proc.stderr.decode("utf-8", "replace").strip()[:300]
        raise MergeRefused(f"git merge-tree failed: {said}", "git ≥ 2.38 is needed; check `git --version`")
    return lines[0], ()


def conflicts(repo: StrPath, pinned: Pin) -> tuple[str, ...]:
    """The paths that would conflict merging the pinned branch head into the pinned base (empty: none)."""
    if is_ancestor(repo, pinned.head, pinned.base_commit) or is_ancestor(repo, pinned.base_commit, pinned.head):
        return ()
    return merge_tree(repo, pinned.base_commit, pinned.head)[1]


def bring_in(repo: StrPath, base: str, branch: str, message: str, who: str, pinned: Pin) -> Merged:
    """Merge the pinned head of ``branch`` into ``base`` at its pinned commit (a
    merge commit; nothing changes on a conflict; ``Moved`` when either branch is
    elsewhere now). ``who``: the person, as the commit's author when git has no identity."""
    tree = preflight(repo, base, branch)
    now = moved(repo, base, branch, pinned)
    if now is not None:
        raise now
    base_oid, branch_oid = pinned.base_commit, pinned.head
    current = tip(repo, base) or base_oid
    if is_ancestor(repo, branch_oid, current):
        return Merged(current, (), already=True)
    merged_tree, conflicted = merge_tree(repo, base_oid, branch_oid)
    if merged_tree is None:
        return Merged(None, conflicted)
    identity = {}
    if not _line(repo, "config", "user.email", ok=(0, 1)):
        email = f"{who}@loopx.invalid"
        identity = {
            "GIT_AUTHOR_NAME": who,
            "GIT_AUTHOR_EMAIL": email,
            "GIT_COMMITTER_NAME": who,
            "GIT_COMMITTER_EMAIL": email,
        }
    commit = _line(repo, "commit-tree", merged_tree, "-p", base_oid, "-p", branch_oid, "-m", message, env=identity)
    try:
        if tree is None:
            git(
                repo, "update-ref", "-m", message, f"refs/heads/{base}", commit, base_oid
            )  # fails if the base moved meanwhile
        else:
            git(
                tree, "merge", "--ff-only", "--no-edit", commit
            )  # (from the pinned base only: a moved base is no fast-forward)
    except GitError as err:
        raise MergeRefused(
            f"{base} could not be moved: {err.message}",
            "clean up what git names (an untracked file in the way?), then answer the gate again",
        ) from None
    return Merged(commit, ())


def parents(repo: StrPath, commit: str) -> list[str] | None:
    """A commit's parents (None: the repository has no such commit)."""
    out = _line(repo, "rev-list", "--parents", "-n", "1", "--end-of-options", commit, ok=(0, 128))
    return out.split()[1:] if out else None


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
    more: int = 0  # files changed beyond those listed (the list is cut at MAX_FILES)
    ground: tuple[str, ...] = ()  # the changed files that are the repository's ground (rules/repo_ground), listed first
    pin: Pin | None = None  # the commits compared (a merge gate's: what the person is asked about)

    @property
    def added(self) -> int:
        return sum(f.added or 0 for f in self.files)

    @property
    def removed(self) -> int:
        return sum(f.removed or 0 for f in self.files)


MAX_FILES = 2000  # files a summary lists
SUMMARY_BYTES = 1_000_000  # git's output a summary reads at most
DIFF = ("diff", "--no-ext-diff", "--no-textconv", "--no-renames", "--no-color")


def _range(base: str, branch: str, pinned: Pin | None = None) -> str:
    if pinned is not None:
        return f"{pinned.base_commit}...{pinned.head}"
    return f"refs/heads/{base}...refs/heads/{branch}"  # from where the branch left the base


def _counted(repo: StrPath, span: str) -> int:
    return int(_line(repo, "rev-list", "--count", "--end-of-options", span) or 0)


def summary(
    repo: StrPath, base: str, branch: str, pinned: Pin | None = None, ground: tuple[str, ...] | None = None
) -> DiffSummary | None:
    """Files and line counts the branch changes since it left the base (None:
    no such branch) — of the ``pinned`` commits when given. ``ground``: the
    pathspecs of the repository's ground (``rules/repo_ground``): those files
    are found by a diff of their own (never lost to the cut) and listed first."""
    admitted(repo)
    if pinned is None and (tip(repo, branch) is None or tip(repo, base) is None):
        return None
    span = _range(base, branch, pinned)
    data, cut = stream(repo, *DIFF, "--numstat", "-z", span, limit=SUMMARY_BYTES)
    items = data.decode("utf-8", "surrogateescape").split("\0")
    if cut:
        items = items[:-1]  # (the last one may be half read)
    files = []
    for item in items:
        parts = item.split("\t", 2)
        if len(parts) == 3:
            added, removed, path = parts
            files.append(
                FileStat(path, int(added) if added.isdigit() else None, int(removed) if removed.isdigit() else None)
            )
    listed = len(files)
    files = files[:MAX_FILES]
    more = max(1, _count_names(repo, span) - len(files)) if cut else listed - len(files)
    touched: tuple[str, ...] = ()
    if ground:
        touched = ground_files(repo, span, ground)
        shown = {f.path for f in files}
        extra = [FileStat(p, None, None) for p in touched if p not in shown]
        files = [f for f in files if f.path in touched] + extra + [f for f in files if f.path not in touched]
    commits = _counted(repo, f"{pinned.base_commit}..{pinned.head}") if pinned else ahead(repo, base, branch)
    return DiffSummary(base, branch, tuple(files), commits, more, touched, pinned)


def ground_files(repo: StrPath, span: str, ground: Iterable[str]) -> tuple[str, ...]:
    """The files of the diff ``span`` (``A...B``) that the pathspecs ``ground``
    match: a diff of their own, so no cut of a long diff hides one."""
    named, _ = stream(repo, *DIFF, "--name-only", "-z", span, "--", *ground, limit=SUMMARY_BYTES)
    return tuple(p for p in named.decode("utf-8", "surrogateescape").split("\0") if p)


def _count_names(repo: StrPath, span: str) -> int:
    """How many files the diff changes, read as names only (bounded too: a lower bound past the cap)."""
    names, _ = stream(repo, *DIFF, "--name-only", "-z", span, limit=20 * SUMMARY_BYTES)
    return names.count(b"\0")


def patch(repo: StrPath, base: str, branch: str, limit: int = 2_000_000, pinned: Pin | None = None) -> tuple[str, bool]:
    """The branch's patch since it left the base, and whether it was cut at
    ``limit`` bytes (git stops there: nothing past it is read). Files over
    ``core.bigFileThreshold`` (1 MB) read as binary. A cut patch ends saying so."""
    admitted(repo)
    data, cut = stream(repo, *DIFF, _range(base, branch, pinned), limit=limit)
    text = data.decode("utf-8", "replace")
    if cut:
        text = text[: text.rfind("\n") + 1] if "\n" in text else text
        text += f"\n… the diff goes on past {limit // 1000:,} kB: the rest is left out here (read it with `git diff {_range(base, branch, pinned)}`)\n"
    return text, cut
