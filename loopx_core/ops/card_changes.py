"""Everything a card's work changed, for the card screen's Diff tab (#39):
the commits on its branch since it left the base (``merges.card_diff``) —
or, once merged, the diff that merge brought into the base (the ``merged``
event's commit against its first parent: the branch is in the base then, and
``base...branch`` is empty) — and the work nobody committed: the workspace
folder's edits and untracked files, or, when the folder is gone, the work
LoopX saved under ``refs/loopx/LX-7/wip/<commit>``. Uncommitted work is not
on the branch: a merge does not bring it in, and the tab says so.

Reads the store once, then git (outside the read); never writes the store.
The merge gate's own diff stays ``merges.card_diff``: only commits merge."""

from __future__ import annotations

import os
from typing import NamedTuple

from ..store.records import Event
from . import merges, workspaces

TYPE_CHECKING = False  # (annotations only: typing is not imported on the cold path; checkers read this as typing's)
if TYPE_CHECKING:
    from pathlib import Path

    from ..shapes.values import WorkspaceView
    from ..store.base import Store


class MergedDiff(NamedTuple):
    """What the person's merge brought into the base."""

    commit: str  # the merge commit (or the base's tip, when the branch was in it already)
    base: str
    branch: str
    by: str  # the person who merged
    already: bool  # the branch was in the base already: nothing new came in
    files: tuple  # workspace.merge.FileStat
    patch: str
    cut: bool


class WorkDiff(NamedTuple):
    """Work on the card that no commit holds."""

    saved: str | None  # the saved commit (refs/loopx/LX-7/wip/…) when the folder is gone; None: the folder now
    files: tuple  # workspace.merge.FileStat, tracked and untracked
    untracked: tuple[str, ...]  # of those, the files git does not track (the folder only)
    patch: str
    cut: bool


class CardChanges(NamedTuple):
    branch: merges.CardDiff  # the branch's commits since it left the base (summary None: no branch)
    merged: MergedDiff | None
    work: WorkDiff | None


def _merge_event(store: Store, card_id: int) -> tuple[str, dict] | None:
    """The card's newest ``merged`` event: (who merged, its data)."""
    with store.read():
        row = Event.first("""WHERE "card" = ? AND "kind" = 'merged' ORDER BY "seq" DESC""", (card_id,))
        if row is None:
            return None
        data = row.data
    return (row.actor, data) if isinstance(data, dict) and data.get("commit") else None


def _merged(repo: Path, actor: str, data: dict) -> MergedDiff | None:
    from ..workspace import changes

    commit = str(data["commit"])
    if git_missing(repo, commit):
        return None  # (the commit is gone from this repository: a rewritten base)
    already = bool(data.get("already"))
    parent = None if already else changes.first_parent(repo, commit)
    files, (text, cut) = (
        ((), ("", False))
        if parent is None
        else (changes.files_between(repo, parent, commit), changes.patch_between(repo, parent, commit))
    )
    return MergedDiff(
        commit, str(data.get("base") or ""), str(data.get("branch") or ""), actor, already, files, text, cut
    )


def git_missing(repo: Path, commit: str) -> bool:
    from ..workspace import git

    return git.resolve(repo, commit) is None


def _work(repo: Path | None, found: WorkspaceView) -> WorkDiff | None:
    from ..workspace import changes, git

    if found.state == "open" and found.path and os.path.isdir(found.path):
        snap = git.snapshot(found.path)
        if not snap.dirty or not snap.head:
            return None
        text, cut = changes.patch_between(found.path, snap.head, snap.tree)
        return WorkDiff(
            None, changes.files_between(found.path, snap.head, snap.tree), changes.untracked(found.path), text, cut
        )
    if found.wip and repo is not None and not git_missing(repo, found.wip):
        parent = changes.first_parent(repo, found.wip)
        if parent is None:
            return None
        text, cut = changes.patch_between(repo, parent, found.wip)
        return WorkDiff(found.wip, changes.files_between(repo, parent, found.wip), (), text, cut)
    return None


def card_changes(store: Store, card_id: int) -> CardChanges:
    """The card's branch, its merge and its uncommitted work (git only; read in a worker)."""
    branch = merges.card_diff(store, card_id)
    found = workspaces.lookup(store, card_id)
    if found is None or not workspaces.here(store, found):
        return CardChanges(branch, None, None)  # (another checkout's workspace: its work is in that checkout)
    repo = workspaces.repository(store)
    event = _merge_event(store, card_id)
    merged = _merged(repo, *event) if event is not None and repo is not None else None
    return CardChanges(branch, merged, _work(repo, found))
