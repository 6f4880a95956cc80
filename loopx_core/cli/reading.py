"""Reading a file a command names (``writeback --input``, ``verify --file``):
bounded before it is read, so ``/dev/zero`` or a runaway pipe is refused
instead of read until memory runs out (#30), and a FIFO never blocks
(rules/given_paths.py, #44)."""

from __future__ import annotations

import sys

from ..rules import given_paths
from ..shapes.errors import InvalidInput

TYPE_CHECKING = False  # (annotations only: typing is not imported on the cold path; checkers read this as typing's)
if TYPE_CHECKING:
    from ..shapes.errors import LoopxError

EVIDENCE_MAX = 1 << 20  # bytes: an evidence document (its fields' limits add up to far less)
EXPORT_MAX = 256 << 20  # bytes: an export (`loopx export`) that `verify --file` reads


def read_text(source: str, limit: int, what: str, hint: str, *, error: type[LoopxError] = InvalidInput) -> str:
    """The UTF-8 text of ``source`` (a path, or ``-`` for stdin), at most ``limit``
    bytes; anything else is ``error`` (a refusal, exit 3 unless told)."""
    if source == "-":
        try:
            raw = (
                sys.stdin.buffer.read(limit + 1)
                if hasattr(sys.stdin, "buffer")
                else sys.stdin.read(limit + 1).encode("utf-8", "surrogatepass")
            )
        except OSError as exc:
            raise error(f"cannot read {what} from stdin: {exc.strerror or exc}", hint) from None
        if len(raw) > limit:
            raise error(f"{what} on stdin is larger than {limit:,} bytes", hint)
    else:
        found = given_paths.read_regular(source, limit, what, hint, error=error)
        assert found is not None  # (missing_ok is off: a missing file is refused)
        raw = found
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        raise error(f"{what} {source[:200]!r} is not UTF-8 text", hint) from None
