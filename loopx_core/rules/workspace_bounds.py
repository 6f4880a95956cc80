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

Standard library only, no git process: the runner asks before every turn and
the PreToolUse hook on its cold path.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import NamedTuple

# The runtimes' settings a workspace may hold (its checkout of the project's
# committed files): a session started there reads them.
SETTINGS_FILES = (".claude/settings.json", ".claude/settings.local.json", ".mcp.json", ".codex", ".loopx")


class Bounds(NamedTuple):
    workspace: Path  # the linked worktree's top folder
    admin: Path  # its admin folder in the main repository: <common>/worktrees/<name>
    common: Path  # the main repository's git folder
    branch: str | None  # the branch checked out there ("loopx/LX-7"), None when detached
    main: Path | None  # the main checkout (the folder holding the common dir), None for a bare repository

    @property
    def ref(self) -> Path | None:
        return self.common / "refs" / "heads" / self.branch if self.branch else None


def _read(path: Path) -> str | None:
    try:
        with open(path, encoding="utf-8", errors="surrogateescape") as fh:
            return fh.read(4096).strip()
    except OSError:
        return None


def find(start) -> Bounds | None:
    """The bounds of the linked worktree holding ``start``; None when ``start`` is
    in a main checkout, a submodule, a plain folder, or cannot be read."""
    here = Path(os.path.abspath(start))
    for folder in (here, *here.parents):
        dot_git = folder / ".git"
        if dot_git.is_dir():
            return None  # a main checkout
        if not dot_git.is_file():
            continue
        text = _read(dot_git) or ""
        if not text.startswith("gitdir:"):
            return None
        admin = Path(os.path.normpath(folder / text[len("gitdir:"):].strip()))
        common_text = _read(admin / "commondir")
        if common_text is None or admin.parent.name != "worktrees":
            return None  # a submodule's git folder, or something else
        common = Path(os.path.normpath(admin / common_text))
        head = _read(admin / "HEAD") or ""
        branch = head[len("ref: refs/heads/"):] if head.startswith("ref: refs/heads/") else None
        main = common.parent if common.name == ".git" else None
        return Bounds(folder, admin, common, branch, main)
    return None


def _git_targets(b: Bounds) -> list[tuple[str, ...]]:
    """The writable git paths, relative to the common dir, as path parts."""
    targets = [("objects",), ("worktrees", b.admin.name)]
    if b.branch:
        parent = tuple(b.branch.split("/")[:-1])
        targets += [("refs", "heads", *parent), ("logs", "refs", "heads", *parent)]
    return targets


def writable(b: Bounds) -> list[str]:
    """The workspace and the git paths a commit there writes (those that exist)."""
    paths = [b.workspace, *(b.common.joinpath(*t) for t in _git_targets(b))]
    return [str(p) for p in paths if p.exists()]


def guarded(b: Bounds) -> list[str]:
    """Existing entries of the common dir beside the paths down to the writable
    ones; inside the branch's ref and reflog folders every other entry; in the
    workspace's admin folder the two files that tie it to the repository."""
    targets = _git_targets(b)
    ref_folders = {t for t in targets if t[:2] in (("refs", "heads"), ("logs", "refs"))}
    out: list[str] = []

    def walk(folder: Path, above: tuple[str, ...]) -> None:
        for name in _names(folder):
            parts = (*above, name)
            if parts in ref_folders:
                out.extend(str(folder / name / n) for n in _names(folder / name) if n != b.branch.split("/")[-1])
            elif parts in targets:
                continue  # writable as a whole
            elif any(t[: len(parts)] == parts for t in targets):
                walk(folder / name, parts)  # on the way down to a writable path
            else:
                out.append(str(folder / name))

    walk(b.common, ())
    out += [str(b.admin / n) for n in ("gitdir", "commondir") if (b.admin / n).exists()]
    return out


def _names(folder: Path) -> list[str]:
    try:
        return sorted(os.listdir(folder))
    except OSError:
        return []


def inside_writable(b: Bounds, paths: list[str]) -> list[str]:
    """Those of ``paths`` inside a writable git path (Codex keeps the rest of the
    common dir read-only by itself)."""
    roots = [b.common.joinpath(*t) for t in _git_targets(b)]
    return [p for p in paths if any(Path(p) != r and r in Path(p).parents for r in roots)]


def settings_files(b: Bounds) -> list[str]:
    return [str(b.workspace / rel) for rel in SETTINGS_FILES]


def ensure_packed_refs(b: Bounds) -> None:
    """Make sure the common dir's ``packed-refs`` exists (empty is valid to git), so
    that a sandbox that binds only existing paths can keep it read-only: a
    ``packed-refs`` the agent creates could name refs for git to find."""
    path = b.common / "packed-refs"
    if not path.exists():
        try:
            with open(path, "x", encoding="utf-8") as fh:
                fh.write("# pack-refs with: peeled fully-peeled sorted \n")
        except OSError:
            pass  # made meanwhile, or the repository is not ours to write: nothing to guard then
