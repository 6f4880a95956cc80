"""One schema: the per-turn path's record layer (store/records.py) reads its
column lists, kinds and defaults from store/columns.py, which is generated from
the peewee models (store/models.py) that migrations, export and the trajectory
use. A column added to a model and not regenerated fails here."""

from __future__ import annotations

import ast
from pathlib import Path

from loopx_core.authority import trust
from loopx_core.store import columns, columns_gen, models, records


def test_the_cold_paths_columns_are_generated_from_the_models():
    written = Path(columns.__file__).read_text()
    assert written == columns_gen.render(), (
        "store/columns.py is stale: run `.venv/bin/python -m loopx_core.store.columns_gen`"
    )


def test_each_record_table_is_its_models_table():
    """Spot checks of what the generation reads off the models, kinds and defaults alike."""
    card = {name: (kind, default) for name, kind, default in records.CARD.columns}
    assert records.CARD.names[0] == "id" and card["id"] == (records.INT, records.AUTO) and records.CARD.auto
    assert card["needs"] == (records.JSON, list) and card["progress_mark"] == (records.BOOL, False)
    assert (
        card["used_usd"] == (records.FLOAT, 0.0)
        and card["body"] == (records.TEXT, "")
        and card["priority"] == (records.INT, 2)
    )
    assert records.DEPENDENCY.pk is None and records.DEPENDENCY.names == ("card_id", "after_id")
    assert records.EVENT.pk == "seq" and dict((n, d) for n, _, d in records.EVENT.columns)["data"] is dict
    for table in records.TABLES:
        model = next(m for m in models.every_model() if m._meta.table_name == table.name)
        assert table.names == tuple(f.column_name for f in model._meta.sorted_fields)


def _classes(module) -> dict[str, ast.ClassDef]:
    tree = ast.parse(Path(module.__file__).read_text())
    return {node.name: node for node in ast.walk(tree) if isinstance(node, ast.ClassDef)}


def test_each_row_class_declares_its_own_tables_columns_to_the_type_checker():
    """The columns are attributes set from the table at run time; the type checker
    reads them from the generated ``…Columns`` class a row class names as its base
    (object at run time): the right one for its table."""
    declared = _classes(records)
    for row_class in records.Record.__subclasses__():
        model = next(m for m in models.every_model() if m._meta.table_name == row_class.table.name)
        bases = [b.id for b in declared[row_class.__name__].bases if isinstance(b, ast.Name)]
        assert bases == ["Record", columns_gen.columns_class(model)], row_class


def test_the_typed_event_row_has_the_columns_it_selects():
    """trust.EventRow is a namedtuple of EVENT_COLUMNS at run time; the type checker reads the typed twin."""
    typed = _classes(trust)["_EventFields"]
    fields = [
        node.target.id for node in typed.body if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name)
    ]
    assert tuple(fields) == trust.EventRow._fields == tuple(trust.EVENT_COLUMNS.split(", "))


def test_the_per_turn_tables_are_all_covered():
    assert {t.name for t in records.TABLES} <= set(columns.TABLES)
    assert {"card", "event", "evidence", "gate", "runner"} <= {t.name for t in records.TABLES}


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
            assert (row.needs, row.todos, row.progress_mark, row.priority, row.body) == (
                ["git:push"],
                [{"id": 1, "text": "x", "done": False}],
                True,
                2,
                "",
            )
            models.Card.update(title="renamed", used_usd=1.5).where(models.Card.id == card_id).execute()
            again = records.Card.get(card_id)
            assert (again.title, again.used_usd, again.needs, again.progress_mark) == (
                "renamed",
                1.5,
                ["git:push"],
                True,
            )
            assert again.changed() == {}
    finally:
        store.close()
