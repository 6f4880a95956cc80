"""The rows are a projection of the log (issue #24 §3, #27): an agent with the
board file edits rows behind LoopX's back, and no operator or fast reader
honours what the events do not support; ``loopx verify`` replays the log and
names every row that differs (exit 11). Real cold processes for the agent's
verbs, the database's own client for the edits, on SQLite and PostgreSQL."""

from __future__ import annotations

import json

from loopx_core.authority import chain

from .conftest import agent_env, agent_run, shell, sql, sql_rows
from .test_human_authority import hook


def verify_rows(board) -> dict:
    """What ``loopx verify`` says about the projected rows: {(table, id, column): (row, log)}."""
    res = board.cli("verify")
    assert res.code == 11, res
    return {
        (p["row"]["table"], p["row"]["id"], p["row"]["column"]): (p["row"]["row"], p["row"]["log"])
        for p in res.data["verify"]["problems"]
        if "row" in p
    }


def test_an_approval_and_an_active_card_written_in_the_database_start_no_turn(asked):
    """Gate row approved, card row active: `next` still says wait on G-1."""
    sql(asked, "UPDATE gate SET status = 'approved', answer = 'approved', answered_by = 'human:tester' WHERE id = 1")
    sql(asked, "UPDATE card SET status = 'active' WHERE id = 1")
    assert asked.cli("gate", "status", "G-1").code == 6
    code, out = agent_run(asked, "a2", "next")
    assert (
        code == 6 and out["action"] == "wait" and out["gate"]["id"] == "G-1" and out["gate"]["status"] == "pending"
    ), out
    code, out = agent_run(asked, "a2", "writeback", "LX-1", "--summary", "did it anyway")
    assert code == 0  # a waiting card takes evidence, as it always did …
    code, out = agent_run(asked, "a2", "done", "LX-1", "--summary", "finished")
    assert code == 5 and out["error"]["code"] == "gate_pending", out  # … but is never finished past its gate
    rows = verify_rows(asked)
    assert rows[("gate", 1, "status")] == ("approved", "pending")
    assert rows[("card", 1, "status")] == ("active", "waiting")


def test_an_approval_written_on_a_waiting_card_finishes_nothing(asked):
    """Gate row approved, card still waiting: `done` is refused, `next` waits (no internal error)."""
    assert agent_run(asked, "a2", "writeback", "LX-1", "--summary", "prepared the push")[0] == 0
    sql(asked, "UPDATE gate SET status = 'approved', answer = 'approved', answered_by = 'human:tester' WHERE id = 1")
    code, out = agent_run(asked, "a2", "done", "LX-1", "--summary", "pushed")
    assert code == 5 and out["error"]["code"] == "gate_pending" and "G-1" in out["error"]["message"], out
    text = asked.spawn("next", agent="a2")
    assert text.returncode == 6 and "G-1" in text.stdout and "Traceback" not in text.stderr, text
    assert asked.cli("card", "show", "LX-1").data["card"]["status"] == "waiting"


def test_a_waiting_card_with_no_gate_waits_and_says_why(asked):
    """The row says waiting, no gate is pending (it was deleted): a clear wait, exit 6, never exit 1."""
    sql(asked, "DELETE FROM gate WHERE id = 1")
    text = asked.spawn("next", agent="a2")
    assert text.returncode == 6 and "no gate is pending" in text.stdout and "loopx verify" in text.stdout, text
    assert verify_rows(asked)[("gate", 1, "id")] == (None, "asked")


def test_zeroed_counters_buy_no_turn(team):
    """A budget-paused card whose used_* counters and status are reset: the next
    turn reads the log's counters and pauses; no third turn on a two-turn budget."""
    team.ok("card", "add", "small", "--max-turns", "2")
    assert agent_run(team, "a1", "claim", "LX-1")[0] == 0
    for n in (1, 2):
        code, out = agent_run(
            team, "a1", "writeback", "LX-1", "--summary", f"turn {n}", "--todo-add", f"t{n}", "--tokens", "100"
        )
        assert code == 0
    assert out["card"]["status"] == "paused" and out["card"]["paused_reason"] == "budget"
    sql(
        team,
        "UPDATE card SET used_turns = 0, used_tokens = 0, used_usd = 0, status = 'active', paused_reason = NULL WHERE id = 1",
    )
    rows = verify_rows(team)
    assert rows[("card", 1, "used_turns")] == (0, 2) and rows[("card", 1, "used_tokens")] == (0, 200)
    assert rows[("card", 1, "status")] == ("active", "paused")
    code, out = agent_run(team, "a1", "next")
    assert code == 8 and out["action"] == "paused" and out["card"]["quota"]["turns"] == {"used": 2, "limit": 2}, out
    code, out = agent_run(team, "a1", "writeback", "LX-1", "--summary", "turn 3", "--todo-add", "t3")
    assert code == 8, out
    assert sql_rows(team, "SELECT count(*) FROM evidence WHERE card_id = 1") == [(2,)]
    assert team.cli("verify").code == 0  # the counters were put back to the log's


def test_counters_zeroed_on_an_active_card_are_put_back_at_the_next_charge(team):
    team.ok("card", "add", "small", "--max-turns", "2")
    assert agent_run(team, "a1", "claim", "LX-1")[0] == 0
    assert agent_run(team, "a1", "writeback", "LX-1", "--summary", "turn 1", "--todo-add", "t1")[0] == 0
    sql(team, "UPDATE card SET used_turns = 0 WHERE id = 1")
    code, out = agent_run(team, "a1", "writeback", "LX-1", "--summary", "turn 2", "--todo-add", "t2")
    assert (
        code == 0 and out["card"]["quota"]["turns"] == {"used": 2, "limit": 2} and out["card"]["status"] == "paused"
    ), out
    restored = [json.loads(d) for (d,) in sql_rows(team, "SELECT data FROM event WHERE kind = 'row_restored'")]
    assert restored and restored[0]["row"][0] == 0 and restored[0]["log"][0] == 1


def test_a_lease_holder_written_in_the_database_writes_nothing(team):
    """`UPDATE card SET lease_holder = 'a2'` on a1's card: a2's writes are refused (exit 5), a1's go on."""
    team.ok("card", "add", "a1's card")
    assert agent_run(team, "a1", "claim", "LX-1")[0] == 0
    sql(team, "UPDATE card SET lease_holder = 'a2' WHERE id = 1")
    assert verify_rows(team)[("card", 1, "lease_holder")] == ("a2", "a1")
    for argv in (("writeback", "LX-1", "--summary", "mine now"), ("heartbeat", "LX-1"), ("release", "LX-1"), ("next",)):
        code, out = agent_run(team, "a2", *argv)
        assert code == 5 and out["error"]["code"] == "not_holder", (argv, out)
    code, out = agent_run(team, "a1", "writeback", "LX-1", "--summary", "still mine")
    assert code == 0 and out["card"]["lease"]["holder"] == "a1"
    assert team.cli("verify").code == 0


def test_a_lease_holder_written_in_the_database_borrows_no_approval_in_the_hook(team):
    """a1's card carries an approval of git:push in its lease; a2 writes itself in as the holder: its push is still denied."""
    team.ok("card", "add", "a1's card")
    assert agent_run(team, "a1", "claim", "LX-1")[0] == 0
    assert (
        agent_run(team, "a1", "gate", "ask", "LX-1", "--question", "push?", "--scope", "git:push")[0] == 0
    )  # a1 may push: approved at once
    assert hook(team, "git push origin main", agent="a1").get("permissionDecision") != "deny"
    assert hook(team, "git push origin main", agent="a2")["permissionDecision"] == "deny"
    sql(team, "UPDATE card SET lease_holder = 'a2' WHERE id = 1")
    assert hook(team, "git push origin main", agent="a2")["permissionDecision"] == "deny"


def test_a_lease_the_log_ended_is_not_honoured(team):
    """A released card whose row is set back to active under its old holder: refused, pointing at verify."""
    team.ok("card", "add", "released")
    assert agent_run(team, "a1", "claim", "LX-1")[0] == 0
    assert agent_run(team, "a1", "release", "LX-1")[0] == 0
    sql(
        team,
        "UPDATE card SET status = 'active', lease_holder = 'a1', lease_token = 1, lease_expires = 4102444800 WHERE id = 1",
    )
    code, out = agent_run(team, "a1", "writeback", "LX-1", "--summary", "zombie")
    assert code == 5 and out["error"]["code"] == "row_altered" and "loopx verify" in out["error"]["hint"], out
    assert verify_rows(team)[("card", 1, "status")] == ("active", "ready")


def _append_forged(board, actor: str, kind: str, data: dict) -> int:
    """Append an event at the head with a correct prev and recomputed hash (what an agent with SQL can do)."""
    seq, head, at = sql_rows(board, "SELECT seq, hash, at FROM event ORDER BY seq DESC LIMIT 1")[0]
    text = chain.data_text(data)
    digest = chain.event_hash(head, seq + 1, at, actor, None, kind, text, None, None)
    sql(
        board,
        f"INSERT INTO event (seq, at, actor, card, kind, data, op_id, prev, hash, key, sig) VALUES ({seq + 1}, {at!r}, '{actor}', NULL, '{kind}', '{text}', NULL, '{head}', '{digest}', NULL, NULL)",
    )
    return seq + 1


def test_a_signed_from_setting_cannot_unsign_a_persons_event(team):
    """`signed_from` set very high, then an unsigned `human:` event with a recomputed hash: exit 11, naming both."""
    sql(team, "INSERT INTO setting (key, value) VALUES ('signed_from', '999999')")
    seq = _append_forged(team, "human:tester", "setting_changed", {"key": "policy", "value": "{}"})
    res = team.cli("verify")
    assert res.code == 11, res
    problems = res.data["verify"]["problems"]
    assert any(p["seq"] == seq and "not signed" in p["what"] for p in problems), problems
    assert any(p["where"] == "setting signed_from" for p in problems), problems


def test_a_forged_charge_appended_to_the_log_is_named(team):
    """A charge event appended with zeroed totals (and a recomputed hash) does not add up: verify names it."""
    team.ok("card", "add", "small", "--max-turns", "5")
    assert agent_run(team, "a1", "claim", "LX-1")[0] == 0
    assert agent_run(team, "a1", "writeback", "LX-1", "--summary", "turn 1", "--todo-add", "t1")[0] == 0
    seq, head, at = sql_rows(team, "SELECT seq, hash, at FROM event ORDER BY seq DESC LIMIT 1")[0]
    data = {
        "evidence": "E-1",
        "summary": "x",
        "artifacts": 0,
        "tokens": 0,
        "usd": 0.0,
        "source": "cli",
        "progress": True,
        "used": {"turns": 0, "tokens": 0, "usd": 0.0},
    }
    text = chain.data_text(data)
    digest = chain.event_hash(head, seq + 1, at, "agent:a1", 1, "evidence_added", text, None, None)
    sql(
        team,
        f"INSERT INTO event (seq, at, actor, card, kind, data, op_id, prev, hash, key, sig) VALUES ({seq + 1}, {at!r}, 'agent:a1', 1, 'evidence_added', '{text}', NULL, '{head}', '{digest}', NULL, NULL)",
    )
    sql(team, "UPDATE card SET used_turns = 0 WHERE id = 1")
    res = team.cli("verify")
    assert res.code == 11 and any(
        p["seq"] == seq + 1 and "add up" in p["what"] for p in res.data["verify"]["problems"]
    ), res


def test_verify_names_every_row_that_differs(team):
    """Card, gate, grant and runner rows edited at once: each is named, with the row's and the log's value."""
    team.ok("card", "add", "one")
    team.ok("card", "add", "two")
    assert agent_run(team, "a2", "claim", "LX-1")[0] == 0
    assert agent_run(team, "a2", "gate", "ask", "LX-1", "--question", "push?", "--scope", "git:push")[0] == 6
    team.ok("gate", "answer", "G-1", "approve", "--remember", "card")
    assert agent_run(team, "a2", "gate", "ask", "LX-1", "--question", "deploy?", "--scope", "deploy:prod")[0] == 6
    team.ok("runner", "pause", "a2")
    assert team.cli("verify").code == 0
    sql(team, "UPDATE card SET status = 'done', assignee = 'a1' WHERE id = 2")
    sql(team, "UPDATE gate SET status = 'rejected' WHERE id = 2")
    sql(team, "UPDATE runner SET control = NULL WHERE agent = 'a2'")
    sql(team, """UPDATE "grant" SET scope = '*' WHERE id = 1""")
    rows = verify_rows(team)
    assert rows[("card", 2, "status")] == ("done", "ready") and rows[("card", 2, "assignee")] == ("a1", None)
    assert rows[("gate", 2, "status")] == ("rejected", "pending")
    assert rows[("runner", "a2", "control")] == (None, "pause")
    assert rows[("grant", 1, "row")] == (["*", None, 1, None], ["git:push", None, 1, None])


# -- the runner's lease token in the environment (#27) ------------------------------------------


def test_the_lease_token_in_the_environment_fences_every_write(team):
    """With a live lease 2, `LOOPX_LEASE_TOKEN=1 loopx writeback …` is refused as `--lease-token 1` is."""
    team.ok("card", "add", "fenced")
    assert agent_run(team, "a1", "claim", "LX-1")[0] == 0
    assert agent_run(team, "a1", "release", "LX-1")[0] == 0
    assert agent_run(team, "a1", "claim", "LX-1")[1]["lease"]["token"] == 2
    stale = {"LOOPX_LEASE_TOKEN": "1"}
    for argv in (
        ("writeback", "LX-1", "--summary", "zombie"),
        ("heartbeat", "LX-1"),
        ("gate", "ask", "LX-1", "--question", "q?"),
        ("done", "LX-1", "--summary", "z"),
    ):
        code, out = agent_run(team, "a1", *argv, env=stale)
        assert code == 5 and out["error"]["code"] == "stale_lease", (argv, out)
    code, out = agent_run(
        team, "a1", "writeback", "LX-1", "--summary", "explicit wins", "--lease-token", "2", env=stale
    )
    assert code == 0
    code, out = agent_run(
        team, "a1", "writeback", "LX-1", "--summary", "live", env={"LOOPX_LEASE_TOKEN": "2", "LOOPX_TURN_ID": "run.t1"}
    )
    assert code == 0 and out["evidence"]["turn_id"] == "run.t1"
    bad = agent_run(team, "a1", "heartbeat", "LX-1", env={"LOOPX_LEASE_TOKEN": "two"})
    assert bad[0] == 2 and "LOOPX_LEASE_TOKEN" in bad[1]["error"]["message"]


def test_the_mcp_writeback_is_fenced_by_the_lease_token_and_takes_an_op_id(team):
    """`loopx mcp` (a real process) started with the runner's stale token refuses the write; an op id replays."""
    team.ok("card", "add", "fenced")
    assert agent_run(team, "a1", "claim", "LX-1")[0] == 0
    assert agent_run(team, "a1", "release", "LX-1")[0] == 0
    assert agent_run(team, "a1", "claim", "LX-1")[0] == 0

    def mcp(arguments: dict, env: dict) -> dict:
        lines = [
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-06-18",
                    "capabilities": {},
                    "clientInfo": {"name": "t", "version": "1"},
                },
            },
            {
                "jsonrpc": "2.0",
                "id": 2,
                "method": "tools/call",
                "params": {"name": "writeback", "arguments": arguments},
            },
        ]
        proc = shell(
            team, "loopx mcp", {**agent_env(team, "a1"), **env}, stdin="\n".join(json.dumps(m) for m in lines) + "\n"
        )
        replies = [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]
        return replies[-1]["result"]

    stale = mcp({"card": "LX-1", "summary": "zombie"}, {"LOOPX_LEASE_TOKEN": "1"})
    assert stale["isError"] and "[stale_lease]" in stale["content"][0]["text"], stale
    assert mcp({"card": "LX-1", "summary": "zombie", "lease_token": 1}, {})["isError"]
    first = mcp({"card": "LX-1", "summary": "live", "op_id": "op-7"}, {"LOOPX_LEASE_TOKEN": "2"})
    again = mcp({"card": "LX-1", "summary": "live", "op_id": "op-7"}, {"LOOPX_LEASE_TOKEN": "2"})
    assert not first["isError"] and json.loads(first["content"][0]["text"]) == json.loads(again["content"][0]["text"])
    assert sql_rows(team, "SELECT count(*) FROM evidence WHERE card_id = 1") == [(1,)]
