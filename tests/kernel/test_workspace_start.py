"""`loopx workspace start`: a runtime a person starts by hand in a card's
workspace is bounded as the runner's turns there (issue #26) — the command it
would run, checked here with real git; the real Codex runs it in
``tests/e2e/test_codex_workspace_hooks.py``."""

from __future__ import annotations

import json
import re
import shutil
import tomllib
import uuid
from pathlib import Path

import pytest

from loopx_core.runtimes import claude_code_settings as setup_claude
from loopx_core.runtimes import codex_settings as setup_codex
from tests.kernel.conftest import refused


@pytest.fixture
def data_outside_tmp():
    base = Path.home().resolve() / ".cache" / "loopx-tests" / uuid.uuid4().hex[:10]
    base.mkdir(parents=True)
    yield {"XDG_DATA_HOME": str(base / "data"), "CODEX_HOME": str(base / "codex")}
    shutil.rmtree(base, ignore_errors=True)


def test_claude_code_started_by_hand_in_a_workspace_gets_the_runners_bounds(repo_team):
    repo_team.ok("card", "add", "one")
    err = refused(repo_team, 2, "workspace", "start", "LX-1", "--runtime", "claude-code", "--agent", "a1", "--print")
    assert (
        err["code"] == "not_set_up" and "loopx init --for claude-code --agent a1" in err["hint"]
    )  # no hooks to start it with: not started bare
    (repo_team.root / ".claude").mkdir()
    (repo_team.root / ".claude" / "settings.json").write_text(
        setup_claude.merge_settings(
            None,
            {name: f"python -m loopx_core hook claude-code {name}" for _e, name, _m, _t in setup_claude.EVENTS},
            "~/.config/loopx",
            True,
            re.compile,
        )
    )
    out = repo_team.ok(
        "workspace",
        "start",
        "LX-1",
        "--runtime",
        "claude-code",
        "--agent",
        "a1",
        "--bin",
        "claude",
        "--print",
        "--",
        "--model",
        "opus",
    )
    ws = out["workspace"]["path"]
    assert (
        out["cwd"] == ws and out["workspace"]["branch"] == "loopx/LX-1" and Path(ws).is_dir()
    )  # made, as a first claim makes it
    argv = out["command"]
    assert (
        argv[0] == "claude" and "-p" not in argv and argv[-2:] == ["--model", "opus"]
    )  # interactive, the person's own arguments last
    settings = json.loads(argv[argv.index("--settings") + 1])
    assert (
        settings["env"] == {"LOOPX_AGENT": "a1"}
        and settings["sandbox"]["enabled"] is True
        and "PreToolUse" in settings["hooks"]
    )
    assert (
        argv[argv.index("--setting-sources") + 1] == "user" and "--strict-mcp-config" in argv
    )  # nothing the workspace says
    assert out["env"]["LOOPX_AGENT"] == "a1" and out["env"]["LOOPX_WORKSPACE"] == ws


def test_codex_started_by_hand_in_a_workspace_gets_loopxs_codex_home_and_profile(repo_team, data_outside_tmp):
    ours = setup_codex.entries(
        "a1",
        ["loopx"],
        {n: f"python -m loopx_core hook codex {n}" for _, n, *_ in setup_codex.EVENTS},
        None,
        "/k",
        repo_team.root,
    )
    (repo_team.root / ".codex").mkdir()
    (repo_team.root / ".codex" / "config.toml").write_text(setup_codex.merge_project(None, ours, True))
    repo_team.ok("card", "add", "one")
    out = repo_team.ok(
        "workspace",
        "start",
        "LX-1",
        "--runtime",
        "codex",
        "--agent",
        "a1",
        "--bin",
        "codex",
        "--print",
        env=data_outside_tmp,
    )
    assert out["command"][0] == "codex" and 'default_permissions="loopx"' in out["command"]
    home = Path(out["env"]["CODEX_HOME"])
    config = tomllib.loads((home / "config.toml").read_text())
    assert any(
        h["command"].endswith("hook codex pre-tool-use") for g in config["hooks"]["PreToolUse"] for h in g["hooks"]
    )
    # another agent's hooks are in this checkout's config: refused, as `loopx run` refuses it
    repo_team.ok("agent", "add", "a3")
    err = refused(
        repo_team,
        2,
        "workspace",
        "start",
        "LX-1",
        "--runtime",
        "codex",
        "--agent",
        "a3",
        "--print",
        env=data_outside_tmp,
    )
    assert "set up for agent a1" in err["message"] and "loopx init --for codex --agent a3" in err["hint"]


def test_an_agent_cannot_start_a_session_in_a_workspace(repo_team):
    repo_team.ok("card", "add", "one")
    err = refused(
        repo_team, 10, "workspace", "start", "LX-1", "--runtime", "claude-code", "--agent", "a1", "--print", agent="a1"
    )
    assert err["code"] == "person_only"


def test_init_for_a_runtime_run_in_a_workspace_sets_up_the_main_checkout_and_says_how_to_start_it_there(
    repo_team, monkeypatch
):
    if repo_team.backend == "postgresql":
        pytest.skip("a PostgreSQL board records no project folder of its own here")
    repo_team.ok("card", "add", "one")
    ws = Path(repo_team.ok("workspace", "open", "LX-1")["workspace"]["path"])
    main = repo_team.root
    monkeypatch.setattr(repo_team, "root", ws)  # (the command runs in the workspace)
    res = repo_team.cli("init", "--for", "claude-code", "--agent", "a1", json_out=False)
    monkeypatch.setattr(repo_team, "root", main)
    assert res.code == 0, res
    assert "loopx workspace start LX-1 --runtime claude-code --agent a1" in res.out
    assert (main / ".claude" / "settings.json").exists() and not (ws / ".claude" / "settings.json").exists()
