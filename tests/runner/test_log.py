"""`loopx run`'s log, for a process that runs for days: every line carries an ISO
date and time with its offset, a level and the agent; `--log-file` appends the
same lines to a file; `--quiet` keeps warnings and errors only, `--verbose` adds
the events the runner reads. A real runner process, two turns of the scripted agent."""

from __future__ import annotations

import re
from datetime import datetime

LINE = re.compile(r"^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d[+-]\d{4}) (DEBUG|INFO|WARNING|ERROR)\s+a1: (.+)$")


def lines(text: str) -> list[re.Match]:
    """The log's lines; the last line of the output is the command's own answer
    (`a1's runner stopped: …`), not a log line."""
    raw = [line for line in text.splitlines() if line and not line.startswith("  ")]  # ("  → hint" continues a line)
    assert raw and raw[-1].startswith("a1's runner stopped"), raw[-3:]
    found = [LINE.match(line) for line in raw[:-1]]
    assert all(found), [line for line, m in zip(raw, found) if not m]
    return found


def test_every_line_is_dated_levelled_and_the_file_holds_the_same(team, watch, tmp_path):
    team.ok("card", "add", "a job", "--next", "step 1")
    log = tmp_path / "runner.log"
    proc = watch.run("a1", "--turns", "2", "--log-file", str(log))
    assert watch.ended(proc) == 0, watch.explain()
    shown = lines(watch.procs[-1][1].read_text())
    kept = [LINE.match(line) for line in log.read_text().splitlines() if not line.startswith("  ")]
    assert all(kept), log.read_text()
    assert [m.group(3) for m in kept] == [m.group(3) for m in shown]  # the file has what the terminal had
    assert any("running: turn 1 on LX-1" in m.group(3) for m in kept) and any(
        m.group(3).startswith("stopped (ran 2 turn(s)") for m in kept
    )
    stamps = [datetime.strptime(m.group(1), "%Y-%m-%dT%H:%M:%S%z") for m in kept]
    assert stamps == sorted(stamps) and all(s.year >= 2026 for s in stamps)
    assert {m.group(2) for m in kept} == {"INFO"}  # nothing went wrong: no warning


def test_quiet_keeps_only_trouble_and_verbose_says_what_it_read(team, watch):
    team.ok("card", "add", "a job", "--next", "step 1")
    quiet = watch.run("a1", "--turns", "1", "--quiet")
    assert watch.ended(quiet) == 0, watch.explain()
    assert lines(watch.procs[-1][1].read_text()) == []  # an ordinary run: nothing logged, only the command's answer
    verbose = watch.run("a1", "--turns", "2", "--verbose")
    assert watch.ended(verbose) == 0, watch.explain()
    levels = {m.group(2) for m in lines(watch.procs[-1][1].read_text())}
    assert levels == {"INFO", "DEBUG"}  # the events it read, between its turns
    both = team.spawn("run", "--agent", "a1", "--runtime", "shell", "--quiet", "--verbose", "--", "true")
    assert both.returncode == 2 and "contradict" in both.stderr


def test_a_log_file_that_cannot_be_written_is_refused_before_anything_runs(team, watch, tmp_path):
    team.ok("card", "add", "a job")
    proc = team.spawn(
        "run",
        "--agent",
        "a1",
        "--runtime",
        "shell",
        "--log-file",
        str(tmp_path / "no" / "such" / "folder" / "x.log"),
        "--",
        "true",
    )
    assert proc.returncode == 2 and "cannot write the log file" in proc.stderr
    assert not watch.events("runner_started")
