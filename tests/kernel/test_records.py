"""One schema: the per-turn path's record layer (store/records.py) names the
same columns, kinds and defaults as the peewee models (store/models.py) that
migrations, export and the trajectory use. A column added to one and
not the other fails here."""

from __future__ import annotations

import pytest

from loopx_core.store import models, records
from loopx_core.store.orm import peewee as pw

MODELS = {m._meta.table_name: m for m in (*models.TABLES, models.Runner)}


def _kind(field) -> str:
    if isinstance(field, models.JSONText):
        return records.JSON
    if isinstance(field, pw.BooleanField):
        return records.BOOL
    if isinstance(field, (pw.DoubleField, pw.FloatField)):
        return records.FLOAT
    if isinstance(field, (pw.IntegerField, pw.ForeignKeyField)):  # AutoField and BigIntegerField are IntegerFields
        return records.INT
    assert isinstance(field, (pw.CharField, pw.TextField)), field
    return records.TEXT


def _default(value):
    return value() if callable(value) else value


@pytest.mark.parametrize("table", records.TABLES, ids=lambda t: t.name)
def test_each_record_table_is_its_models_table(table):
    model = MODELS[table.name]
    fields = model._meta.sorted_fields
    assert table.names == tuple(f.column_name for f in fields)
    assert [c[1] for c in table.columns] == [_kind(f) for f in fields]
    for (name, _, default), field in zip(table.columns, fields):
        if isinstance(field, pw.AutoField):
            assert default is records.AUTO, name
        else:
            assert _default(default) == _default(field.default), name
    pk = model._meta.primary_key
    assert table.pk == (None if isinstance(pk, pw.CompositeKey) else pk.column_name)


def test_the_per_turn_tables_are_all_covered():
    assert {t.name for t in records.TABLES} == set(MODELS)


def test_a_record_reads_and_writes_what_the_models_read_and_write(board):
    """A card written through the records reads back the same through peewee, and the other way round."""
    store = board.store()
    try:
        def write():
            card = records.Card.create(title="t", status="ready", needs=["git:push"], created_at=1.0, updated_at=1.0)
            card.todos = [{"id": 1, "text": "x", "done": False}]
            card.progress_mark = True
            card.save()
            return card.id

        card_id = store.run(write)
        with store.read():
            row = models.Card.get_by_id(card_id)
            assert (row.needs, row.todos, row.progress_mark, row.priority, row.body) == (["git:push"], [{"id": 1, "text": "x", "done": False}], True, 2, "")
            models.Card.update(title="renamed", used_usd=1.5).where(models.Card.id == card_id).execute()
            again = records.Card.get(card_id)
            assert (again.title, again.used_usd, again.needs, again.progress_mark) == ("renamed", 1.5, ["git:push"], True)
            assert again.changed() == {}
    finally:
        store.close()
