"""Hashing artifacts. Done before the write transaction opens, so the lock is
held for the insert only, never for file I/O."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from .errors import InvalidInput

CHUNK = 1 << 20


def sha256_file(path: str | os.PathLike) -> tuple[int, str]:
    digest = hashlib.sha256()
    size = 0
    with open(path, "rb") as handle:
        while chunk := handle.read(CHUNK):
            digest.update(chunk)
            size += len(chunk)
    return size, digest.hexdigest()


def relative_to_project(raw: str, root: Path, base: Path | None = None) -> str:
    """The project-relative form of ``raw``; refuses a path outside the project."""
    path = Path(os.path.expanduser(raw))
    if not path.is_absolute():
        path = (base or Path.cwd()) / path
    resolved = Path(os.path.normpath(path))
    root = Path(os.path.normpath(root))
    try:
        return resolved.relative_to(root).as_posix() or "."
    except ValueError:
        raise InvalidInput(
            f"artifact {raw!r} is outside the project ({root})",
            "evidence may only point at files inside the project; copy the file in or drop it",
            code="artifact_outside_project",
        ) from None


def describe(raw_paths: list[str], root: Path, base: Path | None = None) -> list[dict]:
    out: list[dict] = []
    seen: set[str] = set()
    for raw in raw_paths:
        rel = relative_to_project(raw, root, base)
        if rel in seen:
            continue
        seen.add(rel)
        full = root / rel
        try:
            # is_file() raises for e.g. a name too long for the file system
            found = sha256_file(full) if full.is_file() else None
        except OSError:  # unreadable (permissions, a name too long): as good as missing
            found = None
        if found is not None:
            size, sha = found
            out.append({"path": rel, "size": size, "sha256": sha})
        else:
            # Recorded, not dropped: a missing artifact is itself evidence.
            out.append({"path": rel, "size": None, "sha256": None, "missing": True})
    return out
