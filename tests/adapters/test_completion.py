"""`loopx completion`: a real bash completes verbs, subcommands and options from
the one parser (shapes/verbs.py), and the scripts for zsh and fish register
`loopx`. Completing costs a `loopx` start per TAB; an ordinary call never loads
argcomplete (tests/adapters/test_cold_path.py's heavy list)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from loopx_core.shapes import verbs

BIN = Path(sys.executable).parent  # this venv's `loopx`


def bash_complete(line: str) -> list[str]:
    """What bash offers for ``line`` (the cursor at its end), with README's eval line."""
    words = line.split(" ")
    script = (
        'eval "$(loopx completion bash)"\n'
        f"COMP_LINE={line!r}; COMP_POINT=${{#COMP_LINE}}; COMP_WORDS=({' '.join(repr(w) for w in words)}); COMP_CWORD={len(words) - 1}\n"
        'fn=$(complete -p loopx | sed "s/.*-F \\([^ ]*\\).*/\\1/"); $fn loopx "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"\n'
        'printf "%s\\n" "${COMPREPLY[@]}"\n'
    )
    env = dict(os.environ, PATH=f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}")
    done = subprocess.run(["bash", "--norc", "-c", script], env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return [w.strip() for w in done.stdout.splitlines() if w.strip()]


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
def test_bash_completes_verbs_subcommands_and_options_from_the_verb_table():
    assert bash_complete("loopx ca") == ["card"]
    assert set(bash_complete("loopx card ")) == {sub for (verb, sub) in verbs.VERBS if verb == "card"}
    assert {"--max-turns", "--max-tokens", "--max-usd"} <= set(bash_complete("loopx card add --max"))
    assert bash_complete("loopx gate answer G-1 ") == ["approve", "reject"]  # a choice, from the table


def test_each_shell_gets_a_script_that_registers_loopx():
    for shell, mark in (("bash", "complete -o"), ("zsh", "compdef"), ("fish", "complete --command loopx")):
        done = subprocess.run([str(BIN / "loopx"), "completion", shell], capture_output=True, text=True, timeout=60)
        assert done.returncode == 0 and mark in done.stdout and "loopx" in done.stdout, (
            shell,
            done.stdout[:400],
            done.stderr,
        )
    as_json = json.loads(
        subprocess.run(
            [str(BIN / "loopx"), "--json", "completion", "fish"], capture_output=True, text=True, timeout=60
        ).stdout
    )
    assert (
        as_json["shell"] == "fish"
        and "fish/completions" in as_json["install"]
        and "complete --command loopx" in as_json["script"]
    )
    bad = subprocess.run([str(BIN / "loopx"), "completion", "tcsh"], capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and "bash" in bad.stderr  # the choices, said


def test_a_completion_request_never_answers_for_the_hook(tmp_path):
    """The attack: the PreToolUse hook run with `_ARGCOMPLETE` in its environment.
    Had completion taken over, the hook would exit 0 saying nothing — "allow" —
    for a command that reads the board."""
    from tests.adapters.conftest import payload

    board = tmp_path / ".loopx"
    board.mkdir()
    (board / "board.db").write_text("")
    event = payload("claude/pre_tool_use_bash.json", CWD=str(tmp_path), COMMAND="cat .loopx/board.db")
    env = dict(os.environ, _ARGCOMPLETE="1", COMP_LINE="loopx ", COMP_POINT="6", LOOPX_AGENT="a1")
    done = subprocess.run(
        [sys.executable, "-I", "-m", "loopx_core", "hook", "claude-code", "pre-tool-use"],
        input=json.dumps(event),
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    answer = json.loads(done.stdout)
    assert answer["hookSpecificOutput"]["permissionDecision"] == "deny", done.stdout
