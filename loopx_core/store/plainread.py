"""`card list --json` and `gate status` on a SQLite board with ``sqlite3`` alone.

An agent lists cards between turns and polls its gate; importing peewee and the
models costs more than the whole read, even at 50,000 cards. So, like the
PreToolUse hook's reader (``adapters.fastcheck``), this reads the board
directly — and answers only when the kernel would answer the same without
writing anything: a board of this schema, the real clock, nothing due for the
reaper (``lifecycle.DUE_SQL``, the probe ``reaper.has_due`` runs), the row
there. Anything else returns None and the kernel answers (``cards.card_page``,
``gates.status``). The answers come out through the kernel's own rules and
shapes: ``holding.owner_of``, ``values.shown_reasons``, ``CardView.to_row``,
``authority.forged_approval`` over a person's signed decisions (an approval no
signature backs reads as pending), ``GateView.to_json``. tests/kernel/test_pages.py
and tests/kernel/test_gates.py hold the two readers equal on the same boards.
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections import namedtuple
from contextlib import contextmanager

from ..rules import clock
from ..rules.holding import owner_of
from ..rules.lifecycle import DUE, DUE_SQL
from ..rules.schema_version import SCHEMA_VERSION
from ..shapes.values import CardView, GateView, Limit, Quota, shown_reasons

TYPE_CHECKING = False  # (annotations only: typing is not imported on the cold path; checkers read this as typing's)
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Any

    BoardFile = str | os.PathLike[str] | None  # a SQLite board's file (None: not a SQLite board)

_COLUMNS = "id, title, status, lease_holder, handoff_to, assignee, priority, version, paused_reason, blocked_reason, updated_at"
_NO_QUOTA = Quota(Limit(0, None), Limit(0, None), Limit(0.0, None))  # (a list row shows no quota: CardView.to_row)


class _NotSure(Exception):
    """Leave this read to the kernel."""


@contextmanager
def _snapshot(path: BoardFile) -> Iterator[tuple[sqlite3.Connection, float]]:
    """A read-only connection in one snapshot, on a board this reader may answer for."""
    if clock.frozen_by_env() or path is None or not os.path.exists(path):
        raise _NotSure
    con = sqlite3.connect(path, timeout=10, isolation_level=None)
    try:
        con.execute("PRAGMA query_only=1")
        con.execute("BEGIN")
        version = con.execute("SELECT value FROM setting WHERE key = 'schema_version'").fetchall()
        if not version or version[0][0] != str(SCHEMA_VERSION):
            raise _NotSure
        now = clock.now()
        if con.execute(DUE_SQL, (now,) * len(DUE)).fetchall():
            raise _NotSure  # a read would reap first: the kernel does that, in a write transaction
        yield con, now
    except sqlite3.Error:
        raise _NotSure from None  # locked past the timeout, a table this reader does not know …: the kernel says what is wrong
    finally:
        con.close()


def card_page(
    path: BoardFile, status: str | None, owner: str | None, *, limit: int, after: int
) -> tuple[list[dict], int | None] | None:
    """(rows as ``CardView.to_row``, next ``after`` or None), or None: ask the kernel."""
    try:
        with _snapshot(path) as (con, _):
            return _card_page(con, status, owner, limit, after)
    except _NotSure:
        return None


def _card_page(
    con: sqlite3.Connection, status: str | None, owner: str | None, limit: int, after: int
) -> tuple[list[dict], int | None]:
    where: list[str] = ["id > ?"]
    params: list[object] = [after]
    if status:
        where.append("status = ?")
        params.append(status)
    if owner:
        where.append("(lease_holder = ? OR assignee = ? OR handoff_to = ?)")
        params += [owner, owner, owner]
    found = con.execute(
        f"SELECT {_COLUMNS} FROM card WHERE {' AND '.join(where)} ORDER BY id LIMIT ?", (*params, limit + 1)
    ).fetchall()
    more = len(found) > limit
    found = found[:limit]
    gates: dict[int, int] = {}
    if found:
        ids = [r[0] for r in found]
        marks = ",".join("?" * len(ids))
        for card, gate in con.execute(
            f"SELECT card_id, MIN(id) FROM gate WHERE status = 'pending' AND card_id IN ({marks}) GROUP BY card_id", ids
        ):
            gates[card] = gate
    rows = [_row(r, gates.get(r[0])) for r in found]
    return rows, (found[-1][0] if more else None)


def _row(r: tuple, pending_gate: int | None) -> dict:
    card_id, title, status, holder, handoff_to, assignee, priority, version, paused, blocked, updated_at = r
    paused, blocked = shown_reasons(status, paused, blocked)
    return CardView(
        id=card_id,
        title=title,
        status=status,
        owner=owner_of(status, holder, handoff_to, assignee),
        assignee=assignee,
        needs=(),
        priority=priority,
        next_action=None,
        todos=(),
        quota=_NO_QUOTA,
        lease=None,
        version=version,
        paused_reason=paused,
        blocked_reason=blocked,
        after=(),
        evidence_count=0,
        pending_gate=pending_gate,
        updated_at=updated_at,
    ).to_row()


_GATE = namedtuple(
    "_GATE",
    "id card_id agent kind question scope options status answer note answered_by deadline created_at answered_at answer_seq lease_token",
)


def gate_status(path: BoardFile, gate_id: int) -> dict | None:
    """``GateView.to_json`` of the gate as its people decided it, or None: ask the kernel."""
    from ..authority import authority, trust

    if path is None:  # (not a SQLite board: the kernel answers, as _snapshot would say)
        return None
    try:
        with _snapshot(path) as (con, now):
            found = con.execute(f"SELECT {', '.join(_GATE._fields)} FROM gate WHERE id = ?", (gate_id,)).fetchall()
            if not found:
                raise _NotSure  # the kernel words the refusal
            gate = _GATE(*found[0])

            def query(sql: str, params: tuple[Any, ...] = ()) -> list[Any]:
                return con.execute(sql, params).fetchall()

            why = None
            if gate.status == "approved":
                rules = authority.Authority(
                    query, lambda: trust.load(query, trust.board_uid_from(query) or "", os.path.abspath(path))
                )
                why = authority.forged_approval(rules, gate, now)
            view = GateView(*gate[:6], tuple(json.loads(gate.options) if gate.options else ()), *gate[7:14])
            return (view if why is None else view.unbacked(why)).to_json()
    except _NotSure:
        return None
