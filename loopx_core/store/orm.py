"""Import peewee without paying for drivers a SQLite board never uses.

peewee looks for its database drivers (``psycopg2``, ``psycopg``, ``pymysql``
…) as it is imported; with the PostgreSQL driver installed that alone costs
~180 ms in every process that loads the models. While peewee loads, the drivers
not yet imported are hidden, so it finds none, exactly as where none is
installed (peewee's documented behaviour: a driver is optional). In a process
that has named a PostgreSQL board (``discovery.parse_target``, which every
surface resolves its board with) or imported psycopg already, peewee finds it
as usual. Only Python's import system is used: nothing of peewee's is changed
afterwards.
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False  # (annotations only; checkers read this as typing's)
if TYPE_CHECKING:
    from typing import Any

_DRIVERS = ("psycopg", "psycopg2", "psycopg2cffi", "pymysql", "MySQLdb")


# (peewee as Any, as it always read here: with peewee-stubs' types the models'
# fields are descriptors, not the columns the row types (store/columns.py) say.)
def _load_peewee() -> tuple[Any, set[str]]:
    if "peewee" in sys.modules:
        return sys.modules["peewee"], set()
    from . import discovery

    hidden = {name for name in _DRIVERS if name not in sys.modules}
    if discovery.postgres_named:
        hidden.discard("psycopg")
    for name in hidden:
        sys.modules[name] = None  # type: ignore[assignment]  # makes `import name` raise ImportError
    try:
        import peewee as module
    finally:
        for name in hidden:
            if sys.modules.get(name) is None:
                del sys.modules[name]
    return module, hidden


peewee, _hidden = _load_peewee()


def has_psycopg() -> bool:
    """Whether peewee was loaded with psycopg in sight (so it can open PostgreSQL boards)."""
    return "psycopg" not in _hidden and "psycopg" in sys.modules
