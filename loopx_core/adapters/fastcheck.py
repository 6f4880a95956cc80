"""The read-only authority check the PreToolUse hook runs on a SQLite board.

The hook runs before every tool call, and peewee alone costs more to import than
the whole budget of a dangerous call, so this reads the board with ``sqlite3``
directly — but decides with the kernel's own rules: ``authority.Authority``
(capabilities, grants and approvals, each honoured only when a person's
signature verifies) over a plain-SQL query function. It finds the pending gate
a retry reuses (``gate_rows.open_gate``). It never writes: anything it is not sure
about (a schema it does not know, an expired lease, an overdue gate, a scope
with no gate yet, ``LOOPX_NOW`` on a board that is not a test board — the
kernel's ``trust.clock_movable``, asked here too) is left to the kernel's
operators (``gates.ask``), which reap and decide in a transaction.
"""

from __future__ import annotations

import os
from collections import namedtuple

try:
    # sqlite3 is this C module plus the datetime adapters and converters this
    # reader never uses; importing datetime costs every dangerous call ~1.5 ms.
    from _sqlite3 import connect
except ImportError:  # pragma: no cover - a Python whose sqlite3 is laid out otherwise
    from sqlite3 import connect

from ..authority import authority, replay, trust
from ..rules.clock import frozen_by_env
from ..rules.holding import HELD, choose, merging
from ..rules.lifecycle import GATE, LEASE, is_due
from ..rules.schema_version import SCHEMA_VERSION

TYPE_CHECKING = False  # (annotations only: the cold hook imports no typing; checkers read this as typing's)
if TYPE_CHECKING:
    from typing import Any

Card = namedtuple("Card", "id status lease_token lease_expires title monitor_due priority")
Asked = namedtuple("Asked", "id status deadline")
# allowed: scope -> who allows it (capability, grant:N, gate:G-N); pending: scope ->
# the pending gate a retry reuses; open: scopes left to the kernel (no gate yet).
Verdict = namedtuple("Verdict", "known_agent card allowed pending open")


class NotSure(Exception):
    """The board is in a state this reader leaves to the kernel."""


def check(db_path: str, agent: str, scopes: list[str], now: float) -> Verdict:
    if not os.path.exists(db_path):
        raise FileNotFoundError(f"no board at {db_path}")
    con = connect(db_path, timeout=10, isolation_level=None)
    try:
        con.execute("PRAGMA query_only=1")
        con.execute("BEGIN")  # one snapshot for every read below

        def query(sql: str, params: tuple[Any, ...] = ()) -> list[Any]:
            return con.execute(sql, params).fetchall()

        row = query("SELECT value FROM setting WHERE key='schema_version'")
        if not row or int(row[0][0]) != SCHEMA_VERSION:
            raise NotSure("board schema differs from this reader's")
        uid = trust.board_uid_from(query) or ""
        people = trust.load(query, uid, os.path.abspath(db_path)) if frozen_by_env() else None
        if people is not None and not trust.clock_movable(query, people):
            raise NotSure("LOOPX_NOW is set, but this is not a test board: the kernel refuses it")
        if not query("SELECT 1 FROM agent WHERE id=?", (agent,)):
            return Verdict(False, None, {}, {}, list(scopes))
        held = [
            Card(*row)
            for row in query(
                "SELECT id, status, lease_token, lease_expires, title, monitor_due, priority FROM card WHERE lease_holder=? AND status IN (?,?,?,?)",
                (agent, *HELD),
            )
        ]
        card = choose(held, now, merging(held, query))
        if card is not None and is_due(LEASE, card, now):
            raise NotSure("the lease has expired; the kernel reaps it")
        if card is not None and tuple(replay.lease_in_log(query, card.id)) != (agent, card.lease_token):
            raise NotSure("the card's lease row is not the one the log granted; the kernel decides")
        rules = authority.Authority(query, lambda: people or trust.load(query, uid, os.path.abspath(db_path)))
        allowed: dict = {}
        pending: dict = {}
        rest: list = []
        for scope in scopes:
            by = rules.allowed(scope, agent, card.id if card else None, card.lease_token if card else None, now)
            if by is not None:
                allowed[scope] = by
                continue
            if card is None:
                rest.append(scope)
                continue
            waiting = [
                Asked(*row)
                for row in query(
                    "SELECT id, status, deadline FROM gate WHERE card_id=? AND status='pending' AND scope=? ORDER BY id LIMIT 1",
                    (card.id, scope),
                )
            ]
            if waiting and is_due(GATE, waiting[0], now):
                raise NotSure("a pending gate is overdue; the kernel expires it")
            if waiting:
                pending[scope] = waiting[0].id
            else:
                rest.append(scope)
        return Verdict(True, card, allowed, pending, rest)
    finally:
        con.close()
