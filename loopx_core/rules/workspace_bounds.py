"""What an agent working in a card's workspace (a linked git worktree) may
write, as paths a runtime's sandbox can be given (issue #26).

A commit in a linked worktree writes outside it, into the main repository's
git folder (the *common dir*): the worktree's own admin folder
(``.git/worktrees/<name>``: its HEAD, index, reflog), new objects
(``.git/objects``), its branch's ref (``.git/refs/heads/loopx/LX-7``, replaced
through a ``LX-7.lock`` created beside it, so the folder holding it must be
writable) and that ref's reflog (``.git/logs/refs/heads/loopx/LX-7``). Nothing
else: not the main checkout, not another workspace, not the base branch's ref,
not ``packed-refs``, not LoopX's own refs (``refs/loopx/…``).

- ``writable(b)``: the workspace and exactly those git paths (the folder of the
  branch's ref, not the ref file alone: git replaces a ref by renaming a lock
  file over it);
- ``guarded(b)``: what must stay read-only although a runtime would let it be
  written. Every existing entry of the common dir beside the path down to each
  writable git path — so inside ``refs/heads/loopx/`` every *other* card's
  branch (and its reflog), beside ``objects`` the main checkout's ``HEAD``,
  ``index``, ``packed-refs``, ``refs/loopx`` and every other ``refs/…``, beside
  ``worktrees/<name>`` every other workspace's admin folder. Claude Code makes
  the whole common dir of a worktree writable (2.1.197, 2.1.335), so all of it
  is needed there; Codex keeps the common dir read-only, so only the entries
  inside a writable root count there (``inside_writable``). Only paths that exist
  are listed: a sandbox cannot bind a missing path (Codex fails to start the
  command; Claude Code puts an unreadable placeholder there, and git then
  cannot read a placeholder ``packed-refs``). A branch made after the turn
  started is not listed: the PreToolUse hook refuses the git commands that move
  another branch, and ``loopx verify`` notices recorded commits that vanished.
- ``settings_files(b)``: the runtimes' settings inside the workspace. A session
  started there later reads them, and a hook or MCP server written into them
  would run outside the sandbox, as the person: read-only, existing or not.

Standard library only — ``os.path``, not ``pathlib`` (which costs the cold
hook tens of milliseconds of imports) — and no git process: the runner asks
before every turn and the PreToolUse hook on its cold path.
"""

from __future__ import annotations

import os
from collections import namedtuple

from . import board_file

# The runtimes' settings a workspace may hold (its checkout of the project's
# committed files): a session started there reads them.
SETTINGS_FILES = (".claude/settings.json", ".claude/settings.local.json", ".mcp.json", ".codex", ".loopx")
join = os.path.join
# LoopX's record of what the common dir held before a turn (workspace/sweep.py):
# made before the sandbox is given its paths, so the turn can only read it.
TURNS = "loopx-turns"


# workspace: the linked worktree's top folder; admin: its admin folder in the main
# repository (<common>/worktrees/<name>); common: the main repository's git folder;
# branch: the branch checked out there ("loopx/LX-7"), None when detached; main: the
# main checkout. (A namedtuple: `typing` is kept off the cold hook's path.)
Bounds = namedtuple("Bounds", "workspace admin common branch main")


def _read(path: str, limit: int = 4096) -> str | None:
    try:
        with open(path, encoding="utf-8", errors="surrogateescape") as fh:
            return fh.read(limit).strip()
    except OSError:
        return None


def find(start: str | os.PathLike[str]) -> Bounds | None:
    """The bounds of the linked worktree holding ``start``; None when ``start`` is
    in a main checkout, a plain folder, or cannot be read. A ``.git`` file whose
    worktree git does not link back to (``board_file.main_checkout``: one an
    agent wrote, or a submodule's) is passed over: the worktree around it counts."""
    folder = os.path.abspath(start)
    while True:
        dot_git = join(folder, ".git")
        if os.path.isdir(dot_git):
            return None  # a main checkout
        main = board_file.main_checkout(folder) if os.path.isfile(dot_git) else None
        if main is not None:
            break
        parent = os.path.dirname(folder)
        if parent == folder:
            return None
        folder = parent
    text = _read(dot_git) or ""
    admin = os.path.normpath(join(folder, text[len("gitdir:") :].strip()))
    common = join(main, ".git")
    head = _read(join(admin, "HEAD")) or ""
    branch = head[len("ref: refs/heads/") :] if head.startswith("ref: refs/heads/") else None
    return Bounds(folder, admin, common, branch, main)


# Ref folders git reads for everyone — what `git log`, `git show` and a checkout
# see (replace refs, notes), tags, remote-tracking refs — kept read-only whole;
# and LoopX's own refs/loopx (workspace/sweep.py trusts what is new there).
SHARED_NAMESPACES = (
    "replace",
    "notes",
    "tags",
    "remotes",
    "loopx",
)  # workspace/quarantine.NAME: the turn's own object folder, in its admin folder


def _git_targets(b: Bounds) -> list[tuple[str, ...]]:
    """The writable git paths, relative to the common dir, as path parts: the
    worktree's own admin folder (its HEAD, index, reflog and object quarantine,
    ``workspace/quarantine.py``)
    and its branch's ref and reflog folders — never the shared object store."""
    targets: list[tuple[str, ...]] = [("worktrees", os.path.basename(b.admin))]
    if b.branch:
        parent = tuple(b.branch.split("/")[:-1])
        targets += [("refs", "heads", *parent), ("logs", "refs", "heads", *parent)]
    return targets


def writable(b: Bounds) -> list[str]:
    """The workspace and the git paths a commit there writes (those that exist)."""
    paths = [b.workspace, *(join(b.common, *t) for t in _git_targets(b))]
    return [p for p in paths if os.path.exists(p)]


def guarded(b: Bounds) -> list[str]:
    """Existing entries of the common dir beside the paths down to the writable
    ones; inside the branch's ref and reflog folders every other entry; in the
    workspace's admin folder the two files that tie it to the repository."""
    targets = _git_targets(b)
    ref_folders = {t for t in targets if t[:2] in (("refs", "heads"), ("logs", "refs"))}
    own = b.branch.split("/")[-1] if b.branch else None
    out: list[str] = []

    def walk(folder: str, above: tuple[str, ...]) -> None:
        for name in _names(folder):
            parts = (*above, name)
            if parts in ref_folders:
                out.extend(join(folder, name, n) for n in _names(join(folder, name)) if n != own)
            elif parts in targets:
                continue  # writable as a whole
            elif any(t[: len(parts)] == parts for t in targets):
                walk(join(folder, name), parts)  # on the way down to a writable path
            else:
                out.append(join(folder, name))

    walk(b.common, ())
    out += [join(b.admin, n) for n in ("gitdir", "commondir") if os.path.exists(join(b.admin, n))]
    return out


def _names(folder: str) -> list[str]:
    try:
        return sorted(os.listdir(folder))
    except OSError:
        return []


def inside_writable(b: Bounds, paths: list[str]) -> list[str]:
    """Those of ``paths`` inside a writable git path (Codex keeps the rest of the
    common dir read-only by itself)."""
    roots = [join(b.common, *t) + os.sep for t in _git_targets(b)]
    return [p for p in paths if any(p.startswith(r) for r in roots)]


def settings_files(b: Bounds) -> list[str]:
    return [join(b.workspace, rel) for rel in SETTINGS_FILES]


def ensure_packed_refs(b: Bounds) -> None:
    """Make sure the common dir's ``packed-refs`` exists (empty is valid to git), so
    that a sandbox that binds only existing paths can keep it read-only: a
    ``packed-refs`` the agent creates could name refs for git to find."""
    try:
        with open(join(b.common, "packed-refs"), "x", encoding="utf-8") as fh:
            fh.write("# pack-refs with: peeled fully-peeled sorted \n")
    except OSError:
        pass  # there already, or the repository is not ours to write: nothing more to guard then


def prepare(b: Bounds) -> None:
    """Before a sandboxed turn: ``packed-refs`` made to exist, every packed-only ref
    given its loose file, and the git folders a commit writes made (``git
    pack-refs``/``gc`` removes an emptied ``refs/heads/loopx``; a sandbox cannot
    make a missing path writable, and the commit then fails) — so that the
    sandbox has a path for everything it must keep read-only or let be written."""
    ensure_packed_refs(b)
    loosen_packed(b)
    try:
        os.makedirs(join(b.common, TURNS), exist_ok=True)
    except OSError:
        pass  # not ours to write: nothing is swept then (workspace/sweep.py)
    for namespace in SHARED_NAMESPACES:
        # made (empty) when missing, so that a sandbox that keeps only existing paths
        # read-only keeps them so whole: no replace ref, note, tag or remote-tracking
        # ref can then be created from the turn (issue #38: `refs/replace/<main>`)
        try:
            os.makedirs(join(b.common, "refs", namespace), exist_ok=True)
        except OSError:
            pass  # a file where the folder would be: git decides, not us
    for target in _git_targets(b):
        if target[:2] in (("refs", "heads"), ("logs", "refs")):
            try:
                os.makedirs(join(b.common, *target), exist_ok=True)
            except OSError:
                pass  # not ours to write: the commit will say so


def loosen_packed(b: Bounds) -> None:
    """Give the sandbox a path for every ref that exists only in ``packed-refs``,
    so that a sandbox that keeps only existing paths read-only keeps it so: a
    missing loose ref is a file an agent could create, and git reads it before
    ``packed-refs``. ``guarded`` lists entries one by one only on the way down to
    the writable git paths (in ``refs/`` and ``refs/heads/``, every entry of the
    branch's ref folder); anything else it keeps read-only as a whole folder. So a
    packed ref whose own file would be listed — a branch beside the agent's, the
    base branch — gets a loose file of the same value (what git itself writes on an
    update), and any other — tags, ``refs/loopx/…``, remotes — only the folder
    that holds it (``refs/tags``, ``refs/loopx``), kept read-only whole: a
    repository's thousands of packed tags cost one folder, not thousands of files.
    The agent's own branch is left as it is. Each file is written the way git writes
    one — its ``.lock`` made exclusively (git's own writers wait on it), the packed
    value checked again under it, then renamed into place — so a concurrent git
    never loses an update."""
    own = "refs/heads/" + b.branch if b.branch else None
    targets = _git_targets(b)
    packed = _packed(b)
    folders: set[tuple[str, ...]] = set()
    for ref, value in packed.items():
        if ref == own:
            continue
        parts = tuple(ref.split("/"))
        # the first part of the way that guarded() keeps whole: a folder beside the way down, or the ref itself
        k = next((i for i in range(1, len(parts) + 1) if not any(t[:i] == parts[:i] for t in targets)), len(parts))
        if k < len(parts):
            folders.add(parts[:k])
        elif not os.path.lexists(join(b.common, *parts)):
            _loose(b, ref, value)
    for folder in folders:
        try:
            os.makedirs(join(b.common, *folder), exist_ok=True)
        except OSError:
            pass  # a file where a folder would be: git decides, not us


def _loose(b: Bounds, ref: str, value: str) -> None:
    path = join(b.common, *ref.split("/"))
    lock = path + ".lock"
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(lock, "x", encoding="ascii") as fh:
            fh.write(value + "\n")
    except OSError:
        return  # a file where a folder would be, or git holds it now: git decides, not us
    try:
        if _packed(b).get(ref) == value and not os.path.lexists(path):
            os.rename(lock, path)
    except OSError:
        pass
    finally:
        if os.path.lexists(lock):
            os.remove(lock)


def _packed(b: Bounds) -> dict[str, str]:
    """``packed-refs`` as ref → object (peeled lines left out)."""
    out = {}
    for line in (_read(join(b.common, "packed-refs"), 1 << 24) or "").splitlines():
        value, _, ref = line.partition(" ")
        if len(value) in (40, 64) and ref.startswith("refs/") and ".." not in ref.split("/"):
            out[ref] = value
    return out


def others(b: Bounds) -> list[str]:
    """The folders an agent in this workspace must not write: the main checkout
    and every other worktree of the repository (each named by its admin
    folder's ``gitdir``), real paths."""
    out = [os.path.realpath(b.main)] if b.main else []
    for name in _names(join(b.common, "worktrees")):
        if name == os.path.basename(b.admin):
            continue
        text = _read(join(b.common, "worktrees", name, "gitdir"))
        if text:
            out.append(os.path.realpath(os.path.dirname(text)))
    return out


def is_branch(b: Bounds, name: str) -> bool:
    """Is ``name`` (``main``, ``refs/heads/main``) an existing local branch?
    Loose ref files and ``packed-refs`` are read; no git process."""
    short = name[len("refs/heads/") :] if name.startswith("refs/heads/") else name
    if not short or ".." in short.split("/") or short.startswith("/"):
        return False
    if os.path.isfile(join(b.common, "refs", "heads", short)):
        return True
    return f" refs/heads/{short}\n" in (_read(join(b.common, "packed-refs"), 16 * 1024 * 1024) or "") + "\n"
