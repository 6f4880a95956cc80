"""What a turn created in the shared git folder, found and moved out after it
(issue #38).

Claude Code's sandbox makes a worktree's whole common dir (the main checkout's
``.git``) writable and can keep read-only only the paths that exist when the
turn starts (``rules/workspace_bounds.guarded``): a program the agent runs can
still *create* ``MERGE_HEAD``, ``shallow``, ``config.worktree``, ``hooks/``,
``refs/stash``, ``refs/heads/evil``, a future card's ``refs/heads/loopx/LX-99``
(its workspace would check the planted commits out), a reflog under ``logs/``.
A sandbox cannot deny a path that does not exist without a placeholder that
breaks the person's git, so LoopX detects and undoes it instead:

- ``begin`` (before a turn: the runner, ``workspace start``) records what exists
  in ``<common>/loopx-turns/<worktree>.json`` — a folder ``prepare`` makes
  before the sandbox is given its paths, so the turn cannot edit the record: the
  common dir's top-level names, every path under ``refs/`` and ``logs/``, the
  refs' (inode, mtime, size) and ``packed-refs``' hash. No git process.
- ``sweep`` (after the turn: the runner, the Stop hook; and ``sweep_all`` before
  any read for the person, beside the object quarantine in ``quarantine.admitted``)
  moves every new entry that is not the turn's own to
  ``<common>/worktrees/<name>/loopx-refused/<time>/<its path>``, and says which
  (and which existing refs changed: the sandbox keeps them, so that is news).

A turn's own: its worktree's admin folder (``worktrees/`` is not swept at all:
an admin folder only matters to the worktree it names), its branch's ref and
reflog, anything under ``refs/loopx/`` (made before the turn, kept read-only by
the sandbox: only LoopX writes there), and another card's branch that a real
LoopX workspace beside this one has checked out (made by LoopX meanwhile: its
folder is in the workspace root, which the turn cannot write). Without a
record (no turn running) nothing is touched: a person's own ``MERGE_HEAD``
between turns is theirs. A record whose process is gone is dropped, unswept.
A ``*.lock`` is never moved: some git holds it mid-update (moving it breaks
that update), and git never reads one as a ref — a stale one only makes git
refuse.

Standard library only: the runner's per-turn cost is two walks of ``refs/`` and
``logs/``.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
import time
from collections import namedtuple

TYPE_CHECKING = False  # (annotations only; checkers read this as typing's)
if TYPE_CHECKING:
    from typing import Protocol

    class SweptBounds(Protocol):
        """A card's workspace (``rules.workspace_bounds.Bounds``; the git plumbing imports no rules)."""

        @property
        def workspace(self) -> str: ...
        @property
        def admin(self) -> str: ...
        @property
        def common(self) -> str: ...
        @property
        def branch(self) -> str | None: ...


TURNS = "loopx-turns"  # (rules/workspace_bounds.TURNS, which prepare makes: the workspace layer does not import rules)
REFUSED = "loopx-refused"
Swept = namedtuple(
    "Swept", "moved changed where"
)  # paths (relative to the common dir) moved out; existing refs changed; the folder they went to


def _record(common: str, admin: str) -> str:
    return os.path.join(common, TURNS, os.path.basename(admin) + ".json")


def _walk(common: str, top: str) -> dict[str, list[int] | None]:
    """Every path under ``common/top``: a file's (inode, mtime, size) for refs,
    None for a folder or a reflog."""
    out: dict[str, list[int] | None] = {}
    base = os.path.join(common, top)
    for folder, dirs, files in os.walk(base):
        rel = os.path.relpath(folder, common).replace(os.sep, "/")
        for d in dirs:
            out[f"{rel}/{d}"] = None
        for f in files:
            if top == "refs":
                try:
                    st = os.lstat(os.path.join(folder, f))
                    out[f"{rel}/{f}"] = [st.st_ino, st.st_mtime_ns, st.st_size]
                except OSError:
                    continue
            else:
                out[f"{rel}/{f}"] = None
    return out


def _packed_hash(common: str) -> str | None:
    try:
        with open(os.path.join(common, "packed-refs"), "rb") as fh:
            return hashlib.sha1(fh.read()).hexdigest()
    except OSError:
        return None


def _state(common: str) -> dict:
    try:
        top = sorted(os.listdir(common))
    except OSError:
        top = []
    return {
        "top": top,
        "refs": _walk(common, "refs"),
        "logs": sorted(_walk(common, "logs")),
        "packed": _packed_hash(common),
    }


def begin(b: SweptBounds, pid: int | None = None) -> None:
    """Record what the common dir holds before a turn in the workspace ``b``
    (``pid``: the process the turn runs under; a record whose process is gone
    is stale)."""
    record = {
        "pid": pid or os.getpid(),
        "workspace": b.workspace,
        "admin": b.admin,
        "branch": b.branch,
        "at": time.time(),
        **_state(b.common),
    }
    path = _record(b.common, b.admin)
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        temp = f"{path}.{os.getpid()}.tmp"
        with open(temp, "w", encoding="utf-8") as fh:
            json.dump(record, fh)
        os.replace(temp, path)
    except OSError:
        pass  # not ours to write (a read-only repository): nothing can be swept then


def end(b: SweptBounds) -> Swept:
    """After the turn: ``sweep``, then the record dropped (no turn runs now).
    Says what this sweep and the earlier ones of the turn (before a read) found."""
    got = sweep(b.common, b.admin)
    record = _load(_record(b.common, b.admin)) or {}
    try:
        os.unlink(_record(b.common, b.admin))
    except OSError:
        pass
    moved = sorted(set(record.get("swept") or []) | set(got.moved))
    changed = sorted(set(record.get("changes") or []) | set(got.changed))
    return Swept(moved, changed, got.where or record.get("kept_in"))


def _load(path: str) -> dict | None:
    try:
        with open(path, encoding="utf-8") as fh:
            record = json.load(fh)
    except (OSError, ValueError):
        return None
    return record if isinstance(record, dict) and isinstance(record.get("top"), list) else None


def _alive(pid: object) -> bool:
    if not isinstance(pid, int) or pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # (someone else's process: alive)
    return True


def _read(path: str) -> str:
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            return fh.read(4096).strip()
    except OSError:
        return ""


def _other_workspaces(common: str, own_workspace: str) -> set[str]:
    """The branches (``refs/heads/…``) that LoopX workspaces beside ``own_workspace``
    have checked out: an admin folder whose ``gitdir`` names a ``.git`` file in
    the same workspace root (which a turn cannot write), linking back."""
    root = os.path.dirname(os.path.normpath(own_workspace))
    out: set[str] = set()
    base = os.path.join(common, "worktrees")
    try:
        names = os.listdir(base)
    except OSError:
        return out
    for name in names:
        admin = os.path.join(base, name)
        gitdir = _read(os.path.join(admin, "gitdir"))
        folder = os.path.dirname(gitdir)
        if not gitdir or os.path.dirname(folder) != root or folder == os.path.normpath(own_workspace):
            continue
        link = _read(gitdir)
        if not link.startswith("gitdir:") or os.path.realpath(link[len("gitdir:") :].strip()) != os.path.realpath(
            admin
        ):
            continue
        head = _read(os.path.join(admin, "HEAD"))
        if head.startswith("ref: refs/heads/"):
            out.add(head[len("ref: ") :])
    return out


def _inert(common: str, rel: str) -> bool:
    """An entry git never reads, which may be another turn's sandbox at work:
    a name under refs/ or logs/ with a component git refuses (``.git``,
    ``.codex``: Codex binds its protected names in each writable root, Claude
    Code binds placeholders over denied paths), an empty folder, or a device
    (a placeholder bound over a path). Moving one out from under a running
    turn's sandbox breaks that turn; leaving it misleads no git."""
    parts = rel.split("/")
    if parts[0] in ("refs", "logs") and any(p.startswith(".") for p in parts[1:]):
        return True
    path = os.path.join(common, *parts)
    if rel == "packed-refs":
        return _names_no_ref(path)
    try:
        mode = os.lstat(path).st_mode
    except OSError:
        return True
    if stat.S_ISDIR(mode):
        try:
            return not os.listdir(path)
        except OSError:
            return True
    # A device is a sandbox's placeholder; a link is followed by git, and a FIFO
    # would hang the person's next git reading it: both are swept.
    return stat.S_ISCHR(mode) or stat.S_ISBLK(mode)


def _names_no_ref(path: str) -> bool:
    """A ``packed-refs`` that names no ref (its header only: what another
    runner's ``workspace_bounds.prepare`` makes before a sandboxed turn, so the
    sandbox has a path to keep read-only) shows git nothing: left in place.
    Moving it out from under that sandbox was a false alarm on this card."""
    try:
        with open(path, "rb") as fh:
            text = fh.read(4097)
    except OSError:
        return False
    return len(text) <= 4096 and all(not line.strip() or line.startswith(b"#") for line in text.splitlines())


def _allowed(rel: str, own: set[str], others: set[str]) -> bool:
    if rel.endswith(".lock"):
        return True  # a git at work holds it (moving it would break that git's update); git never reads one as a ref
    if rel == "worktrees" or rel.startswith("worktrees/") or rel == TURNS or rel.startswith(TURNS + "/"):
        return True
    if rel == "refs/loopx" or rel.startswith("refs/loopx/"):
        return True
    if rel in own:
        return True
    bare = rel[len("logs/") :] if rel.startswith("logs/") else rel
    if bare in own:
        return True
    return bare in others


def sweep(common: str, admin: str) -> Swept:
    """Move out of the common dir what was created there since the turn's
    record (``begin``) and is not the turn's own; nothing without a record."""
    path = _record(common, admin)
    record = _load(path)
    if record is None:
        return Swept([], [], None)
    now = _state(common)
    before_paths = set(record["top"]) | set(record.get("refs") or {}) | set(record.get("logs") or [])
    new = [p for p in [*now["top"], *now["refs"], *now["logs"]] if p not in before_paths]
    branch = record.get("branch")
    own = {f"refs/heads/{branch}"} if isinstance(branch, str) and branch else set()
    others: set[str] | None = None
    moved: list[str] = []
    where = os.path.join(admin, REFUSED, time.strftime("%Y%m%dT%H%M%S", time.gmtime()) + f"-{os.getpid()}")
    new.sort()
    for rel in new:
        if any(rel.startswith(m + "/") for m in moved):
            continue  # inside a folder already moved out
        if others is None and (rel.startswith("refs/heads/loopx/") or rel.startswith("logs/refs/heads/loopx/")):
            others = _other_workspaces(common, str(record.get("workspace") or ""))
        if _allowed(rel, own, others or set()) or _inert(common, rel):
            continue
        if any(q.startswith(rel + "/") and _allowed(q, own, others or set()) for q in new):
            continue  # a new folder holding something allowed: its other entries one by one
        source = os.path.join(common, *rel.split("/"))
        target = os.path.join(where, *rel.split("/"))
        try:
            os.makedirs(os.path.dirname(target), exist_ok=True)
            os.replace(source, target)
        except FileNotFoundError:
            continue  # gone meanwhile (a git's lock file, another sweep)
        except OSError:
            continue  # (not ours to move: said nowhere, found again next time)
        moved.append(rel)
    changed = [
        ref
        for ref, stat in (record.get("refs") or {}).items()
        if stat is not None
        and not ref.startswith(("refs/loopx/", "refs/heads/loopx/"))
        and ref not in own
        and now["refs"].get(ref) not in (None, stat)
    ]
    if record.get("packed") is not None and now["packed"] not in (None, record["packed"]):
        changed.append("packed-refs")
    if moved or changed:
        _remember(path, record, moved, changed, where if moved else None)
    return Swept(moved, sorted(changed), where if moved else None)


def _remember(path: str, record: dict, moved: list[str], changed: list[str], where: str | None) -> None:
    """A sweep before a read (mid-turn) leaves what it found in the record, so
    that the sweep at the turn's end reports it with its own; the changed refs'
    new state becomes the one compared to (each change said once)."""
    record["swept"] = sorted(set(record.get("swept") or []) | set(moved))
    record["changes"] = sorted(set(record.get("changes") or []) | set(changed))
    record["kept_in"] = where or record.get("kept_in")
    now = _walk(os.path.dirname(os.path.dirname(path)), "refs")
    record["refs"] = {**(record.get("refs") or {}), **{r: now[r] for r in changed if r in now}}
    record["packed"] = _packed_hash(os.path.dirname(os.path.dirname(path)))
    temp = f"{path}.{os.getpid()}.tmp"
    try:
        with open(temp, "w", encoding="utf-8") as fh:
            json.dump(record, fh)
        os.replace(temp, path)
    except OSError:
        pass


def sweep_all(common: str) -> list[Swept]:
    """``sweep`` for every turn running in the repository (before LoopX reads
    it for the person); a record whose process is gone is dropped."""
    folder = os.path.join(common, TURNS)
    try:
        names = sorted(n for n in os.listdir(folder) if n.endswith(".json"))
    except OSError:
        return []
    out = []
    for name in names:
        record = _load(os.path.join(folder, name))
        if record is None or not _alive(record.get("pid")) or not isinstance(record.get("admin"), str):
            try:
                os.unlink(os.path.join(folder, name))
            except OSError:
                pass
            continue
        out.append(sweep(common, record["admin"]))
    return out


def owner(b: SweptBounds) -> int | None:
    """The process of the turn recorded for the workspace ``b`` (None: no record)."""
    record = _load(_record(b.common, b.admin))
    pid = record.get("pid") if record is not None else None
    return pid if isinstance(pid, int) else None
