"""Import peewee without paying for drivers a SQLite board never uses.

peewee tries ``import psycopg2`` and ``import psycopg`` at import time; with the
driver installed that alone costs ~200 ms in every cold agent process. We hide
the drivers while peewee loads and hand psycopg over only when a PostgreSQL
board is opened (``enable_psycopg``).
"""

from __future__ import annotations

import sys

_DRIVERS = ("psycopg", "psycopg2", "psycopg2cffi", "pymysql", "MySQLdb")


def _load_peewee():
    if "peewee" in sys.modules:
        return sys.modules["peewee"]
    hidden = [name for name in _DRIVERS if name not in sys.modules]
    for name in hidden:
        sys.modules[name] = None  # type: ignore[assignment]  # makes `import name` raise ImportError
    try:
        import peewee as module
    finally:
        for name in hidden:
            if sys.modules.get(name) is None:
                del sys.modules[name]
    return module


peewee = _load_peewee()


def enable_psycopg() -> None:
    """Give peewee the psycopg (v3) driver after the fact, for PostgreSQL boards."""
    if getattr(peewee, "psycopg", None) is not None:
        return
    import psycopg
    from psycopg.pq import TransactionStatus
    from psycopg.types.json import Json, Jsonb

    peewee.psycopg = psycopg
    peewee.TransactionStatus = TransactionStatus
    peewee.Json_pg3 = Json
    peewee.Jsonb_pg3 = Jsonb
