"""``loopx watch`` as a real process: --once, Ctrl-C, progress, and two
watchers (standing in for the TUI and a headless one) on one board."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys

import pytest

from tests.polling import until

from .conftest import doc, events, evidence, write_atomic


def backlog(folder, n: int, start: int = 0):
    folder.mkdir(parents=True, exist_ok=True)
    for i in range(start, start + n):
        (folder / f"turn-{i:04}.loopx.json").write_text(json.dumps(doc(f"turn {i}", next=f"step {i}")))


def test_once_catches_up_prints_a_line_per_document_and_exits(project):
    backlog(project.root / "out", 60)
    (project.root / ".loopx" / "inbox").mkdir(exist_ok=True)
    (project.root / ".loopx" / "inbox" / "bad.loopx.json").write_text(json.dumps(doc("s", agent="ghost")))
    res = project.spawn("watch", "--once")
    assert res.returncode == 0, res.stderr
    out = res.stdout.splitlines()
    assert len([l for l in out if l.startswith("ingested E-")]) == 60
    refused = [l for l in out if l.startswith("refused")]
    assert refused == ["refused .loopx/inbox/bad.loopx.json [LX-1]: unknown agent 'ghost'"]
    assert any(l.startswith("  → register it first") for l in out)
    # Not a terminal: plain progress lines, no carriage returns.
    assert "catching up on 61 files" in res.stderr and "caught up on 61 files" in res.stderr
    assert "\r" not in res.stderr
    store = project.store()
    try:
        assert len(evidence(store)) == 60 and len(events(store, "ingest_error")) == 1
    finally:
        store.close()
    # Again: everything was handled, nothing is printed or recorded twice.
    again = project.spawn("watch", "--once")
    assert again.returncode == 0 and again.stdout == ""
    assert "0 ingested, 0 refused" in again.stderr


def test_progress_is_drawn_on_a_terminal(project):
    backlog(project.root / "out", 60)
    import pty

    main, secondary = pty.openpty()
    env = dict(os.environ, LOOPX_DB=project.url, LOOPX_HUMAN="tester")
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "loopx_core", "watch", "--once"],
            cwd=project.root,
            env=env,
            stdout=subprocess.PIPE,
            stderr=secondary,
            timeout=60,
        )
        os.close(secondary)
        secondary = None
        chunks = []
        while True:
            try:
                data = os.read(main, 65536)
            except OSError:
                break
            if not data:
                break
            chunks.append(data)
    finally:
        if secondary is not None:
            os.close(secondary)
        os.close(main)
    err = b"".join(chunks).decode()
    assert proc.returncode == 0
    assert "\rcatching up [" in err.replace("\x1b[2K", "") and "60/60 files" in err
    assert "caught up on 60 files" in err
    assert proc.stdout.decode().count("ingested E-") == 60


def test_ctrl_c_and_sigterm_exit_cleanly(project, procs):
    for sig in (signal.SIGINT, signal.SIGTERM):
        p = procs(project).wait_started()
        assert p.interrupt(sig) == 0, (p.out, p.err)
        assert any("stopped:" in l for l in p.err)
        assert not any("Traceback" in l for l in p.err)


def test_a_missing_board_is_a_clear_error(tmp_path):
    env = dict(os.environ, LOOPX_DB=str(tmp_path / "nope" / "board.db"))
    res = subprocess.run(
        [sys.executable, "-m", "loopx_core", "watch", "--once"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert res.returncode == 4 and "no board at" in res.stderr


@pytest.mark.slow
def test_two_watchers_at_once_never_double_ingest(project, procs):
    """Two `loopx watch` processes on one board: every document, line,
    refusal and observed artifact lands exactly once."""
    first = procs(project).wait_started()
    second = procs(project).wait_started()
    out = project.root / "out"
    backlog(out / "a", 150)
    stream = out / "turns.loopx.jsonl"
    with open(stream, "w") as handle:
        for i in range(100):
            handle.write(json.dumps(doc(f"line {i}", next=f"line step {i}")) + "\n")
            if i % 10 == 9:
                handle.flush()
    for i in range(150, 300):
        write_atomic(out / "b" / f"turn-{i:04}.loopx.json", doc(f"turn {i}", next=f"step {i}"))
    write_atomic(out / "bad.loopx.json", doc("s", card="LX-42"))
    (out / "report.md").write_text("# done\n")
    store = project.store()
    try:
        until(lambda: len(evidence(store)) >= 400, timeout=90, what="400 pieces of evidence")
        until(
            lambda: events(store, "ingest_error") and events(store, "artifact_observed"),
            timeout=30,
            what="the refusal and the artifact",
        )
        # A sentinel written last, taken by one of them, means both are past the burst.
        write_atomic(out / "sentinel.loopx.json", doc("sentinel", next="end"))
        until(lambda: any(e.summary == "sentinel" for e in evidence(store)), timeout=30, what="the sentinel")
        assert first.interrupt() == 0 and second.interrupt() == 0
        rows = evidence(store)
        assert len(rows) == 401 and len({e.summary for e in rows}) == 401
        assert len(events(store, "ingest_error")) == 1
        assert len(events(store, "artifact_observed")) == 1
        from loopx_core.store.models import Observed

        with store.read():
            assert Observed.select().count() == 1
    finally:
        store.close()
    printed = [l for l in first.out + second.out if l.startswith("ingested")]
    assert len(printed) == 401  # each piece of evidence was reported by exactly one of them
    assert len([l for l in first.out + second.out if l.startswith("refused")]) == 1


def test_a_headless_watcher_delivers_the_persons_notification(project, procs, tmp_path):
    """#29: with no board open, `loopx watch` runs the person's notification
    command for a gate, once, and records the outcome."""
    out = tmp_path / "told.txt"
    script = tmp_path / "tell.py"
    script.write_text(f"import sys\nsys.stdin.read()\nopen({str(out)!r}, 'a').write(sys.argv[1] + '\\n')\n")
    project.ok("notify", "set", "--", sys.executable, "-I", str(script), tty=True)
    p = procs(project).wait_started()
    assert project.cli("gate", "ask", "LX-1", "--question", "ship it?", agent="w1").code == 6
    store = project.store()
    try:
        until(lambda: events(store, "notified"), timeout=60, what="the notification's outcome")
        assert [e.data["ok"] for e in events(store, "notified")] == [True]
    finally:
        store.close()
    assert p.interrupt() == 0
    assert out.read_text() == "G-1 on LX-1 needs you\n"
