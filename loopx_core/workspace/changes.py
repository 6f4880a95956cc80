"""What a card's work changed, for the person's eyes (the card screen's Diff
tab): between two commits or trees (a branch, a merge), and the work nobody
committed — a workspace folder's edits and untracked files, or the work LoopX
saved under ``refs/loopx/LX-7/wip/<commit>`` when the folder is gone.

Standard library only, over ``git.git`` (no hooks, pager or external diff).
Every call here sets ``GIT_NO_REPLACE_OBJECTS``: an agent's turn can create
``refs/replace/…`` in the shared repository, and the person must read the
objects as they are (PITFALLS "git as seen from an agent's turn")."""

from __future__ import annotations

from . import git
from .merge import FileStat

TYPE_CHECKING = False  # (annotations only; checkers read this as typing's)
if TYPE_CHECKING:
    from .git import StrPath

TRUE_OBJECTS = {"GIT_NO_REPLACE_OBJECTS": "1"}
DIFF = ("diff", "--no-ext-diff", "--no-textconv", "--no-color", "--no-renames")


def files_between(path: StrPath, old: str, new: str) -> tuple[FileStat, ...]:
    """The files ``new`` changes against ``old`` (commits or trees), with their line counts."""
    out = git.git(path, *DIFF, "--numstat", "-z", old, new, "--", env=TRUE_OBJECTS)
    files = []
    for item in out.split("\0"):
        parts = item.split("\t", 2)
        if len(parts) == 3:
            added, removed, name = parts
            files.append(
                FileStat(name, int(added) if added.isdigit() else None, int(removed) if removed.isdigit() else None)
            )
    return tuple(files)


def patch_between(path: StrPath, old: str, new: str, limit: int = 2_000_000) -> tuple[str, bool]:
    """The patch from ``old`` to ``new``, and whether it was cut at ``limit`` characters."""
    text = git.git(path, *DIFF, old, new, "--", env=TRUE_OBJECTS, timeout=120.0)
    return text[:limit], len(text) > limit


def untracked(path: StrPath) -> tuple[str, ...]:
    """Files in the work tree git does not track (ignored ones not)."""
    out = git.git(path, "ls-files", "--others", "--exclude-standard", "-z", env=TRUE_OBJECTS)
    return tuple(p for p in out.split("\0") if p)


def first_parent(path: StrPath, commit: str) -> str | None:
    return git.resolve(path, f"{commit}^1")
