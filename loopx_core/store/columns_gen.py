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

TYPED = """
TYPE_CHECKING = False  # (typing is not imported on the cold path; checkers read this as typing's)

if TYPE_CHECKING:  # each table's columns as a row's attributes (records.py's row classes)
    from typing import Any
"""


def kind(field: pw.Field) -> str:
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


def default(field: pw.Field) -> str:
    if isinstance(field, pw.AutoField):
        return "..."
    value = field.default
    if value in (list, dict):
        return value.__name__
    if callable(value):
        raise TypeError(f"{field.model.__name__}.{field.name}: a default the cold path cannot name ({value!r})")
    return _literal(value)


def _literal(value: object) -> str:
    return json.dumps(value) if isinstance(value, str) else repr(value)


_PYTHON = {"int": "int", "float": "float", "text": "str", "bool": "bool"}


def python_type(field: pw.Field) -> str:
    """The attribute's type on a row (``records.py``), for the type checker."""
    name = kind(field)
    if name == "json":
        named = {list: "list[Any]", dict: "dict[str, Any]"}.get(field.default, "Any")
    else:
        named = _PYTHON[name]
    return f"{named} | None" if field.null and named != "Any" else named


def columns_class(model: type[pw.Model]) -> str:
    """``TableColumns``: the name of the class declaring a table's columns as attributes."""
    return "".join(part.title() for part in model._meta.table_name.split("_")) + "Columns"


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
    lines.append(TYPED)
    for model in models.every_model():
        lines.append(f"\n    class {columns_class(model)}:\n")
        for field in model._meta.sorted_fields:
            lines.append(f"        {field.column_name}: {python_type(field)}\n")
    lines.append("\nelse:\n")
    names = [columns_class(model) for model in models.every_model()]
    lines.append("    " + " = ".join(names) + " = object\n")
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
