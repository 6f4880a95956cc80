"""#29: the person's notification command is delivered by whichever runner
looks first — two real runner processes, every gate told exactly once."""

from __future__ import annotations

import json
import sys


def test_two_runners_deliver_each_gate_once(team, watch, tmp_path):
    out = tmp_path / "told.jsonl"
    script = tmp_path / "tell.py"
    script.write_text(
        f"import json, sys\nsys.stdin.read()\nopen({str(out)!r}, 'a').write(json.dumps(sys.argv[1:]) + '\\n')\n"
    )
    team.ok("notify", "set", "--", sys.executable, "-I", str(script), tty=True)
    team.ok("agent", "add", "a3")
    team.ok("card", "add", "asks a lot")
    assert team.ok("claim", "LX-1", agent="a3")["action"] == "work"
    first, second = watch.run("a1"), watch.run("a2")
    for agent in ("a1", "a2"):
        watch.until(
            f"{agent}'s runner sleeps",
            lambda a=agent: (r := watch.runner(a)) and r.state == "asleep" and r.detail != "starting",
        )
    for n in range(6):
        assert team.cli("gate", "ask", "LX-1", "--question", f"question {n}?", agent="a3").code == 6
    watch.until("six notifications recorded", lambda: len(watch.events("notified")) >= 6)
    told = [json.loads(line) for line in out.read_text().splitlines()]
    assert sorted(t[0] for t in told) == sorted(f"G-{n} on LX-1 needs you" for n in range(1, 7))  # each once
    notified = watch.events("notified")
    assert sorted(e.data["key"] for e in notified) == [f"gate:G-{n}" for n in range(1, 7)] and all(
        e.data["ok"] for e in notified
    )
    claimers = {e.data["by"] for e in watch.events("notify_claimed")}
    assert claimers <= {"runner:a1", "runner:a2"}
    for proc in (first, second):
        watch.signal(proc)
        assert watch.ended(proc) == 0
    assert len(out.read_text().splitlines()) == 6  # nothing told twice meanwhile
