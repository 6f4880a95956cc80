"""A PostgreSQL connection as cheap as a SQLite one: libpq through ctypes.

A per-turn verb on a team board runs a handful of statements; importing
psycopg costs it ~190 ms of CPU before the first (it loads asyncio, logging
and ``importlib.metadata`` for its version checks, ~230 modules), four times a
whole SQLite verb. libpq itself — the C client psycopg wraps, shipped inside
its binary wheel — connects and runs a statement for ~18 ms. So the store's
per-turn statements go to libpq directly (``pg.PostgresStore`` in its fast
mode); peewee and psycopg load only when something needs the models.

What is used is libpq's documented C API: ``PQconnectdb``, ``PQexecParams``
(text format), ``PQresultStatus``, ``PQgetvalue``/``PQgetisnull``, ``PQftype``,
``PQresultErrorField`` (SQLSTATE), ``PQtransactionStatus``; for LISTEN,
``PQsocket``, ``PQconsumeInput`` and ``PQnotifies``. Values come back as
psycopg returns them for LoopX's column types: integers, floats, booleans,
text; NULL as None.
"""

from __future__ import annotations

import ctypes
import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence
    from typing import Any


class Error(Exception):
    """What libpq said; ``sqlstate`` when the server gave one."""

    def __init__(self, message: str, sqlstate: str | None = None):
        super().__init__(message)
        self.sqlstate = sqlstate


class DatabaseError(Error):
    pass


class OperationalError(DatabaseError):
    """The connection, a lock timeout, a serialisation failure, the server going away."""


class IntegrityError(DatabaseError):
    pass


_OPERATIONAL = ("08", "40", "53", "55", "57", "58")  # SQLSTATE classes psycopg raises as OperationalError

# libpq's enums (libpq-fe.h)
_CONNECTION_OK = 0
_PGRES_COMMAND_OK, _PGRES_TUPLES_OK = 1, 2
_PQTRANS_IDLE, _PQTRANS_UNKNOWN = 0, 4
_PG_DIAG_SQLSTATE = ord("C")

# OIDs (pg_type) of the types LoopX's columns and expressions yield
_INTS = {20, 21, 23, 26}  # int8, int2, int4, oid
_FLOATS = {700, 701}  # float4, float8
_BOOL, _NUMERIC = 16, 1700


def _find() -> str | None:
    """The libpq psycopg's binary wheel ships (``psycopg_binary.libs``), found
    without importing psycopg; else the system's (``libpq.so.5``)."""
    from importlib.machinery import PathFinder

    spec = PathFinder.find_spec("psycopg_binary")
    if spec is not None and spec.submodule_search_locations:
        libs = os.path.join(os.path.dirname(list(spec.submodule_search_locations)[0]), "psycopg_binary.libs")
        try:
            found = sorted(name for name in os.listdir(libs) if name.startswith("libpq"))
        except OSError:
            found = []
        if found:
            return os.path.join(libs, found[0])
    return "libpq.dylib" if sys.platform == "darwin" else "libpq.so.5"


_lib = None


def _load() -> ctypes.CDLL:
    global _lib
    if _lib is None:
        path = _find()
        lib = ctypes.CDLL(path)
        vp, cp, i = ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int
        for name, res, args in (
            ("PQconnectdb", vp, [cp]),
            ("PQstatus", i, [vp]),
            ("PQerrorMessage", cp, [vp]),
            ("PQfinish", None, [vp]),
            (
                "PQexecParams",
                vp,
                [vp, cp, i, ctypes.POINTER(ctypes.c_uint), ctypes.POINTER(cp), ctypes.POINTER(i), ctypes.POINTER(i), i],
            ),
            ("PQresultStatus", i, [vp]),
            ("PQresultErrorMessage", cp, [vp]),
            ("PQresultErrorField", cp, [vp, i]),
            ("PQntuples", i, [vp]),
            ("PQnfields", i, [vp]),
            ("PQfname", cp, [vp, i]),
            ("PQftype", ctypes.c_uint, [vp, i]),
            ("PQgetvalue", cp, [vp, i, i]),
            ("PQgetisnull", i, [vp, i, i]),
            ("PQcmdTuples", cp, [vp]),
            ("PQclear", None, [vp]),
            ("PQtransactionStatus", i, [vp]),
            ("PQsocket", i, [vp]),
            ("PQconsumeInput", i, [vp]),
            ("PQnotifies", vp, [vp]),
            ("PQfreemem", None, [vp]),
        ):
            fn = getattr(lib, name)
            fn.restype, fn.argtypes = res, args
        _lib = lib
    return _lib


def available() -> bool:
    """Whether libpq can be loaded here (else the store uses psycopg)."""
    try:
        _load()
    except OSError:
        return False
    return True


def placeholders(sql: str) -> str:
    """``?`` (the store's placeholders, SQLite's) as libpq's ``$1``, ``$2`` …"""
    if "?" not in sql:
        return sql
    parts = sql.split("?")
    return "".join(part + (f"${n}" if n < len(parts) else "") for n, part in enumerate(parts, 1))


def _param(value: object) -> tuple[int, bytes | None]:
    """(type OID, text) of one parameter, typed as psycopg types it; text is
    left to the server to infer (OID 0), as psycopg does."""
    if value is None:
        return 0, None
    if value is True or value is False:
        return _BOOL, b"t" if value else b"f"
    if isinstance(value, int):
        oid = (
            21
            if -(2**15) <= value < 2**15
            else 23
            if -(2**31) <= value < 2**31
            else 20
            if -(2**63) <= value < 2**63
            else _NUMERIC
        )
        return oid, str(value).encode()
    if isinstance(value, float):
        return 701, repr(value).encode()
    if isinstance(value, bytes):
        return 17, b"\\x" + value.hex().encode()
    return 0, str(value).encode()


def _value(oid: int, raw: bytes) -> int | float | bool | bytes | str:
    if oid in _INTS:
        return int(raw)
    if oid in _FLOATS:
        return float(raw)
    if oid == _BOOL:
        return raw == b"t"
    if oid == _NUMERIC:  # SUM of integers: an int when whole, as the store compares it
        text = raw.decode()
        return int(text) if text.lstrip("-").isdigit() else float(text)
    if oid == 17:
        return bytes.fromhex(raw[2:].decode())
    return raw.decode()


class Cursor:
    """The rows of one statement (all fetched), as DB-API's cursor gives them."""

    def __init__(self, rows: list[tuple[Any, ...]], rowcount: int, description: list[tuple[Any, ...]] | None):
        self._rows = rows
        self._at = 0
        self.rowcount = rowcount
        self.description = description

    def fetchall(self) -> list[tuple]:
        rows, self._at = self._rows[self._at :], len(self._rows)
        return rows

    def fetchone(self) -> tuple[Any, ...] | None:
        if self._at >= len(self._rows):
            return None
        self._at += 1
        return self._rows[self._at - 1]

    def __iter__(self) -> Iterator[tuple[Any, ...]]:
        return iter(self.fetchall())


class Connection:
    """One libpq connection in autocommit: transactions are the caller's
    ``BEGIN`` … ``COMMIT``."""

    def __init__(self, url: str):
        self._lib = _load()
        self._conn = self._lib.PQconnectdb(url.encode())
        if self._lib.PQstatus(self._conn) != _CONNECTION_OK:
            message = self._message()
            self.close()
            raise OperationalError(message or "could not connect")

    def _message(self) -> str:
        raw = self._lib.PQerrorMessage(self._conn) if self._conn else None
        return raw.decode(errors="replace").strip() if raw else ""

    @property
    def closed(self) -> bool:
        return not self._conn

    @property
    def in_transaction(self) -> bool:
        """Inside a BEGIN (or a failed transaction not yet rolled back)."""
        if not self._conn:
            return False
        return self._lib.PQtransactionStatus(self._conn) not in (_PQTRANS_IDLE, _PQTRANS_UNKNOWN)

    def execute(self, sql: str, params: Sequence = ()) -> Cursor:
        """Run one statement (``?`` placeholders); every row is read at once."""
        if not self._conn:
            raise OperationalError("the connection is closed")
        lib, n = self._lib, len(params)
        types = (ctypes.c_uint * n)()
        values = (ctypes.c_char_p * n)()
        for k, value in enumerate(params):
            types[k], values[k] = _param(value)
        result = lib.PQexecParams(self._conn, placeholders(sql).encode(), n, types, values, None, None, 0)
        if not result:
            raise OperationalError(self._message() or "no result: the connection is gone")
        try:
            status = lib.PQresultStatus(result)
            if status not in (_PGRES_COMMAND_OK, _PGRES_TUPLES_OK):
                raw = lib.PQresultErrorField(result, _PG_DIAG_SQLSTATE)
                state = raw.decode() if raw else None
                message = (lib.PQresultErrorMessage(result) or b"").decode(errors="replace").strip() or self._message()
                if state is None or state[:2] in _OPERATIONAL:
                    raise OperationalError(message, state)
                raise (IntegrityError if state.startswith("23") else DatabaseError)(message, state)
            if status != _PGRES_TUPLES_OK:
                count = lib.PQcmdTuples(result)
                return Cursor([], int(count) if count else -1, None)
            width, height = lib.PQnfields(result), lib.PQntuples(result)
            oids = [lib.PQftype(result, c) for c in range(width)]
            getvalue, isnull = lib.PQgetvalue, lib.PQgetisnull
            rows = [
                tuple(None if isnull(result, r, c) else _value(oids[c], getvalue(result, r, c)) for c in range(width))
                for r in range(height)
            ]
            description = [
                (lib.PQfname(result, c).decode(), oids[c], None, None, None, None, None) for c in range(width)
            ]
            return Cursor(rows, height, description)
        finally:
            lib.PQclear(result)

    def fileno(self) -> int:
        """The connection's socket: readable when the server sent something (a notification)."""
        return self._lib.PQsocket(self._conn) if self._conn else -1

    def notifications(self) -> int:
        """How many notifications (LISTEN) arrived, read without waiting."""
        if not self._conn:
            raise OperationalError("the connection is closed")
        if not self._lib.PQconsumeInput(self._conn):
            raise OperationalError(self._message() or "the connection is gone")
        count = 0
        while True:
            found = self._lib.PQnotifies(self._conn)
            if not found:
                return count
            self._lib.PQfreemem(found)
            count += 1

    def close(self) -> None:
        if self._conn:
            self._lib.PQfinish(self._conn)
            self._conn = None

    def __del__(self) -> None:  # a thread's connection, dropped with the thread: let the server know
        try:
            self.close()
        except Exception:  # (at interpreter exit ctypes may be half gone)
            pass
