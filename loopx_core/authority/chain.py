"""The event log's hash chain (SECURITY.md "The log").

Every event row carries ``prev`` (the hash of the event before it, or the
board's genesis hash for the first one) and ``hash`` — a sha256 over ``prev``
and every stored field of the row, in one canonical encoding. Change, insert,
drop or reorder a row and every hash after it stops matching; a person's
signature covers an event's hash, so it also pins everything before it.

Standard library only: the hook, the CLI and ``loopx verify`` all import it.
"""

from __future__ import annotations

import json

from ..rules.digest import sha256_hex

TYPE_CHECKING = False  # (annotations only: typing is not imported on the cold path; checkers read this as typing's)
if TYPE_CHECKING:  # the board as every reader of the log sees it (here: the bottom of authority)
    from contextlib import AbstractContextManager
    from typing import Any, Protocol

    class Query(Protocol):
        """A plain read of the board: (sql with ``?`` placeholders, params) -> the
        rows, each a tuple of column values (``Store.query``, ``records.rows``,
        the hook's reader)."""

        def __call__(self, sql: str, params: tuple[Any, ...], /) -> list[Any]: ...

    class Place(Protocol):
        """Where a board was found (``store.discovery.BoardLocation``)."""

        def describe(self) -> str: ...

    class LogReader(Protocol):
        """The store as the witness reads it (``store.base.Store``, a layer above authority)."""

        @property
        def location(self) -> Place: ...
        def query(self, sql: str, params: tuple[Any, ...] = ...) -> list[Any]: ...
        def board_uid(self) -> str: ...
        def read(self) -> AbstractContextManager[None]: ...


VERSION = 1
SIG_PREFIX = b"loopx-event-v1:"  # what a signature covers: this, then the event's hash


def genesis(board_uid: str) -> str:
    """The ``prev`` of a board's first event: binds the chain to one board."""
    return sha256_hex(f"loopx-genesis-v{VERSION}:{board_uid}".encode())


def event_hash(
    prev: str | None,
    seq: int,
    at: float,
    actor: str,
    card: int | None,
    kind: str,
    data_text: str,
    op_id: str | None,
    key: str | None,
) -> str:
    """``data_text`` is the data column exactly as stored (canonical JSON text).
    Every text field is length-prefixed and ``None`` is ``N``, so no two rows
    encode alike; numbers are written as Python writes them (``repr`` of a float
    round-trips exactly, on SQLite and PostgreSQL alike)."""
    op = "N" if op_id is None else f"{len(op_id)}:{op_id}"
    payload = (
        f"loopx-event-v{VERSION}|{'N' if prev is None else len(prev)}:{prev}|{int(seq)}|{float(at)!r}|{len(actor)}:{actor}|"
        f"{'N' if card is None else int(card)}|{len(kind)}:{kind}|{len(data_text)}:{data_text}|{op}|{'N' if key is None else len(key)}:{key}"
    )
    return sha256_hex(payload.encode("utf-8"))


def signed_message(digest: str) -> bytes:
    return SIG_PREFIX + digest.encode("ascii")


def data_text(data: object) -> str:  # (an event's data; a JSON column's list too)
    """The canonical text of an event's data (what ``models.JSONText`` stores)."""
    return json.dumps(data, separators=(",", ":"), sort_keys=True)
