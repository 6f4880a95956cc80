"""The authority issue's attack table, each run for real, on SQLite and PostgreSQL:
an agent with a shell tries to answer its own gate, grant itself scopes, raise
its budget, edit the board and move the clock. Each attempt must change nothing
a person relies on: the gate stays pending, no scope is granted, the hook
denies, ``loopx verify`` names what was altered (SECURITY.md)."""

from __future__ import annotations

import json
import subprocess
import sys

from ..adapters.conftest import payload
from .conftest import agent_env, at_the_prompt, in_script, shell, sql, sql_rows


def hook(board, command: str, agent: str = "a2") -> dict:
    """The PreToolUse hook, a cold process as Claude Code runs it, on a Bash call."""
    data = payload("claude/pre_tool_use_bash.json", CWD=str(board.root), COMMAND=command)
    env = agent_env(board, agent)
    proc = subprocess.run(
        [sys.executable, "-m", "loopx_core", "hook", "claude-code", "pre-tool-use"],
        input=json.dumps(data),
        cwd=board.root,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout) if proc.stdout.strip() else {}
    return out.get("hookSpecificOutput", {})


def pending(board, gate: str = "G-1") -> bool:
    res = board.cli("gate", "status", gate)
    return res.code == 6 and res.data["gate"]["status"] == "pending"


# -- answering one's own gate -------------------------------------------------------------


def test_a_pty_without_the_agent_identity_answers_nothing(asked):
    """`env -u LOOPX_AGENT script -qc 'loopx gate answer G-1 approve' /dev/null`"""
    before = asked.snapshot()
    proc = in_script(asked, "loopx gate answer G-1 approve", agent_env(asked, agent=None))
    assert proc.returncode == 10 and "no LoopX key" in proc.stdout, proc
    assert asked.snapshot() == before and pending(asked)
    assert hook(asked, "git push origin main")["permissionDecision"] == "deny"


def test_a_forged_name_and_a_standing_grant_are_refused(asked):
    """The same with `LOOPX_HUMAN=alice --remember board`."""
    before = asked.snapshot()
    proc = in_script(
        asked, "loopx gate answer G-1 approve --remember board", agent_env(asked, agent=None, LOOPX_HUMAN="alice")
    )
    assert proc.returncode == 10, proc
    assert asked.snapshot() == before and pending(asked)
    assert sql_rows(asked, 'SELECT count(*) FROM "grant"') == [(0,)]


def test_an_agents_own_key_is_not_a_persons(asked, tmp_path):
    """An agent makes a key of its own and signs with it: the board does not know it."""
    env = agent_env(asked, agent=None, LOOPX_KEY=str(tmp_path / "mine.json"), XDG_CONFIG_HOME=str(tmp_path / "cfg"))
    made = shell(asked, "loopx key init --no-passphrase --name tester", env)
    assert made.returncode == 0, made.stderr
    before = asked.snapshot()
    for command in (
        "loopx gate answer G-1 approve",
        "loopx person add tester2 "
        + json.loads(shell(asked, "loopx --json key show", env).stdout)["key"]["public_key"],
        "loopx init --objective mine",
    ):
        proc = shell(asked, command, env)
        assert proc.returncode == 10 and "not one of this board's people" in proc.stderr, (command, proc)
    assert asked.snapshot() == before and pending(asked)


def test_a_sealed_key_the_agent_can_read_is_useless_without_its_passphrase(asked, tmp_path):
    from loopx_core.authority import keys

    sealed = keys.create(tmp_path / "alice.json", "alice", "a long passphrase")
    asked.ok("person", "add", "alice", keys.b64(sealed.public_raw))
    before = asked.snapshot()
    env = agent_env(asked, agent=None, LOOPX_KEY=str(sealed.path))
    piped = shell(asked, "echo 'a long passphrase' | loopx gate answer G-1 approve", env)
    assert piped.returncode == 10, piped  # the passphrase is asked on the terminal, never read from stdin
    guessed = at_the_prompt(
        asked, "loopx gate answer G-1 approve", env, typed="password123\n"
    )  # a pty, a guess at every prompt
    assert guessed.returncode == 10 and "wrong passphrase" in guessed.stdout, guessed
    assert asked.snapshot() == before and pending(asked)


# -- granting oneself scopes ---------------------------------------------------------------


def test_an_agent_cannot_register_agents_or_widen_scopes(asked):
    before = asked.snapshot()
    for env in (agent_env(asked), agent_env(asked, agent=None)):
        for command in (
            "loopx agent add some-agent --can git:push",
            "loopx agent add a2 --can git:push",
            "loopx agent add a2 --can 'deploy:*'",
        ):
            proc = in_script(asked, command, env)
            assert proc.returncode == 10, (command, proc)
    assert asked.snapshot() == before
    # So its gate for git:push is not auto-approved, and the hook still denies the push.
    ask = asked.cli("gate", "ask", "LX-1", "--question", "push?", "--scope", "git:push", agent="a2")
    assert ask.code == 6 and ask.data["gate"]["status"] == "pending"
    assert hook(asked, "git push origin main")["permissionDecision"] == "deny"


def test_scopes_written_into_the_database_grant_nothing(asked):
    sql(asked, """UPDATE agent SET capabilities = '["*"]' WHERE id = 'a2'""")
    ask = asked.cli("gate", "ask", "LX-1", "--question", "deploy?", "--scope", "deploy:prod", agent="a2")
    assert ask.code == 6 and ask.data["gate"]["status"] == "pending"
    assert hook(asked, "git push origin main")["permissionDecision"] == "deny"
    report = asked.cli("verify")
    assert report.code == 11 and report.data["verify"]["first_bad"]["where"] == "agent a2"


def test_a_grant_inserted_in_the_database_grants_nothing(asked):
    sql(
        asked,
        """INSERT INTO "grant" (scope, agent, card, expires_at, created_by, gate, created_at) VALUES ('*', NULL, NULL, NULL, 'human:tester', NULL, 1800000000)""",
    )
    assert hook(asked, "git push origin main")["permissionDecision"] == "deny"
    ask = asked.cli("gate", "ask", "LX-1", "--question", "publish?", "--scope", "publish:npm", agent="a2")
    assert ask.code == 6
    assert asked.cli("verify").code == 11


# -- budgets and prices ---------------------------------------------------------------------


def test_budget_and_prices_are_a_persons(asked):
    asked.ok("card", "add", "small", "--max-turns", "3")
    before = asked.snapshot()
    for command in (
        "loopx card budget LX-2 --add-turns 100",
        "loopx price set claude-sonnet-4 --input 0 --output 0",
        "loopx price remove claude-sonnet-4",
    ):
        for env in (agent_env(asked), agent_env(asked, agent=None)):
            assert in_script(asked, command, env).returncode == 10, command
            assert shell(asked, command + " </dev/null", env).returncode == 10, command
    assert asked.snapshot() == before


def test_a_budget_raised_in_the_database_is_put_back(asked):
    """`UPDATE card SET max_turns = 103`: the next writeback holds the card to the signed budget."""
    asked.ok("card", "add", "small", "--max-turns", "2")
    asked.ok("claim", "LX-2", agent="a1")
    asked.ok("writeback", "LX-2", "--summary", "one", "--todo-add", "x", agent="a1")
    sql(asked, "UPDATE card SET max_turns = 103 WHERE id = 2")
    out = asked.ok("writeback", "LX-2", "--summary", "two", "--todo-add", "y", agent="a1")
    assert out["card"]["quota"]["turns"] == {"used": 2, "limit": 2}
    assert out["card"]["status"] == "paused" and out["card"]["paused_reason"] == "budget"


def test_prices_written_into_the_database_are_not_charged(asked):
    sql(asked, """INSERT INTO setting (key, value) VALUES ('prices', '{"x": {"input": 1000, "output": 1000}}')""")
    assert asked.ok("price", "list")["prices"] == {}
    assert asked.cli("verify").code == 11


# -- editing the board ------------------------------------------------------------------------


def test_an_approval_written_into_the_database_approves_nothing(asked):
    """`sqlite3 .loopx/board.db "update gate set status='approved'"`"""
    sql(asked, "UPDATE gate SET status = 'approved', answer = 'approved', answered_by = 'human:tester'")
    status = asked.cli("gate", "status", "G-1")
    assert (
        status.code == 6
        and status.data["gate"]["status"] == "pending"
        and "no valid signed decision" in status.data["gate"]["forged"]
    )
    assert (
        asked.cli(
            "gate", "ask", "LX-1", "--question", "may I push?", "--scope", "git:push", "--wait", "1s", agent="a2"
        ).code
        == 6
    )
    assert hook(asked, "git push origin main")["permissionDecision"] == "deny"
    report = asked.cli("verify")
    assert report.code == 11 and report.data["verify"]["first_bad"]["where"] == "gate G-1"
    # The person can still answer it; then the history verifies again.
    asked.ok("gate", "answer", "G-1", "reject", "--note", "no")
    assert asked.cli("verify").code == 0


def test_a_signature_moved_to_another_gate_approves_nothing(asked):
    asked.ok("gate", "answer", "G-1", "approve")
    assert hook(asked, "git push origin main").get("permissionDecision") in (None, "allow")
    asked.cli("gate", "ask", "LX-1", "--question", "deploy?", "--scope", "deploy:prod", agent="a2")
    seq = sql_rows(asked, "SELECT answer_seq FROM gate WHERE id = 1")[0][0]
    sql(
        asked,
        f"UPDATE gate SET status = 'approved', answer = 'approved', answered_by = 'human:tester', answer_seq = {seq} WHERE id = 2",
    )
    assert pending(asked, "G-2")
    assert asked.cli("verify").code == 11


def test_an_edited_event_is_named_by_verify(asked):
    seq = sql_rows(asked, "SELECT max(seq) FROM event WHERE kind = 'gate_asked'")[0][0]
    sql(asked, f"""UPDATE event SET data = '{{"question":"harmless"}}' WHERE seq = {seq}""")
    report = asked.cli("verify")
    assert report.code == 11
    assert report.data["verify"]["first_bad"]["seq"] == seq and "altered" in report.data["verify"]["first_bad"]["what"]
    text = asked.cli("verify", json_out=False)
    assert f"ALTERED: event {seq}" in text.out


def test_a_deleted_event_and_a_truncated_log_are_found(asked, monkeypatch):
    assert asked.cli("verify").code == 0  # remembers the head on this machine
    asked.ok("writeback", "LX-1", "--summary", "a step", agent="a2")
    head = sql_rows(asked, "SELECT max(seq) FROM event")[0][0]
    claimed = sql_rows(asked, "SELECT seq FROM event WHERE kind = 'claimed'")[0][0]
    sql(asked, f"DELETE FROM event WHERE seq = {claimed}")
    report = asked.cli("verify")
    assert report.code == 11 and report.data["verify"]["first_bad"]["seq"] == claimed + 1
    assert "missing" in report.data["verify"]["first_bad"]["what"]
    sql(asked, f"DELETE FROM event WHERE seq >= {claimed} AND seq <= {head}")  # now a clean but shorter chain
    refused = asked.cli("verify")  # this machine trusts nothing on it now, not even the test board's clock
    assert refused.code == 11 and "WENT BACKWARDS" in refused.data["error"]["message"]
    monkeypatch.delenv("LOOPX_NOW")
    report = asked.cli("verify")
    assert report.code == 11 and "truncated" in report.data["verify"]["first_bad"]["what"]


def test_a_person_swapped_in_the_database_is_not_trusted(asked, tmp_path, monkeypatch):
    """Replacing the board's root key with the agent's own: the pinned root no longer
    matches, so nothing on the board is trusted (fail closed) and verify says so."""
    from loopx_core.authority import keys

    mine = keys.create(tmp_path / "mine.json", "tester", None)
    sql(asked, f"UPDATE person SET public_key = '{keys.b64(mine.public_raw)}', fingerprint = '{mine.fingerprint}'")
    assert hook(asked, "git push origin main")["permissionDecision"] == "deny"
    clock_refused = asked.cli("verify")  # not even the test board's movable clock is trusted now
    assert clock_refused.code == 11 and clock_refused.data["error"]["code"] == "clock_refused"
    assert (
        "BOARD IDENTIFICATION HAS CHANGED" in clock_refused.data["error"]["message"]
    )  # the same board id, another root
    monkeypatch.delenv("LOOPX_NOW")
    report = asked.cli("verify")
    assert report.code == 11
    assert any("pinned" in p["what"] for p in report.data["verify"]["problems"])


# -- the clock ---------------------------------------------------------------------------------


def test_a_frozen_clock_is_refused_on_a_real_board(tmp_path):
    """`LOOPX_NOW=<tomorrow> LOOPX_AGENT=z2 loopx claim LX-3` on a board that is not a test board."""
    import os

    env = {k: v for k, v in os.environ.items() if k not in ("LOOPX_NOW", "LOOPX_AGENT", "LOOPX_DB")}
    project = tmp_path / "real"
    project.mkdir()

    def run(*argv, **extra):
        return subprocess.run(
            [sys.executable, "-m", "loopx_core", "--json", *argv],
            cwd=project,
            env={**env, **extra},
            capture_output=True,
            text=True,
            timeout=60,
        )

    assert run("init").returncode == 0
    assert run("agent", "add", "z1").returncode == 0 and run("agent", "add", "z2").returncode == 0
    run("card", "add", "one")
    run("card", "add", "two")
    run("card", "add", "three")
    assert json.loads(run("claim", "LX-3", LOOPX_AGENT="z1").stdout)["action"] == "work"
    before = run("export").stdout
    stolen = run("claim", "LX-3", LOOPX_AGENT="z2", LOOPX_NOW="2100-01-01T00:00:00Z")
    assert stolen.returncode == 2 and json.loads(stolen.stdout)["error"]["code"] == "clock_refused"
    for moved in ("1e20", "nan", "-5", "tomorrow"):
        proc = run("board", "--text", LOOPX_NOW=moved)
        assert proc.returncode == 2, (moved, proc)
    after = json.loads(run("export").stdout)
    assert after["cards"][2]["lease"]["holder"] == "z1"
    assert json.loads(before)["events"] == after["events"]


def test_an_absurd_time_is_refused_even_on_a_test_board(asked):
    before = asked.snapshot()
    for moved in ("1e20", "-1", "inf", "99999999999"):
        res = asked.cli("claim", "LX-1", agent="a1", env={"LOOPX_NOW": moved})
        assert res.code == 2, (moved, res)
    assert asked.snapshot() == before
    assert asked.cli("export").code == 0 and asked.cli("events").code == 0 and asked.cli("log", "LX-1").code == 0


def test_a_time_already_in_the_log_cannot_break_reads(asked):
    """A board written by an older LoopX may hold an absurd time: reads still work."""
    sql(asked, "UPDATE event SET at = 1e20 WHERE kind = 'claimed'")
    for argv in (("export",), ("events",), ("log", "LX-1"), ("card", "list")):
        assert asked.cli(*argv).code == 0, argv
    assert "invalid-time" in json.dumps([e for e in asked.ok("events")["events"] if e["kind"] == "claimed"])


def test_a_budget_decision_rewritten_with_its_hash_is_caught_by_the_signature_checks(asked, tmp_path):
    """The thorough attacker: rewrite the person's budget event (its data and a
    recomputed hash) and the card row. The agent's own writeback checks content
    and hash only (no signature on the per-turn path), so the signature checks
    must catch it: `loopx verify`, and the strict check the person's processes use."""
    from loopx_core.authority import chain
    from loopx_core.ops import quota
    from loopx_core.store.models import Card

    asked.ok("card", "add", "small", "--max-turns", "2")
    asked.ok(
        "card", "add", "later"
    )  # (the rewritten event is not the head this machine saw: that is the witness's, tests/kernel/test_witness.py)
    seq, at, actor, card, kind, data, op_id, key = sql_rows(
        asked, "SELECT seq, at, actor, card, kind, data, op_id, key FROM event WHERE kind = 'card_added' AND card = 2"
    )[0]
    doc = json.loads(data)
    doc["max_turns"] = 500
    text = chain.data_text(doc)
    prev = sql_rows(asked, f"SELECT prev FROM event WHERE seq = {seq}")[0][0]
    digest = chain.event_hash(prev, seq, at, actor, card, kind, text, op_id, key)
    sql(asked, f"UPDATE event SET data = '{text}', hash = '{digest}' WHERE seq = {seq}")
    sql(asked, "UPDATE card SET max_turns = 500 WHERE id = 2")
    report = asked.cli("verify")
    assert report.code == 11 and any(p["seq"] == seq for p in report.data["verify"]["problems"])
    store = asked.store()
    try:

        def strict():
            row = Card.get_by_id(2)
            quota.enforce_signed(store, row, strict=True)
            return row.status, row.paused_reason, row.max_turns

        assert store.run(strict) == ("paused", "budget_unverified", 500)
    finally:
        store.close()
