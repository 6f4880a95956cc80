"""The turn a runner started, as its environment names it (``loopx run`` sets
``LOOPX_LEASE_TOKEN`` and ``LOOPX_TURN_ID`` for every turn): the defaults of
``--lease-token`` and ``--turn-id`` on the CLI and of the MCP ``writeback``
tool, so a zombie turn's writes are fenced even when it forgets the flag. A
value given explicitly wins."""

from __future__ import annotations

import os

from ..shapes.errors import UsageError


def lease_token(given: int | None) -> int | None:
    if given is not None:
        return given
    text = os.environ.get("LOOPX_LEASE_TOKEN", "").strip()
    if not text:
        return None
    if not (text.isascii() and text.isdigit() and len(text) <= 18):
        raise UsageError(f"LOOPX_LEASE_TOKEN is not a lease token: {text[:40]!r}", "unset it, or pass --lease-token N (the token `loopx next` printed)")
    return int(text)


def turn_id(given: str | None) -> str | None:
    return given or os.environ.get("LOOPX_TURN_ID") or None
