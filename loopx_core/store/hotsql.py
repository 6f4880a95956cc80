"""The statements every turn runs, as SQL built once per backend.

Peewee builds a query's SQL anew on each call, and for the 36-column card row
that costs several times what SQLite needs to run the statement: it was most of
a writeback's time (bench/watch_bench.py). These helpers keep the models, the
field conversions (``db_value``/``python_value``) and the caller's transaction;
they only skip rebuilding the SQL text. Everything else keeps using peewee's
query builder — only statements on the per-turn path belong here.
"""

from __future__ import annotations

from .models import database

_built: dict[tuple, tuple] = {}


def _db():
    return database.obj


def select_rows(model, name: str, build, *params) -> list:
    """Rows of ``model`` for the query ``build()`` returns, run with ``params``.

    ``build`` is called once per backend (parameter style and row locking
    differ); its query must take exactly ``len(params)`` parameters in the
    order given — placeholder values in it are replaced by ``params``.
    """
    db = _db()
    key = (type(db), model, name)
    entry = _built.get(key)
    if entry is None:
        sql, built_params = build().sql()
        entry = _built[key] = (sql, len(built_params), {})
    sql, arity, readers = entry
    if arity != len(params):
        raise TypeError(f"hotsql {name}: the query takes {arity} parameters, {len(params)} given")
    cursor = db.execute_sql(sql, params)
    rows = cursor.fetchall()
    if not rows:
        return []
    columns = tuple(d[0] for d in cursor.description)
    reader = readers.get(columns)
    if reader is None:
        # (field name, python_value) per column: what peewee's row wrapper would
        # work out again for every query.
        reader = readers[columns] = [(model._meta.columns[c].name, model._meta.columns[c].python_value) for c in columns]
    out = []
    for values in rows:
        row = model(__no_default__=1)
        row.__data__.update({name: convert(v) for (name, convert), v in zip(reader, values)})
        out.append(row)
    return out


def select_one(model, name: str, build, *params):
    rows = select_rows(model, name, build, *params)
    return rows[0] if rows else None


def _quote(db, name: str) -> str:
    return db.quote[0] + name + db.quote[1]


def _columns(model) -> list:
    return [f for f in model._meta.sorted_fields if f is not model._meta.primary_key]


def insert_row(row):
    """INSERT a new model instance (defaults already applied by its constructor)
    and set its auto primary key. Returns the instance."""
    db = _db()
    model = type(row)
    key = (type(db), model, "insert")
    entry = _built.get(key)
    if entry is None:
        fields = _columns(model)
        pk = model._meta.primary_key
        cols = ", ".join(_quote(db, f.column_name) for f in fields)
        marks = ", ".join([db.param] * len(fields))
        sql = f"INSERT INTO {_quote(db, model._meta.table_name)} ({cols}) VALUES ({marks}) RETURNING {_quote(db, pk.column_name)}"
        entry = _built[key] = (sql, fields)
    sql, fields = entry
    data = row.__data__
    cursor = db.execute_sql(sql, [f.db_value(data.get(f.name)) for f in fields])
    # fetchall, not fetchone: SQLite finishes the statement only once its rows are read.
    row._pk = cursor.fetchall()[0][0]
    row._dirty.clear()
    return row


def save_row(row) -> None:
    """UPDATE every column of an existing row (what ``row.save()`` does, minus building the SQL)."""
    db = _db()
    model = type(row)
    key = (type(db), model, "update")
    entry = _built.get(key)
    if entry is None:
        fields = _columns(model)
        pk = model._meta.primary_key
        sets = ", ".join(f"{_quote(db, f.column_name)} = {db.param}" for f in fields)
        sql = f"UPDATE {_quote(db, model._meta.table_name)} SET {sets} WHERE {_quote(db, pk.column_name)} = {db.param}"
        entry = _built[key] = (sql, fields)
    sql, fields = entry
    data = row.__data__
    if any(f.name not in data for f in fields):
        row.save()  # loaded with some columns only: save writes just those
        return
    db.execute_sql(sql, [f.db_value(data[f.name]) for f in fields] + [row._pk])
    row._dirty.clear()
