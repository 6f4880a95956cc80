"""A card's object quarantine (issue #38): nothing a turn writes into git's
object store is trusted before LoopX checked it.

Git does not re-hash what it reads: an object file rewritten in the shared
store (``.git/objects``) changes what ``git show`` prints and what the next
workspace is checked out with. So a sandboxed turn's git never writes there.
It runs with ``GIT_OBJECT_DIRECTORY`` set to the workspace's own object folder
(``<common>/worktrees/<name>/loopx-objects``, inside the worktree's private
git folder, which the sandbox lets it write) and the shared store as an
alternate it may only read (``GIT_ALTERNATE_OBJECT_DIRECTORIES``) — git's own
quarantine, as ``receive-pack`` uses for a push. LoopX's own git calls in the
workspace run the same way (``git._quarantine_env``).

``admit`` moves checked objects into the shared store: each loose object is
read once, inflated, its header checked and its bytes hashed — the name must
be the hash — and those very bytes written to a new file in the store (the
agent can rewrite the quarantine's file after the check; never the copy).
A pack is copied into the store's pack folder first and indexed there by
``git index-pack``, which hashes every object it holds. What fails is moved
aside to ``loopx-refused`` beside the quarantine, never into the store.

``admit_all`` runs before LoopX reads a card's branch for the person (the
diff, the merge, gc, verify) and at every turn's end. Standard library only.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import tempfile
import zlib
from collections import namedtuple

NAME = "loopx-objects"
REFUSED = "loopx-refused"
_KINDS = (b"blob", b"tree", b"commit", b"tag")
_HEX = re.compile(r"^[0-9a-f]+$")
_CHUNK = 1 << 20

Admitted = namedtuple("Admitted", "moved refused")  # counts; refused: paths moved aside


def folder(admin: str) -> str:
    """The quarantine of the worktree whose private git folder is ``admin``."""
    return os.path.join(admin, NAME)


def turn_env(common: str, admin: str) -> dict[str, str]:
    """The environment a turn's git runs with in the worktree whose private git
    folder is ``admin``: new objects into its quarantine (made here), the
    shared store read as an alternate."""
    try:
        os.makedirs(folder(admin), exist_ok=True)
    except OSError:
        return {}
    return {"GIT_OBJECT_DIRECTORY": folder(admin), "GIT_ALTERNATE_OBJECT_DIRECTORIES": os.path.join(common, "objects")}


def _check_loose(data: bytes, name: str) -> bool:
    """Is ``data`` (a loose object file's bytes) a well-formed object whose hash is ``name``?"""
    digest = hashlib.sha1() if len(name) == 40 else hashlib.sha256()
    inflate = zlib.decompressobj()
    try:
        head = inflate.decompress(data, 64 * 1024)
        nul = head.find(b"\0")
        if nul < 0:
            return False
        kind, _, size = head[:nul].partition(b" ")
        if kind not in _KINDS or not size.isdigit() or (len(size) > 1 and size.startswith(b"0")):
            return False
        digest.update(head)
        got = len(head) - nul - 1
        rest = inflate.unconsumed_tail
        while rest:
            piece = inflate.decompress(rest, _CHUNK)
            rest = inflate.unconsumed_tail
            digest.update(piece)
            got += len(piece)
        tail = inflate.flush()
        digest.update(tail)
        got += len(tail)
        if not inflate.eof or inflate.unused_data:
            return False
    except zlib.error:
        return False
    return got == int(size) and digest.hexdigest() == name


def _write_new(path: str, data: bytes) -> None:
    """``data`` as a new read-only file at ``path``: written under a temporary
    name in its folder (read-only from the start), then renamed into place."""
    temp = f"{os.path.dirname(path)}/tmp_obj_loopx_{os.getpid()}_{os.path.basename(path)}"
    try:
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o444)
    except FileNotFoundError:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o444)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(temp, path)  # (the same object written meanwhile by git: the same bytes' name)
    finally:
        if os.path.lexists(temp):
            os.unlink(temp)


def _aside(quarantine: str, path: str) -> str:
    """Move a refused file out of the quarantine (kept for a person to look at)."""
    where = os.path.join(os.path.dirname(quarantine), REFUSED, os.path.relpath(path, quarantine))
    os.makedirs(os.path.dirname(where), exist_ok=True)
    os.replace(path, where)
    return where


def admit(common: str, quarantine: str) -> Admitted:
    """Check every object in ``quarantine`` and move the good ones into the
    repository's store (``common/objects``)."""
    store = os.path.join(common, "objects")
    moved, refused = 0, []
    try:
        fans = sorted(os.listdir(quarantine))
    except OSError:
        return Admitted(0, [])
    for fan in fans:
        here = os.path.join(quarantine, fan)
        if len(fan) != 2 or not _HEX.match(fan) or not os.path.isdir(here) or os.path.islink(here):
            continue
        for rest in sorted(os.listdir(here)):
            path = os.path.join(here, rest)
            if len(rest) not in (38, 62) or not _HEX.match(rest):
                continue  # git's temporary files, and anything else: never moved
            try:
                if os.path.islink(path):
                    refused.append(_aside(quarantine, path))
                    continue
                with open(path, "rb") as fh:
                    data = fh.read()
            except OSError:
                continue  # gone meanwhile
            name = fan + rest
            if not _check_loose(data, name):
                refused.append(_aside(quarantine, path))
                continue
            target = os.path.join(store, fan, rest)
            if not os.path.exists(target):
                _write_new(target, data)
            moved += 1
            try:
                os.unlink(path)
            except OSError:
                pass
    pack_moved, pack_refused = _admit_packs(common, quarantine) if os.path.isdir(os.path.join(quarantine, "pack")) else (0, [])
    return Admitted(moved + pack_moved, refused + pack_refused)


def _admit_packs(common: str, quarantine: str) -> tuple[int, list[str]]:
    from . import (
        git,  # (LoopX's one way of running git: no repository programs, no replace refs)
    )

    packs = os.path.join(quarantine, "pack")
    store = os.path.join(common, "objects", "pack")
    moved, refused = 0, []
    try:
        names = sorted(n for n in os.listdir(packs) if n.startswith("pack-") and n.endswith(".pack"))
    except OSError:
        return 0, []
    for name in names:
        path = os.path.join(packs, name)
        if not os.path.exists(path[: -len(".pack")] + ".idx"):
            continue  # still being written
        os.makedirs(store, exist_ok=True)
        fd, copy = tempfile.mkstemp(prefix="tmp_pack_", suffix=".pack", dir=store)
        os.close(fd)
        try:
            shutil.copyfile(path, copy)
            index = copy[: -len(".pack")] + ".idx"
            done = git._call(common, ("index-pack", "--strict", "-o", index, copy), None, 600.0)
            checksum = done.stdout.decode("ascii", "replace").split()[-1:] if done.returncode == 0 else []
            if not checksum or not _HEX.match(checksum[0]):
                refused.append(_aside(quarantine, path))
                continue
            final = os.path.join(store, f"pack-{checksum[0]}")
            os.chmod(copy, 0o444)
            os.chmod(index, 0o444)
            os.replace(copy, final + ".pack")
            os.replace(index, final + ".idx")
            moved += 1
            for suffix in (".pack", ".idx", ".rev", ".keep", ".bitmap"):
                try:
                    os.unlink(path[: -len(".pack")] + suffix)
                except OSError:
                    pass
        finally:
            for leftover in (copy, copy[: -len(".pack")] + ".idx"):
                if os.path.exists(leftover):
                    os.unlink(leftover)
    return moved, refused


def quarantines(common: str) -> list[str]:
    """Every worktree's quarantine in the repository whose git folder is ``common``."""
    base = os.path.join(common, "worktrees")
    try:
        names = sorted(os.listdir(base))
    except OSError:
        return []
    return [q for q in (os.path.join(base, n, NAME) for n in names) if os.path.isdir(q) and not os.path.islink(q)]


def admit_all(common: str) -> Admitted:
    """``admit`` for every worktree of the repository."""
    moved, refused = 0, []
    for q in quarantines(common):
        got = admit(common, q)
        moved += got.moved
        refused += got.refused
    return Admitted(moved, refused)
