"""Hashing artifacts. Done before the write transaction opens, so the lock is
held for the insert only, never for file I/O.

A path is judged by where its bytes really are: symlinks, ``..`` and symlinked
folders are resolved before the "inside the project?" check, so a link to
``/etc/shadow`` is refused exactly like ``/etc/shadow`` itself. The project
root is resolved the same way (it may itself be reached through a symlink,
as ``/tmp`` is ``/private/tmp`` on macOS). The file is then opened without
following a final symlink and, where the OS can say which file an open
descriptor is (Linux: ``/proc/self/fd``), checked again before a byte is
read: a folder swapped for a symlink in between is never hashed."""

from __future__ import annotations

import os
import stat as statmod
from pathlib import Path

from ..shapes.errors import InvalidInput
from .given_paths import open_judged

CHUNK = 1 << 20
HASH_MAX = 256 << 20  # a larger file is never read: its size is recorded, not its hash (hashing 20 GiB took minutes)


def real(path: str | os.PathLike) -> str:
    """Where ``path`` really is: symlinks and ``..`` resolved (missing tails kept as written)."""
    return os.path.realpath(path)


def inside(path: str, root: str) -> bool:
    """``path`` is ``root`` or below it (both already real)."""
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def sha256_fd(fd: int) -> tuple[int, str]:
    import hashlib  # OpenSSL's, for files (only when there are artifacts to hash)

    digest = hashlib.sha256()
    size = 0
    while chunk := os.read(fd, CHUNK):
        digest.update(chunk)
        size += len(chunk)
    return size, digest.hexdigest()


def sha256_file(path: str | os.PathLike) -> tuple[int, str]:
    with open(path, "rb") as handle:
        return sha256_fd(handle.fileno())


def _opened_path(fd: int) -> str | None:
    try:
        return os.readlink(f"/proc/self/fd/{fd}")
    except OSError:  # no /proc (macOS, BSD): the realpath check before the open stands alone
        return None


def too_large(size: int) -> bool:
    return size > HASH_MAX


def too_large_text(size: int) -> str:
    return f"{size} bytes, more than {HASH_MAX >> 20} MB: not hashed"


def hash_within(path: str, roots: list[str]) -> tuple[int, str | None] | None:
    """Size and sha256 of the regular file at ``path`` (already real) if it is
    inside one of ``roots`` (already real) when opened; None when it is not,
    is missing, unreadable or not a regular file. Never follows a final symlink.
    A file over ``HASH_MAX`` is not read: its size with no sha256."""
    if not any(inside(path, r) for r in roots):
        return None
    try:
        fd, st = open_judged(path, nofollow=True)  # (a FIFO never blocks us: given_paths)
    except (OSError, ValueError):
        return None
    try:
        if not statmod.S_ISREG(st.st_mode):
            return None
        opened = _opened_path(fd)
        if opened is not None and not any(inside(opened, r) for r in roots):
            return None  # a folder on the way was swapped for a symlink after we resolved it
        if too_large(st.st_size):
            return st.st_size, None
        return sha256_fd(fd)
    except OSError:  # unreadable (permissions, a name too long): as good as missing
        return None
    finally:
        os.close(fd)


PROJECT = "the project"
WORKSPACE = "the card's workspace"


def outside_error(raw: str, root: str | os.PathLike, where: str = PROJECT) -> InvalidInput:
    return InvalidInput(
        f"artifact {raw!r} is outside {where} ({root})",
        f"evidence may only point at files inside {where} (symlinks are followed); copy the file in or drop it",
        code="artifact_outside_project",
    )


def within(root: Path, base: Path | None) -> Path:
    """Where a relative artifact path starts: ``base`` (default: the working
    folder) when it is inside ``root``, else ``root`` itself — so a card's
    artifact named from the main checkout (the person's `loopx`, the watcher)
    is still the workspace's file, never the main checkout's namesake (#39)."""
    start = base or Path.cwd()
    try:
        return start if inside(real(start), real(root)) else root
    except (OSError, ValueError):
        return root


def relative_to_project(raw: str, root: Path, base: Path | None = None, where: str = PROJECT) -> str:
    """The root-relative form of where ``raw`` really is; refuses a path
    (or a symlink, or a path through a symlinked folder) outside ``root``."""
    path = Path(os.path.expanduser(raw))
    if not path.is_absolute():
        path = (base or Path.cwd()) / path
    try:
        resolved, real_root = real(path), real(root)
    except (OSError, ValueError):
        raise outside_error(raw, root, where) from None
    if not inside(resolved, real_root):
        raise outside_error(raw, root, where)
    return Path(os.path.relpath(resolved, real_root)).as_posix()


def describe(raw_paths: list[str], root: Path, base: Path | None = None, where: str = PROJECT) -> list[dict]:
    """Each artifact as recorded: its path relative to ``root`` (the project, or
    the card's workspace when it has one: ``where`` names it), size and sha256
    of the file there."""
    out: list[dict] = []
    seen: set[str] = set()
    real_root = real(root)
    for raw in raw_paths:
        rel = relative_to_project(raw, root, base, where)
        if rel in seen:
            continue
        seen.add(rel)
        found = hash_within(os.path.join(real_root, rel), [real_root])
        if found is not None:
            size, sha = found
            out.append({"path": rel, "size": size, "sha256": sha, **({} if sha else {"too_large": True})})
        else:
            # Recorded, not dropped: a missing artifact is itself evidence.
            out.append({"path": rel, "size": None, "sha256": None, "missing": True})
    return out


def missing_warnings(artifacts: list[dict]) -> list[str]:
    """What the agent is told when it names artifacts that are not there: the
    evidence is kept (a file may come later), but a typo should not pass unseen."""
    missing = [a["path"] for a in artifacts if a.get("missing")]
    if not missing:
        return []
    return [f"no such file: {', '.join(missing)} (recorded as missing, nothing hashed); check the path"]
