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
be the hash — and what was checked (never the quarantine's file again: the
agent can rewrite it after the check) goes into the store: the small ones
together as one pack that ``git index-pack --fsck-objects`` indexes there
(hashing them again; one pack, not a file per object), a large one as its
checked bytes in a new file.
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
import struct
import tempfile
import zlib
from collections import namedtuple

from .git import QUARANTINE as NAME
from .git import quarantine_folder as folder

TYPE_CHECKING = False  # (annotations only; checkers read this as typing's)
if TYPE_CHECKING:
    from .git import StrPath

REFUSED = "loopx-refused"
_KINDS = (b"blob", b"tree", b"commit", b"tag")
_HEX = re.compile(r"^[0-9a-f]+$")
_CHUNK = 1 << 20

Admitted = namedtuple("Admitted", "moved refused")  # counts; refused: paths moved aside


def turn_env(common: str, admin: str) -> dict[str, str]:
    """The environment a turn's git runs with in the worktree whose private git
    folder is ``admin``: new objects into its quarantine (made here), the
    shared store read as an alternate."""
    try:
        os.makedirs(folder(admin), exist_ok=True)
    except OSError:
        return {}
    return {"GIT_OBJECT_DIRECTORY": folder(admin), "GIT_ALTERNATE_OBJECT_DIRECTORIES": os.path.join(common, "objects")}


_BATCHED = 1 << 20  # objects up to this size (inflated) join the store in one pack; larger ones one by one


def _check_loose(data: bytes, name: str) -> tuple[bytes, bytes | None] | None:
    """``(kind, body)`` when ``data`` (a loose object file's bytes) is a
    well-formed object whose hash is ``name`` (``body`` None for a large one);
    None when it is not."""
    digest = hashlib.sha1() if len(name) == 40 else hashlib.sha256()
    inflate = zlib.decompressobj()
    pieces: list[bytes] | None = []
    try:
        head = inflate.decompress(data, 64 * 1024)
        nul = head.find(b"\0")
        if nul < 0:
            return None
        kind, _, size = head[:nul].partition(b" ")
        if kind not in _KINDS or not size.isdigit() or (len(size) > 1 and size.startswith(b"0")):
            return None
        digest.update(head)
        pieces = [head[nul + 1 :]] if int(size) <= _BATCHED else None
        got = len(head) - nul - 1
        rest = inflate.unconsumed_tail
        while rest:
            piece = inflate.decompress(rest, _CHUNK)
            rest = inflate.unconsumed_tail
            digest.update(piece)
            got += len(piece)
            if pieces is not None:
                pieces.append(piece)
        tail = inflate.flush()
        digest.update(tail)
        got += len(tail)
        if pieces is not None:
            pieces.append(tail)
        if not inflate.eof or inflate.unused_data:
            return None
    except zlib.error:
        return None
    if got != int(size) or digest.hexdigest() != name:
        return None
    return kind, (b"".join(pieces) if pieces is not None else None)


_PACK_TYPES = {b"commit": 1, b"tree": 2, b"blob": 3, b"tag": 4}


def _pack(objects: list[tuple[bytes, bytes]], sha256: bool) -> bytes:
    """A pack (version 2) of ``objects`` (kind, body), each stored whole."""
    out = bytearray(b"PACK" + struct.pack(">II", 2, len(objects)))
    for kind, body in objects:
        n = len(body)
        byte = (_PACK_TYPES[kind] << 4) | (n & 0x0F)
        n >>= 4
        while n:
            out.append(byte | 0x80)
            byte = n & 0x7F
            n >>= 7
        out.append(byte)
        out += zlib.compress(body, 1)
    out += (hashlib.sha256 if sha256 else hashlib.sha1)(out).digest()
    return bytes(out)


def _store_pack(common: str, objects: list[tuple[bytes, bytes]], sha256: bool) -> bool:
    """The checked objects into the store as one pack, indexed by ``git
    index-pack`` (which hashes them again); False when git refused it."""
    # LoopX's one way of running git: no repository programs, no replace refs
    from . import git  # (below this module: git imports nothing of the quarantine)

    done = git._call(common, ("index-pack", "--stdin", "--fsck-objects"), None, 600.0, stdin=_pack(objects, sha256))
    return done.returncode == 0


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


def _drop(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


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
    sha256 = False
    batch: list[tuple[bytes, bytes]] = []  # checked small objects, for one pack
    sources: list[str] = []  # their quarantine files, removed once the pack is in
    loose: list[tuple[str, str, bytes]] = []  # (their file, the store's path, the bytes) if the pack is refused
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
            sha256 = len(name) == 64
            checked = _check_loose(data, name)
            if checked is None:
                refused.append(_aside(quarantine, path))
                continue
            target = os.path.join(store, fan, rest)
            if os.path.exists(target):
                _drop(path)
                moved += 1
            elif checked[1] is not None:
                batch.append((checked[0], checked[1]))
                sources.append(path)
                loose.append((path, target, data))
            else:
                _write_new(target, data)  # a large object: its checked bytes, one file
                _drop(path)
                moved += 1
    if len(batch) > 1 and _store_pack(common, batch, sha256):
        for path in sources:
            _drop(path)
        moved += len(batch)
    else:
        for path, target, data in loose:
            _write_new(target, data)
            _drop(path)
            moved += 1
    pack_moved, pack_refused = (
        _admit_packs(common, quarantine) if os.path.isdir(os.path.join(quarantine, "pack")) else (0, [])
    )
    return Admitted(moved + pack_moved, refused + pack_refused)


def _admit_packs(common: str, quarantine: str) -> tuple[int, list[str]]:
    # LoopX's one way of running git: no repository programs, no replace refs
    from . import git

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


def admitted(repo: StrPath) -> None:
    """Check the objects every workspace's turns wrote and move the good ones
    into the shared store (``admit_all``): before LoopX reads a card's branch
    for the person — the diff, the merge, gc, verify — and before it records a
    workspace's state. And what a running turn created in the shared git folder
    moved out (``sweep.sweep_all``: only against a turn's record, so a person's
    own ``MERGE_HEAD`` between turns stays). One rule: nothing a turn wrote is
    trusted before LoopX checked it. Nothing when the store is not LoopX's to
    write here (``loopx`` inside a turn's sandbox)."""
    from . import sweep
    from .git import common_dir

    common = common_dir(repo)
    if common is not None and os.access(os.path.join(common, "objects"), os.W_OK):
        sweep.sweep_all(str(common))
        admit_all(str(common))
