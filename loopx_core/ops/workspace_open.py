"""Opening a card's workspace (issue #26; where and how it is kept:
``workspaces``): made on first use — its worktree on the branch
``loopx/LX-7`` from the base, past the person's cap only after removable
folders went (``workspace_cap``), the person's setup command run once in a
new one — rebuilt when its folder was deleted, and named in the ``next`` or
``claim`` answer that says "work". Git runs outside any transaction; the
``workspace_opened`` event records what it did."""

from __future__ import annotations

import os

from ..rules import clock, ids
from ..shapes.errors import Conflict, InvalidInput, LoopxError, NotFound
from ..shapes.values import WorkspaceView
from ..store import events, records
from ..store.records import Workspace
from .workspaces import (
    branch_name,
    checkpoint,
    elsewhere,
    git_refusal,
    here,
    lookup,
    repository,
    restore,
    view,
    workspace_root,
)

TYPE_CHECKING = False  # (annotations only: typing is not imported on the cold path; checkers read this as typing's)
if TYPE_CHECKING:
    from pathlib import Path

    from ..authority import keys
    from ..store.base import Store


@git_refusal
def open_workspace(
    store: Store, card_id: int, actor: str | keys.Person, base: str | None = None, said: list[str] | None = None
) -> WorkspaceView:
    """Make the card's worktree (``git worktree add -b loopx/LX-7 PATH BASE``),
    or return the one already open. Reopening an archived or removed one checks
    its branch out again. Raises InvalidInput when the project is not a git
    repository (or has no commit to start from).

    An open workspace whose folder is gone (deleted by hand) is rebuilt: git is
    told to forget the folder it still lists (``worktree prune``: else ``add``
    refuses it for good), the card's branch is checked out again at its tip
    and the saved uncommitted work (``refs/loopx/LX-7/wip/…``) put back; its
    ``workspace_opened`` event carries ``rebuilt`` (the card shows it), and a
    sentence saying so is appended to ``said`` (#44)."""
    from ..workspace import git

    key = ids.key(ids.CARD, card_id)
    with store.read():
        if records.scalar('SELECT "id" FROM "card" WHERE "id" = ?', (card_id,)) is None:
            raise NotFound(f"no card {key}", "list cards with `loopx card list`")
        row = Workspace.get(card_id)
    if row is not None and not here(store, row):
        raise elsewhere(row, key)
    if row is not None and row.state == "open" and os.path.isdir(row.path):
        return view(row)
    lost = row is not None and row.state == "open"  # (and its folder is gone)
    repo = repository(store)
    if repo is None:
        raise InvalidInput(
            f"the board's project ({store.project_root()}) is not a git repository: no workspace for {key}",
            "workspaces need git (`git init` and a first commit); without one, agents work in the project folder",
            code="not_a_repository",
        )
    base = base or (row.base if row is not None else None) or git.base_branch(repo)
    base_commit = git.resolve(repo, base) if base else None
    if base_commit is None:
        raise InvalidInput(
            f"no commit to start {key}'s branch from (base {base!r})",
            "make a first commit in the project, or name a base branch with --base",
            code="no_base",
        )
    path = workspace_root(store) / key
    branch = branch_name(card_id)
    path.parent.mkdir(parents=True, exist_ok=True)
    made = False
    created = not path.exists()
    if created:
        from .workspace_cap import make_room

        make_room(
            store
        )  # a person's cap on the total: removable folders go first, else refused (a new folder only: the per-turn path never loads it)
    try:
        if lost:
            git.prune_worktrees(repo)
        if created:
            start = (
                row.head if lost and row is not None and row.head and git.resolve(repo, row.head) else base_commit
            )  # (the branch itself gone too: from its last recorded HEAD)
            made = git.worktree_add(repo, path, branch, start)
    except git.GitError as exc:
        again = lookup(store, card_id)
        if again is not None and here(store, again) and again.state == "open" and os.path.isdir(again.path):
            return again  # another process opened it first
        raise Conflict(
            f"could not make {key}'s workspace: {exc.message}",
            f"see `git worktree list` in {repo}",
            code="workspace_failed",
        ) from None
    head = base_commit if made and not lost else git.head(path)  # a new branch starts at its base
    # Only a branch made now, from the base, gets the setup command: a folder made
    # again for an existing branch holds the agent's commits (e.g. a package.json
    # whose install script `npm ci` would run as the person, outside any sandbox).
    setup = run_setup(store, path, card_id) if made and not lost else None
    rebuilt = _rebuild_note(path, row, head) if lost and created and row is not None else None

    def body() -> WorkspaceView:
        now = clock.now()
        found = Workspace.get(card_id, lock=True)
        if found is not None and not here(store, found):
            raise elsewhere(found, key)  # another checkout opened it first
        if found is not None and found.state == "open" and rebuilt is None:
            return view(found)
        fields = dict(
            path=str(path),
            branch=branch,
            base=base,
            base_commit=base_commit if found is None else found.base_commit,
            state="open",
            head=head,
            wip=found.wip if found else None,
            updated_at=now,
            checkout=store.checkout_id(),
        )
        if found is None:
            found = Workspace.create(card_id=card_id, opened_at=now, archive_ref=None, **fields)
        else:
            for name, value in fields.items():
                setattr(found, name, value)
            found.save()
        extra: dict[str, object] = {"setup": setup} if setup is not None else {}
        if rebuilt is not None:
            extra["rebuilt"] = rebuilt
        if found.checkout:
            extra["checkout"] = found.checkout
        events.emit(
            actor,
            "workspace_opened",
            card_id,
            path=str(path),
            branch=branch,
            base=base,
            base_commit=found.base_commit,
            head=head,
            **extra,
        )
        return view(found)

    opened = store.run(body)
    if rebuilt is not None and said is not None:
        said.append(rebuilt_text(key, rebuilt))
    return opened


def _rebuild_note(path: Path, row: Workspace, head: str | None) -> dict:
    """The saved uncommitted work put back into a workspace made again, and
    what its event records: the folder that was gone, the branch's HEAD, the
    saved work and whether it went back (only onto the commit it was saved on)."""
    from ..workspace import git

    restored = False
    if row.wip:
        try:
            restored = git.restore(path, row.wip)
        except git.GitError:
            restored = False
    return {"folder": row.path, "head": head, "wip": row.wip, "restored": restored}


def rebuilt_text(key: str, rebuilt: dict) -> str:
    """What the card's holder is told about its rebuilt workspace."""
    work = (
        "its saved uncommitted work put back"
        if rebuilt.get("restored")
        else "its saved uncommitted work NOT put back (the branch moved past it: it stays under refs/loopx/)"
        if rebuilt.get("wip")
        else "no uncommitted work was saved"
    )
    return f"{key}'s workspace folder was gone ({rebuilt.get('folder')}): rebuilt from its branch at {str(rebuilt.get('head'))[:12]}, {work}"


def last_rebuild(store: Store, card_id: int) -> dict | None:
    """The card's workspace rebuild, when its last opening was one (what
    ``card show`` says)."""
    import json

    with store.read():
        found = records.rows(
            """SELECT "data" FROM "event" WHERE "card" = ? AND "kind" = 'workspace_opened' ORDER BY "seq" DESC LIMIT 1""",
            (card_id,),
        )
    if not found:
        return None
    data = json.loads(found[0][0]) if isinstance(found[0][0], str) else found[0][0]
    rebuilt = (data or {}).get("rebuilt")
    return rebuilt if isinstance(rebuilt, dict) else None


SETUP_KEY = "workspace_setup"


def setup_of(store: Store) -> dict | None:
    """The person's setup command for new workspaces (``{"command", "timeout"}``),
    only when their signed decision says so; None when there is none."""
    import json

    raw = store.signed_setting(SETUP_KEY)
    if not raw:
        return None
    try:
        found = json.loads(raw)
    except ValueError:
        return None
    return found if isinstance(found, dict) and found.get("command") else None


def set_setup(store: Store, command: str | None, timeout: float, person: keys.Person) -> dict | None:
    """A person's decision: the command run once in every new workspace
    (installing dependencies), bounded by ``timeout`` seconds; None clears it."""
    import json

    value = json.dumps({"command": command, "timeout": timeout}, sort_keys=True) if command else ""
    store.run(lambda: store.put_signed_setting(SETUP_KEY, value, person))
    return setup_of(store)


def run_setup(store: Store, path: Path, card_id: int) -> dict | None:
    """Run the setup command in a new workspace (outside any transaction, with
    its timeout, as ``done`` runs a verify command): its exit, time and output's
    tail are recorded in the ``workspace_opened`` event. None without one."""
    setup = setup_of(store)
    if setup is None:
        return None
    from .verify_command import run_verify  # (only with a setup command)

    return run_verify(
        setup["command"], str(path), float(setup.get("timeout") or 600), {"LOOPX_CARD": ids.fmt(ids.CARD, card_id)}
    )


@git_refusal
def ensure(store: Store, card_id: int, actor: str | keys.Person, said: list[str] | None = None) -> WorkspaceView | None:
    """The card's open workspace, made on first use when the project is a git
    repository (rebuilt when its folder was deleted: ``said`` hears of it);
    None when it is not (today's behaviour: the project folder)."""
    if repository(store) is None:
        return None
    found = lookup(store, card_id)
    if found is not None and here(store, found) and found.state == "open" and os.path.isdir(found.path):
        return found
    return open_workspace(store, card_id, actor, said=said)  # (refused when another checkout holds it)


def before_claim(store: Store, card_id: int, agent: str, in_project: bool = False) -> list[str]:
    """``claim CARD``: the card's workspace first, when the card is one the agent
    could take now (ready, assigned to it or to nobody), so that a workspace that
    cannot be made refuses the claim with nothing written (exit 5,
    ``no_workspace``; ``in_project``: a warning instead). Any other card is left
    to the claim's own refusal."""
    with store.read():
        found = records.rows('SELECT "status", "assignee" FROM "card" WHERE "id" = ?', (card_id,))
    if not found or found[0][0] != "ready" or found[0][1] not in (None, "", agent):
        return []
    try:
        ensure(store, card_id, f"agent:{agent}")
    except LoopxError as err:
        return _refused(err, str(ids.fmt(ids.CARD, card_id)), in_project, "")
    return []


def _refused(err: LoopxError, key: str, in_project: bool, given_back: str) -> list[str]:
    if err.code == "no_base":
        return []  # a repository without a commit yet: no workspaces, nothing to warn about
    if in_project:
        return [f"no workspace for {key}: {err.message} (working in the project folder, as --in-project asked)"]
    raise Conflict(
        f"no workspace for {key}: {err.message}{given_back}",
        f"{err.hint}; then claim it again — or, to work in the project folder on purpose, `loopx claim {key} --in-project`",
        code="no_workspace",
    ) from None


def name_in(store: Store, answer: dict, agent: str, in_project: bool = False) -> list[str]:
    """A ``next``/``claim`` answer that says "work" gets the card's workspace —
    made at its first claim when the project is a git repository — as
    ``answer["workspace"]`` (path, branch, base). Call it after the operation's
    transaction: git never runs under the write lock.

    A workspace that cannot be made (the person's cap, git, a folder it may not
    write) is no reason to work in the project folder, where every agent's edits
    meet: a card this call claimed is released again (ready, as it was) and the
    answer is a Conflict (exit 5, ``no_workspace``) saying why and what to do —
    unless ``in_project`` (the person asked for the project folder: ``--in-project``),
    which returns it as a warning instead."""
    if answer.get("action") != "work" or not answer.get("card"):
        return []
    key = answer["card"]["id"]
    card_id = ids.parse(ids.CARD, key)
    said: list[str] = []
    try:
        ws = ensure(store, card_id, f"agent:{agent}", said)
    except LoopxError as err:
        given_back = ""
        if answer.get("claimed") and not in_project and err.code != "no_base":
            from .release import release  # (only when the workspace could not be made)

            release(store, card_id, agent, (answer.get("lease") or {}).get("token"))
            given_back = f"; {key} is released again (ready, as it was)"
        return _refused(err, key, in_project, given_back)
    if ws is not None:
        answer["workspace"] = {"path": ws.path, "branch": ws.branch, "base": ws.base}
    return said


@git_refusal
def begin_turn(store: Store, card_id: int, actor: str | keys.Person) -> tuple[str, str | None] | None:
    """Before a turn on the card: its workspace (made on first use), the saved
    uncommitted work put back if the work tree lost it, and anything left in
    the work tree since the last record (a turn whose runner was killed) saved
    and recorded. Returns (the folder the turn runs in, HEAD as the turn
    begins), or None when the project has no workspaces."""
    found = ensure(store, card_id, actor)
    if found is None:
        return None
    restore(store, card_id)
    code = checkpoint(store, card_id, actor)
    head = code.get("head") if code else (lookup(store, card_id) or found).head
    return found.path, head
