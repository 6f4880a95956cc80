"""Schema versions and forward migrations. An old board opens: ``Store.open``
runs every step above the board's version, in one write transaction."""

from __future__ import annotations

from . import models

SCHEMA_VERSION = 1


def _v1(db) -> None:
    db.create_tables(models.TABLES)


# (version reached, step). Append new steps; never edit a released one.
STEPS = [(1, _v1)]
