"""The card lifecycle as tables (DESIGN §4): the statuses, which event leaves a
card in which status, and what the clock alone makes due.

Every status write goes through ``ops/lifecycle.move``, which checks the move
against ``ENTERS`` (``tests/kernel/test_lifecycle.py`` holds that no other
module writes a card's status); the replay (``authority/replay.py``) folds the
same table, so the rows and the log cannot name different statuses for one
event. The due rule is one table, ``DUE``, with a SQL form (the reaper's
queries, the plain readers' probe ``DUE_SQL``) and a Python form (``is_due``:
the reaper on one card, the PreToolUse hook's reader), held equal by a
property test. Standard library only: the hook and the plain readers import it
cold.
"""

from __future__ import annotations

from collections import namedtuple

STATUSES = ("backlog", "ready", "active", "waiting", "monitoring", "handoff", "paused", "blocked", "done", "cancelled")

# The event that records a move, and the status it leaves the card in. A
# tuple: the statuses a rule over the card picks from (its gates, its
# dependencies, its budget); None: the status is in the event's data
# (``FROM_DATA`` names the field).
ENTERS: dict[str, str | tuple[str, ...] | None] = {
    "card_added": None,
    "claimed": "active",
    "monitor_due": "active",
    "gate_asked": "waiting",
    "gate_answered": ("active", "blocked"),  # a person's answer: the last pending gate approved, or a rejection
    "gate_expired": ("blocked",),  # fail closed (done and cancelled cards stay so)
    "released": "ready",
    "lease_expired": "ready",
    "unblocked": "ready",
    "paused": "paused",
    "monitoring": "monitoring",
    "done": "done",
    "handoff_created": "handoff",
    "merged": ("done",),  # a person's merge of the card's branch (ops/merges); an agent's counts for nothing
    "merge_conflict": ("ready",),  # back to its agent with the conflict
    "handoff_accepted": ("waiting", "active"),  # waiting while a gate it asked is pending
    "card_moved": None,
    "card_unassigned": ("ready", "blocked"),  # blocked while a dependency is open
    "resumed": None,
    "budget_raised": None,
    "window_set": None,
}
FROM_DATA = {
    "card_added": "status",
    "card_moved": "to",
    "resumed": "status",
    "budget_raised": "resumed",
    "window_set": "resumed",
}


def may_enter(kind: str, status: str) -> bool:
    """Does an event of ``kind`` record a move to ``status``?"""
    if status not in STATUSES or kind not in ENTERS:
        return False
    leaves = ENTERS[kind]
    return leaves is None or status == leaves or (isinstance(leaves, tuple) and status in leaves)


def status_after(kind: str, data: dict) -> str | None:
    """The status an event names by itself (a fixed one, or the one in its
    data); None when a rule over the card decides or it moves nothing."""
    leaves = ENTERS.get(kind)
    if isinstance(leaves, str):
        return leaves
    field = FROM_DATA.get(kind)
    return data.get(field) if field else None


# -- due by the clock alone ---------------------------------------------------------------


# Rows of ``table`` in ``state`` (column, value pairs) whose ``clock`` column
# has passed: ``card`` is the column naming their card, ``who`` the one naming
# the agent whose they are. (A plain namedtuple: typing costs the hook.)
Due = namedtuple("Due", "name table state clock card who")


LEASE = Due("lease_expired", "card", (("status", "active"),), "lease_expires", "id", "lease_holder")
GATE = Due("gate_expired", "gate", (("status", "pending"),), "deadline", "card_id", "agent")
WINDOW = Due(
    "window_refilled", "card", (("status", "paused"), ("paused_reason", "window")), "wake_at", "id", "lease_holder"
)
DUE = (LEASE, GATE, WINDOW)


def is_due(due: Due, row: object, now: float) -> bool:
    """The Python form: ``row`` (attributes named as the columns) is due at ``now``."""
    if any(getattr(row, column) != value for column, value in due.state):
        return False
    at = getattr(row, due.clock)
    return at is not None and at <= now


def _state(due: Due) -> str:
    return " AND ".join(f"\"{column}\" = '{value}'" for column, value in due.state)


def due_where(due: Due) -> str:
    """The SQL form, as a condition: the row is due at ``?``."""
    return f'{_state(due)} AND "{due.clock}" <= ?'


def due_sql(due: Due, select: str, *, mine: bool = False) -> str:
    """``SELECT <select>`` of its rows due at ``?`` (and, with ``mine``, the
    agent's: a second ``?``)."""
    sql = f'SELECT {select} FROM "{due.table}" WHERE {due_where(due)}'
    return sql + (f' AND "{due.who}" = ?' if mine else "")


def next_sql(due: Due) -> str:
    """When its next row falls due (no parameters)."""
    return f'SELECT MIN("{due.clock}") FROM "{due.table}" WHERE {_state(due)}'


# Anything due at all (``?`` for now, once per row of DUE): the cheap probe
# before a read takes the write lock, and the plain readers' reason to leave
# the read to the kernel.
DUE_SQL = " UNION ALL ".join(due_sql(d, "1") for d in DUE) + " LIMIT 1"
