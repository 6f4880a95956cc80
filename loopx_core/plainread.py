"""`card list --json` on a SQLite board with ``sqlite3`` alone.

An agent lists cards between turns; importing peewee and the models costs more
than the whole list at 50,000 cards. So, like the PreToolUse hook's reader
(``adapters.fastcheck``), this reads the board directly — and answers only
when the kernel would answer the same without writing anything: a board of
this schema, the real clock, nothing due for the reaper (``holding.DUE_SQL``,
the probe ``reaper.has_due`` runs). Anything else returns None and the kernel
answers (``cards.card_page``). The rows come out through the same
``CardView.to_row`` and owner rule (``holding.owner_of``) as the kernel's;
tests/kernel/test_pages.py holds the two readers equal on the same boards.
"""

from __future__ import annotations

import os
import sqlite3

from . import clock
from .holding import DUE_SQL, owner_of
from .migrations import SCHEMA_VERSION
from .values import CardView, Quota, shown_reasons

_COLUMNS = "id, title, status, lease_holder, handoff_to, assignee, priority, version, paused_reason, blocked_reason, updated_at"
_NO_QUOTA = Quota(None, None, None)


def card_page(path, status: str | None, owner: str | None, *, limit: int, after: int) -> tuple[list[dict], int | None] | None:
    """(rows as ``CardView.to_row``, next ``after`` or None), or None: ask the kernel."""
    if clock.frozen_by_env() or path is None or not os.path.exists(path):
        return None
    con = sqlite3.connect(path, timeout=10, isolation_level=None)
    try:
        con.execute("PRAGMA query_only=1")
        con.execute("BEGIN")  # one snapshot for every read below
        version = con.execute("SELECT value FROM setting WHERE key = 'schema_version'").fetchall()
        if not version or version[0][0] != str(SCHEMA_VERSION):
            return None
        now = clock.now()
        if con.execute(DUE_SQL, (now, now, now)).fetchall():
            return None  # a read would reap first: the kernel does that, in a write transaction
        where, params = ["id > ?"], [after]
        if status:
            where.append("status = ?")
            params.append(status)
        if owner:
            where.append("(lease_holder = ? OR assignee = ? OR handoff_to = ?)")
            params += [owner, owner, owner]
        found = con.execute(f"SELECT {_COLUMNS} FROM card WHERE {' AND '.join(where)} ORDER BY id LIMIT ?", (*params, limit + 1)).fetchall()
        more = len(found) > limit
        found = found[:limit]
        gates: dict[int, int] = {}
        if found:
            ids = [r[0] for r in found]
            marks = ",".join("?" * len(ids))
            for card, gate in con.execute(f"SELECT card_id, MIN(id) FROM gate WHERE status = 'pending' AND card_id IN ({marks}) GROUP BY card_id", ids):
                gates[card] = gate
        rows = [_row(r, gates.get(r[0])) for r in found]
        return rows, (found[-1][0] if more else None)
    except sqlite3.Error:
        return None  # locked past the timeout, a table this reader does not know …: the kernel says what is wrong
    finally:
        con.close()


def _row(r: tuple, pending_gate: int | None) -> dict:
    card_id, title, status, holder, handoff_to, assignee, priority, version, paused, blocked, updated_at = r
    paused, blocked = shown_reasons(status, paused, blocked)
    return CardView(
        id=card_id, title=title, status=status, owner=owner_of(status, holder, handoff_to, assignee), assignee=assignee, needs=(),
        priority=priority, next_action=None, todos=(), quota=_NO_QUOTA, lease=None, version=version,
        paused_reason=paused, blocked_reason=blocked,
        after=(), evidence_count=0, pending_gate=pending_gate, updated_at=updated_at,
    ).to_row()
