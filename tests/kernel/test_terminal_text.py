"""What a person reads in a terminal (issue #14): text from agents is made
safe for terminals in the CLI's text output and stored exactly as given; the
JSON stays exact; the texts that said too little now say what happened."""

from __future__ import annotations

import json
import subprocess

from loopx_core.rules.text import terminal_safe

from .conftest import held, loopx

HOSTILE = (
    "esc \x1b[31mred\x1b[0m \x07bell \x1b]0;pwned\x07 \u202eevil\u202c z\u200bw \x1b]52;c;Zm9v\x1b\\ back\x08\x08over"
)


def test_the_sanitiser_removes_what_drives_or_shifts_a_terminal():
    assert terminal_safe("esc \x1b[31mred\x1b[0m \x07bell") == "esc red bell"
    clean = terminal_safe(HOSTILE)
    assert not any(ord(c) < 32 or 0x7F <= ord(c) < 0xA0 for c in clean)
    assert "\u202e" not in clean and "\u200b" not in clean and "pwned" not in clean and "Zm9v" not in clean
    # Width tricks: joiners, variation selectors, skin tones, flags, fillers, stacked marks.
    assert (
        terminal_safe("\U0001f469\u200d\U0001f4bb \u2764\ufe0f \U0001f44d\U0001f3fd \U0001f1fa\U0001f1f8 \u3164x")
        == "\U0001f469\U0001f4bb \u2764 \U0001f44d  x"
    )
    assert terminal_safe("q" + "\u0301" * 30) == "q\u0301\u0301"  # q has no precomposed accent
    assert (
        terminal_safe("caf\u00e9 \u6f22\u5b57 \u00fcber") == "caf\u00e9 \u6f22\u5b57 \u00fcber"
    )  # ordinary text untouched
    assert terminal_safe("a\nb\tc") == "a b c"
    assert terminal_safe("a\r\nb\tc\rd", multiline=True) == "a\nb\tc\nd"


def test_a_hostile_title_is_stored_exactly_and_printed_safely(board):
    added = board.ok("card", "add", HOSTILE)["card"]
    assert added["title"] == HOSTILE  # stored as given, and JSON carries it exactly
    raw = board.cli("card", "list", json_out=False)
    assert raw.code == 0
    assert "\x1b" not in raw.out and "\x07" not in raw.out and "\u202e" not in raw.out and "\r" not in raw.out
    assert "esc red bell" in raw.out
    shown = board.cli("card", "show", added["id"], json_out=False).out
    assert "\x1b" not in shown and "esc red bell" in shown


def test_json_output_escapes_control_characters_and_round_trips(board):
    added = board.ok("card", "add", HOSTILE)["card"]
    proc = board.spawn("--json", "card", "show", added["id"])
    assert proc.returncode == 0, proc.stderr
    assert "\x1b" not in proc.stdout and "\x07" not in proc.stdout and "\u202e" not in proc.stdout
    assert json.loads(proc.stdout)["card"]["title"] == HOSTILE


def test_a_hostile_title_reaches_a_real_terminal_clean(board):
    """`loopx card list` in a pty, as a person runs it: no escape byte reaches the terminal."""
    board.ok("card", "add", HOSTILE)
    import os
    import shlex
    import sys

    cmd = " ".join(shlex.quote(a) for a in (sys.executable, "-m", "loopx_core", "card", "list"))
    env = dict(os.environ, LOOPX_DB=board.url)
    env.pop("LOOPX_AGENT", None)
    proc = subprocess.run(
        ["script", "-qec", cmd, "/dev/null"], cwd=board.root, env=env, capture_output=True, timeout=60
    )
    assert proc.returncode == 0, proc.stderr
    assert b"esc red bell" in proc.stdout
    assert b"\x1b" not in proc.stdout and b"\x07" not in proc.stdout


def test_errors_on_stderr_are_sanitised_too(board):
    res = board.cli("card", "show", "LX-1\x1b[2J", json_out=False)
    assert res.code == 3
    assert "\x1b" not in res.err


def test_gate_status_text_carries_the_rejection_note_and_a_scoped_gate_is_a_permission(team):
    board = team
    board.ok("card", "add", "Deploy")
    held(board, "LX-1", "a2")
    gate = board.cli("gate", "ask", "LX-1", "--question", "Deploy to prod?", "--scope", "deploy:prod", agent="a2").data[
        "gate"
    ]
    assert gate["kind"] == "permission"
    board.ok("gate", "answer", gate["id"], "reject", "--note", "not on a Friday", tty=True)
    text = board.cli("gate", "status", gate["id"], json_out=False)
    assert text.code == 7
    assert "rejected" in text.out and "not on a Friday" in text.out


def test_next_after_a_rejection_says_why_the_agent_holds_nothing(team):
    board = team
    board.ok("card", "add", "Deploy")
    held(board, "LX-1", "a2")
    gate = board.cli("gate", "ask", "LX-1", "--question", "Deploy?", "--scope", "deploy:prod", agent="a2").data["gate"]
    board.ok("gate", "answer", gate["id"], "reject", "--note", "wait for review", tty=True)
    res = board.cli("next", agent="a2")
    assert res.code == 9
    assert res.data["action"] == "idle" and res.data["gate"]["id"] == gate["id"] and res.data["card"]["id"] == "LX-1"
    text = board.cli("next", agent="a2", json_out=False).out
    assert "rejected" in text and "wait for review" in text and "LX-1" in text and "nothing held" not in text
    # Once a person moves the card on, it is no longer the story.
    board.ok("card", "move", "LX-1", "--to", "ready")
    assert board.cli("next", agent="a2").data["gate"] is None


def test_done_with_open_todos_says_so_and_keeps_who_finished(team):
    board = team
    board.ok("card", "add", "Ship")
    held(board, "LX-1", "a1")
    board.ok(
        "writeback", "LX-1", "--summary", "half", "--todo-add", "write docs", "--todo-add", "tag release", agent="a1"
    )
    res = board.cli("done", "LX-1", "--summary", "shipped", agent="a1", json_out=False)
    assert res.code == 0
    assert "2 todos still open" in res.out and "write docs" in res.out
    assert board.ok("card", "show", "LX-1")["card"]["owner"] == "a1"


def test_a_mistyped_verb_gets_a_did_you_mean(board):
    res = board.cli("gat", "list")
    assert res.code == 2 and "did you mean 'gate'" in res.data["error"]["hint"]
    res = board.cli("card", "lsit")
    assert res.code == 2 and "did you mean 'list'" in res.data["error"]["hint"]


def test_without_a_board_commands_refuse_instead_of_using_a_hidden_one(tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    data_home = tmp_path / "data"
    env = {"XDG_DATA_HOME": str(data_home), "XDG_CONFIG_HOME": str(tmp_path / "config"), "HOME": str(tmp_path / "home")}
    drop = ("LOOPX_DB", "LOOPX_AGENT", "LOOPX_NOW", "LOOPX_KEY")  # a real board, made by a person, on the real clock
    proc = loopx("card", "add", "lost card", cwd=empty, env=env, drop=drop)
    assert proc.returncode == 4, proc.stdout + proc.stderr
    assert "no LoopX board here" in proc.stderr and "loopx init" in proc.stderr
    assert not data_home.exists() or not any(data_home.rglob("board.db"))  # nothing created anywhere
    assert not (empty / ".loopx").exists()
    where = loopx("where", cwd=empty, env=env, drop=drop)
    assert where.returncode == 0 and "no LoopX board here" in where.stdout
    # A user board made on purpose is still found (platformdirs honours XDG_DATA_HOME on Linux).
    made = loopx("--db", str(data_home / "loopx" / "board.db"), "init", cwd=empty, env=env, drop=drop)
    assert made.returncode == 0, made.stderr
    listed = loopx("--json", "where", cwd=empty, env=env, drop=drop)
    assert json.loads(listed.stdout)["board"]["source"] == "user", listed.stdout


def test_init_keeps_the_board_folder_out_of_git(tmp_path):
    project = tmp_path / "proj"
    project.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=project, check=True)
    proc = loopx(
        "init",
        "--objective",
        "x",
        cwd=project,
        env={"XDG_CONFIG_HOME": str(tmp_path / "config"), "HOME": str(tmp_path / "home")},
        drop=("LOOPX_DB", "LOOPX_AGENT", "LOOPX_NOW", "LOOPX_KEY"),
    )
    assert proc.returncode == 0, proc.stderr
    status = subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=all"],
        cwd=project,
        capture_output=True,
        text=True,
        check=True,
    )
    assert ".loopx" not in status.stdout
    assert (project / ".loopx" / "board.db").exists()
