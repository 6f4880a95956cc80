"""Schema v3 (evidence identity): an existing v2 board opens and gains the
columns, its evidence counted as verified."""

from __future__ import annotations

import sqlite3

from .conftest import held, worked


def _sql(board, *statements) -> None:
    if board.backend == "sqlite":
        con = sqlite3.connect(board.db)
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
