"""Schema versions and forward migrations. An old board opens: ``Store.open``
runs every step above the board's version, in one write transaction."""

from __future__ import annotations

from . import models

SCHEMA_VERSION = 3


def _v1(db) -> None:
    db.create_tables(models.TABLES)


def _v2(db) -> None:
    """The file watcher's state: JSONL read offsets and documents already handled."""
    db.create_tables(models.WATCH_TABLES)


def _v3(db) -> None:
    """Evidence identity (DESIGN §7): whether a piece of evidence has a
    verifiable writer, and how many on each card have not. (A board created at
    v3 already has both columns from ``_v1``.)"""
    for table, column, ddl in (("evidence", "unverified", "BOOLEAN NOT NULL DEFAULT FALSE"), ("card", "unverified_evidence", "INTEGER NOT NULL DEFAULT 0")):
        if column not in {c.name for c in db.get_columns(table)}:
            db.execute_sql(f'ALTER TABLE "{table}" ADD COLUMN "{column}" {ddl}')


# (version reached, step). Append new steps; never edit a released one.
STEPS = [(1, _v1), (2, _v2), (3, _v3)]
