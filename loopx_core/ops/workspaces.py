"""A workspace per card (issue #26): a git worktree on its own branch, its code
state recorded as evidence, its uncommitted work kept under a LoopX ref.

Each operator is one transaction and one event — ``workspace_opened``,
``code_state``, ``workspace_archived``, ``workspace_removed`` — and the
``workspace`` rows are what replaying those events gives
(``authority/replay.py``). Git runs *outside* the transaction (never while
holding the board's write lock); the event records what git did.

Where: ``<workspace root>/LX-7``, the root being the board's
``workspace_root`` setting, else ``<user data dir>/loopx/workspaces/<board
uid>`` — outside the project (its ``.loopx/`` is read-only to agents, and the
main checkout must not see the worktrees), on the branch ``loopx/LX-7`` made
from the base branch (the main checkout's branch when it opened). Saved
uncommitted work: ``refs/loopx/LX-7/wip/<commit>``; an archive:
``refs/loopx/LX-7/archive/<commit>``.

A PostgreSQL team board is shared by several checkouts (machines, people):
its project folder is the checkout the command runs in
(``store/team_checkout.py``), its workspaces' root gains that checkout's id
(``…/<board uid>/<checkout id>/LX-7``: two checkouts on one machine never
share a folder), and each row names the checkout that holds it. A card's
workspace is that checkout's: from another checkout it is listed, never
opened, recorded, archived or removed (``workspace_elsewhere``) — its
commits are in that checkout's repository.

Opening one — made on first use, its setup command, named in the ``next``
answer that says "work" — is ``workspace_open``, above this module and the
person's cap on their total size (``workspace_cap``).

The per-turn path pays nothing when there is no workspace: ``capture`` asks
the board's table (one indexed read) only when the project folder has a
``.git``, and imports the git plumbing only when a workspace is open.
"""

from __future__ import annotations

import functools
import os
import sys
from pathlib import Path

from ..rules import clock, ids
from ..shapes.errors import Conflict, LoopxError, NotFound
from ..shapes.values import WorkspaceView
from ..store import events, records
from ..store.records import Workspace

TYPE_CHECKING = False  # (annotations only: typing is not imported on the cold path; checkers read this as typing's)
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from typing import ParamSpec, TypeVar

    from ..authority import keys
    from ..store.base import Store
    from ..workspace.git import Snapshot

    P = ParamSpec("P")
    T = TypeVar("T")

BRANCH_PREFIX = "loopx/"
REF_PREFIX = "refs/loopx/"


class Capture:
    """``writeback``'s and ``handoff``'s ``code`` default (``CAPTURE``): read the card's workspace now."""


CAPTURE = Capture()
COMMITS_KEPT = 200  # commits named in one code-state record (the count is always whole)


def git_refusal(fn: Callable[P, T]) -> Callable[P, T]:
    """A git failure (or a folder it may not write) inside a workspace operator
    is a Conflict (exit 5) naming the reason, never an internal error."""

    @functools.wraps(fn)
    def run(*args: P.args, **kwargs: P.kwargs) -> T:
        try:
            return fn(*args, **kwargs)
        except LoopxError:
            raise
        except OSError as exc:  # e.g. a sandboxed caller that may not write the workspaces' folder
            raise Conflict(
                f"cannot write the workspace: {exc.strerror or exc}",
                "open it from outside the agent's sandbox (`loopx workspace open CARD`, a runner)",
                code="workspace_unwritable",
            ) from None
        except Exception as exc:
            plumbing = sys.modules.get("loopx_core.workspace.git")  # (not imported: no git ran, so no git failure)
            if plumbing is not None and isinstance(exc, plumbing.GitError):
                raise Conflict(
                    f"git refused: {exc.message}",
                    "see `loopx workspace list`; fix the repository, then retry",
                    code="git_failed",
                ) from None
            raise

    return run


def branch_name(card_id: int) -> str:
    return BRANCH_PREFIX + ids.key(ids.CARD, card_id)


def ref_prefix(card_id: int, kind: str) -> str:
    """``refs/loopx/LX-7/wip`` or ``refs/loopx/LX-7/archive``."""
    return f"{REF_PREFIX}{ids.fmt(ids.CARD, card_id)}/{kind}"


def view(row: Workspace) -> WorkspaceView:
    return WorkspaceView(
        card=row.card_id,
        path=row.path,
        branch=row.branch,
        base=row.base,
        base_commit=row.base_commit,
        state=row.state,
        head=row.head,
        wip=row.wip,
        archive_ref=row.archive_ref,
        opened_at=row.opened_at,
        updated_at=row.updated_at,
        checkout=row.checkout,
    )


def here(store: Store, found: Workspace | WorkspaceView) -> bool:
    """Whether the workspace (a row or view) belongs to the checkout this
    command runs in (on a ``.loopx/`` board: always — its one project folder)."""
    return found.checkout == store.checkout_id()


def elsewhere(found: Workspace | WorkspaceView, key: str | None) -> Conflict:
    return Conflict(
        f"{key}'s workspace is in another checkout of this team board ({found.checkout}, at {found.path}): its commits are in that checkout's repository",
        "work on the card from that checkout (where `loopx where` names it), or hand it to an agent there",
        code="workspace_elsewhere",
    )


def _row(card_id: int, *, lock: bool = False) -> Workspace:
    """The card's workspace row, which the caller has just found open (rows are
    never deleted: a removed workspace is a state)."""
    row = Workspace.get(card_id, lock=lock)
    if row is None:
        raise NotFound(
            f"{ids.key(ids.CARD, card_id)} has no workspace",
            "`loopx workspace list` shows the workspaces",
            code="no_workspace",
        )
    return row


def _project(store: Store) -> Path | None:
    """The board's project folder on this machine when it holds a ``.git`` (one
    stat), else None. Never merely the current folder: a ``.loopx/`` board's
    recorded one, or the team board's checkout that points at it
    (``Store.project_folder``) — LoopX never makes worktrees in whatever
    repository a command happens to run in."""
    root = store.project_folder()
    if root is None or not os.path.exists(os.path.join(root, ".git")):
        return None
    return Path(root)


def repository(store: Store) -> Path | None:
    """The main checkout of the git repository the board's project is, or None
    (not a repository: workspaces are off and agents work in the project folder)."""
    root = _project(store)
    if root is None:
        return None  # the cheap answer for a project that is no repository
    if (root / ".git").is_dir():
        return root  # the project is the main checkout (no git process needed to say so)
    from ..workspace import git

    return git.main_checkout(root)


def workspace_root(store: Store) -> Path:
    """Where the board's workspaces are made (see the module's docstring)."""
    chosen = store.setting("workspace_root", "")
    if chosen:
        root = Path(chosen).expanduser()
    else:
        from platformdirs import user_data_dir

        root = Path(user_data_dir("loopx")) / "workspaces" / store.board_uid()
    checkout = store.checkout_id()
    return root / checkout if checkout else root  # (a team board: this checkout's own folder)


def lookup(store: Store, card_id: int) -> WorkspaceView | None:
    """The card's workspace (in any state), or None."""
    with store.read():
        row = Workspace.get(card_id)
        return view(row) if row is not None else None


def open_path(store: Store, card_id: int) -> str | None:
    """The folder of the card's open workspace, or None — the per-turn check
    (no git, no row read at all when the project is not a repository)."""
    if _project(store) is None:
        return None
    checkout = store.checkout_id()
    mine = '"checkout" = ?' if checkout else '"checkout" IS NULL'  # (another checkout's workspace is not one here)
    found = store.query(
        f"""SELECT "path" FROM "workspace" WHERE "card_id" = ? AND "state" = 'open' AND {mine}""",
        (card_id, *((checkout,) if checkout else ())),
    )
    return found[0][0] if found else None


@git_refusal
def uncommitted(store: Store, card_id: int) -> tuple[str, list[str]] | None:
    """The card's open workspace here and what its work tree holds that is
    not committed (``git.uncommitted``, read with the ignore rules its turns'
    git reads: ``workspace/excludes``), or None when nothing is (or the card
    has no workspace here). A git failure is a Conflict (``git_failed``)."""
    path = open_path(store, card_id)
    if path is None or not os.path.isdir(path):
        return None
    from ..workspace import excludes, git

    admin = git.git_dir(path)
    rules = os.path.join(admin, excludes.FILE) if admin else None
    left = git.uncommitted(path, rules if rules and os.path.isfile(rules) else None)
    return (path, left) if left else None


def list_workspaces(store: Store) -> list[tuple[WorkspaceView, str]]:
    """Every workspace, with its card's status, by card."""
    with store.read():
        out = []
        for row in Workspace.where('ORDER BY "card_id"'):
            status = records.scalar('SELECT "status" FROM "card" WHERE "id" = ?', (row.card_id,))
            out.append((view(row), status))
        return out


# -- code state -------------------------------------------------------------------------


def capture(store: Store, card_id: int, since: str | None = None) -> dict | None:
    """The card's code state now, with its uncommitted work saved under
    ``refs/loopx/LX-7/wip/<commit>``: branch, HEAD, the commits since ``since``
    (default: the HEAD recorded last), a diff summary against the base commit,
    the saved WIP commit (None when nothing is uncommitted; the one saved last
    when the files are what it saved). None when the card has no open
    workspace. A git failure is recorded, not raised: ``{"error": …}``
    (evidence is never refused for it)."""
    path = open_path(store, card_id)
    if path is None:
        return None
    with store.read():
        row = _row(card_id)
    return _capture(row, since)


def _capture(row: Workspace, since: str | None) -> dict:
    from ..workspace import git, quarantine

    code: dict = {"path": row.path, "branch": row.branch, "base_commit": row.base_commit}
    try:
        quarantine.admitted(row.path)  # what the turn's git wrote, checked before it is read and recorded (#38)
        snap = git.snapshot(row.path)
        wip = None
        if snap.dirty:
            same = (
                row.wip
                and snap.head == git.resolve(row.path, f"{row.wip}^")
                and git.resolve_tree(row.path, row.wip) == snap.tree
            )
            wip = row.wip if same else git.save_wip(row.path, ref_prefix(row.card_id, "wip"), snap)
        start = since or row.head or row.base_commit
        if snap.head and git.resolve(row.path, start) is None:
            start = row.base_commit  # the HEAD recorded last is gone (a rewritten branch): count from the base
        commits = git.commits_between(row.path, start) if snap.head else []
        code.update(
            branch=git.branch(row.path),
            head=snap.head,
            wip=wip,
            commits=commits[-COMMITS_KEPT:],
            commit_count=len(commits),
            diff=git.diff_stat(row.path, row.base_commit, snap.tree),
        )
    except (git.GitError, OSError) as exc:
        code["error"] = getattr(exc, "message", str(exc))
    return code


def note(card_id: int, code: dict, actor: str | keys.Person, turn_id: str | None = None) -> None:
    """Inside the caller's transaction: the workspace row takes the captured
    state, and a ``code_state`` event records it (with the turn, when known)."""
    row = Workspace.get(card_id, lock=True)
    if row is None:
        return
    if "error" not in code:
        row.head, row.wip = code.get("head"), code.get("wip")
    row.updated_at = clock.now()
    row.save()
    data = {k: v for k, v in code.items() if k != "path"}
    if turn_id:
        data["turn_id"] = turn_id
    events.emit(actor, "code_state", card_id, **data)


def note_refused(
    store: Store,
    card_id: int,
    actor: str | keys.Person,
    moved: list[str],
    changed: list[str],
    kept_in: str | None,
    turn_id: str | None = None,
) -> None:
    """What a turn created in the repository's shared git folder and LoopX
    moved out after it (``workspace/sweep.py``, #38): a ``git_refused`` event
    on the card naming the paths (relative to the common dir), where they were
    kept, and the existing refs that changed meanwhile (not undone)."""
    data: dict = {"moved": moved[:200], "moved_count": len(moved), "changed": changed[:200], "kept_in": kept_in}
    if turn_id:
        data["turn_id"] = turn_id
    store.run(lambda: events.emit(actor, "git_refused", card_id, **data))


def record(
    store: Store, card_id: int, actor: str | keys.Person, since: str | None = None, turn_id: str | None = None
) -> dict | None:
    """Capture the card's code state and record it (the runner after every turn,
    whatever the turn did; before a handoff). None when it has no open workspace."""
    code = capture(store, card_id, since)
    if code is None:
        return None
    store.run(lambda: note(card_id, code, actor, turn_id))
    return code


def checkpoint(store: Store, card_id: int, actor: str | keys.Person, turn_id: str | None = None) -> dict | None:
    """Record the code state only when it changed since the last record (HEAD
    moved, or uncommitted files that are not the saved ones): the runner while
    a turn runs and before the next one starts, so a runner killed mid-turn
    loses no edit. None when nothing changed or there is no workspace."""
    path = open_path(store, card_id)
    if path is None:
        return None
    with store.read():
        row = _row(card_id)
    code = _capture(row, None)
    if "error" not in code and code["head"] == row.head and code["wip"] == row.wip:
        return None
    store.run(lambda: note(card_id, code, actor, turn_id))
    return code


def restore(store: Store, card_id: int) -> bool:
    """Put the last saved uncommitted work back into the card's worktree when
    the work tree lost it (HEAD unchanged and nothing uncommitted there): a
    receiver, or the next turn after a runner was killed, resumes from it."""
    found = lookup(store, card_id)
    if (
        found is None
        or not here(store, found)
        or found.state != "open"
        or not found.wip
        or not os.path.isdir(found.path)
    ):
        return False
    from ..workspace import git

    try:
        return git.restore(found.path, found.wip)
    except git.GitError:
        return False


# -- recorded work (#38, authority/work.py) ---------------------------------------------


def _recorded(store: Store, card_id: int) -> dict[str, str]:
    from ..authority import work

    with store.read():
        return work.recorded(store.query, card_id)


def vanished(store: Store, card_id: int) -> list[tuple[str, str]]:
    """The card's recorded commits that are on neither its base nor its branch
    and that no person let go: (commit, what it was), oldest first. [] when the
    card has no workspace here (git runs only when it has one)."""
    repo = repository(store)
    if repo is None:
        return []  # (the cheap answer for a project that is no repository)
    found = lookup(store, card_id)
    if found is None or not here(store, found) or not found.base:
        return []
    recorded = _recorded(store, card_id)
    if not recorded:
        return []
    from ..authority import work
    from ..workspace import git, quarantine

    quarantine.admitted(repo)  # the turn's commits are in its quarantine until checked (#38)
    with store.read():
        people = store.trust()
        gone_ok = work.let_go(
            store.query, card_id, lambda seq: people.decision(store.query, seq, ("gate_answered",)) is not None
        )
    wanted = [c for c in recorded if c not in gone_ok]
    tips = list(git.tips(repo, (f"refs/heads/{found.base}", f"refs/heads/{found.branch}")).values())
    unreached, gone = git.unreached(repo, wanted, tips)
    unreached = [
        c for c in unreached if not git.same_change_in(repo, c, tips)
    ]  # (a rebase copied it: the work is there)
    return [(c, recorded[c]) for c in wanted if c in unreached or c in gone]


def keep(store: Store, card_id: int, commits: Sequence[str]) -> list[str]:
    """Keep each of ``commits`` the repository still has under
    ``refs/loopx/LX-7/kept/<commit>`` (a git gc never collects them); returns the refs."""
    repo = repository(store)
    if repo is None:
        return []
    from ..workspace import git, quarantine

    quarantine.admitted(repo)  # a commit a turn made is in its quarantine until checked
    gone = set(git.missing(repo, commits))
    refs = []
    for commit in commits:
        if commit not in gone:
            ref = f"{ref_prefix(card_id, 'kept')}/{commit}"
            git.update_ref(repo, ref, commit)
            refs.append(ref)
    return refs


def unkept(store: Store, found: WorkspaceView) -> list[tuple[str, str]]:
    """The card's recorded commits the repository still has that neither its
    base nor one of LoopX's refs for the card (kept, archive, saved work)
    reaches: what removing its folder and branch could lose."""
    recorded = _recorded(store, found.card)
    if not recorded or not found.base:
        return []
    from ..workspace import git, quarantine

    repo = git.main_checkout(found.path) if os.path.isdir(found.path) else repository(store)
    if repo is None:
        return []
    quarantine.admitted(repo)
    tips = git.tips(repo, (f"refs/heads/{found.base}", f"{REF_PREFIX}{ids.fmt(ids.CARD, found.card)}/"))
    unreached, _ = git.unreached(repo, list(recorded), tips.values())
    base = tips.get(f"refs/heads/{found.base}")
    return [
        (c, recorded[c]) for c in unreached if not git.same_change_in(repo, c, [base])
    ]  # (rebased, then merged: in the base)


# -- cleanup ----------------------------------------------------------------------------


def merged(found: WorkspaceView) -> bool:
    """Whether the branch's commits are all in the base branch (and nothing is uncommitted)."""
    from ..workspace import git, quarantine

    repo = Path(found.path)
    where = git.main_checkout(repo) if repo.is_dir() else None
    if where is None or not found.base:
        return False
    quarantine.admitted(where)
    tip = git.resolve(where, found.branch)
    base = git.resolve(where, found.base)
    return tip is not None and base is not None and git.is_ancestor(where, tip, base)


@git_refusal
def archive(store: Store, card_id: int, actor: str | keys.Person) -> WorkspaceView:
    """Keep the card's work under ``refs/loopx/LX-7/archive/<commit>`` (its
    uncommitted work on top of HEAD, if any): after this the worktree may be
    removed without losing a commit or an edit."""
    from ..workspace import git

    found = lookup(store, card_id)
    key = ids.key(ids.CARD, card_id)
    if found is None or found.state == "removed":
        raise NotFound(f"{key} has no workspace to archive", "`loopx workspace list` shows the workspaces")
    if not here(store, found):
        raise elsewhere(found, key)
    snap = git.snapshot(found.path)
    tip = git.save_wip(found.path, ref_prefix(card_id, "wip"), snap) or snap.head
    ref = f"{ref_prefix(card_id, 'archive')}/{tip}"
    git.update_ref(found.path, ref, tip)
    kept = keep(store, card_id, [c for c, _ in unkept(store, found)])  # recorded commits no branch holds any more

    def body() -> WorkspaceView:
        row = _row(card_id, lock=True)
        row.state, row.archive_ref, row.head, row.updated_at = "archived", ref, snap.head, clock.now()
        row.save()
        events.emit(
            actor,
            "workspace_archived",
            card_id,
            ref=ref,
            commit=tip,
            head=snap.head,
            **({"kept": kept} if kept else {}),
        )
        return view(row)

    return store.run(body)


def _kept(path: str, ref: str | None, snap: Snapshot) -> bool:
    """Whether the archive ref holds exactly what the worktree holds now (its
    commits and its files): removing the folder then loses nothing."""
    from ..workspace import git

    tip = git.resolve(path, ref) if ref else None
    if tip is None or git.resolve_tree(path, tip) != snap.tree:
        return False
    return snap.head in (tip, git.resolve(path, f"{tip}^"))


def removable(found: WorkspaceView, store: Store) -> str | None:
    """Why the workspace's folder may go without losing anything — "merged"
    (nothing uncommitted, its branch in the base), "archived" (the archive ref
    holds exactly what the folder holds), "missing" (the folder is gone) — or
    None: it may not. Never while a commit the log recorded for the card is
    on neither the base nor one of LoopX's refs for it (``unkept``: a
    receiver's ``git reset --hard main`` makes a branch look merged)."""
    from ..workspace import git

    if found.state == "removed":
        return None
    if not os.path.isdir(found.path):
        return "missing"
    if unkept(store, found):
        return None
    snap = git.snapshot(found.path)
    if not snap.dirty and merged(found):
        return "merged"
    if found.state == "archived" and _kept(found.path, found.archive_ref, snap):
        return "archived"
    return None


@git_refusal
def remove(store: Store, card_id: int, actor: str | keys.Person) -> WorkspaceView:
    """Remove the card's worktree folder — only when its branch is merged into
    the base, or it was archived and nothing changed since; the branch and every
    LoopX ref stay. Refused (Conflict) otherwise: nothing is ever lost."""
    from ..workspace import git

    found = lookup(store, card_id)
    key = ids.key(ids.CARD, card_id)
    if found is None or found.state == "removed":
        raise NotFound(f"{key} has no workspace to remove", "`loopx workspace list` shows the workspaces")
    if not here(store, found):
        raise elsewhere(found, key)
    reason = removable(found, store)
    if reason is None:
        lost = unkept(store, found) if os.path.isdir(found.path) else []
        raise Conflict(
            f"{key}'s workspace is neither merged into {found.base} nor archived as it is now"
            + (
                f" (its recorded commits {work_text(lost)} are on neither {found.base} nor a LoopX ref)" if lost else ""
            ),
            f"merge {found.branch}, or archive it first with `loopx workspace archive {key}`",
            code="not_merged",
        )
    if reason != "missing":
        git.worktree_remove(git.main_checkout(found.path) or found.path, found.path)

    def body() -> WorkspaceView:
        row = _row(card_id, lock=True)
        row.state, row.updated_at = "removed", clock.now()
        row.save()
        events.emit(actor, "workspace_removed", card_id, reason=reason, head=row.head)
        return view(row)

    return store.run(body)


def work_text(commits: list[tuple[str, str]]) -> str:
    from ..authority import work

    return work.describe(commits)


def agents_at_work(store: Store) -> set[str]:
    """The agents that may still start a turn in one of this checkout's workspaces:
    the holder or assignee of a card whose workspace is open here, and every agent
    a live runner drives. What LoopX keeps per agent for such turns (its Codex home)
    may go for any other."""
    from . import runners

    checkout = store.checkout_id()
    mine = '"w"."checkout" = ?' if checkout else '"w"."checkout" IS NULL'
    with store.read():
        found = records.rows(
            f"""SELECT "c"."lease_holder", "c"."assignee" FROM "workspace" AS "w" JOIN "card" AS "c" ON "c"."id" = "w"."card_id"
                WHERE "w"."state" = 'open' AND {mine}""",
            (checkout,) if checkout else (),
        )
    out = {name for row in found for name in row if name}
    now = clock.now()
    out.update(r.agent for r in runners.list_runners(store) if r.live(now))
    return out
