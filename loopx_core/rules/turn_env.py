"""Who is calling and in which turn, as the environment names it — one place for
the CLI, the MCP server and the hooks. ``LOOPX_AGENT``: the agent identity
(``--agent``'s default; a person's verbs are refused while it is set).
``LOOPX_LEASE_TOKEN`` and ``LOOPX_TURN_ID`` (``loopx run`` sets them for every
turn): the defaults of ``--lease-token`` and ``--turn-id`` on the CLI and of the
MCP ``writeback`` tool, so a zombie turn's writes are fenced even when it
forgets the flag. A value given explicitly wins. (``LOOPX_DB`` is the board's
discovery, ``store/discovery``.)"""

from __future__ import annotations

import os


def agent(given: str | None = None) -> str | None:
    return given or os.environ.get("LOOPX_AGENT") or None


def lease_token(given: int | None) -> int | None:
    if given is not None:
        return given
    text = os.environ.get("LOOPX_LEASE_TOKEN", "").strip()
    if not text:
        return None
    if not (text.isascii() and text.isdigit() and len(text) <= 18):
        from ..shapes.errors import (
            UsageError,  # (only here: the hook reads LOOPX_AGENT on every call)
        )

        raise UsageError(
            f"LOOPX_LEASE_TOKEN is not a lease token: {text[:40]!r}",
            "unset it, or pass --lease-token N (the token `loopx next` printed)",
        )
    return int(text)


def turn_id(given: str | None) -> str | None:
    return given or os.environ.get("LOOPX_TURN_ID") or None
