"""Writes ``columns.py``, the per-turn path's column lists, from the peewee models.

The models (``models.py``) are the one schema; a cold agent process must not
import peewee to learn it, so this module turns each model into a plain
standard-library table: its columns in the models' order, each with its kind
and its default. ``tests/kernel/test_records.py`` fails while ``columns.py``
differs from what this writes. After changing a model::

    .venv/bin/python -m loopx_core.store.columns_gen
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from . import models
from .orm import peewee as pw

TARGET = Path(__file__).with_name("columns.py")

HEADER = '''"""The board's tables as the per-turn path reads them (``records.py``),
generated from the peewee models by ``python -m loopx_core.store.columns_gen``:
do not edit (tests/kernel/test_records.py fails while it differs).

``TABLES[name] = (primary key, columns)``; a column is ``(name, kind, default)``
with the database's column name (a foreign key is ``card_id``), a kind of
``int``, ``float``, ``text``, ``json`` or ``bool``, and a default that is a
value, ``list``/``dict`` (called for a fresh one per row), or ``...`` where the
database numbers the key itself. The primary key is None for a composite one.
"""

TABLES = {
'''


def kind(field) -> str:
    """The stored kind of a model field, as ``records.py`` converts it."""
    if isinstance(field, models.JSONText):
        return "json"
    if isinstance(field, pw.BooleanField):
        return "bool"
    if isinstance(field, (pw.DoubleField, pw.FloatField)):
        return "float"
    if isinstance(field, (pw.IntegerField, pw.ForeignKeyField)):  # AutoField and BigIntegerField are IntegerFields
        return "int"
    if isinstance(field, (pw.CharField, pw.TextField)):
        return "text"
    raise TypeError(f"{field.model.__name__}.{field.name}: no per-turn kind for {type(field).__name__}")


def default(field) -> str:
    if isinstance(field, pw.AutoField):
        return "..."
    value = field.default
    if value in (list, dict):
        return value.__name__
    if callable(value):
        raise TypeError(f"{field.model.__name__}.{field.name}: a default the cold path cannot name ({value!r})")
    return _literal(value)


def _literal(value) -> str:
    return json.dumps(value) if isinstance(value, str) else repr(value)


def render() -> str:
    lines = [HEADER]
    for model in models.every_model():
        meta = model._meta
        pk = None if isinstance(meta.primary_key, pw.CompositeKey) else meta.primary_key.column_name
        lines.append(f"    {_literal(meta.table_name)}: ({_literal(pk)}, (\n")
        for field in meta.sorted_fields:
            lines.append(f"        ({_literal(field.column_name)}, {_literal(kind(field))}, {default(field)}),\n")
        lines.append("    )),\n")
    lines.append("}\n")
    return "".join(lines)


def main() -> int:
    text = render()
    if TARGET.exists() and TARGET.read_text() == text:
        print(f"{TARGET.name} is up to date")
        return 0
    TARGET.write_text(text)
    print(f"wrote {TARGET}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
