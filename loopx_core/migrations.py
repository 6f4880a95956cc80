"""Schema versions and forward migrations. An old board opens: ``Store.open``
runs every step above the board's version, in one write transaction."""

from __future__ import annotations

from . import models

SCHEMA_VERSION = 2


def _v1(db) -> None:
    db.create_tables(models.TABLES)


def _v2(db) -> None:
    """The file watcher's state: JSONL read offsets and documents already handled."""
    db.create_tables(models.WATCH_TABLES)


# (version reached, step). Append new steps; never edit a released one.
STEPS = [(1, _v1), (2, _v2)]
