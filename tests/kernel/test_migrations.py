"""The frozen migrations make exactly the models' schema. A board made today
passes through every step in ``store/migrations.py`` (each says in SQL what its
version created); the peewee models (``store/models.py``) are the one schema the
rest of LoopX reads. The two are held equal here on both backends: the same
tables, the same columns in the same order with the same types, nullability and
primary keys, the same foreign keys and the same indexes. (Column defaults stay
in Python, with the models: the two columns a v3 step added to tables already
full of rows carry a SQL default as well, which no write relies on.)

A column added to a model without a step, or a step whose SQL says something
else than the model, fails here — whatever steps exist."""

from __future__ import annotations

import uuid
from urllib.parse import quote

import pytest

from loopx_core.store import models
from loopx_core.store.backends import Store
from loopx_core.store.discovery import parse_target
from loopx_core.store.orm import peewee as pw
from tests import board_sql


def _sqlite_schema(path) -> dict:
    con = board_sql.connect(path)
    try:
        tables = [r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")]
        schema = {}
        for table in tables:
            columns = [
                (name, kind.upper(), bool(notnull), pk)
                for _, name, kind, notnull, _, pk in con.execute(f'PRAGMA table_info("{table}")')
            ]
            keys = sorted(
                (target, src, dst, on_delete)
                for _, _, target, src, dst, _, on_delete, _ in con.execute(f'PRAGMA foreign_key_list("{table}")')
            )
            indexes = {}
            for _, name, unique, _, _ in con.execute(f'PRAGMA index_list("{table}")'):
                indexes[name] = (tuple(r[2] for r in con.execute(f'PRAGMA index_info("{name}")')), bool(unique))
            schema[table] = {"columns": columns, "foreign keys": keys, "indexes": indexes}
        return schema
    finally:
        con.close()


def _postgres_schema(url: str, schema_name: str) -> dict:
    import psycopg

    with psycopg.connect(url, autocommit=True) as con:
        tables = [
            r[0]
            for r in con.execute("SELECT tablename FROM pg_tables WHERE schemaname = %s ORDER BY 1", (schema_name,))
        ]
        schema = {}
        for table in tables:
            columns = list(
                con.execute(
                    "SELECT column_name, data_type, character_maximum_length, is_nullable = 'NO', COALESCE(column_default LIKE 'nextval(%%', FALSE) "
                    "FROM information_schema.columns WHERE table_schema = %s AND table_name = %s ORDER BY ordinal_position",
                    (schema_name, table),
                )
            )
            constraints = sorted(
                (kind, definition.replace(f"{schema_name}.", ""))
                for kind, definition in con.execute(
                    "SELECT contype, pg_get_constraintdef(c.oid) FROM pg_constraint c JOIN pg_class t ON t.oid = c.conrelid "
                    "JOIN pg_namespace n ON n.oid = t.relnamespace WHERE n.nspname = %s AND t.relname = %s",
                    (schema_name, table),
                )
            )
            indexes = {
                name: definition.replace(f'"{schema_name}".', "").replace(f"{schema_name}.", "")
                for name, definition in con.execute(
                    "SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = %s AND tablename = %s",
                    (schema_name, table),
                )
            }
            schema[table] = {"columns": columns, "constraints": constraints, "indexes": indexes}
        return schema


def _models_sqlite(path) -> None:
    db = pw.SqliteDatabase(str(path))
    every = models.every_model()
    with db.bind_ctx(every):
        db.create_tables(every)
    db.close()


def test_every_step_makes_exactly_the_models_tables_on_sqlite(tmp_path):
    migrated = tmp_path / "migrated.db"
    Store.open(parse_target(str(migrated), "flag"), create=True, frozen_ok=True).close()
    expected = tmp_path / "models.db"
    _models_sqlite(expected)
    assert _sqlite_schema(migrated) == _sqlite_schema(expected)


@pytest.fixture
def two_schemas(pg_server):
    import psycopg

    names = ["lxm_" + uuid.uuid4().hex[:12] for _ in range(2)]
    with psycopg.connect(pg_server, autocommit=True) as con:
        for name in names:
            con.execute(f'CREATE SCHEMA "{name}"')
    sep = "&" if "?" in pg_server else "?"
    yield [(name, f"{pg_server}{sep}options={quote('-csearch_path=' + name)}") for name in names]
    with psycopg.connect(pg_server, autocommit=True) as con:
        for name in names:
            con.execute(f'DROP SCHEMA IF EXISTS "{name}" CASCADE')


def test_every_step_makes_exactly_the_models_tables_on_postgresql(pg_server, two_schemas):
    from loopx_core.store.pg import open_postgres

    (migrated, migrated_url), (expected, expected_url) = two_schemas
    Store.open(parse_target(migrated_url, "flag"), create=True, frozen_ok=True).close()
    db = open_postgres(parse_target(expected_url, "flag"))
    every = models.every_model()
    with db.bind_ctx(every):
        db.create_tables(every)
    db.close()
    assert _postgres_schema(pg_server, migrated) == _postgres_schema(pg_server, expected)
