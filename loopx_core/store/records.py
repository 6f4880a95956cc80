"""The per-turn path's rows, over the standard library alone (DESIGN §10, 2026-12-04).

An agent's verbs (next, claim, heartbeat, writeback, context, done, gate ask,
gate status, card add, release, handoff, accept) run in a cold process
thousands of times a day. Building SQL with peewee and its models cost most of
such a call, so the operators read and write the tables they touch through this
layer instead: the columns of each table with their kinds, a record with
attribute access and change tracking, and plain SQL run on the transaction's
DB-API connection (``Store.execute``: ``?`` placeholders, translated for
psycopg on PostgreSQL). There is one schema: ``tests/store/test_records.py``
holds these column lists, kinds and defaults equal to the peewee models, which
stay for migrations, the trajectory, people and ``migrate``; the board's
reads (ops/board.py, ops/board_pages.py, ops/runners.py) run here too.

Which connection: the store whose transaction is running (``Store.run`` and
``Store.read`` bind it for their body, in a context variable, so two boards open
in one process never mix), else the store opened last.
"""

from __future__ import annotations

import json
from contextvars import ContextVar

from ..authority.chain import data_text

# -- which store's connection ------------------------------------------------------------

_current: ContextVar = ContextVar("loopx_store", default=None)
_default = None


def bind_default(store) -> None:
    """The store statements run on outside a transaction (``Store.open``)."""
    global _default
    _default = store


def current():
    store = _current.get()
    return store if store is not None else _default


def using(store):
    """Bind ``store`` for the current context; returns the token to ``release``."""
    return _current.set(store)


def release(token) -> None:
    _current.reset(token)


def execute(sql: str, params=()):
    """Run one statement (``?`` placeholders) on the current transaction's connection; the cursor."""
    return current().execute(sql, params)


def rows(sql: str, params=()) -> list:
    return current().execute(sql, params).fetchall()


def scalar(sql: str, params=()):
    found = rows(sql, params)
    return found[0][0] if found else None


def exists(sql: str, params=()) -> bool:
    return bool(rows(f"SELECT 1 WHERE EXISTS ({sql})", params))


# -- tables ------------------------------------------------------------------------------

INT, FLOAT, TEXT, JSON, BOOL = "int", "float", "text", "json", "bool"
AUTO = object()  # the primary key the database numbers
LIST = list  # a callable default: a fresh list per row


class Table:
    """A table's name, primary key and columns ``(name, kind, default)`` (the
    database's column names: a foreign key is ``card_id``)."""

    def __init__(self, name: str, pk: str | None, columns: tuple):
        self.name = name
        self.pk = pk
        self.columns = columns
        self.names = tuple(c[0] for c in columns)
        self.quoted = f'"{name}"'
        self.select = "SELECT " + ", ".join(f'"{c}"' for c in self.names) + f" FROM {self.quoted}"
        self.json = tuple(c[0] for c in columns if c[1] == JSON)
        self.bools = tuple(c[0] for c in columns if c[1] == BOOL)
        self.auto = pk is not None and any(c[0] == pk and c[2] is AUTO for c in columns)


SETTING = Table("setting", "key", (("key", TEXT, None), ("value", TEXT, None), ("decided_seq", INT, None)))

AGENT = Table("agent", "id", (
    ("id", TEXT, None), ("runtime", TEXT, None), ("capabilities", JSON, LIST), ("watch", JSON, LIST),
    ("token_limit", INT, None), ("window_seconds", FLOAT, None), ("created_at", FLOAT, None),
    ("decided_seq", INT, None), ("window_usd", FLOAT, None), ("window_turns", INT, None),
))

CARD = Table("card", "id", (
    ("id", INT, AUTO), ("title", TEXT, None), ("body", TEXT, ""), ("status", TEXT, None), ("assignee", TEXT, None),
    ("needs", JSON, LIST), ("priority", INT, 2), ("next_action", TEXT, None), ("todos", JSON, LIST), ("todo_seq", INT, 0),
    ("verify", TEXT, None), ("max_turns", INT, None), ("max_tokens", INT, None), ("max_usd", FLOAT, None),
    ("used_turns", INT, 0), ("used_tokens", INT, 0), ("used_usd", FLOAT, 0.0),
    ("lease_holder", TEXT, None), ("lease_token", INT, None), ("lease_expires", FLOAT, None), ("fence", INT, 0),
    ("lease_seconds", FLOAT, None), ("version", INT, 1), ("paused_reason", TEXT, None), ("blocked_reason", TEXT, None),
    ("stalls", INT, 0), ("progress_mark", BOOL, False), ("evidence_count", INT, 0), ("unverified_evidence", INT, 0),
    ("monitor_every", FLOAT, None), ("monitor_due", FLOAT, None), ("handoff_to", TEXT, None),
    ("created_at", FLOAT, None), ("updated_at", FLOAT, None), ("done_at", FLOAT, None), ("budget_seq", INT, None),
    ("window_seconds", FLOAT, None), ("window_tokens", INT, None), ("window_usd", FLOAT, None), ("window_turns", INT, None),
    ("window_seq", INT, None), ("wake_at", FLOAT, None),
))

DEPENDENCY = Table("dependency", None, (("card_id", INT, None), ("after_id", INT, None)))

GATE = Table("gate", "id", (
    ("id", INT, AUTO), ("card_id", INT, None), ("agent", TEXT, None), ("kind", TEXT, "question"), ("question", TEXT, None),
    ("scope", TEXT, None), ("options", JSON, LIST), ("status", TEXT, None), ("answer", TEXT, None), ("note", TEXT, None),
    ("answered_by", TEXT, None), ("deadline", FLOAT, None), ("lease_token", INT, None), ("created_at", FLOAT, None),
    ("answered_at", FLOAT, None), ("answer_seq", INT, None),
))

GRANT = Table("grant", "id", (
    ("id", INT, AUTO), ("scope", TEXT, None), ("agent", TEXT, None), ("card", INT, None), ("expires_at", FLOAT, None),
    ("created_by", TEXT, None), ("gate", INT, None), ("created_at", FLOAT, None), ("decided_seq", INT, None),
))

EVIDENCE = Table("evidence", "id", (
    ("id", INT, AUTO), ("card_id", INT, None), ("agent", TEXT, None), ("turn_id", TEXT, None), ("summary", TEXT, None),
    ("artifacts", JSON, LIST), ("next_action", TEXT, None), ("todos_added", JSON, LIST), ("todos_done", JSON, LIST),
    ("tokens_in", INT, 0), ("tokens_out", INT, 0), ("tokens", INT, 0), ("usd", FLOAT, 0.0), ("source", TEXT, None),
    ("extra", JSON, None), ("unverified", BOOL, False), ("payload_hash", TEXT, None), ("created_at", FLOAT, None),
))

HANDOFF = Table("handoff", "id", (
    ("id", INT, AUTO), ("card_id", INT, None), ("from_agent", TEXT, None), ("to_agent", TEXT, None), ("packet", TEXT, None),
    ("digest", TEXT, None), ("created_by", TEXT, None), ("created_at", FLOAT, None), ("accepted_at", FLOAT, None),
    ("accepted_digest", TEXT, None),
))

OBSERVED = Table("observed", "id", (
    ("id", INT, AUTO), ("card_id", INT, None), ("agent", TEXT, None), ("path", TEXT, None), ("size", INT, None),
    ("sha256", TEXT, None), ("created_at", FLOAT, None),
))

OPERATION = Table("operation", "op_id", (
    ("op_id", TEXT, None), ("op", TEXT, None), ("payload_hash", TEXT, None), ("result", JSON, None),
    ("exit_code", INT, 0), ("created_at", FLOAT, None),
))

EVENT = Table("event", "seq", (
    ("seq", INT, AUTO), ("at", FLOAT, None), ("actor", TEXT, None), ("card", INT, None), ("kind", TEXT, None),
    ("data", JSON, dict), ("op_id", TEXT, None), ("prev", TEXT, None), ("hash", TEXT, None), ("key", TEXT, None),
    ("sig", TEXT, None),
))

# v4: the runner driving each agent (ops/runners.py), read by the board's snapshot.
RUNNER = Table("runner", "agent", (
    ("agent", TEXT, None), ("runner_id", TEXT, None), ("runtime", TEXT, None), ("pid", INT, None), ("host", TEXT, None),
    ("state", TEXT, None), ("card", INT, None), ("turn", INT, 0), ("turn_id", TEXT, None), ("gate", INT, None),
    ("wake_at", FLOAT, None), ("detail", TEXT, None), ("since", FLOAT, None), ("heartbeat", FLOAT, None),
    ("seen_seq", INT, None), ("started_at", FLOAT, None), ("control", TEXT, None), ("control_seq", INT, None),
))

# v7: a card's workspace, a git worktree on its own branch (ops/workspaces.py).
WORKSPACE = Table("workspace", "card_id", (
    ("card_id", INT, None), ("path", TEXT, None), ("branch", TEXT, None), ("base", TEXT, None), ("base_commit", TEXT, None),
    ("state", TEXT, None), ("head", TEXT, None), ("wip", TEXT, None), ("archive_ref", TEXT, None),
    ("opened_at", FLOAT, None), ("updated_at", FLOAT, None),
))

TABLES = (SETTING, AGENT, CARD, DEPENDENCY, GATE, GRANT, EVIDENCE, HANDOFF, OBSERVED, OPERATION, EVENT, RUNNER, WORKSPACE)


# -- records -----------------------------------------------------------------------------


def _stored(kind: str, value):
    """A Python value as its column stores it (coerced as peewee's fields coerce)."""
    if value is None:
        return None
    if kind == JSON:
        return data_text(value)
    if kind == TEXT:
        return value if type(value) is str else str(value)
    if kind == INT:
        return value if type(value) is int else int(value)
    if kind == FLOAT:
        return value if type(value) is float else float(value)
    return bool(value)


class Record:
    """One row: its columns as attributes. ``save`` writes the columns whose
    stored value changed since it was read (an in-place change of a JSON list
    included)."""

    table: Table

    def __init__(self, **values):
        t = self.table
        for name, kind, default in t.columns:
            if name in values:
                value = values.pop(name)
            elif default is AUTO:
                value = None
            else:
                value = default() if callable(default) else default
            self.__dict__[name] = value
        if values:
            raise TypeError(f"{t.name} has no column {', '.join(values)}")
        self.__dict__["_stored"] = None  # not in the database yet

    @classmethod
    def _loaded(cls, values: tuple) -> Record:
        row = cls.__new__(cls)
        t = cls.table
        data = dict(zip(t.names, values))
        stored = dict(data)
        for name in t.json:
            if data[name] is not None:
                data[name] = json.loads(data[name])
        for name in t.bools:
            if data[name] is not None:
                data[name] = bool(data[name])
                stored[name] = data[name]
        data["_stored"] = stored
        row.__dict__.update(data)
        return row

    def __repr__(self) -> str:
        pk = self.table.pk
        return f"<{self.table.name} {getattr(self, pk) if pk else ''}>"

    def changed(self) -> dict:
        """Stored values of the columns that differ from the row as read."""
        stored = self.__dict__["_stored"]
        out = {}
        for name, kind, _ in self.table.columns:
            value = _stored(kind, self.__dict__[name])
            if stored is None or stored.get(name) != value:
                out[name] = value
        return out

    def save(self) -> None:
        """UPDATE the changed columns (inside the caller's transaction)."""
        t = self.table
        changes = self.changed()
        changes.pop(t.pk, None)
        if not changes:
            return
        sets = ", ".join(f'"{name}" = ?' for name in changes)
        execute(f'UPDATE {t.quoted} SET {sets} WHERE "{t.pk}" = ?', (*changes.values(), getattr(self, t.pk)))
        self.__dict__["_stored"].update(changes)

    def insert(self) -> Record:
        """INSERT this new row; an automatic primary key is set from the database."""
        t = self.table
        values = {name: _stored(kind, self.__dict__[name]) for name, kind, _ in t.columns}
        if t.auto:
            values.pop(t.pk)
        cols = ", ".join(f'"{n}"' for n in values)
        marks = ", ".join("?" * len(values))
        sql = f"INSERT INTO {t.quoted} ({cols}) VALUES ({marks})"
        if t.auto:
            # fetchall, not fetchone: SQLite finishes the statement only once its rows are read.
            self.__dict__[t.pk] = execute(sql + f' RETURNING "{t.pk}"', tuple(values.values())).fetchall()[0][0]
            values[t.pk] = self.__dict__[t.pk]
        else:
            execute(sql, tuple(values.values()))
        self.__dict__["_stored"] = values
        return self

    @classmethod
    def create(cls, **values) -> Record:
        return cls(**values).insert()

    @classmethod
    def where(cls, clause: str = "", params=(), *, lock: bool = False) -> list:
        """Rows ``SELECT … FROM table <clause>`` (``clause``: WHERE/ORDER BY/LIMIT
        with ``?`` placeholders); ``lock``: locked for this transaction where the
        backend locks rows (SQLite's BEGIN IMMEDIATE already serialises writers)."""
        sql = cls.table.select + (" " + clause if clause else "")
        store = current()
        if lock and store.backend != "sqlite":
            sql += " FOR UPDATE"
        return [cls._loaded(values) for values in store.execute(sql, params).fetchall()]

    @classmethod
    def page(cls, after, conditions=(), limit: int | None = None) -> list:
        """The keyset page every list reads: rows whose primary key is above
        ``after``, in key order, meeting every ``(sql, params)`` condition, at
        most ``limit``."""
        pk = cls.table.pk
        clause, params = f'WHERE "{pk}" > ?', [after]
        for sql, values in conditions:
            clause += f" AND {sql}"
            params += values
        clause += f' ORDER BY "{pk}"'
        if limit is not None:
            clause += " LIMIT ?"
            params.append(limit)
        return cls.where(clause, tuple(params))

    @classmethod
    def first(cls, clause: str = "", params=(), *, lock: bool = False):
        found = cls.where(clause + " LIMIT 1", params, lock=lock)
        return found[0] if found else None

    @classmethod
    def get(cls, key, *, lock: bool = False):
        """The row with this primary key, or None."""
        return cls.first(f'WHERE "{cls.table.pk}" = ?', (key,), lock=lock)


class Setting(Record):
    table = SETTING


class Agent(Record):
    table = AGENT


class Card(Record):
    table = CARD


class Dependency(Record):
    table = DEPENDENCY


class Gate(Record):
    table = GATE


class Grant(Record):
    table = GRANT


class Evidence(Record):
    table = EVIDENCE


class Handoff(Record):
    table = HANDOFF


class Observed(Record):
    table = OBSERVED


class Operation(Record):
    table = OPERATION


class Event(Record):
    table = EVENT


class Runner(Record):
    table = RUNNER


class Workspace(Record):
    table = WORKSPACE
