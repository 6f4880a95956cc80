"""The event log's hash chain (SECURITY.md "The log").

Every event row carries ``prev`` (the hash of the event before it, or the
board's genesis hash for the first one) and ``hash`` — a sha256 over ``prev``
and every stored field of the row, in one canonical encoding. Change, insert,
drop or reorder a row and every hash after it stops matching; a person's
signature covers an event's hash, so it also pins everything before it.

Standard library only: the hook, the CLI and ``loopx verify`` all import it.
"""

from __future__ import annotations

import hashlib
import json

VERSION = 1
SIG_PREFIX = b"loopx-event-v1:"  # what a signature covers: this, then the event's hash


def genesis(board_uid: str) -> str:
    """The ``prev`` of a board's first event: binds the chain to one board."""
    return hashlib.sha256(f"loopx-genesis-v{VERSION}:{board_uid}".encode()).hexdigest()


def event_hash(prev: str, seq: int, at: float, actor: str, card: int | None, kind: str, data_text: str, op_id: str | None, key: str | None) -> str:
    """``data_text`` is the data column exactly as stored (canonical JSON text)."""
    payload = json.dumps([VERSION, prev, seq, at, actor, card, kind, data_text, op_id, key], separators=(",", ":"), ensure_ascii=True)
    return hashlib.sha256(payload.encode("ascii")).hexdigest()


def signed_message(digest: str) -> bytes:
    return SIG_PREFIX + digest.encode("ascii")


def data_text(data: dict) -> str:
    """The canonical text of an event's data (what ``models.JSONText`` stores)."""
    return json.dumps(data, separators=(",", ":"), sort_keys=True)
