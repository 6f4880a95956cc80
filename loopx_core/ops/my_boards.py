"""What needs the person on each of their boards (``loopx boards``, the board's
``B`` and its header; issue #42).

Each board of the person's list (``store/known_boards``) is read for four
counts — gates waiting (a question or leave to act), merges waiting, a
runtime's own questions, paused cards — in a thread of its own, all at once,
each bounded by one deadline: a board that does not answer in time (a
PostgreSQL server that is down, a disk that hangs) is "unreachable" and the
others are still said. A local board whose file is gone is "gone", never
opened (nothing is created). A local board is read with ``sqlite3`` alone, read
only: no schema check, no migration, no write; a team board through its store.
"""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from typing import Any, NamedTuple

from ..rules import ids
from ..rules.holding import MERGE_GATE
from ..store.known_boards import KnownBoard
from .gate_rows import RUNTIME

# A read of one board: ``query(sql)`` -> its rows.
Query = Callable[[str], Sequence[Sequence[Any]]]

WAIT = 2.0  # seconds the whole survey waits for the slowest board
CONNECT_TIMEOUT = 5  # seconds libpq tries to reach a team board's server
GATES_SQL = """SELECT "kind", COUNT(*) FROM "gate" WHERE "status" = 'pending' GROUP BY "kind\""""
PAUSED_SQL = """SELECT COUNT(*) FROM "card" WHERE "status" = 'paused'"""
SHOWN = 3  # the first things waiting shown per board (the board itself has them all)
FIRST_GATES_SQL = f"""SELECT "id", "card_id", "kind", "scope", "question" FROM "gate" WHERE "status" = 'pending' ORDER BY "id" LIMIT {SHOWN}"""
FIRST_PAUSED_SQL = (
    f"""SELECT "id", "title", "paused_reason" FROM "card" WHERE "status" = 'paused' ORDER BY "id" LIMIT {SHOWN}"""
)

OK, GONE, UNREACHABLE, BROKEN = "ok", "gone", "unreachable", "broken"


class Needs(NamedTuple):
    gates: int = 0  # a question, or leave to act (a scope)
    merges: int = 0  # a finished card's merge into the person's branch
    questions: int = 0  # a runtime's own question (Claude Code's or Codex's permission prompt, its question tool)
    paused: int = 0  # a card paused by its budget, its window or no progress

    @property
    def total(self) -> int:
        return self.gates + self.merges + self.questions + self.paused

    def to_json(self) -> dict:
        return {**self._asdict(), "total": self.total}

    def words(self) -> str:
        parts = [
            (self.gates, "gate", "gates"),
            (self.merges, "merge", "merges"),
            (self.questions, "question", "questions"),
            (self.paused, "paused", "paused"),
        ]
        said = [f"{n} {one if n == 1 else many}" for n, one, many in parts if n]
        return ", ".join(said) if said else "nothing"


class BoardStanding(NamedTuple):
    board: KnownBoard
    state: str  # ok | gone | unreachable | broken
    needs: Needs | None  # when ok
    why: str = ""  # when not ok
    first: tuple[str, ...] = ()  # the first things waiting for the person there (``SHOWN``), oldest first

    @property
    def total(self) -> int:
        return self.needs.total if self.needs is not None else 0

    def to_json(self) -> dict:
        data = self.board.to_json()
        data.update(state=self.state, needs=self.needs.to_json() if self.needs is not None else None)
        if self.why:
            data["why"] = self.why
        data["first"] = list(self.first)
        return data


def needs_of(pending_kinds: Iterable[str], paused: int) -> Needs:
    """The four counts from the kinds of the pending gates and the paused cards
    (the one rule: ``loopx boards`` and the board's own live figure ask it)."""
    by_kind = Counter(pending_kinds)
    merges = by_kind.pop(MERGE_GATE, 0)
    questions = by_kind.pop(RUNTIME, 0)
    return Needs(sum(by_kind.values()), merges, questions, paused)


def needs_you(query: Query) -> Needs:
    """The four counts, from ``query(sql) -> rows`` on one board."""
    kinds = [str(kind) for kind, n in query(GATES_SQL) for _ in range(int(n))]
    return needs_of(kinds, int(query(PAUSED_SQL)[0][0] or 0))


def first_waiting(query: Query) -> tuple[str, ...]:
    """The first ``SHOWN`` things waiting for the person, oldest first: each
    pending gate (what it is, its card, its question) and each paused card.
    As the board stores them (an agent's words): whoever shows them makes them
    terminal-safe, and shows them as text."""
    said = []
    for gid, card, kind, scope, question in query(FIRST_GATES_SQL):
        what = {MERGE_GATE: "merge", RUNTIME: "question"}.get(str(kind)) or scope or "gate"
        said.append(f"{ids.fmt(ids.GATE, gid)} {what} on {ids.fmt(ids.CARD, card)}: {question or ''}")
    for cid, title, reason in query(FIRST_PAUSED_SQL):
        said.append(f"{ids.fmt(ids.CARD, cid)} paused ({reason or 'by a person'}): {title or ''}")
    return tuple(text[:200] for text in said[:SHOWN])


def _read(query: Query) -> tuple[Needs, tuple[str, ...]]:
    return needs_you(query), first_waiting(query)


def _read_local(path: str, timeout: float) -> tuple[Needs, tuple[str, ...]]:
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=timeout, isolation_level=None)
    try:
        con.execute("PRAGMA query_only = ON")
        return _read(lambda sql: con.execute(sql).fetchall())
    finally:
        con.close()


_OPENING = threading.Lock()  # (one team board opened at a time: the default store is put back in between)


def _read_team(board: KnownBoard) -> tuple[Needs, tuple[str, ...]]:
    """Through its store; opening a store makes it the process's default for
    statements outside a transaction (``records.bind_default``): the board the
    caller works on is put back as it was."""
    from ..store import records
    from ..store.backends import Store

    url = board.target
    if "connect_timeout=" not in url:  # (a server that drops packets: libpq gives up, not the kernel's TCP timer)
        url += ("&" if "?" in url else "?") + f"connect_timeout={CONNECT_TIMEOUT}"
    with _OPENING:
        before = records.current_or_none()
        store = Store.open(board._replace(target=url).location())
        if before is not None and records.current_or_none() is store:
            records.bind_default(before)
    try:
        with store.read():
            return _read(store.query)
    finally:
        store.close()


def standing(board: KnownBoard, timeout: float = WAIT) -> BoardStanding:
    """One board, read in the calling thread (``survey`` bounds it)."""
    if board.kind == "local" and not os.path.exists(board.target):
        return BoardStanding(board, GONE, None, "its file is gone")
    try:
        needs, first = _read_local(board.target, timeout) if board.kind == "local" else _read_team(board)
    except sqlite3.OperationalError as exc:
        if "locked" in str(exc) or "busy" in str(exc):
            return BoardStanding(board, UNREACHABLE, None, "busy: another process holds it")
        return BoardStanding(board, BROKEN, None, f"cannot be read: {str(exc)[:120]}")
    except sqlite3.DatabaseError as exc:
        return BoardStanding(board, BROKEN, None, f"not a board: {str(exc)[:120]}")
    except Exception as exc:  # (a server that refused, a board that cannot open): said for that board only
        message = getattr(exc, "message", None) or str(exc)
        state = UNREACHABLE if board.kind == "team" else BROKEN
        return BoardStanding(board, state, None, f"{type(exc).__name__}: {str(message)[:160]}")
    return BoardStanding(board, OK, needs, "", first)


_READING: dict[str, threading.Thread] = {}  # the boards whose reading is still under way (one at a time each)
_READING_LOCK = threading.Lock()


def survey(
    boards: list[KnownBoard], wait: float = WAIT, read: Callable[[KnownBoard, float], BoardStanding] | None = None
) -> list[BoardStanding]:
    """Every board's standing, in the list's order, within ``wait`` seconds in all
    (``read(board, timeout)``: ``standing``, unless a caller reads otherwise)."""
    read = read or standing
    results: list[BoardStanding | None] = [None] * len(boards)

    def one(index: int, board: KnownBoard) -> None:
        try:
            results[index] = read(board, wait)
        finally:
            with _READING_LOCK:
                _READING.pop(board.target, None)

    threads = []
    for i, board in enumerate(boards):
        with _READING_LOCK:
            if board.target in _READING:  # its last reading has not answered yet: not asked twice
                results[i] = BoardStanding(board, UNREACHABLE, None, "still no answer to the last reading")
                continue
            thread = threading.Thread(target=one, args=(i, board), name=f"loopx board {i}", daemon=True)
            _READING[board.target] = thread
        threads.append(thread)
        thread.start()
    deadline = time.monotonic() + wait
    for thread in threads:
        thread.join(max(0.0, deadline - time.monotonic()))
    return [
        found if found is not None else BoardStanding(board, UNREACHABLE, None, f"no answer within {wait:g} s")
        for board, found in zip(boards, results, strict=True)
    ]
