"""The git plumbing a card's workspace needs (issue #26), over the real ``git``.

Standard library only. Every call is an argument list (never a shell), has a
timeout, and runs with options that keep a person's own configuration from
running programs: no hooks (``core.hooksPath`` points at an empty place), no
pager, no fsmonitor, no external diff, no prompt for credentials. And no
optional lock (``GIT_OPTIONAL_LOCKS=0``, whatever the caller's environment
says): LoopX reads a workspace while its agent commits there, and a ``git
status`` that refreshed the index would hold the ``index.lock`` the agent's
commit needs (it dies with "File exists"; tests/kernel/test_git_reads_take_no_lock.py). Output is
read in the C locale. A failing command raises ``GitError`` naming it and
git's own message.

Saving uncommitted work never touches the work tree or its index: the work
tree's index is copied to a temporary file (keeping its stat cache, so only
changed files are hashed), ``add -A`` stages everything there — untracked
files too, ignored ones not — ``write-tree`` names the tree and
``commit-tree`` makes a commit on top of HEAD that a LoopX ref then keeps
(``git stash create`` would leave untracked files out).
"""

from __future__ import annotations

import io
import os
import shutil
import subprocess
import tempfile
from collections import namedtuple
from pathlib import Path

from . import git_settings

TYPE_CHECKING = False  # (annotations only; checkers read this as typing's)
if TYPE_CHECKING:
    from collections.abc import Iterable

    StrPath = str | os.PathLike[str]  # a path as a string or a Path

TIMEOUT = 60.0  # seconds for one git command; a worktree add on a big repository fits
WIP_AUTHOR = ("LoopX", "loopx@localhost")

# Options given before every subcommand: a person's hooks, pager, fsmonitor and
# external diff never run from LoopX's calls.
SAFE = (
    "-c",
    f"core.hooksPath={os.devnull}",
    "-c",
    "core.pager=cat",
    "-c",
    "core.fsmonitor=false",
    "-c",
    "diff.external=",
    "-c",
    "advice.detachedHead=false",
    "-c",
    "gc.auto=0",
    "-c",
    "core.bigFileThreshold=1m",  # a larger blob counts as binary in a diff: read in bounded time (#38)
)


class GitError(Exception):
    """A git command that failed (or is missing, or ran out of time)."""

    def __init__(self, message: str, args: tuple = ()):
        super().__init__(message)
        self.message = message
        self.argv = args


def _env(extra: dict | None = None) -> dict:
    # A caller's git environment never steers LoopX's calls: GIT_DIR, GIT_CONFIG_*,
    # GIT_EXEC_PATH, GIT_OBJECT_DIRECTORY, GIT_SSH_COMMAND … all dropped (an agent's
    # process runs `loopx` too), only the person's identity kept. Replace refs are
    # ignored: `refs/replace/<commit>` makes git show another commit in its place
    # (what the person is shown and merged must be the objects themselves).
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_") or k in git_settings.KEPT_ENV}
    env.update(
        {
            "LC_ALL": "C",
            "GIT_TERMINAL_PROMPT": "0",
            "GIT_PAGER": "cat",
            "GIT_OPTIONAL_LOCKS": "0",
            "GIT_NO_REPLACE_OBJECTS": "1",
        }
    )
    if extra:
        env.update(extra)
    return env


_WHERE: dict[str, tuple[str, str]] = {}  # cwd -> (its git folder, the common one), as git resolves them


def _where(cwd: StrPath) -> tuple[str, str] | None:
    key = str(cwd)
    known = _WHERE.get(key)
    if known is None or not os.path.isdir(known[0]):  # (a worktree removed and made again: asked again)
        try:
            done = subprocess.run(
                ("git", "rev-parse", "--path-format=absolute", "--git-dir", "--git-common-dir"),
                cwd=key,
                env=_env(),
                stdin=subprocess.DEVNULL,
                capture_output=True,
                timeout=TIMEOUT,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired):
            return None  # (not cached: the call itself says what is wrong)
        parts = done.stdout.decode("utf-8", "surrogateescape").splitlines()
        if done.returncode != 0 or len(parts) != 2:
            return None
        known = _WHERE[key] = (parts[0], parts[1])
    return known


QUARANTINE = "loopx-objects"  # a worktree's own object folder, in its private git folder (quarantine.py)


def quarantine_folder(admin: str) -> str:
    """The object quarantine of the worktree whose private git folder is ``admin``."""
    return os.path.join(admin, QUARANTINE)


def _quarantine_env(cwd: StrPath) -> dict[str, str]:
    """In a linked worktree whose turns have an object quarantine
    (``quarantine.py``), LoopX's git reads the quarantine too (the turn's
    commits are there until checked). It writes into the shared store when it
    may (the runner, the MCP server: outside the sandbox), else into the
    quarantine, as the turn's git does (``loopx`` run inside the sandbox)."""
    where = _where(cwd)
    if where is None or where[0] == where[1]:
        return {}
    folder, store = quarantine_folder(where[0]), os.path.join(where[1], "objects")
    if not os.path.isdir(folder):
        return {}
    if os.access(store, os.W_OK):
        return {"GIT_ALTERNATE_OBJECT_DIRECTORIES": folder}
    return {"GIT_OBJECT_DIRECTORY": folder, "GIT_ALTERNATE_OBJECT_DIRECTORIES": store}


def _call(
    cwd: StrPath, args: tuple, env: dict | None, timeout: float, stdin: bytes | None = None
) -> subprocess.CompletedProcess:
    # the repository's own programs blanked first, LoopX's SAFE settings after them (the last `-c` wins)
    argv = ("git", *repository_programs(cwd), *SAFE, *args)
    try:
        return subprocess.run(
            argv,
            cwd=str(cwd),
            env={**_env(), **_quarantine_env(cwd), **(env or {})},
            input=stdin,
            stdin=None if stdin is not None else subprocess.DEVNULL,
            capture_output=True,
            timeout=timeout,
            check=False,
        )
    except FileNotFoundError as exc:
        raise GitError("git is not installed (or not on PATH)", args) from exc
    except subprocess.TimeoutExpired as exc:
        raise GitError(f"`git {' '.join(args[:2])}` took longer than {timeout:g}s", args) from exc


# -- what the repository's own config would run -------------------------------------------
#
# An agent can write the repository's config (without the sandbox; its worktree's
# `config.worktree`; an `include.path` file): a filter, diff or merge driver, a
# `submodule.x.update = !cmd`, a gpg program … set there would run as the person
# in LoopX's git. Every such setting the repository's own files set (scope local
# or worktree, includes followed) is blanked with `-c key=` — git then runs no
# program for it (a `required` filter fails the call instead). The person's own
# global and system settings are theirs and stay. Listed once per state of the
# files that said them (their size and time), so a long-lived process notices
# an edit and a short one pays one `git config` call.

_PROGRAMS: dict[str, tuple[tuple, tuple[str, ...]]] = {}  # cwd -> (the files' stat, the -c blanks)


def _stat(paths: Iterable[str]) -> tuple[tuple[object, ...], ...]:  # (each: the path and its stat, or None)
    out: list[tuple[object, ...]] = []
    for p in paths:
        try:
            st = os.stat(p)
            out.append((p, st.st_mtime_ns, st.st_size, st.st_ino))
        except OSError:
            out.append((p, None))
    return tuple(out)


def repository_programs(cwd: StrPath) -> tuple[str, ...]:
    """``-c KEY=`` for every program-running setting the repository at ``cwd``
    sets in its own config files (none outside a repository)."""
    key = str(cwd)
    known = _PROGRAMS.get(key)
    if known is not None and _stat(p for p, *_ in known[0]) == known[0]:
        return known[1]
    try:
        done = subprocess.run(
            ("git", "config", "--show-origin", "--show-scope", "-z", "--get-regexp", "."),
            cwd=key,
            env=_env(),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=TIMEOUT,
            check=False,
        )
    except OSError:
        return ()  # no such folder (or no git): the call itself says so
    except subprocess.TimeoutExpired as exc:
        raise GitError("git could not list the repository's settings in time", ()) from exc
    import re

    runs = re.compile(git_settings.RUNS_A_PROGRAM)
    found = _where(key)
    files = {os.path.join(d, n) for d in (found or ()) for n in ("config", "config.worktree")}
    names: dict[str, None] = {}
    fields = done.stdout.decode("utf-8", "surrogateescape").split("\0")
    for scope, origin, entry in zip(fields[0::3], fields[1::3], fields[2::3], strict=False):
        name, _, value = entry.partition("\n")
        if origin.startswith("file:"):
            files.add(os.path.join(key, origin[5:]))
            if name.lower().startswith(("include.", "includeif.")) and name.lower().endswith(".path"):
                files.add(
                    os.path.join(key, os.path.dirname(origin[5:]), os.path.expanduser(value))
                )  # a file it may read later
        if (
            scope in ("local", "worktree")
            and runs.match(name)
            and not name.lower().startswith(("alias.", "include.", "includeif."))
        ):
            names[name] = None
    result = tuple(a for name in names for a in ("-c", f"{name}="))
    _PROGRAMS[key] = (_stat(sorted(files)), result)
    return result


def git(
    cwd: StrPath,
    *args: str,
    env: dict | None = None,
    timeout: float = TIMEOUT,
    ok: tuple[int, ...] = (0,),
    stdin: bytes | None = None,
) -> str:
    """Run ``git ARGS`` in ``cwd``; its stdout (raises ``GitError`` on another exit code)."""
    done = _call(cwd, args, env, timeout, stdin)
    if done.returncode not in ok:
        said = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise GitError(f"`git {' '.join(args[:3])}` failed: {said[-1] if said else f'exit {done.returncode}'}", args)
    return done.stdout.decode("utf-8", "surrogateescape")


def stream(cwd: StrPath, *args: str, limit: int, timeout: float = TIMEOUT) -> tuple[bytes, bool]:
    """``git ARGS``'s stdout, read as it comes and cut at ``limit`` bytes: at
    most ``limit`` bytes are held, and git is stopped once they are read
    (whatever the repository holds). Returns (the bytes, whether more came)."""
    import threading

    argv = ("git", *repository_programs(cwd), *SAFE, *args)  # as _call: the repository's own programs blanked
    try:
        proc = subprocess.Popen(
            argv,
            cwd=str(cwd),
            env={**_env(), **_quarantine_env(cwd)},
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
    except FileNotFoundError as exc:
        raise GitError("git is not installed (or not on PATH)", args) from exc
    out = proc.stdout
    assert isinstance(out, io.BufferedReader)
    late = threading.Timer(timeout, proc.kill)  # a git that stalls is stopped, not waited on
    late.daemon = True
    late.start()
    chunks: list[bytes] = []
    held, cut = 0, False
    try:
        while True:
            chunk = out.read1(min(65536, limit + 1 - held))
            if not chunk:
                break
            chunks.append(chunk)
            held += len(chunk)
            if held > limit:
                cut = True
                break
    finally:
        late.cancel()
        if proc.poll() is None:
            proc.kill()
        out.close()
        code = proc.wait()
    if not cut and code != 0:
        why = f"took longer than {timeout:g}s" if code < 0 else f"failed: exit {code}"
        raise GitError(f"`git {' '.join(args[:2])}` {why}", args)
    return b"".join(chunks)[:limit], cut


def _line(
    cwd: StrPath, *args: str, env: dict[str, str] | None = None, timeout: float = TIMEOUT, ok: tuple[int, ...] = (0,)
) -> str:
    return git(cwd, *args, env=env, timeout=timeout, ok=ok).strip()


# -- where ------------------------------------------------------------------------------


def toplevel(path: StrPath) -> Path | None:
    """The work tree ``path`` is in (a worktree's own folder), or None when it is in no repository."""
    try:
        out = _line(path, "rev-parse", "--show-toplevel")
    except (GitError, OSError):
        return None
    return Path(out) if out else None


def common_dir(path: StrPath) -> Path | None:
    """The repository's shared ``.git`` folder (the same from every worktree), or None."""
    try:
        out = _line(path, "rev-parse", "--path-format=absolute", "--git-common-dir")
    except (GitError, OSError):
        return None
    return Path(out)


def main_checkout(path: StrPath) -> Path | None:
    """The main worktree of the repository ``path`` is in (where the project's
    ``.loopx/`` lives), or None (not a repository, or a bare one)."""
    common = common_dir(path)
    if common is None or common.name != ".git":
        return None
    return common.parent


def branch(path: StrPath) -> str | None:
    """The checked-out branch (``loopx/LX-7``), or None when HEAD is detached."""
    out = _line(path, "symbolic-ref", "--quiet", "--short", "HEAD", ok=(0, 1))
    return out or None


def head(path: StrPath) -> str | None:
    """HEAD's commit, or None in a repository without commits."""
    out = _line(path, "rev-parse", "--verify", "--quiet", "HEAD^{commit}", ok=(0, 1))
    return out or None


def resolve(path: StrPath, rev: str) -> str | None:
    out = _line(path, "rev-parse", "--verify", "--quiet", "--end-of-options", f"{rev}^{{commit}}", ok=(0, 1))
    return out or None


def base_branch(path: StrPath) -> str | None:
    """The branch the main checkout ``path`` is on: where a new card's branch
    starts by default (read from its ``.git/HEAD`` when it says so plainly)."""
    try:
        with open(os.path.join(path, ".git", "HEAD"), encoding="utf-8") as fh:
            said = fh.read(512).strip()
    except OSError:
        said = ""
    if said.startswith("ref: refs/heads/"):
        return said[len("ref: refs/heads/") :]
    return branch(path)


# -- worktrees --------------------------------------------------------------------------


def branch_exists(repo: StrPath, name: str) -> bool:
    return bool(_line(repo, "rev-parse", "--verify", "--quiet", f"refs/heads/{name}", ok=(0, 1)))


def worktree_add(repo: StrPath, path: StrPath, new_branch: str, base: str) -> bool:
    """``git worktree add -b NEW PATH BASE`` (True), or check out ``NEW`` when
    it already exists (False: its HEAD is wherever that branch is)."""
    try:
        git(repo, "worktree", "add", "-b", new_branch, "--end-of-options", str(path), base)
        return True
    except GitError:
        if not branch_exists(repo, new_branch):
            raise
        git(repo, "worktree", "add", "--end-of-options", str(path), new_branch)
        return False


def prune_worktrees(repo: StrPath) -> None:
    """Make git forget worktrees whose folders are gone (``add`` refuses a
    folder git still lists as a worktree, even a deleted one)."""
    git(repo, "worktree", "prune")


def worktree_remove(repo: StrPath, path: StrPath) -> None:
    """Remove the worktree folder and git's record of it (its branch and refs stay)."""
    if Path(path).exists():
        git(repo, "worktree", "remove", "--force", "--end-of-options", str(path))
    git(repo, "worktree", "prune")


def worktrees(repo: StrPath) -> list[Path]:
    out = git(repo, "worktree", "list", "--porcelain")
    return [Path(line[9:]) for line in out.splitlines() if line.startswith("worktree ")]


# -- code state -------------------------------------------------------------------------


def commits_between(path: StrPath, since: str | None, until: str = "HEAD") -> list[str]:
    """Commits reachable from ``until`` but not ``since``, oldest first (all of them when ``since`` is None)."""
    spec = f"{since}..{until}" if since else until
    return git(path, "rev-list", "--reverse", "--end-of-options", spec).split()


def is_ancestor(repo: StrPath, older: str, newer: str) -> bool:
    """Whether ``older`` is in ``newer``'s history (a branch merged into the base)."""
    return _call(repo, ("merge-base", "--is-ancestor", older, newer), None, TIMEOUT).returncode == 0


Snapshot = namedtuple("Snapshot", "head tree dirty")


def snapshot(path: StrPath) -> Snapshot:
    """The work tree as a tree object (tracked and untracked files, ignored ones
    not), without touching the work tree or its index; ``dirty``: it differs from HEAD."""
    index = Path(_line(path, "rev-parse", "--path-format=absolute", "--git-path", "index"))
    top = head(path)
    fd, temp = tempfile.mkstemp(prefix="loopx-index-")
    os.close(fd)
    try:
        if index.exists():
            shutil.copyfile(index, temp)
        else:
            os.unlink(temp)  # git makes a fresh index file itself
        env = {"GIT_INDEX_FILE": temp}
        git(path, "add", "--all", "--", ".", env=env)
        tree = _line(path, "write-tree", env=env)
    finally:
        if os.path.exists(temp):
            os.unlink(temp)
    head_tree = resolve_tree(path, top) if top else None
    return Snapshot(top, tree, tree != head_tree)


def git_dir(path: StrPath) -> str | None:
    """The worktree's own git folder (a linked worktree's admin folder), or None."""
    where = _where(path)
    return where[0] if where else None


def uncommitted(path: StrPath, excludes: str | None = None, limit: int = 200) -> list[str]:
    """The work tree's paths that are not as HEAD has them, sorted: tracked
    files edited, staged or deleted, and untracked files ``git add -A`` would
    take (ignored ones not; ``excludes``: an ignore file read besides the
    person's, as a turn's git reads it). At most ``limit``. A read: like every
    call here it takes no optional lock (``GIT_OPTIONAL_LOCKS=0``)."""
    ignore = ("-c", f"core.excludesFile={excludes}") if excludes else ()
    out = git(path, *ignore, "status", "--porcelain=v1", "-z", "--untracked-files=all", "--no-renames")
    names = sorted({entry[3:] for entry in out.split("\0") if len(entry) > 3})
    return names[:limit]


def resolve_tree(path: StrPath, commit: str) -> str:
    return _line(path, "rev-parse", "--verify", f"{commit}^{{tree}}")


def save_wip(
    path: StrPath, ref_prefix: str, snap: Snapshot | None = None, message: str = "LoopX: uncommitted work"
) -> str | None:
    """Keep the work tree's uncommitted changes as a commit on top of HEAD under
    ``ref_prefix/<commit>`` (a LoopX ref). None when there is nothing uncommitted."""
    snap = snap or snapshot(path)
    if not snap.dirty:
        return None
    name, email = WIP_AUTHOR
    env = {"GIT_AUTHOR_NAME": name, "GIT_AUTHOR_EMAIL": email, "GIT_COMMITTER_NAME": name, "GIT_COMMITTER_EMAIL": email}
    parents = ("-p", snap.head) if snap.head else ()
    commit = _line(path, "commit-tree", snap.tree, *parents, "-m", message, env=env)
    git(path, "update-ref", f"{ref_prefix}/{commit}", commit)
    return commit


def restore(path: StrPath, wip: str) -> bool:
    """Put a saved WIP commit's files back into the work tree (index untouched)
    when the work tree lost them: only when HEAD is still the commit it was
    made on and the work tree has nothing uncommitted. True when it restored."""
    parent = resolve(path, f"{wip}^")
    now = snapshot(path)
    if now.head != parent or now.tree == resolve_tree(path, wip):
        return False
    if now.dirty:
        return False  # newer work is there: never overwrite it
    git(path, "restore", f"--source={wip}", "--worktree", "--", ".")
    return True


def diff_stat(path: StrPath, base: str, tree: str) -> dict:
    """Files, insertions and deletions from ``base`` to ``tree`` (``--numstat``)."""
    out = git(path, "diff", "--no-ext-diff", "--no-textconv", "--no-renames", "--numstat", base, tree)
    files = insertions = deletions = 0
    for line in out.splitlines():
        added, removed, _ = (line.split("\t", 2) + ["", ""])[:3]
        files += 1
        insertions += int(added) if added.isdigit() else 0
        deletions += int(removed) if removed.isdigit() else 0
    return {"files": files, "insertions": insertions, "deletions": deletions}


def missing(repo: StrPath, commits: Iterable[str]) -> list[str]:
    """Which of ``commits`` the repository no longer has (``cat-file --batch-check``).
    A commit a turn made is in its workspace's quarantine until checked: callers
    run ``quarantine.admitted(repo)`` first."""
    wanted = [c for c in dict.fromkeys(commits) if c]
    if not wanted:
        return []
    out = git(repo, "cat-file", "--batch-check=%(objectname) %(objecttype)", stdin=("\n".join(wanted) + "\n").encode())
    answers = out.splitlines()
    return [c for c, said in zip(wanted, answers, strict=False) if not said.endswith(" commit")]


def unreached(repo: StrPath, commits: Iterable[str], tips: Iterable[str]) -> tuple[list[str], list[str]]:
    """Of ``commits``: (those the repository has that none of ``tips`` reaches,
    those it no longer has), each in the order given. One ``cat-file`` and one
    ``rev-list --stdin`` (the list may be long: never on the command line)."""
    gone = missing(repo, commits)
    present = [c for c in dict.fromkeys(commits) if c and c not in gone]
    if not present:
        return [], gone
    lines = present + [f"^{t}" for t in dict.fromkeys(tips) if t]
    reached = set(git(repo, "rev-list", "--stdin", stdin=("\n".join(lines) + "\n").encode()).split())
    return [c for c in present if c in reached], gone


def same_change_in(repo: StrPath, commit: str, tips: Iterable[str | None], limit: int = 50) -> bool:
    """Whether one of ``tips`` holds a commit that makes the same change as
    ``commit`` (``git cherry``'s patch id: a rebased or cherry-picked copy of
    it). Checked for at most ``limit`` tips."""
    for tip in list(dict.fromkeys(t for t in tips if t))[:limit]:
        for line in git(repo, "cherry", tip, commit).splitlines():
            if line == f"- {commit}":
                return True
    return False


def tips(repo: StrPath, refs: Iterable[str]) -> dict[str, str]:
    """refname -> commit of each existing ref named in ``refs`` (a full name,
    or a prefix ending in ``/`` for every ref under it)."""
    out = git(repo, "for-each-ref", "--format=%(objectname) %(refname)", "--end-of-options", *refs)
    return {name: commit for commit, _, name in (line.partition(" ") for line in out.splitlines()) if name}


def update_ref(repo: StrPath, ref: str, commit: str) -> None:
    git(repo, "update-ref", ref, commit)


def delete_branch(repo: StrPath, name: str) -> None:
    git(repo, "branch", "-D", "--end-of-options", name)


def size_on_disk(path: StrPath) -> int:
    """Bytes the worktree's files take (its ``.git`` is a file pointing into the repository)."""
    total = 0
    for folder, dirs, files in os.walk(path):
        if ".git" in dirs:
            dirs.remove(".git")
        for name in files:
            if name == ".git" and folder == str(path):
                continue  # (a worktree's pointer to the repository: git's, not the workspace's)
            try:
                total += os.lstat(os.path.join(folder, name)).st_size
            except OSError:
                pass
    return total
