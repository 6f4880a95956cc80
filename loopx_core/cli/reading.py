"""Reading a file a command names (``writeback --input``, ``verify --file``):
bounded before it is read, so ``/dev/zero`` or a runaway pipe is refused
instead of read until memory runs out (#30)."""

from __future__ import annotations

import os
import stat
import sys

from ..shapes.errors import InvalidInput

EVIDENCE_MAX = 1 << 20  # bytes: an evidence document (its fields' limits add up to far less)
EXPORT_MAX = 256 << 20  # bytes: an export (`loopx export`) that `verify --file` reads


def read_text(source: str, limit: int, what: str, hint: str, *, error=InvalidInput) -> str:
    """The UTF-8 text of ``source`` (a path, or ``-`` for stdin), at most ``limit``
    bytes; anything else is ``error`` (a refusal, exit 3 unless told)."""
    try:
        if source == "-":
            raw = sys.stdin.buffer.read(limit + 1) if hasattr(sys.stdin, "buffer") else sys.stdin.read(limit + 1).encode("utf-8", "surrogatepass")
        else:
            with open(source, "rb") as handle:
                mode = os.fstat(handle.fileno()).st_mode
                if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) or stat.S_ISDIR(mode):
                    raise error(f"{what} {source[:200]!r} is a device, not a file", hint)
                if stat.S_ISREG(mode) and os.fstat(handle.fileno()).st_size > limit:
                    raise error(f"{what} {source[:200]!r} is larger than {limit:,} bytes", hint)
                raw = handle.read(limit + 1)
    except OSError as exc:
        raise error(f"cannot read {what} {source[:200]!r}: {exc.strerror or exc}", hint) from None
    except ValueError as exc:  # a NUL in the path
        raise error(f"cannot read {what} {source[:200]!r}: {exc}", hint) from None
    if len(raw) > limit:
        raise error(f"{what} {source[:200]!r} is larger than {limit:,} bytes", hint)
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        raise error(f"{what} {source[:200]!r} is not UTF-8 text", hint) from None
