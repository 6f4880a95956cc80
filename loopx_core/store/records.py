"""The per-turn path's rows, over the standard library alone (DESIGN §3 "Two layers over one schema").

An agent's verbs (next, claim, heartbeat, writeback, context, done, gate ask,
gate status, card add, release, handoff, accept) run in a cold process
thousands of times a day. Building SQL with peewee and its models cost most of
such a call, so the operators read and write the tables they touch through this
layer instead: the columns of each table with their kinds, a record with
attribute access and change tracking, and plain SQL run on the transaction's
DB-API connection (``Store.execute``: ``?`` placeholders, translated for
psycopg on PostgreSQL). There is one schema, the peewee models: the column lists, kinds and
defaults here come from ``columns.py``, generated from the models
(``columns_gen.py``; tests/kernel/test_records.py fails while it differs). The
models stay for migrations, the trajectory, people and ``migrate``; the board's
reads (ops/board.py, ops/board_pages.py, ops/runners.py) run here too.

Which connection: the store whose transaction is running (``Store.run`` and
``Store.read`` bind it for their body, in a context variable, so two boards open
in one process never mix), else the store opened last.
"""

from __future__ import annotations

import json
from contextvars import ContextVar

from ..authority.chain import data_text
from . import columns as _columns
from .columns import (
    AgentColumns,
    CardColumns,
    CardTryColumns,
    DependencyColumns,
    EventColumns,
    EvidenceColumns,
    GateColumns,
    GrantColumns,
    HandoffColumns,
    ObservedColumns,
    OperationColumns,
    PersonColumns,
    RunnerColumns,
    SettingColumns,
    WorkspaceColumns,
)

TYPE_CHECKING = False  # (typing is not imported on the cold path; checkers read this as typing's)
if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence
    from contextvars import Token
    from typing import Any, Protocol, Self

    from .discovery import BoardLocation

    # A statement's parameters (``?`` placeholders), in order.
    Params = Sequence[Any]

    class Cursor(Protocol):
        """A statement's cursor (sqlite3's, or store/libpq.py's): its rows (tuples
        of column values) and how many rows it changed."""

        @property
        def rowcount(self) -> int: ...
        def fetchall(self) -> list[Any]: ...
        def fetchone(self) -> Any: ...

    class Store(Protocol):
        """The open board statements run on (``base.Store``, which imports this module)."""

        backend: str
        locks_rows: bool
        location: BoardLocation

        def execute(self, sql: str, params: Params = ...) -> Cursor: ...
        def before_append(self) -> None: ...

# -- which store's connection ------------------------------------------------------------

_current: ContextVar[Store | None] = ContextVar("loopx_store", default=None)
_default: Store | None = None


def bind_default(store: Store) -> None:
    """The store statements run on outside a transaction (``Store.open``)."""
    global _default
    _default = store


def current_or_none() -> Store | None:
    """The store statements run on here, or None before any board was opened."""
    store = _current.get()
    return store if store is not None else _default


def current() -> Store:
    """The store statements run on here (a statement before any board was
    opened is a bug, said as one)."""
    found = current_or_none()
    if found is None:
        raise RuntimeError("no board is open: Store.open binds one")
    return found


def using(store: Store) -> Token[Store | None]:
    """Bind ``store`` for the current context; returns the token to ``release``."""
    return _current.set(store)


def release(token: Token[Store | None]) -> None:
    _current.reset(token)


def execute(sql: str, params: Params = ()) -> Cursor:
    """Run one statement (``?`` placeholders) on the current transaction's connection; the cursor."""
    return current().execute(sql, params)


def rows(sql: str, params: Params = ()) -> list[Any]:
    return current().execute(sql, params).fetchall()


def scalar(sql: str, params: Params = ()) -> Any:  # (a column's value, or None)
    found = rows(sql, params)
    return found[0][0] if found else None


def exists(sql: str, params: Params = ()) -> bool:
    return bool(rows(f"SELECT 1 WHERE EXISTS ({sql})", params))


# -- tables ------------------------------------------------------------------------------

INT, FLOAT, TEXT, JSON, BOOL = "int", "float", "text", "json", "bool"
AUTO = ...  # the primary key the database numbers
LIST = list  # a callable default: a fresh list per row


class Table:
    """A table's name, primary key and columns ``(name, kind, default)`` (the
    database's column names: a foreign key is ``card_id``)."""

    @classmethod
    def of(cls, name: str) -> Table:
        """The table as the models declare it (``columns.py``, generated from them)."""
        pk, columns = _columns.TABLES[name]
        return cls(name, pk, columns)

    def __init__(self, name: str, pk: str | None, columns: tuple[tuple[str, str, Any], ...]):
        self.name = name
        self.pk = pk
        self.columns = columns
        self.names = tuple(c[0] for c in columns)
        self.quoted = f'"{name}"'
        self.select = "SELECT " + ", ".join(f'"{c}"' for c in self.names) + f" FROM {self.quoted}"
        self.json = tuple(c[0] for c in columns if c[1] == JSON)
        self.bools = tuple(c[0] for c in columns if c[1] == BOOL)
        self.auto = pk is not None and any(c[0] == pk and c[2] is AUTO for c in columns)


SETTING = Table.of("setting")
AGENT = Table.of("agent")
CARD = Table.of("card")
DEPENDENCY = Table.of("dependency")
GATE = Table.of("gate")
GRANT = Table.of("grant")
EVIDENCE = Table.of("evidence")
HANDOFF = Table.of("handoff")
OBSERVED = Table.of("observed")
OPERATION = Table.of("operation")
EVENT = Table.of("event")
RUNNER = Table.of("runner")  # v4: the runner driving each agent (ops/runners.py), read by the board's snapshot
WORKSPACE = Table.of("workspace")  # v7: a card's workspace, a git worktree on its own branch (ops/workspaces.py)
CARD_TRY = Table.of("card_try")  # v8: a try's link to the card it tries (ops/try_family.py)

PERSON = Table.of("person")  # v3: the board's people (ops/people.py), so a person's verbs load no ORM either

TABLES = (
    SETTING,
    AGENT,
    CARD,
    DEPENDENCY,
    GATE,
    GRANT,
    EVIDENCE,
    HANDOFF,
    OBSERVED,
    OPERATION,
    EVENT,
    RUNNER,
    WORKSPACE,
    CARD_TRY,
    PERSON,
)


# -- records -----------------------------------------------------------------------------


def _stored(kind: str, value: Any) -> str | int | float | bool | None:
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

    def __init__(self, **values: Any):
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
    def _loaded(cls, values: tuple[Any, ...]) -> Self:
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

    def changed(self) -> dict[str, str | int | float | bool | None]:
        """Stored values of the columns that differ from the row as read."""
        stored = self.__dict__["_stored"]
        out: dict[str, str | int | float | bool | None] = {}
        for name, kind, _ in self.table.columns:
            value = _stored(kind, self.__dict__[name])
            if stored is None or stored.get(name) != value:
                out[name] = value
        return out

    def save(self) -> None:
        """UPDATE the changed columns (inside the caller's transaction)."""
        t = self.table
        pk = t.pk
        if pk is None:
            raise TypeError(f"{t.name} has no one-column key: its rows are not updated in place")
        changes = self.changed()
        changes.pop(pk, None)
        if not changes:
            return
        sets = ", ".join(f'"{name}" = ?' for name in changes)
        execute(f'UPDATE {t.quoted} SET {sets} WHERE "{pk}" = ?', (*changes.values(), getattr(self, pk)))
        self.__dict__["_stored"].update(changes)

    def insert(self) -> Self:
        """INSERT this new row; an automatic primary key is set from the database."""
        t = self.table
        values = {name: _stored(kind, self.__dict__[name]) for name, kind, _ in t.columns}
        auto = t.pk if t.auto else None
        if auto is not None:
            values.pop(auto)
        cols = ", ".join(f'"{n}"' for n in values)
        marks = ", ".join("?" * len(values))
        sql = f"INSERT INTO {t.quoted} ({cols}) VALUES ({marks})"
        if auto is not None:
            # fetchall, not fetchone: SQLite finishes the statement only once its rows are read.
            self.__dict__[auto] = execute(sql + f' RETURNING "{auto}"', tuple(values.values())).fetchall()[0][0]
            values[auto] = self.__dict__[auto]
        else:
            execute(sql, tuple(values.values()))
        self.__dict__["_stored"] = values
        return self

    @classmethod
    def create(cls, **values: Any) -> Self:
        return cls(**values).insert()

    @classmethod
    def where(cls, clause: str = "", params: Params = (), *, lock: bool = False) -> list[Self]:
        """Rows ``SELECT … FROM table <clause>`` (``clause``: WHERE/ORDER BY/LIMIT
        with ``?`` placeholders); ``lock``: locked for this transaction where the
        backend locks rows (SQLite's BEGIN IMMEDIATE already serialises writers)."""
        sql = cls.table.select + (" " + clause if clause else "")
        store = current()
        if lock and store.locks_rows:
            sql += " FOR UPDATE"
        return [cls._loaded(values) for values in store.execute(sql, params).fetchall()]

    @classmethod
    def page(
        cls, after: int | str, conditions: Iterable[tuple[str, Params]] = (), limit: int | None = None
    ) -> list[Self]:
        """The keyset page every list reads: rows whose primary key is above
        ``after``, in key order, meeting every ``(sql, params)`` condition, at
        most ``limit``."""
        pk = cls.table.pk
        clause = f'WHERE "{pk}" > ?'
        params: list[Any] = [after]
        for sql, values in conditions:
            clause += f" AND {sql}"
            params += values
        clause += f' ORDER BY "{pk}"'
        if limit is not None:
            clause += " LIMIT ?"
            params.append(limit)
        return cls.where(clause, tuple(params))

    @classmethod
    def first(cls, clause: str = "", params: Params = (), *, lock: bool = False) -> Self | None:
        found = cls.where(clause + " LIMIT 1", params, lock=lock)
        return found[0] if found else None

    @classmethod
    def get(cls, key: int | str, *, lock: bool = False) -> Self | None:
        """The row with this primary key, or None."""
        return cls.first(f'WHERE "{cls.table.pk}" = ?', (key,), lock=lock)


class Setting(Record, SettingColumns):
    table = SETTING


class Agent(Record, AgentColumns):
    table = AGENT


class Card(Record, CardColumns):
    table = CARD


class Dependency(Record, DependencyColumns):
    table = DEPENDENCY


class Gate(Record, GateColumns):
    table = GATE


class Grant(Record, GrantColumns):
    table = GRANT


class Evidence(Record, EvidenceColumns):
    table = EVIDENCE


class Handoff(Record, HandoffColumns):
    table = HANDOFF


class Observed(Record, ObservedColumns):
    table = OBSERVED


class Operation(Record, OperationColumns):
    table = OPERATION


class Event(Record, EventColumns):
    table = EVENT


class Runner(Record, RunnerColumns):
    table = RUNNER


class Workspace(Record, WorkspaceColumns):
    table = WORKSPACE


class CardTry(Record, CardTryColumns):
    table = CARD_TRY


class Person(Record, PersonColumns):
    table = PERSON
