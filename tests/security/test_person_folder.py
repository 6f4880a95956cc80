"""The person's LoopX folder is one rule (``rules/person_folder``): the folder the
key lookup uses is the folder the PreToolUse hook denies to agents and the one
the runtimes' sandboxes are told to deny. Three copies of it used to disagree
when ``XDG_CONFIG_HOME`` was relative (the key lookup ignored it, the hook's
ground took it relative to the agent's working folder, setup asked
platformdirs)."""

from __future__ import annotations

import os
import sys

import pytest
from platformdirs.macos import MacOS
from platformdirs.unix import Unix

from loopx_core.authority import keys
from loopx_core.rules.person_folder import person_folder
from loopx_core.runtimes.base import key_folder
from tests.adapters.conftest import deny_reason, payload


@pytest.fixture(params=["sqlite"])
def backend(request) -> str:
    return request.param


XDG_VALUES = [None, "", "   ", "relative/cfg", "./cfg", "~/cfg", "/abs/cfg", "/abs/cfg/"]


@pytest.mark.parametrize("xdg", XDG_VALUES)
@pytest.mark.parametrize("platform, dirs", [("linux", Unix), ("darwin", MacOS)])
def test_the_folder_is_the_one_platformdirs_names(monkeypatch, tmp_path, xdg, platform, dirs):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    if xdg is None:
        monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    else:
        monkeypatch.setenv("XDG_CONFIG_HOME", xdg)
    monkeypatch.setattr(sys, "platform", platform)
    assert os.path.normpath(person_folder()) == os.path.normpath(dirs("loopx").user_config_dir)


def test_a_relative_xdg_config_home_names_one_folder_for_the_key_and_the_hook(hooks, working, monkeypatch):
    """With ``XDG_CONFIG_HOME=cfg`` the person's key is made in ``~/.config/loopx``
    (a relative value does not count), and that is the folder an agent's
    ``cat``, ``Read`` and a sandbox are refused — run from the project, where
    ``cfg`` would have named another folder."""
    home = str(working.root.parent / "home")  # never the real one: a key is made there
    monkeypatch.setenv("HOME", home)
    monkeypatch.delenv("LOOPX_KEY")
    monkeypatch.setenv("XDG_CONFIG_HOME", "cfg")
    made = working.spawn("key", "init", "--no-passphrase", "--name", "dana", "--json")
    assert made.returncode == 0, made.stderr
    real = os.path.join(home, ".config", "loopx")
    assert os.path.isfile(os.path.join(real, "key.json"))  # the key lookup's folder
    assert not (working.root / "cfg").exists()
    assert str(keys.key_path()) == os.path.join(real, "key.json") and person_folder() == real
    assert key_folder() == "~/.config/loopx"  # what `loopx init --for` tells the sandbox to deny

    before = working.snapshot()
    for command in (f"cat {real}/key.json", "cat ~/.config/loopx/key.json", f"cp {real}/key.json /tmp/k"):
        res = hooks.spawn(
            "claude-code",
            "pre-tool-use",
            payload("claude/pre_tool_use_bash.json", CWD=str(working.root), COMMAND=command, SESSION="s", PATH=""),
        )
        assert "human key" in deny_reason(res), command
    res = hooks.spawn(
        "claude-code",
        "pre-tool-use",
        payload("claude/pre_tool_use_read.json", CWD=str(working.root), PATH=os.path.join(real, "key.json")),
    )
    assert "human key" in deny_reason(res)
    assert working.snapshot() == before


def test_a_relative_xdg_config_home_is_not_a_folder_in_the_project(hooks, working, monkeypatch):
    """The same relative value names no folder of the person's: the project's own
    ``cfg/loopx`` is the agent's to read (the hook's old copy of the rule refused it)."""
    monkeypatch.setenv("XDG_CONFIG_HOME", "cfg")
    (working.root / "cfg" / "loopx").mkdir(parents=True)
    (working.root / "cfg" / "loopx" / "notes.txt").write_text("the project's notes\n")
    res = hooks.spawn(
        "claude-code",
        "pre-tool-use",
        payload(
            "claude/pre_tool_use_bash.json",
            CWD=str(working.root),
            COMMAND="cat cfg/loopx/notes.txt",
            SESSION="s",
            PATH="",
        ),
    )
    assert res.code == 0 and "human key" not in res.stdout, res
