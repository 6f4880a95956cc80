"""``loopx migrate --to URL``: copy a board to another backend, events included,
verified by row counts and a checksum of every table."""

from __future__ import annotations

import hashlib
import json

from ..shapes.errors import Conflict
from . import models
from .backends import Store

BATCH = 500
# The watcher's state travels too: without it a watcher on the copy would read
# every stream from the start and report every refused file a second time.
COPIED = models.TABLES + models.WATCH_TABLES + models.RUNNER_TABLES


def _rows(model: type[models.Base]) -> list[dict]:
    pk = model._meta.primary_key
    order = [getattr(model, name) for name in pk.field_names] if isinstance(pk, models.pw.CompositeKey) else [pk]
    return list(model.select().order_by(*order).dicts())


def _checksum(rows: list[dict]) -> str:
    digest = hashlib.sha256()
    for row in rows:
        digest.update(json.dumps(row, sort_keys=True, separators=(",", ":"), default=str).encode())
        digest.update(b"\n")
    return digest.hexdigest()


def fingerprint(store: Store) -> dict[str, dict]:
    with store.db.bind_ctx(COPIED), store.read():
        return {m._meta.table_name: {"rows": len(r), "sha256": _checksum(r)} for m in COPIED for r in [_rows(m)]}


def migrate(source: Store, target: Store) -> dict:
    """Copy every table of ``source`` into the empty board ``target``."""
    with source.db.bind_ctx(COPIED), source.read():
        data = {m: _rows(m) for m in COPIED}
    before = {m._meta.table_name: {"rows": len(r), "sha256": _checksum(r)} for m, r in data.items()}
    with target.db.bind_ctx(COPIED):
        busy = [m._meta.table_name for m in COPIED if m is not models.Setting and m.select().exists()]
        if busy:
            raise Conflict(
                f"the target board is not empty ({', '.join(busy)})",
                "migrate into a fresh board: a new SQLite path or an empty PostgreSQL database/schema",
                code="target_not_empty",
            )

        def copy() -> None:
            models.Setting.delete().execute()
            for model, rows in data.items():
                for i in range(0, len(rows), BATCH):
                    model.insert_many(rows[i : i + BATCH]).execute()
            if target.backend == "postgresql":
                from .pg import reset_sequences

                reset_sequences(target.db, models.TABLES)

        target.run(copy)
        target._settings = None
    after = fingerprint(target)
    if after != before:
        bad = [t for t in before if before[t] != after.get(t)]
        raise Conflict(
            f"verification failed for {', '.join(bad)}",
            "the target was written but does not match; drop it and retry",
            code="verify_failed",
        )
    return {"tables": before, "verified": True}
