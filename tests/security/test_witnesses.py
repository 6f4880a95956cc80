"""Issue #24 §3, run for real: the person's long-lived processes are witnesses
(SECURITY.md "Witnesses"). A real ``loopx run --runtime shell`` runner, real
SQL edits with the database's own client, a real older copy of the board put
back, a real ``rm -rf .loopx`` and ``loopx init`` with another key."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from tests.conftest import person_ok
from tests.runner.conftest import Watch
from tests.runner.test_controls import busy, paused
from tests.security.conftest import (
    agent_env,
    in_script,
    shell,
    sql,
    sql_rows,
    sqlite_client,
)
from tests.security.test_human_authority import hook


@pytest.fixture
def watch(board, tmp_path):
    w = Watch(board, tmp_path)
    yield w
    w.close()


def sqlite_rows(board, query: str) -> list[list[str]]:
    """Rows read with SQLite's own client (this machine's LoopX trusts nothing on the board)."""
    out = subprocess.run(sqlite_client(board.db, query), capture_output=True, text=True, check=True, timeout=120).stdout
    return [line.split("|") for line in out.splitlines()]


def runner_said(watch) -> str:
    return "".join(log.read_text(errors="replace") for _, log in watch.procs)


def test_a_pause_deleted_with_its_row_nulled_stops_the_runner(team, watch, monkeypatch):
    """The newest runner_paused deleted and the runner row's control nulled:
    the runner that obeyed that pause starts no other turn, exits 11 and says
    which event vanished; verify exits 11."""
    proc = busy(team, watch)
    pause = person_ok(team, "runner", "pause", "a1")["runner"]["control"]["seq"]
    paused(watch)
    turns = watch.turns_started("a1")
    proc.expected_exit = True
    sql(team, f"DELETE FROM event WHERE seq = {pause}")
    sql(team, "UPDATE runner SET control = NULL, control_seq = NULL, state = 'running', detail = NULL")
    team.ok("card", "add", "something else happened", "--owner", "a2")  # the runner looks at the board
    assert watch.ended(proc) == 11, watch.explain()
    assert watch.turns_started("a1") == turns
    said = runner_said(watch)
    assert "THE BOARD'S LOG WENT BACKWARDS" in said and f"event {pause} is gone: this process acted on it" in said
    assert team.cli("verify").code == 11


def _keep(board, where):
    """An older copy of the whole board, as an agent would keep one."""
    if board.backend == "sqlite":
        subprocess.run(sqlite_client(board.db, f".backup {where}"), check=True, timeout=120)
        return
    tables = [t for (t,) in sql_rows(board, "SELECT tablename FROM pg_tables WHERE schemaname = current_schema()")]
    sql(board, "; ".join(f'CREATE TABLE "old_{t}" AS SELECT * FROM "{t}"' for t in tables))
    return tables


def _put_back(board, where, tables):
    """The older copy over the board: SQLite's own client restores the file
    (open connections read it at once); on PostgreSQL every table's rows."""
    if board.backend == "sqlite":
        subprocess.run(sqlite_client(board.db, f".restore {where}"), check=True, timeout=120)
        return
    quoted = ", ".join(f'"{t}"' for t in tables)
    sql(
        board,
        f"SET session_replication_role = replica; TRUNCATE {quoted}; "
        + "; ".join(f'INSERT INTO "{t}" SELECT * FROM "old_{t}"' for t in tables),
    )


def test_an_older_board_put_back_after_a_revoke_stops_the_runner_and_fails_verify(team, watch, tmp_path, monkeypatch):
    """``board.db`` copied back over after the person revoked a1's git:push,
    while a1's runner witnessed the newer head: the runner stops (11), verify
    exits 11 naming the vanished head, and the revoked scope stays revoked."""
    old = tmp_path / "old.db"
    tables = _keep(team, old)
    proc = busy(team, watch)
    person_ok(team, "agent", "add", "a1")  # the person revokes git:push
    revoked = watch.seq()
    started = watch.turns_started("a1")
    watch.until("a1's runner went on past the revoke", lambda: watch.turns_started("a1") > started + 1)
    proc.expected_exit = True
    _put_back(team, old, tables)
    assert watch.seq() < revoked
    assert watch.ended(proc) == 11, watch.explain()
    assert "THE BOARD'S LOG WENT BACKWARDS" in runner_said(watch)
    assert (
        hook(team, "git push origin main", agent="a1")["permissionDecision"] == "deny"
    )  # the old scope is not honoured again
    monkeypatch.delenv("LOOPX_NOW")  # (nothing on the board is trusted now, not even its test clock)
    report = team.cli("verify")
    assert report.code == 11
    first = report.data["verify"]["first_bad"]
    assert first["seq"] >= revoked and ("is gone" in first["what"] or "differs" in first["what"]), first


def test_a_board_made_anew_with_another_key_is_announced_not_trusted(team, tmp_path, monkeypatch):
    """``rm -rf .loopx``, then ``loopx init`` with another key (LOOPX_KEY at
    the agent's own file) and ``agent add --can git:push``: announced like a
    changed ssh host key, nothing on it trusted, verify exits 11; a person
    accepts it only deliberately, with the root they read and their own key."""
    if team.backend != "sqlite":
        pytest.skip(
            "the board's folder is the SQLite board (PostgreSQL: test_a_database_replaced_under_its_url_is_announced)"
        )
    monkeypatch.delenv("LOOPX_NOW")  # (a board made anew is no test board)
    shutil.rmtree(team.root / ".loopx")
    env = agent_env(team, agent=None, LOOPX_KEY=str(tmp_path / "agent-key.json"))
    env.pop("LOOPX_NOW", None)
    made = shell(
        team, "loopx init --objective mine; loopx agent add a2 --can git:push; loopx --json verify", env, timeout=120
    )
    assert "BOARD IDENTIFICATION HAS CHANGED" in made.stdout + made.stderr, made
    assert team.spawn("verify").returncode == 11
    assert hook(team, "git push origin main", agent="a2")["permissionDecision"] == "deny"
    agent_root = sqlite_rows(team, "SELECT fingerprint FROM person ORDER BY added_seq")[0][0]
    # The agent accepting its own board: a human-only verb, refused to an agent identity.
    assert in_script(team, f"loopx key trust {agent_root} --replace", agent_env(team)).returncode == 10
    # The person, with their key, is not one of the new board's people: refused too.
    assert team.cli("key", "trust", agent_root, "--replace").code == 10
    assert team.cli("verify").code == 11


def test_a_board_the_person_made_anew_is_accepted_deliberately(board, monkeypatch):
    """The person deletes their own board and makes a new one: announced too,
    until they accept it with its root fingerprint and their key."""
    if board.backend != "sqlite":
        pytest.skip("the board's folder is the SQLite board")
    monkeypatch.delenv("LOOPX_NOW")
    shutil.rmtree(board.root / ".loopx")
    made = board.cli("init", "--test-board")
    assert made.code == 11 and "BOARD IDENTIFICATION HAS CHANGED" in made.data["error"]["message"]
    root = sqlite_rows(board, "SELECT fingerprint FROM person")[0][0]
    assert board.cli("agent", "add", "a3").code == 11
    accepted = person_ok(board, "key", "trust", root, "--replace")
    assert accepted["accepted"]["replaces"] and accepted["accepted"]["root"] == root
    person_ok(board, "agent", "add", "a3")
    assert board.ok("verify")["verify"]["ok"]
    assert sql_rows(board, "SELECT actor, sig IS NOT NULL FROM event WHERE kind = 'board_accepted'") == [
        ("human:tester", True)
    ]


def test_a_database_replaced_under_its_url_is_announced(board, pg_server):
    """PostgreSQL: the board's schema dropped and made anew under the same URL."""
    if board.backend != "postgresql":
        pytest.skip("a PostgreSQL board")
    sql(board, "DROP SCHEMA IF EXISTS public_never CASCADE")  # (the client reaches the board's schema)
    schema = sql_rows(board, "SELECT current_schema()")[0][0]
    sql(board, f'DROP SCHEMA "{schema}" CASCADE; CREATE SCHEMA "{schema}"')
    made = board.cli("init", "--test-board")
    assert made.code == 11 and "BOARD IDENTIFICATION HAS CHANGED" in made.data["error"]["message"]
    assert board.cli("verify").code == 11
