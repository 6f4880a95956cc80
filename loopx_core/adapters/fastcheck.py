"""The read-only authority check the PreToolUse hook runs on a SQLite board.

The hook runs before every tool call, and peewee alone costs more to import than
the whole budget of a dangerous call, so this reads the board with ``sqlite3``
directly. It mirrors ``authority.allowed`` (capability, standing grant, gate
approved in this lease) and finds the pending gate a retry reuses
(``gates.open_gate``); ``tests/adapters/test_fastcheck.py`` holds the two
together. It never writes: anything it is not sure about (a schema it does not
know, an expired lease, an overdue gate, a scope with no gate yet) is left to
the kernel's operators (``gates.ask``), which reap and decide in a transaction.
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections import namedtuple

from ..holding import HELD, choose
from ..scopes import covers

SCHEMA_VERSION = 2  # loopx_core.migrations.SCHEMA_VERSION (a test keeps them equal)


Card = namedtuple("Card", "id status lease_token lease_expires title monitor_due priority")
# allowed: scope -> who allows it (capability, grant:N, gate:G-N); pending: scope ->
# the pending gate a retry reuses; open: scopes left to the kernel (no gate yet).
Verdict = namedtuple("Verdict", "known_agent card allowed pending open")


class NotSure(Exception):
    """The board is in a state this reader leaves to the kernel."""


def check(db_path: str, agent: str, scopes: list[str], now: float) -> Verdict:
    if not os.path.exists(db_path):
        raise FileNotFoundError(f"no board at {db_path}")
    con = sqlite3.connect(db_path, timeout=10, isolation_level=None)
    try:
        con.execute("PRAGMA query_only=1")
        con.execute("BEGIN")  # one snapshot for every read below
        row = con.execute("SELECT value FROM setting WHERE key='schema_version'").fetchone()
        if row is None or int(row[0]) != SCHEMA_VERSION:
            raise NotSure("board schema differs from this reader's")
        agent_row = con.execute("SELECT capabilities FROM agent WHERE id=?", (agent,)).fetchone()
        if agent_row is None:
            return Verdict(False, None, {}, {}, list(scopes))
        caps = json.loads(agent_row[0] or "[]")
        card = choose(
            (Card(*row) for row in con.execute(
                "SELECT id, status, lease_token, lease_expires, title, monitor_due, priority FROM card WHERE lease_holder=? AND status IN (?,?,?,?)",
                (agent, *HELD),
            )),
            now,
        )
        if card is not None and card.status == "active" and card.lease_expires is not None and card.lease_expires <= now:
            raise NotSure("the lease has expired; the kernel reaps it")
        allowed: dict = {}
        pending: dict = {}
        rest: list = []
        grants = con.execute(
            'SELECT id, scope FROM "grant" WHERE (agent IS NULL OR agent=?) AND (card IS NULL OR card=?) '
            "AND (expires_at IS NULL OR expires_at > ?) ORDER BY id",
            (agent, card.id if card else -1, now),
        ).fetchall()
        for scope in scopes:
            if any(covers(c, scope) for c in caps):
                allowed[scope] = "capability"
                continue
            grant = next((g for g, s in grants if covers(s, scope)), None)
            if grant is not None:
                allowed[scope] = f"grant:{grant}"
                continue
            if card is None:
                rest.append(scope)
                continue
            if card.lease_token is not None:
                gate = con.execute(
                    "SELECT id FROM gate WHERE card_id=? AND scope=? AND status='approved' AND lease_token=? LIMIT 1",
                    (card.id, scope, card.lease_token),
                ).fetchone()
                if gate is not None:
                    allowed[scope] = f"gate:G-{gate[0]}"
                    continue
            waiting = con.execute(
                "SELECT id, deadline FROM gate WHERE card_id=? AND status='pending' AND scope=? ORDER BY id LIMIT 1",
                (card.id, scope),
            ).fetchone()
            if waiting is not None and (waiting[1] is None or waiting[1] > now):
                pending[scope] = waiting[0]
            elif waiting is not None:
                raise NotSure("a pending gate is overdue; the kernel expires it")
            else:
                rest.append(scope)
        return Verdict(True, card, allowed, pending, rest)
    finally:
        con.close()
