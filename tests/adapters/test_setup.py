"""`loopx init --for claude-code|codex`: merged into what a project already has."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest

from loopx_core.runtimes import codex_settings as setup_codex
from loopx_core.runtimes.base import key_folder

CLAUDE_SETTINGS = """{
    "permissions": {
        "allow": ["Bash(npm test:*)"]
    },
    "hooks": {
        "PreToolUse": [
            {"matcher": "Bash", "hooks": [{"type": "command", "command": "./scripts/check-bash.sh"}]}
        ],
        "PostToolUse": [
            {"matcher": "Write|Edit", "hooks": [{"type": "command", "command": "prettier --write"}]}
        ]
    }
}
"""
CLAUDE_MD = "# Acme\n\nUse tabs, not spaces.\n"
CODEX_CONFIG = """# my Codex settings: keep these comments
model = "gpt-5.1-codex"  # the default model
approval_policy = "on-request"

[mcp_servers.docs]
command = "npx"
args = ["-y", "docs-mcp"]  # documentation lookups

# the end of my file
"""
AGENTS_MD = "# Agents\n\nRun `make test` before you finish.\n"


def files(root, *names) -> dict:
    return {n: (root / n).read_bytes() if (root / n).exists() else None for n in names}


def test_claude_code_merges_and_is_idempotent(board):
    (board.root / ".claude").mkdir()
    (board.root / ".claude" / "settings.json").write_text(CLAUDE_SETTINGS)
    (board.root / "CLAUDE.md").write_text(CLAUDE_MD)
    res = board.ok("init", "--for", "claude-code", "--agent", "cc1", "--can", "git:push")
    setup = res["setup"]
    assert setup["agent"] == {"id": "cc1", "capabilities": ["git:push"], "action": "registered"}
    assert [(f["path"], f["action"]) for f in setup["files"]] == [
        (".claude/settings.json", "update"),
        (".claude/settings.local.json", "create"),
        (".mcp.json", "create"),
        ("CLAUDE.md", "update"),
    ]
    settings = json.loads((board.root / ".claude" / "settings.json").read_text())
    assert settings["permissions"]["allow"] == ["Bash(npm test:*)"]
    assert settings["hooks"]["PostToolUse"] == [
        {"matcher": "Write|Edit", "hooks": [{"type": "command", "command": "prettier --write"}]}
    ]
    pre = settings["hooks"]["PreToolUse"]
    assert pre[0] == {"matcher": "Bash", "hooks": [{"type": "command", "command": "./scripts/check-bash.sh"}]}
    ours = pre[1]["hooks"][0]
    assert pre[1]["matcher"] == "*" and ours["onFailure"] == "block"  # fail closed where the runtime supports it
    exe = " ".join(
        ours["command"].split(" hook ")[0].split()[-4:]
    )  # (the test board is named by LOOPX_DB, so that comes first)
    python = exe.split()[0]
    assert (
        exe == f"{python} -I -m loopx_core"
    )  # isolated: nothing from the project it runs in is imported (rules/spawn)
    assert Path(python).is_absolute() and Path(python).exists()  # the runtime's PATH may not hold loopx
    assert ours["command"].endswith(f"{exe} hook claude-code pre-tool-use")
    assert settings["hooks"]["SessionStart"][0]["hooks"][0]["command"].endswith(f"{exe} hook claude-code session-start")
    assert settings["hooks"]["Stop"][0]["hooks"][0]["command"].endswith(f"{exe} hook claude-code stop")
    assert "cc1" not in (board.root / ".claude" / "settings.json").read_text()  # no agent id in the shared file
    assert json.loads((board.root / ".claude" / "settings.local.json").read_text()) == {"env": {"LOOPX_AGENT": "cc1"}}
    server = json.loads((board.root / ".mcp.json").read_text())["mcpServers"]["loopx"]
    assert [server["command"], *server["args"]] == [*exe.split(), "mcp"]
    assert settings["enabledMcpjsonServers"] == ["loopx"]
    assert settings["disableSkillShellExecution"] is True  # 2.1.197 runs skills' `!` commands with no hook
    sandbox = settings["sandbox"]
    assert (
        sandbox["enabled"] is True
        and sandbox["failIfUnavailable"] is True
        and sandbox["allowUnsandboxedCommands"] is False
    )
    assert (
        ".loopx" in sandbox["filesystem"]["denyWrite"] and ".claude/settings.json" in sandbox["filesystem"]["denyWrite"]
    )
    key_dir = key_folder()  # the person's LoopX folder (this test's XDG_CONFIG_HOME/loopx)
    assert sandbox["filesystem"]["denyRead"] == [key_dir]
    assert (
        "Edit(/.loopx/**)" in settings["permissions"]["deny"]
        and f"Read({key_dir}/**)" in settings["permissions"]["deny"]
    )
    assert (
        (board.root / ".claude" / "settings.json").read_text().startswith('{\n    "permissions"')
    )  # the file's own indentation
    md = (board.root / "CLAUDE.md").read_text()
    assert (
        md.startswith(CLAUDE_MD) and md.count("<!-- loopx:begin -->") == 1 and "agent `cc1`" in md and "MCP tools" in md
    )
    agent = board.ok("agent", "show", "cc1")["agent"]
    assert agent["runtime"] == "claude-code" and agent["capabilities"] == ["git:push"]

    names = (".claude/settings.json", ".claude/settings.local.json", ".mcp.json", "CLAUDE.md")
    before = files(board.root, *names)
    again = board.ok("init", "--for", "claude-code", "--agent", "cc1")["setup"]
    assert again["changed"] is False and {f["action"] for f in again["files"]} == {"unchanged"}
    assert again["agent"]["action"] == "unchanged" and again["agent"]["capabilities"] == [
        "git:push"
    ]  # kept without --can
    assert files(board.root, *names) == before

    # another agent id changes only this checkout's local settings and the section: no duplicates
    board.ok("init", "--for", "claude-code", "--agent", "cc2")
    assert files(board.root, ".claude/settings.json")[".claude/settings.json"] == before[".claude/settings.json"]
    assert json.loads((board.root / ".claude" / "settings.local.json").read_text()) == {"env": {"LOOPX_AGENT": "cc2"}}
    md = (board.root / "CLAUDE.md").read_text()
    assert md.count("<!-- loopx:begin -->") == 1 and "agent `cc2`" in md and "agent `cc1`" not in md


def test_a_persons_choice_on_skill_shell_commands_is_kept(board):
    (board.root / ".claude").mkdir()
    (board.root / ".claude" / "settings.json").write_text('{"disableSkillShellExecution": false}')
    board.ok("init", "--for", "claude-code", "--agent", "cc1")
    settings = json.loads((board.root / ".claude" / "settings.json").read_text())
    assert settings["disableSkillShellExecution"] is False and "PreSkillShellCommand" in settings["hooks"]


def test_claude_code_without_the_sandbox(board):
    board.ok("init", "--for", "claude-code", "--agent", "cc1", "--no-sandbox")
    settings = json.loads((board.root / ".claude" / "settings.json").read_text())
    assert "sandbox" not in settings
    assert "Edit(/.loopx/**)" in settings["permissions"]["deny"]  # the file tools' limits hold without the sandbox too
    assert "loopx writeback LX-n --agent cc1" in (board.root / "CLAUDE.md").read_text()  # the shell route, then


def test_dry_run_writes_nothing(board):
    (board.root / "CLAUDE.md").write_text(CLAUDE_MD)
    before = files(board.root, ".claude/settings.json", "CLAUDE.md")
    snapshot = board.snapshot()
    res = board.ok("init", "--for", "claude-code", "--agent", "cc1", "--can", "git:push", "--dry-run")["setup"]
    assert res["dry_run"] is True and res["agent"]["action"] == "would be registered"
    assert "--- /dev/null\n+++ b/.claude/settings.json" in res["diff"]
    assert "--- a/CLAUDE.md\n+++ b/CLAUDE.md" in res["diff"] and "+<!-- loopx:begin -->" in res["diff"]
    assert files(board.root, ".claude/settings.json", "CLAUDE.md") == before
    assert not (board.root / ".claude").exists()
    assert board.snapshot() == snapshot  # no agent registered
    text = board.cli("init", "--for", "claude-code", "--agent", "cc1", "--dry-run", json_out=False).out
    assert "would create .claude/settings.json" in text and "dry run: nothing was written" in text


def test_dry_run_without_a_board_creates_no_board(board, tmp_path):
    fresh = tmp_path / "elsewhere" / ".loopx" / "board.db"
    res = board.cli("--db", fresh, "init", "--for", "codex", "--agent", "cx9", "--objective", "ship it", "--dry-run")
    assert res.code == 0, res
    assert res.data["board"] == {"path": str(fresh), "url": res.data["board"]["url"], "created": False, "exists": False}
    assert res.data["dry_run"] is True and res.data["setup"]["agent"]["action"] == "would be registered"
    assert not fresh.parent.exists()
    text = board.cli("--db", fresh, "init", "--objective", "ship it", "--dry-run", json_out=False).out
    assert text.startswith(f"would create board {fresh}") and "would set the objective to 'ship it'" in text
    assert "nothing was written" in text and not fresh.parent.exists()


def test_a_broken_settings_file_is_left_alone(board):
    (board.root / ".claude").mkdir()
    (board.root / ".claude" / "settings.json").write_text("{ // comments are not JSON\n}")
    res = board.cli("init", "--for", "claude-code", "--agent", "cc1")
    assert (
        res.code == 3
        and res.data["error"]["code"] == "setup_malformed"
        and "not valid JSON" in res.data["error"]["message"]
    )
    assert (board.root / ".claude" / "settings.json").read_text() == "{ // comments are not JSON\n}"
    assert not (board.root / "CLAUDE.md").exists()
    assert board.cli("agent", "show", "cc1").code == 4


def test_codex_keeps_comments_and_is_idempotent(board, a_home_of_its_own):
    user_config = a_home_of_its_own / ".codex" / "config.toml"
    user_config.parent.mkdir()
    user_config.write_text('# mine\nmodel = "o4"\n')
    (board.root / ".codex").mkdir()
    (board.root / ".codex" / "config.toml").write_text(CODEX_CONFIG)
    (board.root / "AGENTS.md").write_text(AGENTS_MD)
    setup = board.ok("init", "--for", "codex", "--agent", "cx1", "--can", "git:push")["setup"]
    assert [(f["path"], f["action"]) for f in setup["files"]] == [
        (".codex/config.toml", "update"),
        (str(user_config), "update"),
        ("AGENTS.md", "update"),
    ]
    text = (board.root / ".codex" / "config.toml").read_text()
    assert text.startswith(
        CODEX_CONFIG.split("\n\n")[0] + '\ndefault_permissions = "loopx"\n'
    )  # a top-level key, before every table
    for line in CODEX_CONFIG.splitlines():
        assert line in text.splitlines()  # every line and comment of the person's kept as it was
    config = tomllib.loads(text)
    assert config["model"] == "gpt-5.1-codex" and config["mcp_servers"]["docs"]["command"] == "npx"
    server = config["mcp_servers"]["loopx"]
    assert (
        Path(server["command"]).is_absolute()
        and server["args"] == ["-I", "-m", "loopx_core", "mcp"]
        and server["env"]["LOOPX_AGENT"] == "cx1"
    )
    assert server["required"] is True and server["default_tools_approval_mode"] == "approve"
    profile = config["permissions"]["loopx"]
    assert profile["extends"] == ":workspace" and profile["filesystem"][key_folder()] == "deny"
    # the board's folder read-only inside the writable project (a team board's: its checkout's pointer, .loopx/team.json)
    assert profile["filesystem"][":workspace_roots"] == {".loopx": "read"}
    for event, name in (
        ("SessionStart", "session-start"),
        ("PreToolUse", "pre-tool-use"),
        ("Stop", "stop"),
        ("PermissionRequest", "permission-request"),
    ):
        handler = config["hooks"][event][0]["hooks"][0]
        assert handler["type"] == "command" and handler["timeout"] > 0
        assert handler["command"].startswith("LOOPX_AGENT=cx1 ") and handler["command"].endswith(
            f"{server['command']} -I -m loopx_core hook codex {name}"
        )
    md = (board.root / "AGENTS.md").read_text()
    assert md.startswith(AGENTS_MD) and "<!-- loopx:end -->" in md
    # the person's own config: this project trusted, each LoopX hook trusted by the hash Codex computes
    user = tomllib.loads(user_config.read_text())
    assert user["model"] == "o4" and user_config.read_text().startswith('# mine\nmodel = "o4"\n')
    assert user["projects"][str(board.root)] == {"trust_level": "trusted"}
    project_file = board.root / ".codex" / "config.toml"
    states = user["hooks"]["state"]
    assert set(states) == {
        f"{project_file}:{event}:0:0" for event in ("session_start", "pre_tool_use", "stop", "permission_request")
    }
    pre = config["hooks"]["PreToolUse"][0]
    assert states[f"{project_file}:pre_tool_use:0:0"]["trusted_hash"] == setup_codex.hook_hash(
        "PreToolUse", "*", pre["hooks"][0]
    )

    names = (".codex/config.toml", "AGENTS.md")
    before = files(board.root, *names)
    user_before = user_config.read_text()
    assert board.ok("init", "--for", "codex", "--agent", "cx1")["setup"]["changed"] is False
    assert files(board.root, *names) == before and user_config.read_text() == user_before
    # an edited block is replaced in place, what follows it kept; the trust follows the new commands
    (board.root / ".codex" / "config.toml").write_text(text + '\n[profiles.fast]\nmodel = "gpt-5-mini"\n')
    board.ok("init", "--for", "codex", "--agent", "cx2")
    text = (board.root / ".codex" / "config.toml").read_text()
    config = tomllib.loads(text)
    assert config["mcp_servers"]["loopx"]["env"]["LOOPX_AGENT"] == "cx2" and [
        len(config["hooks"][e]) for e in ("SessionStart", "PreToolUse", "Stop")
    ] == [1, 1, 1]
    assert (
        text.endswith('[profiles.fast]\nmodel = "gpt-5-mini"\n') and config["profiles"]["fast"]["model"] == "gpt-5-mini"
    )
    user = tomllib.loads(user_config.read_text())
    new_pre = tomllib.loads(text)["hooks"]["PreToolUse"][0]["hooks"][0]
    assert user["hooks"]["state"][f"{project_file}:pre_tool_use:0:0"]["trusted_hash"] == setup_codex.hook_hash(
        "PreToolUse", "*", new_pre
    )
    assert user_config.read_text().startswith('# mine\nmodel = "o4"\n') and len(user["projects"]) == 1


ODD_CODEX_CONFIG = """# a person's config, laid out their own way
model   =   'o3'    # literal string, extra spaces
mcp_servers = { docs = { command = "npx", args = ["-y", "docs-mcp"] } }   # every server inline

  [profiles.deep]   # indented header
  model = "o3-pro"
  # a comment inside a table

[[hooks.PreToolUse]]   # the person's own hook, kept first
matcher = "Bash"
hooks = [ { type = "command", command = "./check.sh" } ]

[tui]
notifications = true # trailing
"""


def test_codex_keeps_an_odd_layout_and_changes_nothing_the_second_time(board, a_home_of_its_own):
    """tomlkit edits the file where it needs to: inline tables, literal strings,
    indentation and every comment stay as the person wrote them."""
    (board.root / ".codex").mkdir()
    config_file = board.root / ".codex" / "config.toml"
    config_file.write_text(ODD_CODEX_CONFIG)
    board.ok("init", "--for", "codex", "--agent", "cx1")
    text = config_file.read_text()
    for line in ODD_CODEX_CONFIG.splitlines():
        if not line.startswith("mcp_servers"):  # (the one line LoopX adds its server to)
            assert line in text.splitlines(), line
    config = tomllib.loads(text)
    assert (
        config["mcp_servers"]["docs"] == {"command": "npx", "args": ["-y", "docs-mcp"]}
        and config["mcp_servers"]["loopx"]["env"]["LOOPX_AGENT"] == "cx1"
    )
    assert config["hooks"]["PreToolUse"][0] == {
        "matcher": "Bash",
        "hooks": [{"type": "command", "command": "./check.sh"}],
    }
    assert config["hooks"]["PreToolUse"][1]["hooks"][0]["command"].endswith("loopx_core hook codex pre-tool-use")
    assert config["profiles"]["deep"]["model"] == "o3-pro" and config["tui"]["notifications"] is True
    user = tomllib.loads((a_home_of_its_own / ".codex" / "config.toml").read_text())
    assert set(user["hooks"]["state"]) >= {f"{config_file}:pre_tool_use:1:0"}  # the person's hook stays at 0
    before = (config_file.read_bytes(), (a_home_of_its_own / ".codex" / "config.toml").read_bytes())
    assert board.ok("init", "--for", "codex", "--agent", "cx1")["setup"]["changed"] is False
    assert (config_file.read_bytes(), (a_home_of_its_own / ".codex" / "config.toml").read_bytes()) == before


def test_a_config_from_an_older_init_loses_its_markers_and_keeps_the_rest(board, a_home_of_its_own):
    """Older inits framed their entries with marker comments: the entries are updated in place, the markers go."""
    (board.root / ".codex").mkdir()
    config_file = board.root / ".codex" / "config.toml"
    config_file.write_text(CODEX_CONFIG)
    board.ok("init", "--for", "codex", "--agent", "cx1")
    ours = tomllib.loads(config_file.read_text())
    old = (
        '# loopx:begin-top — managed by `loopx init --for codex`\ndefault_permissions = "loopx"\n# loopx:end-top\n'
        + CODEX_CONFIG
    )
    old += "\n# loopx:begin — managed by `loopx init --for codex`; this block is rewritten on every init\n"
    old += config_file.read_text().split("# the end of my file\n", 1)[1].lstrip("\n") + "# loopx:end\n"
    assert tomllib.loads(old) == ours
    config_file.write_text(old)
    board.ok("init", "--for", "codex", "--agent", "cx2")
    text = config_file.read_text()
    assert "# loopx:" not in text and "# the end of my file" in text
    assert tomllib.loads(text)["mcp_servers"]["loopx"]["env"]["LOOPX_AGENT"] == "cx2"


@pytest.mark.parametrize("broken", ['model = "o3\n', "[mcp_servers\ncommand = 1\n", "a = 1\na = 2\n"])
def test_a_malformed_codex_config_is_said_and_nothing_is_written(board, a_home_of_its_own, broken):
    (board.root / ".codex").mkdir()
    config_file = board.root / ".codex" / "config.toml"
    config_file.write_text(broken)
    res = board.cli("init", "--for", "codex", "--agent", "cx1")
    assert res.code == 3 and res.data["error"]["code"] == "setup_malformed", res
    assert (
        ".codex/config.toml is not valid TOML" in res.data["error"]["message"]
        and "run `loopx init --for codex` again" in res.data["error"]["hint"]
    )
    assert config_file.read_text() == broken
    assert not (board.root / "AGENTS.md").exists() and not (a_home_of_its_own / ".codex" / "config.toml").exists()
    assert board.cli("agent", "show", "cx1").code == 4


def test_codex_hook_hash_is_codexs():
    """The hash Codex 0.171 trusted for a PreToolUse handler in the e2e probe (an
    untrusted or wrongly hashed hook never runs under `codex exec`)."""
    handler = {"type": "command", "command": "/tmp/x/hp/dump.sh pre", "timeout": 30}
    assert (
        setup_codex.hook_hash("PreToolUse", "*", handler)
        == "sha256:ad6d9540c13ddcfb4749219bd848fb936cb1e9ebe010697b13c58b9ed3faab3f"
    )
    assert setup_codex.hook_hash("PreToolUse", "*", handler) == setup_codex.hook_hash(
        "PreToolUse", "*", dict(handler, **{"async": False})
    )
    assert setup_codex.hook_hash("PreToolUse", "*", handler) != setup_codex.hook_hash("PreToolUse", None, handler)
    assert setup_codex.hook_hash("Stop", None, handler).startswith("sha256:")


def test_codex_refuses_a_sandbox_mode_of_the_persons(board):
    (board.root / ".codex").mkdir()
    (board.root / ".codex" / "config.toml").write_text('sandbox_mode = "danger-full-access"\n')
    res = board.cli("init", "--for", "codex", "--agent", "cx1")
    assert (
        res.code == 5
        and "sandbox_mode" in res.data["error"]["message"]
        and "--no-sandbox" in res.data["error"]["message"]
    )
    assert (board.root / ".codex" / "config.toml").read_text() == 'sandbox_mode = "danger-full-access"\n'
    assert board.ok("init", "--for", "codex", "--agent", "cx1", "--no-sandbox")["setup"]["changed"] is True
    assert "permissions" not in tomllib.loads((board.root / ".codex" / "config.toml").read_text())


def test_codex_dry_run_and_conflicts(board):
    (board.root / ".codex").mkdir()
    (board.root / ".codex" / "config.toml").write_text(CODEX_CONFIG)
    before = files(board.root, ".codex/config.toml", "AGENTS.md")
    res = board.ok("init", "--for", "codex", "--agent", "cx1", "--dry-run")["setup"]
    assert "+[mcp_servers.loopx]" in res["diff"] and "+++ b/AGENTS.md" in res["diff"]
    assert files(board.root, ".codex/config.toml", "AGENTS.md") == before
    clash = CODEX_CONFIG + '\n[mcp_servers.loopx]\ncommand = "something-else"\n'
    (board.root / ".codex" / "config.toml").write_text(clash)
    res = board.cli("init", "--for", "codex", "--agent", "cx1")
    assert res.code == 5 and "[mcp_servers.loopx]" in res.data["error"]["message"]
    assert (board.root / ".codex" / "config.toml").read_text() == clash


def test_agent_id_asked_at_a_terminal_or_defaulted(board, monkeypatch):
    res = board.ok("init", "--for", "claude-code", tty=True, stdin="me-agent\ngit:push deploy:staging\n")["setup"]
    assert res["agent"]["id"] == "me-agent" and res["agent"]["capabilities"] == ["deploy:staging", "git:push"]
    monkeypatch.setattr("getpass.getuser", lambda: "Dana Smith")
    res = board.ok("init", "--for", "codex")["setup"]
    assert res["agent"]["id"] == "codex-Dana-Smith"


def test_the_key_folder_is_spelled_from_home(monkeypatch):
    """Where most people's key lives (platformdirs' user config dir), as the runtimes' settings take it."""
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    assert key_folder() == "~/.config/loopx"
