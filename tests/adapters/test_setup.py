"""`loopx init --for claude-code|codex`: merged into what a project already has."""

from __future__ import annotations

import json
import tomllib

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
    assert [(f["path"], f["action"]) for f in setup["files"]] == [(".claude/settings.json", "update"), ("CLAUDE.md", "update")]
    settings = json.loads((board.root / ".claude" / "settings.json").read_text())
    assert settings["permissions"] == {"allow": ["Bash(npm test:*)"]}
    assert settings["hooks"]["PostToolUse"] == [{"matcher": "Write|Edit", "hooks": [{"type": "command", "command": "prettier --write"}]}]
    pre = settings["hooks"]["PreToolUse"]
    assert pre[0] == {"matcher": "Bash", "hooks": [{"type": "command", "command": "./scripts/check-bash.sh"}]}
    assert pre[1]["matcher"] == "*" and pre[1]["hooks"][0]["command"].startswith("LOOPX_AGENT=cc1 ")
    assert pre[1]["hooks"][0]["command"].endswith(" hook claude-code pre-tool-use")
    assert settings["hooks"]["SessionStart"][0]["hooks"][0]["command"].endswith("hook claude-code session-start")
    assert settings["hooks"]["Stop"][0]["hooks"][0]["command"].endswith("hook claude-code stop")
    assert (board.root / ".claude" / "settings.json").read_text().startswith('{\n    "permissions"')  # the file's own indentation
    md = (board.root / "CLAUDE.md").read_text()
    assert md.startswith(CLAUDE_MD) and md.count("<!-- loopx:begin -->") == 1 and "loopx writeback LX-n --agent cc1" in md
    agent = board.ok("agent", "show", "cc1")["agent"]
    assert agent["runtime"] == "claude-code" and agent["capabilities"] == ["git:push"]

    before = files(board.root, ".claude/settings.json", "CLAUDE.md")
    again = board.ok("init", "--for", "claude-code", "--agent", "cc1")["setup"]
    assert again["changed"] is False and {f["action"] for f in again["files"]} == {"unchanged"}
    assert again["agent"]["action"] == "unchanged" and again["agent"]["capabilities"] == ["git:push"]  # kept without --can
    assert files(board.root, ".claude/settings.json", "CLAUDE.md") == before

    # another agent id replaces our entries in place: no duplicates
    board.ok("init", "--for", "claude-code", "--agent", "cc2")
    settings = json.loads((board.root / ".claude" / "settings.json").read_text())
    commands = [h["command"] for g in settings["hooks"]["PreToolUse"] for h in g["hooks"]]
    assert commands[0] == "./scripts/check-bash.sh" and len(commands) == 2 and commands[1].startswith("LOOPX_AGENT=cc2 ")
    md = (board.root / "CLAUDE.md").read_text()
    assert md.count("<!-- loopx:begin -->") == 1 and "--agent cc2" in md and "--agent cc1" not in md


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
    assert res.code == 5 and res.data["error"]["code"] == "setup_conflict" and "not valid JSON" in res.data["error"]["message"]
    assert (board.root / ".claude" / "settings.json").read_text() == "{ // comments are not JSON\n}"
    assert not (board.root / "CLAUDE.md").exists()
    assert board.cli("agent", "show", "cc1").code == 4


def test_codex_keeps_comments_and_is_idempotent(board):
    (board.root / ".codex").mkdir()
    (board.root / ".codex" / "config.toml").write_text(CODEX_CONFIG)
    (board.root / "AGENTS.md").write_text(AGENTS_MD)
    setup = board.ok("init", "--for", "codex", "--agent", "cx1", "--can", "git:push")["setup"]
    assert [(f["path"], f["action"]) for f in setup["files"]] == [(".codex/config.toml", "update"), ("AGENTS.md", "update")]
    text = (board.root / ".codex" / "config.toml").read_text()
    assert text.startswith(CODEX_CONFIG.rstrip("\n"))  # every line and comment of the user's kept as it was
    config = tomllib.loads(text)
    assert config["model"] == "gpt-5.1-codex" and config["mcp_servers"]["docs"]["command"] == "npx"
    server = config["mcp_servers"]["loopx"]
    assert server["args"][-1] == "mcp" and server["env"]["LOOPX_AGENT"] == "cx1"
    for event, name in (("SessionStart", "session-start"), ("PreToolUse", "pre-tool-use"), ("Stop", "stop")):
        handler = config["hooks"][event][0]["hooks"][0]
        assert handler["type"] == "command" and handler["command"].endswith(f"hook codex {name}") and handler["timeout"] > 0
    md = (board.root / "AGENTS.md").read_text()
    assert md.startswith(AGENTS_MD) and "<!-- loopx:end -->" in md

    before = files(board.root, ".codex/config.toml", "AGENTS.md")
    assert board.ok("init", "--for", "codex", "--agent", "cx1")["setup"]["changed"] is False
    assert files(board.root, ".codex/config.toml", "AGENTS.md") == before
    # an edited block is replaced in place, what follows it kept
    (board.root / ".codex" / "config.toml").write_text(text + '\n[profiles.fast]\nmodel = "gpt-5-mini"\n')
    board.ok("init", "--for", "codex", "--agent", "cx2")
    text = (board.root / ".codex" / "config.toml").read_text()
    assert text.count("# loopx:begin") == 1 and 'LOOPX_AGENT = "cx2"' in text and text.endswith('[profiles.fast]\nmodel = "gpt-5-mini"\n')
    assert tomllib.loads(text)["profiles"]["fast"]["model"] == "gpt-5-mini"


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
