"""Schema v3 (evidence identity): an existing v2 board opens and gains the
columns, its evidence counted as verified."""

from __future__ import annotations

from tests import board_sql

from .conftest import held, worked


def _sql(board, *statements) -> None:
    if board.backend == "sqlite":
        con = board_sql.connect(board.db)
        try:
            for s in statements:
                con.execute(s)
            con.commit()
        finally:
            con.close()
    else:
        import psycopg

        with psycopg.connect(board.url, autocommit=True) as con:
            for s in statements:
                con.execute(s)


def test_a_v2_board_gains_the_evidence_identity_columns(team):
    from loopx_core.store import migrations

    team.ok("card", "add", "one")
    held(team, "LX-1", "a1")
    worked(team, "LX-1", "a1", "before the upgrade")
    _sql(
        team,
        'ALTER TABLE "evidence" DROP COLUMN "unverified"',
        'ALTER TABLE "card" DROP COLUMN "unverified_evidence"',
        "UPDATE setting SET value = '2' WHERE key = 'schema_version'",
    )
    log = team.ok("log", "LX-1")  # opening the board runs the step
    assert log["evidence"][0]["unverified"] is False and log["card"]["unverified_evidence"] == 0
    assert team.ok("export")["board"]["settings"]["schema_version"] == str(migrations.SCHEMA_VERSION)
    assert worked(team, "LX-1", "a1", "after it")["evidence"]["unverified"] is False


OWNER_INDEX = "card_status_lease_holder_handoff_to_assignee"


def _indexes(board, table: str = "card") -> set[str]:
    if board.backend == "sqlite":
        con = board_sql.connect(board.db)
        try:
            return {
                name
                for (name,) in con.execute(
                    "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = ?", (table,)
                )
            }
        finally:
            con.close()
    import psycopg

    with psycopg.connect(board.url, autocommit=True) as con:
        return {name for (name,) in con.execute("SELECT indexname FROM pg_indexes WHERE tablename = %s", (table,))}


def test_a_v4_board_gains_the_index_that_counts_cards_by_owner(team):
    """Schema v5: an existing board opens, gains the index, and counts its
    cards by owner the same as before — on SQLite from the index alone."""
    from loopx_core.ops import board_pages
    from loopx_core.store import migrations

    team.ok("card", "add", "one")
    team.ok("card", "add", "two")
    held(team, "LX-1", "a1")
    _sql(team, f'DROP INDEX "{OWNER_INDEX}"', "UPDATE setting SET value = '4' WHERE key = 'schema_version'")
    assert OWNER_INDEX not in _indexes(team)
    store = team.store()  # opening the board runs the step
    try:
        with store.read():
            counts = board_pages.tally().by_column(board_pages.OWNER_MODE)
        assert counts == {"a1": 1, None: 1}
        if team.backend == "sqlite":
            plan = store.db.execute_sql(
                "EXPLAIN QUERY PLAN SELECT status, lease_holder, handoff_to, assignee, COUNT(*) FROM card GROUP BY 1, 2, 3, 4"
            ).fetchall()
            assert any(f"COVERING INDEX {OWNER_INDEX}" in str(row) for row in plan), plan
    finally:
        store.close()
    assert OWNER_INDEX in _indexes(team)
    assert team.ok("export")["board"]["settings"]["schema_version"] == str(migrations.SCHEMA_VERSION)


KIND_INDEX = "event_kind_seq"


def test_a_v5_board_gains_the_index_a_runners_control_is_read_from(team):
    """Schema v6: an existing board opens and gains the index on the events'
    kind; a runner's control is read from it, not from a scan of the whole
    log, and is the same as before."""
    from loopx_core.ops import runners
    from loopx_core.store import migrations

    team.ok("card", "add", "one")
    team.ok("runner", "pause", "a1")
    _sql(team, f'DROP INDEX "{KIND_INDEX}"', "UPDATE setting SET value = '5' WHERE key = 'schema_version'")
    assert KIND_INDEX not in _indexes(team, "event")
    store = team.store()  # opening the board runs the step
    try:
        with store.read():
            assert runners.control_of(store, "a1").control == "pause"
            assert runners.control_of(store, "a2").control == "run"
        if team.backend == "sqlite":
            plan = store.db.execute_sql(
                "EXPLAIN QUERY PLAN SELECT seq FROM event WHERE kind IN ('runner_paused', 'runner_resumed') ORDER BY seq DESC"
            ).fetchall()
            assert any(KIND_INDEX in str(row) for row in plan), plan
    finally:
        store.close()
    assert KIND_INDEX in _indexes(team, "event")
    assert team.ok("export")["board"]["settings"]["schema_version"] == str(migrations.SCHEMA_VERSION)
