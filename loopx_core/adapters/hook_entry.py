"""The cheap way in for ``loopx hook RUNTIME EVENT``: runtimes call it before
every tool, so ``cli.main`` hands it the arguments before building the argparse
parser. Anything unexpected (``--help``, an unknown event) returns None and the
normal parser takes over, with its usual messages."""

from __future__ import annotations

from ..runtimes import HOOKED
from .hooks import EVENTS


def dispatch(argv: list[str]) -> int | None:
    db = None
    rest: list[str] = []
    i = 0
    while i < len(argv):
        token = argv[i]
        if token == "--db" and i + 1 < len(argv):
            db = argv[i + 1]
            i += 2
            continue
        if token.startswith("--db="):
            db = token[5:]
        elif token != "--json":
            rest.append(token)
        i += 1
    if len(rest) != 3 or rest[0] != "hook" or rest[1] not in HOOKED or rest[2] not in EVENTS:
        return None
    from .hooks import run_hook

    return run_hook(rest[1], rest[2], db)
