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
from ..shapes.errors import Conflict, InvalidInput, LoopxError, NotFound
from ..shapes.values import WorkspaceView
from ..store import events, records
from ..store.records import Workspace

BRANCH_PREFIX = "loopx/"
REF_PREFIX = "refs/loopx/"
COMMITS_KEPT = 200  # commits named in one code-state record (the count is always whole)


def _git_refusal(fn):
    """A git failure (or a folder it may not write) inside a workspace operator
    is a Conflict (exit 5) naming the reason, never an internal error."""
    @functools.wraps(fn)
    def run(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except LoopxError:
            raise
        except OSError as exc:  # e.g. a sandboxed caller that may not write the workspaces' folder
            raise Conflict(f"cannot write the workspace: {exc.strerror or exc}", "open it from outside the agent's sandbox (`loopx workspace open CARD`, a runner)", code="workspace_unwritable") from None
        except Exception as exc:
            plumbing = sys.modules.get("loopx_core.workspace.git")  # (not imported: no git ran, so no git failure)
            if plumbing is not None and isinstance(exc, plumbing.GitError):
                raise Conflict(f"git refused: {exc.message}", "see `loopx workspace list`; fix the repository, then retry", code="git_failed") from None
            raise

    return run


def branch_name(card_id: int) -> str:
    return BRANCH_PREFIX + ids.key(ids.CARD, card_id)


def ref_prefix(card_id: int, kind: str) -> str:
    """``refs/loopx/LX-7/wip`` or ``refs/loopx/LX-7/archive``."""
    return f"{REF_PREFIX}{ids.fmt(ids.CARD, card_id)}/{kind}"


def view(row: Workspace) -> WorkspaceView:
    return WorkspaceView(
        card=row.card_id, path=row.path, branch=row.branch, base=row.base, base_commit=row.base_commit, state=row.state,
        head=row.head, wip=row.wip, archive_ref=row.archive_ref, opened_at=row.opened_at, updated_at=row.updated_at,
        checkout=row.checkout,
    )


def here(store, found) -> bool:
    """Whether the workspace (a row or view) belongs to the checkout this
    command runs in (on a ``.loopx/`` board: always — its one project folder)."""
    return found.checkout == store.checkout_id()


def elsewhere(found, key: str | None) -> Conflict:
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
        raise NotFound(f"{ids.key(ids.CARD, card_id)} has no workspace", "`loopx workspace list` shows the workspaces", code="no_workspace")
    return row


def _row_view(store, card_id: int) -> WorkspaceView | None:
    with store.read():
        row = Workspace.get(card_id)
        return view(row) if row is not None else None


def _project(store) -> Path | None:
    """The board's project folder on this machine when it holds a ``.git`` (one
    stat), else None. Never merely the current folder: a ``.loopx/`` board's
    recorded one, or the team board's checkout that points at it
    (``Store.project_folder``) — LoopX never makes worktrees in whatever
    repository a command happens to run in."""
    root = store.project_folder()
    if root is None or not os.path.exists(os.path.join(root, ".git")):
        return None
    return Path(root)


def repository(store) -> Path | None:
    """The main checkout of the git repository the board's project is, or None
    (not a repository: workspaces are off and agents work in the project folder)."""
    root = _project(store)
    if root is None:
        return None  # the cheap answer for a project that is no repository
    if (root / ".git").is_dir():
        return root  # the project is the main checkout (no git process needed to say so)
    from ..workspace import git

    return git.main_checkout(root)


def workspace_root(store) -> Path:
    """Where the board's workspaces are made (see the module's docstring)."""
    chosen = store.setting("workspace_root", "")
    if chosen:
        root = Path(chosen).expanduser()
    else:
        from platformdirs import user_data_dir

        root = Path(user_data_dir("loopx")) / "workspaces" / store.board_uid()
    checkout = store.checkout_id()
    return root / checkout if checkout else root  # (a team board: this checkout's own folder)


def lookup(store, card_id: int) -> WorkspaceView | None:
    """The card's workspace (in any state), or None."""
    return _row_view(store, card_id)


def open_path(store, card_id: int) -> str | None:
    """The folder of the card's open workspace, or None — the per-turn check
    (no git, no row read at all when the project is not a repository)."""
    if _project(store) is None:
        return None
    checkout = store.checkout_id()
    mine = '"checkout" = ?' if checkout else '"checkout" IS NULL'  # (another checkout's workspace is not one here)
    found = store.query(f"""SELECT "path" FROM "workspace" WHERE "card_id" = ? AND "state" = 'open' AND {mine}""", (card_id, *((checkout,) if checkout else ())))
    return found[0][0] if found else None


@_git_refusal
def uncommitted(store, card_id: int) -> tuple[str, list[str]] | None:
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


def list_workspaces(store) -> list[tuple[WorkspaceView, str]]:
    """Every workspace, with its card's status, by card."""
    with store.read():
        out = []
        for row in Workspace.where('ORDER BY "card_id"'):
            status = records.scalar('SELECT "status" FROM "card" WHERE "id" = ?', (row.card_id,))
            out.append((view(row), status))
        return out


# -- opening ----------------------------------------------------------------------------


@_git_refusal
def open_workspace(store, card_id: int, actor, base: str | None = None, said: list[str] | None = None) -> WorkspaceView:
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
        raise InvalidInput(f"no commit to start {key}'s branch from (base {base!r})", "make a first commit in the project, or name a base branch with --base", code="no_base")
    path = workspace_root(store) / key
    branch = branch_name(card_id)
    path.parent.mkdir(parents=True, exist_ok=True)
    made = False
    created = not path.exists()
    if created:
        from .workspace_cap import make_room

        make_room(store)  # a person's cap on the total: removable folders go first, else refused
    try:
        if lost:
            git.prune_worktrees(repo)
        if created:
            start = row.head if lost and row is not None and row.head and git.resolve(repo, row.head) else base_commit  # (the branch itself gone too: from its last recorded HEAD)
            made = git.worktree_add(repo, path, branch, start)
    except git.GitError as exc:
        again = _row_view(store, card_id)
        if again is not None and here(store, again) and again.state == "open" and os.path.isdir(again.path):
            return again  # another process opened it first
        raise Conflict(f"could not make {key}'s workspace: {exc.message}", f"see `git worktree list` in {repo}", code="workspace_failed") from None
    head = base_commit if made and not lost else git.head(path)  # a new branch starts at its base
    # Only a branch made now, from the base, gets the setup command: a folder made
    # again for an existing branch holds the agent's commits (e.g. a package.json
    # whose install script `npm ci` would run as the person, outside any sandbox).
    setup = run_setup(store, path, card_id) if made and not lost else None
    rebuilt = _rebuild_note(path, row, head) if lost and created and row is not None else None

    def body():
        now = clock.now()
        found = Workspace.get(card_id, lock=True)
        if found is not None and not here(store, found):
            raise elsewhere(found, key)  # another checkout opened it first
        if found is not None and found.state == "open" and rebuilt is None:
            return view(found)
        fields = dict(path=str(path), branch=branch, base=base, base_commit=base_commit if found is None else found.base_commit, state="open", head=head, wip=found.wip if found else None, updated_at=now, checkout=store.checkout_id())
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
        events.emit(actor, "workspace_opened", card_id, path=str(path), branch=branch, base=base, base_commit=found.base_commit, head=head, **extra)
        return view(found)

    opened = store.run(body)
    if rebuilt is not None and said is not None:
        said.append(rebuilt_text(key, rebuilt))
    return opened


def _rebuild_note(path, row: Workspace, head: str | None) -> dict:
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
    work = ("its saved uncommitted work put back" if rebuilt.get("restored")
            else "its saved uncommitted work NOT put back (the branch moved past it: it stays under refs/loopx/)" if rebuilt.get("wip")
            else "no uncommitted work was saved")
    return f"{key}'s workspace folder was gone ({rebuilt.get('folder')}): rebuilt from its branch at {str(rebuilt.get('head'))[:12]}, {work}"


def last_rebuild(store, card_id: int) -> dict | None:
    """The card's workspace rebuild, when its last opening was one (what
    ``card show`` says)."""
    import json

    with store.read():
        found = records.rows("""SELECT "data" FROM "event" WHERE "card" = ? AND "kind" = 'workspace_opened' ORDER BY "seq" DESC LIMIT 1""", (card_id,))
    if not found:
        return None
    data = json.loads(found[0][0]) if isinstance(found[0][0], str) else found[0][0]
    rebuilt = (data or {}).get("rebuilt")
    return rebuilt if isinstance(rebuilt, dict) else None


SETUP_KEY = "workspace_setup"


def setup_of(store) -> dict | None:
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


def set_setup(store, command: str | None, timeout: float, person) -> dict | None:
    """A person's decision: the command run once in every new workspace
    (installing dependencies), bounded by ``timeout`` seconds; None clears it."""
    import json

    value = json.dumps({"command": command, "timeout": timeout}, sort_keys=True) if command else ""
    store.run(lambda: store.put_signed_setting(SETUP_KEY, value, person))
    return setup_of(store)


def run_setup(store, path, card_id: int) -> dict | None:
    """Run the setup command in a new workspace (outside any transaction, with
    its timeout, as ``done`` runs a verify command): its exit, time and output's
    tail are recorded in the ``workspace_opened`` event. None without one."""
    setup = setup_of(store)
    if setup is None:
        return None
    from .done import run_verify

    return run_verify(setup["command"], str(path), float(setup.get("timeout") or 600), {"LOOPX_CARD": ids.fmt(ids.CARD, card_id)})


@_git_refusal
def ensure(store, card_id: int, actor, said: list[str] | None = None) -> WorkspaceView | None:
    """The card's open workspace, made on first use when the project is a git
    repository (rebuilt when its folder was deleted: ``said`` hears of it);
    None when it is not (today's behaviour: the project folder)."""
    if repository(store) is None:
        return None
    found = lookup(store, card_id)
    if found is not None and here(store, found) and found.state == "open" and os.path.isdir(found.path):
        return found
    return open_workspace(store, card_id, actor, said=said)  # (refused when another checkout holds it)


def before_claim(store, card_id: int, agent: str, in_project: bool = False) -> list[str]:
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


def name_in(store, answer: dict, agent: str, in_project: bool = False) -> list[str]:
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
            from .claims import release

            release(store, card_id, agent, (answer.get("lease") or {}).get("token"))
            given_back = f"; {key} is released again (ready, as it was)"
        return _refused(err, key, in_project, given_back)
    if ws is not None:
        answer["workspace"] = {"path": ws.path, "branch": ws.branch, "base": ws.base}
    return said


# -- code state -------------------------------------------------------------------------


def capture(store, card_id: int, since: str | None = None) -> dict | None:
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
            same = row.wip and snap.head == git.resolve(row.path, f"{row.wip}^") and git.resolve_tree(row.path, row.wip) == snap.tree
            wip = row.wip if same else git.save_wip(row.path, ref_prefix(row.card_id, "wip"), snap)
        start = since or row.head or row.base_commit
        if snap.head and git.resolve(row.path, start) is None:
            start = row.base_commit  # the HEAD recorded last is gone (a rewritten branch): count from the base
        commits = git.commits_between(row.path, start) if snap.head else []
        code.update(
            branch=git.branch(row.path), head=snap.head, wip=wip, commits=commits[-COMMITS_KEPT:], commit_count=len(commits),
            diff=git.diff_stat(row.path, row.base_commit, snap.tree),
        )
    except (git.GitError, OSError) as exc:
        code["error"] = getattr(exc, "message", str(exc))
    return code


def note(card_id: int, code: dict, actor, turn_id: str | None = None) -> None:
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


def note_refused(store, card_id: int, actor, moved: list[str], changed: list[str], kept_in: str | None, turn_id: str | None = None) -> None:
    """What a turn created in the repository's shared git folder and LoopX
    moved out after it (``workspace/sweep.py``, #38): a ``git_refused`` event
    on the card naming the paths (relative to the common dir), where they were
    kept, and the existing refs that changed meanwhile (not undone)."""
    data: dict = {"moved": moved[:200], "moved_count": len(moved), "changed": changed[:200], "kept_in": kept_in}
    if turn_id:
        data["turn_id"] = turn_id
    store.run(lambda: events.emit(actor, "git_refused", card_id, **data))


def record(store, card_id: int, actor, since: str | None = None, turn_id: str | None = None) -> dict | None:
    """Capture the card's code state and record it (the runner after every turn,
    whatever the turn did; before a handoff). None when it has no open workspace."""
    code = capture(store, card_id, since)
    if code is None:
        return None
    store.run(lambda: note(card_id, code, actor, turn_id))
    return code


def checkpoint(store, card_id: int, actor, turn_id: str | None = None) -> dict | None:
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


@_git_refusal
def begin_turn(store, card_id: int, actor) -> tuple[str, str | None] | None:
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


def restore(store, card_id: int) -> bool:
    """Put the last saved uncommitted work back into the card's worktree when
    the work tree lost it (HEAD unchanged and nothing uncommitted there): a
    receiver, or the next turn after a runner was killed, resumes from it."""
    found = lookup(store, card_id)
    if found is None or not here(store, found) or found.state != "open" or not found.wip or not os.path.isdir(found.path):
        return False
    from ..workspace import git

    try:
        return git.restore(found.path, found.wip)
    except git.GitError:
        return False


# -- recorded work (#38, authority/work.py) ---------------------------------------------


def _recorded(store, card_id: int) -> dict[str, str]:
    from ..authority import work

    with store.read():
        return work.recorded(store.query, card_id)


def vanished(store, card_id: int) -> list[tuple[str, str]]:
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
        gone_ok = work.let_go(store.query, card_id, lambda seq: people.decision(store.query, seq, ("gate_answered",)) is not None)
    wanted = [c for c in recorded if c not in gone_ok]
    tips = list(git.tips(repo, (f"refs/heads/{found.base}", f"refs/heads/{found.branch}")).values())
    unreached, gone = git.unreached(repo, wanted, tips)
    unreached = [c for c in unreached if not git.same_change_in(repo, c, tips)]  # (a rebase copied it: the work is there)
    return [(c, recorded[c]) for c in wanted if c in unreached or c in gone]


def keep(store, card_id: int, commits) -> list[str]:
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


def unkept(store, found: WorkspaceView) -> list[tuple[str, str]]:
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
    return [(c, recorded[c]) for c in unreached if not git.same_change_in(repo, c, [base])]  # (rebased, then merged: in the base)


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


@_git_refusal
def archive(store, card_id: int, actor) -> WorkspaceView:
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

    def body():
        row = _row(card_id, lock=True)
        row.state, row.archive_ref, row.head, row.updated_at = "archived", ref, snap.head, clock.now()
        row.save()
        events.emit(actor, "workspace_archived", card_id, ref=ref, commit=tip, head=snap.head, **({"kept": kept} if kept else {}))
        return view(row)

    return store.run(body)


def _kept(path: str, ref: str | None, snap) -> bool:
    """Whether the archive ref holds exactly what the worktree holds now (its
    commits and its files): removing the folder then loses nothing."""
    from ..workspace import git

    tip = git.resolve(path, ref) if ref else None
    if tip is None or git.resolve_tree(path, tip) != snap.tree:
        return False
    return snap.head in (tip, git.resolve(path, f"{tip}^"))


def removable(found: WorkspaceView, store) -> str | None:
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


@_git_refusal
def remove(store, card_id: int, actor) -> WorkspaceView:
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
            + (f" (its recorded commits {work_text(lost)} are on neither {found.base} nor a LoopX ref)" if lost else ""),
            f"merge {found.branch}, or archive it first with `loopx workspace archive {key}`",
            code="not_merged",
        )
    if reason != "missing":
        git.worktree_remove(git.main_checkout(found.path) or found.path, found.path)

    def body():
        row = _row(card_id, lock=True)
        row.state, row.updated_at = "removed", clock.now()
        row.save()
        events.emit(actor, "workspace_removed", card_id, reason=reason, head=row.head)
        return view(row)

    return store.run(body)


def work_text(commits: list[tuple[str, str]]) -> str:
    from ..authority import work

    return work.describe(commits)


def agents_at_work(store) -> set[str]:
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
