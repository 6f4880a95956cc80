"""A shared team board on PostgreSQL: same operators, same guarantees."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.agent_loop import AGENT_LOOP as AGENT

LOOPX = [sys.executable, "-m", "loopx_core"]


def run(url: str, *args, agent: str | None = None, cwd: Path | None = None, host: str | None = None):
    env = dict(os.environ, LOOPX_DB=url, LOOPX_HUMAN="tester")
    env.pop("LOOPX_AGENT", None)
    if agent:
        env["LOOPX_AGENT"] = agent
    if host:
        env["LOOPX_HOST"] = host
    proc = subprocess.run(
        LOOPX + ["--json", *map(str, args)], env=env, cwd=cwd, capture_output=True, text=True, timeout=60
    )
    data = json.loads(proc.stdout) if proc.stdout.strip() else {}
    return proc.returncode, data, proc.stderr


def ok(url, *args, **kw):
    code, data, err = run(url, *args, **kw)
    assert code == 0, (args, data, err)
    return data


def test_an_uninitialised_database_is_refused_with_the_init_command(pg_url, tmp_path):
    code, data, _ = run(pg_url, "card", "list", cwd=tmp_path)
    assert code == 4
    assert "init" in data["error"]["hint"]


def test_init_creates_the_schema_and_the_turn_cycle_works(pg_url, tmp_path):
    created = ok(pg_url, "init", "--objective", "team board", cwd=tmp_path)
    assert created["board"]["created"] is True
    assert ok(pg_url, "init", cwd=tmp_path)["board"]["created"] is False
    ok(pg_url, "agent", "add", "a1", cwd=tmp_path)
    ok(pg_url, "agent", "add", "a2", cwd=tmp_path)
    ok(pg_url, "card", "add", "ship it", cwd=tmp_path)
    nxt = ok(pg_url, "next", "--claim", agent="a1", cwd=tmp_path)
    assert nxt["action"] == "work"
    code, refused, _ = run(pg_url, "claim", "LX-1", agent="a2", cwd=tmp_path)
    assert code == 5 and "a1" in refused["error"]["message"]
    ok(pg_url, "writeback", "LX-1", "--summary", "did it", "--turn-id", "t1", agent="a1", cwd=tmp_path)
    again = ok(pg_url, "writeback", "LX-1", "--summary", "did it", "--turn-id", "t1", agent="a1", cwd=tmp_path)
    assert again["evidence"]["id"] == "E-1"
    code, _, _ = run(pg_url, "writeback", "LX-1", "--summary", "other", "--turn-id", "t1", agent="a1", cwd=tmp_path)
    assert code == 5
    assert ok(pg_url, "done", "LX-1", "--summary", "fin", agent="a1", cwd=tmp_path)["card"]["status"] == "done"
    kinds = [e["kind"] for e in ok(pg_url, "events", cwd=tmp_path)["events"]]
    assert kinds.count("evidence_added") == 1 and kinds.count("done") == 1
    seqs = [e["seq"] for e in ok(pg_url, "events", cwd=tmp_path)["events"]]
    assert seqs == sorted(seqs) == list(range(seqs[0], seqs[0] + len(seqs)))


def test_change_detection_follows_the_event_sequence(pg_url, tmp_path):
    from loopx_core.store.backends import Store
    from loopx_core.store.discovery import parse_target

    ok(pg_url, "init", cwd=tmp_path)
    store = Store.open(parse_target(pg_url, "flag"))
    try:
        before = store.change_token()
        ok(pg_url, "card", "add", "from another process", cwd=tmp_path)
        assert store.change_token() > before
        from loopx_core.ops.board import changed_since

        events, cards = changed_since(store, before)
        assert [e.kind for e in events] == ["card_added"]
        assert [c.title for c in cards] == ["from another process"]
    finally:
        store.close()


def test_agents_on_different_hosts_drain_a_shared_board_once_each(pg_url, tmp_path):
    ok(pg_url, "init", cwd=tmp_path)
    hosts = [f"host-{i}" for i in range(6)]
    for i in range(6):
        ok(pg_url, "agent", "add", f"agent-{i}", cwd=tmp_path)
    for i in range(18):
        ok(pg_url, "card", "add", f"card {i}", cwd=tmp_path)
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", AGENT, f"agent-{i}"],
            env=dict(os.environ, LOOPX_DB=pg_url, LOOPX_HOST=hosts[i]),
            cwd=tmp_path,
            stdout=subprocess.PIPE,
            text=True,
        )
        for i in range(6)
    ]
    errors = [json.loads(p.communicate(timeout=240)[0]) for p in procs]
    assert errors == [[]] * 6
    events = ok(pg_url, "events", cwd=tmp_path)["events"]
    done = [e["card"] for e in events if e["kind"] == "done"]
    assert sorted(done) == sorted(f"LX-{i}" for i in range(1, 19))
    claims = [e for e in events if e["kind"] == "claimed"]
    assert len(claims) == 18  # each card claimed once: no lost race left a duplicate owner
    assert {c["data"]["host"] for c in claims} <= set(hosts) and len({c["data"]["host"] for c in claims}) > 1


def test_migrate_copies_a_local_board_to_postgresql_and_back(pg_url, tmp_path):
    local = tmp_path / "local.db"
    lurl = str(local)
    ok(lurl, "init", cwd=tmp_path)
    ok(lurl, "agent", "add", "a1", "--can", "git:push", cwd=tmp_path)
    ok(lurl, "card", "add", "one", "--max-turns", "5", cwd=tmp_path)
    ok(lurl, "card", "add", "two", "--after", "LX-1", cwd=tmp_path)
    ok(lurl, "next", "--claim", agent="a1", cwd=tmp_path)
    (tmp_path / "out.txt").write_text("artifact\n")
    ok(
        lurl,
        "writeback",
        "LX-1",
        "--summary",
        "s",
        "--artifact",
        "out.txt",
        "--todo-add",
        "t",
        agent="a1",
        cwd=tmp_path,
    )
    code, _, _ = run(lurl, "gate", "ask", "LX-1", "--question", "ok?", agent="a1", cwd=tmp_path)
    assert code == 6
    moved = ok(lurl, "migrate", "--to", pg_url, cwd=tmp_path)["migration"]
    assert moved["verified"] and moved["tables"]["event"]["rows"] > 5
    assert ok(pg_url, "export", cwd=tmp_path)["cards"] == ok(lurl, "export", cwd=tmp_path)["cards"]
    # New rows on the team board continue the copied sequences.
    assert ok(pg_url, "card", "add", "three", cwd=tmp_path)["card"]["id"] == "LX-3"
    back = tmp_path / "back.db"
    ok(pg_url, "migrate", "--to", str(back), cwd=tmp_path)
    assert [c["title"] for c in ok(str(back), "card", "list", cwd=tmp_path)["cards"]] == ["one", "two", "three"]
    # A board that already holds cards is never merged into.
    code, data, _ = run(lurl, "migrate", "--to", pg_url, cwd=tmp_path)
    assert code == 5 and data["error"]["code"] == "target_not_empty"


def test_an_unreachable_server_is_a_clear_error(tmp_path):
    code, data, err = run("postgresql://nobody@127.0.0.1:1/none", "card", "list", cwd=tmp_path)
    assert code == 4
    assert data["error"]["code"] in ("board_unreachable", "no_driver")
    assert "Traceback" not in err


def test_a_socket_folder_url_is_a_board_url_and_says_no_password():
    """A server reached through its unix socket folder (a host with no route
    to it, #42): the URL names the board, and no password shows where it is said."""
    from loopx_core.store.discovery import parse_target

    url = "postgresql://loopx:secret@/team?host=/var/run/postgresql&port=5433&password=hidden"
    found = parse_target(url, "env")
    assert (found.backend, found.url) == ("postgresql", url)
    said = found.describe()
    assert "secret" not in said and "hidden" not in said
    assert said == "postgresql://loopx:***@/team?host=/var/run/postgresql&port=5433&password=***"
