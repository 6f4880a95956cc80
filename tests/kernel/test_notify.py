"""The notification command (#29): a person's signed setting, run for what
needs them — once per gate, terminal-safe, in a scrubbed environment from `/`,
bounded in time, its outcome recorded as an event. The command here is a real
process (a small Python script that writes down what it got)."""

from __future__ import annotations

import json
import sys

import pytest

from loopx_core.ops import notify, notify_send

from ..security.conftest import sql
from .conftest import held, refused

SCRIPT = """
import json, os, sys, time
data = sys.stdin.read()
if "hang" in sys.argv[2]:
    time.sleep(30)
if "fail" in sys.argv[2]:
    print("no route to the phone"); sys.exit(3)
with open({out!r}, "a") as fh:
    fh.write(json.dumps({{"argv": sys.argv[1:], "stdin": json.loads(data), "cwd": os.getcwd(), "env": sorted(os.environ)}}) + "\\n")
"""


@pytest.fixture
def told(team, tmp_path):
    """A notification command that appends what it was given to a file; returns a reader of it."""
    out = tmp_path / "told.jsonl"
    script = tmp_path / "tell.py"
    script.write_text(SCRIPT.format(out=str(out)))
    res = team.cli("notify", "set", "--timeout", "3s", "--", sys.executable, "-I", str(script), tty=True)
    assert res.code == 0, res
    return lambda: [json.loads(line) for line in out.read_text().splitlines()] if out.exists() else []


def deliver(team):
    store = team.store()
    try:
        return notify_send.deliver(store, "test")
    finally:
        store.close()


def outcomes(team):
    return [e["data"] for e in team.ok("events", "--limit", "500")["events"] if e["kind"] == "notified"]


def test_a_gate_is_told_once_with_its_text_as_arguments_and_json(team, told, monkeypatch):
    team.ok("card", "add", "ship it")
    held(team, "LX-1", "a2")
    monkeypatch.setenv("LOOPX_AGENT", "a2")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-secret")
    assert (
        team.cli(
            "gate",
            "ask",
            "LX-1",
            "--question",
            "push \x1b]0;pwned\x07to main?\x1b[2J",
            "--scope",
            "git:push",
            agent="a2",
        ).code
        == 6
    )
    sent = deliver(team)
    assert [(n.key, ok) for n, ok, _ in sent] == [("gate:G-1", True)]
    (got,) = told()
    assert got["argv"] == ["G-1 on LX-1 needs you", "push to main?"]  # terminal-safe: no escape survives
    assert (
        got["stdin"]["key"] == "gate:G-1" and got["stdin"]["card"] == "LX-1" and got["stdin"]["body"] == "push to main?"
    )
    assert got["cwd"] == "/"  # never the project, which an agent writes
    assert not [k for k in got["env"] if k.startswith(("LOOPX", "PYTHON")) or "API_KEY" in k]
    # Asked again (the same pending gate), or another look: nothing new.
    team.cli("gate", "ask", "LX-1", "--question", "push to main?", "--scope", "git:push", agent="a2")
    assert deliver(team) == [] and len(told()) == 1
    assert [(o["key"], o["ok"]) for o in outcomes(team)] == [("gate:G-1", True)]
    assert team.cli("verify").code == 0


def test_a_pause_and_a_failed_verify_are_told_a_gate_answered_at_once_is_not(team, told):
    team.ok("card", "add", "small", "--max-turns", "1", "--verify", "false")
    held(team, "LX-1", "a2")
    team.ok("writeback", "LX-1", "--summary", "did a thing", "--turn-id", "t1", agent="a2")
    team.ok("card", "add", "capable")
    held(team, "LX-2", "a1")
    team.ok(
        "gate", "ask", "LX-2", "--question", "push?", "--scope", "git:push", agent="a1"
    )  # a1 holds git:push: approved at once
    deliver(team)
    kinds = sorted(r["stdin"]["kind"] for r in told())
    assert "paused" in kinds and "gate_asked" not in kinds, kinds


def test_a_verify_that_fails_is_told(team, told):
    team.ok("card", "add", "checked", "--verify", "false")
    held(team, "LX-1", "a2")
    team.ok("writeback", "LX-1", "--summary", "did it", agent="a2")
    assert team.cli("done", "LX-1", "--summary", "done", agent="a2").code != 0
    deliver(team)
    assert [r["stdin"]["kind"] for r in told()] == ["verify_failed"]


def test_a_failing_or_hanging_command_is_recorded_and_killed(team, told):
    team.ok("card", "add", "fail this one")
    held(team, "LX-1", "a2")
    team.cli("gate", "ask", "LX-1", "--question", "fail?", agent="a2")
    team.ok("card", "add", "sleep")
    held(team, "LX-2", "a1")
    team.cli("gate", "ask", "LX-2", "--question", "hang?", agent="a1")
    sent = {n.key: (ok, error) for n, ok, error in deliver(team)}
    assert sent["gate:G-1"] == (False, "exit 3: no route to the phone")
    assert sent["gate:G-2"][0] is False and "timed out after 3 s" in sent["gate:G-2"][1]
    assert {o["key"]: o["ok"] for o in outcomes(team)} == {"gate:G-1": False, "gate:G-2": False}


def test_only_a_person_sets_it_and_an_edited_setting_runs_nothing(team, told, tmp_path):
    evil = tmp_path / "evil.sh"
    refused(team, 10, "notify", "set", "--", "/bin/sh", "-c", f"touch {evil}", agent="a2", tty=True)
    refused(team, 3, "notify", "set", "--", "notify-send", "hi", tty=True)  # a PATH search: refused
    team.ok("card", "add", "one")
    held(team, "LX-1", "a2")
    team.cli("gate", "ask", "LX-1", "--question", "q?", agent="a2")
    # The agent rewrites the setting row (the log's signed event is what counts) ...
    sql(
        team,
        f"""UPDATE setting SET value = '{{"argv": ["/bin/sh", "-c", "touch {evil}"], "timeout": 5, "every": 0}}' WHERE key = 'notify_command'""",
    )
    deliver(team)
    assert not evil.exists() and len(told()) == 1
    # ... or the signed event itself: its signature fails and nothing runs at all.
    sql(team, """UPDATE event SET data = REPLACE(data, 'tell.py', 'evil.py') WHERE kind = 'setting_changed'""")
    team.cli("gate", "ask", "LX-1", "--question", "another?", agent="a2")
    store = team.store()
    try:
        with store.read():
            assert notify.command(store) is None
    finally:
        store.close()


def test_notify_show_and_test(team, told):
    shown = team.ok("notify", "show")
    assert shown["notify"]["argv"][0] == sys.executable and shown["last"] is None
    res = team.cli("notify", "test", tty=True)
    assert res.code == 0 and res.data["ok"] is True and len(told()) == 1
    assert team.ok("notify", "show")["last"]["ok"] is True
    assert team.ok("notify", "set", "--none", tty=True)["notify"] is None
    assert team.cli("notify", "test", tty=True).code == 2


def test_notify_set_shell_takes_the_message_as_arguments_not_as_shell_text(team, tmp_path):
    out, marker = tmp_path / "shell.txt", tmp_path / "injected"
    team.ok("notify", "set", "--shell", f'printf "%s|%s\\n" "$1" "$2" >> {out}', tty=True)
    team.ok("card", "add", "one")
    held(team, "LX-1", "a2")
    team.cli("gate", "ask", "LX-1", "--question", f"$(touch {marker}); `touch {marker}`", agent="a2")
    deliver(team)
    assert not marker.exists()
    assert out.read_text() == f"G-1 on LX-1 needs you|$(touch {marker}); `touch {marker}`\n"


def test_a_runner_gone_silent_is_told_once(team, told, clock):
    from loopx_core.ops import runners

    store = team.store()
    try:
        runners.start(store, "a1", "r-1", "shell", 999999, "elsewhere")
        clock.advance(10)
        assert notify_send.deliver(store, "test") == []  # still within its heartbeat
        clock.advance(runners.STALE + 5)
        sent = notify_send.deliver(store, "test")
        assert [(n.kind, n.title) for n, _, _ in sent] == [("runner_silent", "a1's runner went silent")]
        clock.advance(3600)  # silent for an hour more: told once
        assert notify_send.deliver(store, "test") == []
    finally:
        store.close()


# -- a deliverer that dies between its claim and the command (#29) ---------------------------
# Killed for real (SIGKILL at the `notify_claimed` fault point, after the claim
# committed and before any notice started): the claim gives its notices back —
# at once on this machine, where the dead process is seen; past the claim's
# time from another — and the next deliverer tells the person exactly once.

DELIVERER = """
import sys
from loopx_core.ops import notify_send
from loopx_core.store.backends import Store
from loopx_core.store.discovery import parse_target
notify_send.deliver(Store.open(parse_target(sys.argv[1], "flag")), sys.argv[2])
"""


def _killed_deliverer(team, by: str, **env) -> None:
    import os
    import signal
    import subprocess

    proc = subprocess.run(
        [sys.executable, "-c", DELIVERER, team.url, by],
        cwd=team.root,
        env=dict(os.environ, LOOPX_FAULT="notify_claimed", **env),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    (last,) = [e for e in team.ok("events", "--limit", "500")["events"] if e["kind"] == "notify_claimed"][-1:]
    assert last["data"]["by"] == by and last["data"]["keys"] == ["gate:G-1"], last


def _a_gate(team) -> None:
    team.ok("card", "add", "ship it")
    held(team, "LX-1", "a2")
    assert team.cli("gate", "ask", "LX-1", "--question", "push to main?", "--scope", "git:push", agent="a2").code == 6


def test_a_deliverer_killed_after_its_claim_gives_it_back_and_the_person_is_told_once(team, told):
    _a_gate(team)
    _killed_deliverer(team, "doomed")
    assert told() == []  # claimed, and never run
    sent = deliver(team)  # another deliverer, at once: the claimer's process is gone on this machine
    assert [(n.key, ok) for n, ok, _ in sent] == [("gate:G-1", True)]
    assert deliver(team) == [] and deliver(team) == []
    (got,) = told()
    assert got["argv"] == ["G-1 on LX-1 needs you", "push to main?"]
    assert [(o["key"], o["ok"]) for o in outcomes(team)] == [("gate:G-1", True)]
    assert team.cli("verify").code == 0


def test_a_claim_from_another_machine_is_given_back_only_past_its_time(team, told, clock):
    _a_gate(team)
    _killed_deliverer(team, "elsewhere", LOOPX_HOST="another-machine")
    assert deliver(team) == [] and told() == []  # its process cannot be seen from here: it may be working
    clock.advance(notify.GRACE + 3 + 5 + 1)  # past the claim's time: one notice, a 3 s command
    assert [n.key for n, _, _ in deliver(team)] == ["gate:G-1"]
    assert deliver(team) == [] and len(told()) == 1


def test_a_slow_deliverer_whose_claim_was_given_back_never_runs_it(team, told, clock):
    """Past its time a live deliverer's notices are taken by another; when it
    gets to them, ``start`` says no: told once, by the other."""
    _a_gate(team)
    store = team.store()
    try:
        with store.read():
            cmd = notify.command(store)
        slow = notify.claim(store, cmd, "slow")
        assert [n.key for n in slow.notices] == ["gate:G-1"]
        assert deliver(team) == []  # its claim still runs
        clock.advance(notify.GRACE + 3 + 5 + 1)
        assert [n.key for n, _, _ in deliver(team)] == ["gate:G-1"]
        assert notify.start(store, slow, slow.notices[0]) is False
    finally:
        store.close()
    assert len(told()) == 1


def test_a_gates_message_carries_the_link_to_the_phones_page(team, told, monkeypatch):
    team.ok("card", "add", "ship it")
    held(team, "LX-1", "a2")
    assert team.cli("gate", "ask", "LX-1", "--question", "ship?", agent="a2").code == 6
    monkeypatch.setenv("LOOPX_PHONE_URL", "https://board.example.ts.net/")
    deliver(team)
    (got,) = told()
    assert got["stdin"]["link"] == "https://board.example.ts.net/#g-G-1"
    assert got["argv"][-1] == "ship? https://board.example.ts.net/#g-G-1"
