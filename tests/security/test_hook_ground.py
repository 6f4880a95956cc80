"""An agent reaching for LoopX's own ground — the board, a person's verbs, the
runtimes' settings, the policy file, the human key, other terminals — through
every tool of both runtimes. Each attack is one cold `loopx hook` process fed
the runtime's JSON; each must be denied with a reason, open no gate a person
could approve by mistake, and leave the board as it was."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from loopx_core.rules.person_folder import person_folder
from tests.adapters.conftest import deny_reason, payload
from tests.conftest import Board


@pytest.fixture(params=["sqlite"])
def backend(request) -> str:
    """SQLite only: the hook's checks do not depend on the backend (a
    PostgreSQL-only case builds its own board)."""
    return request.param


SHELL = [
    (
        "claude-code",
        "claude/pre_tool_use_bash.json",
        "sqlite3 .loopx/board.db \"update gate set status='approved', answered_by='human:me'\"",
    ),
    (
        "claude-code",
        "claude/pre_tool_use_bash.json",
        "python3 -c \"import sqlite3; c=sqlite3.connect('.loopx/board.db'); c.execute('delete from gate'); c.commit()\"",
    ),
    ("claude-code", "claude/pre_tool_use_bash.json", "rm -rf .loopx"),
    ("claude-code", "claude/pre_tool_use_bash.json", "cp /tmp/forged.db .loopx/board.db"),
    ("claude-code", "claude/pre_tool_use_bash.json", 'echo \'{"allow": [".*"]}\' > .loopx/policy.json'),
    ("claude-code", "claude/pre_tool_use_bash.json", "loopx gate answer G-1 approve --note mine"),
    ("claude-code", "claude/pre_tool_use_bash.json", "loopx agent add helper --can git:push"),
    ("claude-code", "claude/pre_tool_use_bash.json", "loopx card budget LX-1 --add-usd 1000"),
    ("claude-code", "claude/pre_tool_use_bash.json", "loopx price set claude --input 0 --output 0"),
    (
        "claude-code",
        "claude/pre_tool_use_bash.json",
        "sed -i 's/hook claude-code pre-tool-use/true/' .claude/settings.json",
    ),
    ("claude-code", "claude/pre_tool_use_bash.json", "tmux send-keys -t loopx-board y"),
    ("claude-code", "claude/pre_tool_use_bash.json", "echo y > /dev/pts/0"),
    ("claude-code", "claude/pre_tool_use_bash.json", f"cat {person_folder()}/key"),
    ("claude-code", "claude/pre_tool_use_monitor.json", "sqlite3 .loopx/board.db .dump"),
    (
        "claude-code",
        "claude/pre_tool_use_powershell.json",
        'Set-Content -Path .loopx/policy.json -Value \'{"allow": [".*"]}\'',
    ),
    ("claude-code", "claude/pre_tool_use_powershell.json", "& loopx gate answer G-1 approve"),
    ("claude-code", "claude/pre_skill_shell_command.json", "rm -rf .loopx"),
    ("codex", "codex/pre_tool_use_bash.json", "printf '[hooks]\\n' > .codex/config.toml"),
    ("codex", "codex/pre_tool_use_bash.json", "sqlite3 .loopx/board.db 'delete from gate'"),
    ("codex", "codex/pre_tool_use_bash.json", "loopx gate answer G-1 approve"),
]


def event_of(fixture: str) -> str:
    return "pre-skill-shell-command" if "skill" in fixture else "pre-tool-use"


@pytest.mark.parametrize(
    "runtime, fixture, command",
    SHELL,
    ids=[f"{r}:{c.replace(person_folder(), '<person folder>')[:50]}" for r, _, c in SHELL],
)  # (the same id in every run and worker)
def test_shell_tools_cannot_touch_loopx_ground(hooks, working, runtime, fixture, command):
    before = working.snapshot()
    res = hooks.spawn(
        runtime, event_of(fixture), payload(fixture, CWD=str(working.root), COMMAND=command, SESSION="s", PATH="")
    )
    assert res.code == 0 and "Traceback" not in res.stderr
    out = res.out["hookSpecificOutput"]
    assert out["permissionDecision"] == "deny"
    assert "never lets an agent do this" in out["permissionDecisionReason"]
    assert working.snapshot() == before  # no gate opened, nothing recorded


FILES = [
    ("claude-code", "claude/pre_tool_use_write.json", ".loopx/policy.json"),
    ("claude-code", "claude/pre_tool_use_edit.json", ".claude/settings.json"),
    ("claude-code", "claude/pre_tool_use_edit.json", ".claude/settings.local.json"),
    ("claude-code", "claude/pre_tool_use_write.json", ".mcp.json"),
    ("claude-code", "claude/pre_tool_use_write.json", ".codex/config.toml"),
    ("claude-code", "claude/pre_tool_use_read.json", ".loopx/board.db"),
]


@pytest.mark.parametrize("runtime, fixture, path", FILES, ids=[p for _, _, p in FILES])
def test_file_tools_cannot_touch_loopx_ground(hooks, working, runtime, fixture, path):
    before = working.snapshot()
    res = hooks.spawn(runtime, "pre-tool-use", payload(fixture, CWD=str(working.root), PATH=str(working.root / path)))
    assert "never lets an agent do this" in deny_reason(res)
    assert working.snapshot() == before


def test_the_human_key_folder_through_read(hooks, working):
    res = hooks.spawn(
        "claude-code",
        "pre-tool-use",
        payload("claude/pre_tool_use_read.json", CWD=str(working.root), PATH=os.path.join(person_folder(), "key")),
    )
    assert "human key" in deny_reason(res)


def test_codex_apply_patch_cannot_rewrite_the_policy(hooks, working):
    patch = '*** Begin Patch\n*** Add File: .loopx/policy.json\n+{"allow": [".*"]}\n*** End Patch\n'
    res = hooks.spawn(
        "codex", "pre-tool-use", payload("codex/pre_tool_use_apply_patch.json", CWD=str(working.root), PATCH=patch)
    )
    assert "never lets an agent do this" in deny_reason(res)


def test_a_policy_file_the_agent_wrote_opens_nothing(hooks, working):
    """The attack from #12 end to end: the agent gets {"allow": [".*"]} into the
    policy file some way the hook did not see; `git push` still needs its gate."""
    (working.root / ".loopx" / "policy.json").write_text('{"allow": [".*"], "outside_ok": ["/"]}')
    res = hooks.spawn(
        "claude-code",
        "pre-tool-use",
        payload("claude/pre_tool_use_bash.json", CWD=str(working.root), COMMAND="git push origin main"),
    )
    assert "`git:push`" in deny_reason(res) and "were ignored" in res.stderr


def test_a_symbolic_link_made_earlier_leads_nowhere(hooks, working):
    os.symlink(working.root / ".loopx", working.root / "cache")
    res = hooks.spawn(
        "claude-code",
        "pre-tool-use",
        payload(
            "claude/pre_tool_use_bash.json", CWD=str(working.root), COMMAND="sqlite3 cache/board.db 'delete from gate'"
        ),
    )
    assert "only LoopX itself may touch it" in deny_reason(res)


def test_psql_against_the_board_on_postgresql(tmp_path, monkeypatch, pg_url):
    root = tmp_path / "project"
    root.mkdir()
    board = Board(root, monkeypatch, pg_url)
    board.ok("init", "--test-board")
    board.ok("agent", "add", "a2")
    env = {k: v for k, v in os.environ.items() if k != "LOOPX_AGENT"}
    env.update(LOOPX_DB=pg_url, LOOPX_AGENT="a2")
    call = payload("claude/pre_tool_use_bash.json", CWD=str(root), COMMAND=f"psql '{pg_url}' -c 'delete from gate'")
    import json

    proc = subprocess.run(
        [sys.executable, "-m", "loopx_core", "hook", "claude-code", "pre-tool-use"],
        input=json.dumps(call),
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    out = json.loads(proc.stdout)["hookSpecificOutput"]
    assert out["permissionDecision"] == "deny" and "board database" in out["permissionDecisionReason"]


# Patterns name LoopX's ground as well as its names do: the shell expands them
# before the program runs. Each is checked where it really matches (the glob
# module, with the shell's rule that only a literal dot matches a dotfile).
GLOBBED = [
    ("cp evil.json .cl?ude/settings.json", ".claude/settings.json"),
    ("cp evil.json .c*/s*", ".claude/settings.json"),
    ("sqlite3 .lo*/board.d? 'update gate set status=1'", ".loopx/board.db"),
    ("cat .mcp.js?n", ".mcp.json"),
    ("cp evil.toml .co*/config.toml", ".codex/config.toml"),
    ("cp evil.toml .[c]odex/config.toml", ".codex/config.toml"),
    ("cat ~/.config/loop?/key.json", "~/.config/loopx/key.json"),
    ("cat ~/.config/l*/key.json", "~/.config/loopx/key.json"),
    ("cp evil.json .CLAUDE/settings.json", None),  # a case-insensitive file system's .claude
]


@pytest.mark.parametrize("command, target", GLOBBED, ids=[c for c, _ in GLOBBED])
def test_a_pattern_that_matches_the_ground_is_the_ground(hooks, working, command, target):
    home = os.environ["HOME"]
    for path in (
        ".claude/settings.json",
        ".mcp.json",
        ".codex/config.toml",
        os.path.join(home, ".config/loopx/key.json"),
    ):
        full = working.root / path
        full.parent.mkdir(parents=True, exist_ok=True)
        full.touch()
    if target is not None:  # the attack is real: the shell would hand the program the ground
        expanded = subprocess.run(
            ["bash", "-c", f"printf '%s\\n' {command.split(' ', 1)[1]}"],
            cwd=working.root,
            capture_output=True,
            text=True,
            env={**os.environ, "HOME": home},
        ).stdout
        assert os.path.expanduser(target).replace("~", home) in expanded or target in expanded
    before = working.snapshot()
    env = {"HOME": home, "XDG_CONFIG_HOME": os.path.join(home, ".config")}
    res = hooks.spawn(
        "claude-code",
        "pre-tool-use",
        payload("claude/pre_tool_use_bash.json", CWD=str(working.root), COMMAND=command),
        env=env,
    )
    assert "never lets an agent do this" in deny_reason(res)
    assert working.snapshot() == before


def test_a_pattern_that_matches_a_link_to_the_ground_is_the_ground(hooks, working):
    os.symlink(working.root / ".loopx", working.root / "cache")
    res = hooks.spawn(
        "claude-code",
        "pre-tool-use",
        payload(
            "claude/pre_tool_use_bash.json", CWD=str(working.root), COMMAND="sqlite3 ca*/board.db 'delete from gate'"
        ),
    )
    assert "only LoopX itself may touch it" in deny_reason(res)


@pytest.mark.parametrize(
    "command",
    [
        "shopt -s dotglob; cp evil.json */settings.json",
        "GLOBIGNORE=x; cp evil.json */settings.json",
        "setopt globdots; cp evil.json */settings.json",
    ],
)
def test_a_shell_option_that_widens_patterns_needs_a_gate(hooks, working, command):
    res = hooks.spawn(
        "claude-code", "pre-tool-use", payload("claude/pre_tool_use_bash.json", CWD=str(working.root), COMMAND=command)
    )
    assert "`shell:opaque`" in deny_reason(res)


@pytest.mark.parametrize("command", ["ls src/*.py", "cat *.md", "rm -f build/*.o"])
def test_patterns_that_cannot_match_the_ground_stay_allowed(hooks, working, command):
    (working.root / ".claude").mkdir(exist_ok=True)
    (working.root / ".claude" / "settings.json").touch()
    res = hooks.spawn(
        "claude-code", "pre-tool-use", payload("claude/pre_tool_use_bash.json", CWD=str(working.root), COMMAND=command)
    )
    assert res.out is None, res


TMUX_INPUT = [
    "tmux ls \\; send-keys -t board g",
    "tmux lsp ';' send-keys -t board y",
    "tmux display -p '#(echo y > /dev/null)'",
    "tmux ls -F '#(touch typed)'",
    "tmux -f evil.conf ls",
    "tmux send -t board y",  # tmux takes a unique prefix of a command's name
]


@pytest.mark.parametrize("command", TMUX_INPUT)
def test_tmux_cannot_type_into_the_persons_board(hooks, working, command):
    before = working.snapshot()
    res = hooks.spawn(
        "claude-code", "pre-tool-use", payload("claude/pre_tool_use_bash.json", CWD=str(working.root), COMMAND=command)
    )
    assert "another terminal" in deny_reason(res)
    assert working.snapshot() == before


def test_a_chained_tmux_listing_really_types(tmp_path):
    """The harm the hook stops: after a listing, `\\;` runs tmux's next command,
    which types into the pane the person's board runs in."""
    import shutil

    if not shutil.which("tmux"):
        pytest.fail("tmux is needed to show the attack (apt-get install tmux)")
    socket = f"loopx-test-{os.getpid()}"
    typed = tmp_path / "typed"
    pane = f"head -n1 > {typed}; tmux -L {socket} wait-for -S typed; sleep 120"  # says when the line arrived (and keeps the server up for the waiter)
    subprocess.run(
        ["tmux", "-L", socket, "-f", "/dev/null", "new-session", "-d", "-s", "board", pane], check=True, timeout=30
    )
    try:
        subprocess.run(
            ["bash", "-c", f"tmux -L {socket} ls \\; send-keys -t board y Enter"],
            check=True,
            timeout=30,
            capture_output=True,
        )
        subprocess.run(["tmux", "-L", socket, "wait-for", "typed"], check=True, timeout=60)
        assert typed.read_text().strip() == "y"
    finally:
        subprocess.run(["tmux", "-L", socket, "kill-server"], capture_output=True, timeout=30)


@pytest.mark.parametrize("command", ["tmux ls", "tmux list-panes -a", "tmux -V", "tmux has -t board"])
def test_tmux_listings_stay_allowed(hooks, working, command):
    res = hooks.spawn(
        "claude-code", "pre-tool-use", payload("claude/pre_tool_use_bash.json", CWD=str(working.root), COMMAND=command)
    )
    assert res.out is None, res


GIT_TAKES_UNTRACKED = [
    "git stash -u",
    "git stash --all",
    "git stash push --include-untracked -m wip",
    "git stash -ku",
    "git stash push -u -- .",
    "git clean -f",
    "git clean -fd",
    "git -C . clean -fx",
]


def _git(root, *argv):
    return subprocess.run(["git", *argv], cwd=root, check=True, capture_output=True, text=True, timeout=60)


@pytest.fixture
def project_repo(working):
    """The project as `loopx init` leaves it in a git repository: the hooks'
    settings and the MCP list are untracked files."""
    _git(working.root, "init", "-q", "-b", "main")
    (working.root / "README.md").write_text("project\n")
    _git(working.root, "add", "README.md")
    _git(working.root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "start")
    (working.root / ".claude").mkdir(exist_ok=True)
    (working.root / ".claude" / "settings.json").write_text('{"hooks": {}}')
    (working.root / ".mcp.json").write_text('{"mcpServers": {}}')
    return working


@pytest.mark.parametrize("command", GIT_TAKES_UNTRACKED)
def test_git_cannot_take_the_hooks_away(hooks, project_repo, command):
    before = project_repo.snapshot()
    res = hooks.spawn(
        "claude-code",
        "pre-tool-use",
        payload("claude/pre_tool_use_bash.json", CWD=str(project_repo.root), COMMAND=command),
    )
    assert "never lets an agent do this" in deny_reason(res) and "untracked" in deny_reason(res)
    assert project_repo.snapshot() == before
    assert (project_repo.root / ".claude" / "settings.json").exists()


def test_git_stash_u_really_removes_the_hooks(project_repo):
    """The harm: after `git stash -u` the next session starts with no LoopX hooks."""
    _git(project_repo.root, "stash", "-u")
    assert (
        not (project_repo.root / ".claude" / "settings.json").exists()
        and not (project_repo.root / ".mcp.json").exists()
    )


@pytest.mark.parametrize(
    "command",
    [
        "git reset --hard evil",
        "git checkout -f evil",
        "git checkout evil -- .",
        "git switch --discard-changes evil",
        "git restore --source=evil .",
    ],
)
def test_git_writing_a_commit_over_untracked_files_needs_a_gate(hooks, project_repo, command):
    res = hooks.spawn(
        "claude-code",
        "pre-tool-use",
        payload("claude/pre_tool_use_bash.json", CWD=str(project_repo.root), COMMAND=command),
    )
    assert "`shell:opaque`" in deny_reason(res)


def test_git_reset_hard_to_a_commit_really_writes_over_the_hooks(project_repo):
    """The harm: a commit that tracks .mcp.json replaces the untracked one."""
    root = project_repo.root
    _git(root, "checkout", "-q", "-b", "evil")
    (root / ".mcp.json").write_text('{"mcpServers": {"evil": {}}}')
    _git(root, "add", "-f", ".mcp.json")
    _git(root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "evil")
    _git(root, "checkout", "-q", "main")
    (root / ".mcp.json").write_text('{"mcpServers": {}}')
    _git(root, "reset", "-q", "--hard", "evil")
    assert "evil" in (root / ".mcp.json").read_text()


@pytest.mark.parametrize(
    "command",
    [
        "git stash",
        "git stash pop",
        "git stash push -u -- src",
        "git clean -n",
        "git clean -fd build/",
        "git reset --hard",
        "git checkout main -- src/a.py",
        "git checkout -f",
    ],
)
def test_everyday_git_stays_allowed(hooks, project_repo, command):
    res = hooks.spawn(
        "claude-code",
        "pre-tool-use",
        payload("claude/pre_tool_use_bash.json", CWD=str(project_repo.root), COMMAND=command),
    )
    assert res.out is None, res


SEARCHES = [  # (fixture, pattern, path — "~" is the agent's home —, Grep's glob)
    ("claude/pre_tool_use_grep.json", "private", "~", ""),
    ("claude/pre_tool_use_grep.json", "private", "~/.config", ""),
    ("claude/pre_tool_use_grep.json", "private", "~/.config/loopx", ""),
    ("claude/pre_tool_use_grep.json", "approved", "", ".lo*/*"),
    ("claude/pre_tool_use_grep.json", "hooks", "", ".cl?ude/settings.json"),
    ("claude/pre_tool_use_glob.json", ".config/l*/*", "~", ""),
    ("claude/pre_tool_use_glob.json", "**/key.json", "~", ""),
    ("claude/pre_tool_use_glob.json", ".lo*/*", "", ""),
]


@pytest.mark.parametrize(
    "fixture, pattern, path, glob", SEARCHES, ids=[f"{f.split('_')[-1][:-5]}:{p}:{d}:{g}" for f, p, d, g in SEARCHES]
)
def test_search_tools_cannot_reach_loopx_ground(hooks, working, fixture, pattern, path, glob):
    """Claude Code's Grep and Glob run ripgrep with --hidden over a folder and
    everything below it: from the agent's home, that is the human key's file."""
    home = os.environ["HOME"]
    key = os.path.join(home, ".config", "loopx", "key.json")
    os.makedirs(os.path.dirname(key), exist_ok=True)
    with open(key, "w") as fh:
        fh.write('{"private": "…"}')
    env = {"HOME": home, "XDG_CONFIG_HOME": os.path.join(home, ".config")}
    call = payload(fixture, CWD=str(working.root), PATTERN=pattern, PATH=path.replace("~", home), GLOB=glob)
    res = hooks.spawn("claude-code", "pre-tool-use", call, env=env)
    assert "never lets an agent do this" in deny_reason(res)


@pytest.mark.parametrize(
    "fixture, pattern, glob",
    [
        ("claude/pre_tool_use_grep.json", "def ", "*.py"),
        ("claude/pre_tool_use_grep.json", "TODO", ""),
        ("claude/pre_tool_use_glob.json", "src/**/*.py", ""),
    ],
)
def test_searching_the_project_stays_allowed(hooks, working, fixture, pattern, glob):
    res = hooks.spawn(
        "claude-code",
        "pre-tool-use",
        payload(fixture, CWD=str(working.root), PATTERN=pattern, PATH=str(working.root), GLOB=glob),
    )
    assert res.out is None, res


def _installed() -> dict:
    """Where the LoopX the hook runs is installed: its program, its package, the environment."""
    import sysconfig

    import loopx_core

    return {
        "program": os.path.join(os.path.dirname(sys.executable), "loopx"),
        "module": os.path.join(os.path.dirname(loopx_core.__file__), "cli", "parser.py"),
        "site": sysconfig.get_paths()["purelib"],
        "bin": os.path.dirname(sys.executable),
    }


REWRITES = [
    "sed -i 's/main()/evil()/' {program}",
    "cp evil.py {module}",
    "tee {program} < evil.sh",
    "mv evil.sh {program}",
    "dd if=evil.sh of={program}",
    "install -m 755 evil.sh {program}",
    "ln -sf $PWD/evil.sh {program}",
    "echo 'import evil' > {site}/zz-evil.pth",
    "cp evil.pth {site}/*.pth",
    "python3 -c \"open('{module}', 'a').write('import evil')\"",
    "{bin}/pip install ./evil",
]


@pytest.mark.parametrize("command", REWRITES)
def test_the_installed_loopx_cannot_be_rewritten(hooks, working, command):
    """The person's next `loopx` (or the board they unlock with their
    passphrase) would run the agent's code."""
    command = command.format(**_installed())
    res = hooks.spawn(
        "claude-code", "pre-tool-use", payload("claude/pre_tool_use_bash.json", CWD=str(working.root), COMMAND=command)
    )
    assert "the installed LoopX" in deny_reason(res)


@pytest.mark.parametrize("tool", ["claude/pre_tool_use_write.json", "claude/pre_tool_use_edit.json"])
def test_file_tools_cannot_rewrite_the_installed_loopx(hooks, working, tool):
    res = hooks.spawn("claude-code", "pre-tool-use", payload(tool, CWD=str(working.root), PATH=_installed()["module"]))
    assert "the installed LoopX" in deny_reason(res)


def test_codex_apply_patch_cannot_rewrite_the_installed_loopx(hooks, working):
    patch = f"*** Begin Patch\n*** Update File: {_installed()['module']}\n@@\n+import evil\n*** End Patch\n"
    res = hooks.spawn(
        "codex", "pre-tool-use", payload("codex/pre_tool_use_apply_patch.json", CWD=str(working.root), PATCH=patch)
    )
    assert "the installed LoopX" in deny_reason(res)


@pytest.mark.parametrize(
    "command",
    [
        "cat {module}",
        "ls {bin}",
        "{program} next --agent a2",
        "{bin}/python -m loopx_core next --agent a2",
        "diff {module} parser.py",
    ],
)
def test_reading_and_running_the_installed_loopx_stays_allowed(hooks, working, command):
    res = hooks.spawn(
        "claude-code",
        "pre-tool-use",
        payload("claude/pre_tool_use_bash.json", CWD=str(working.root), COMMAND=command.format(**_installed())),
    )
    assert res.out is None, res


@pytest.mark.parametrize("command", ["pip install ./evil", "python -m pip install --force-reinstall ./evil"])
def test_loopxs_own_installer_cannot_run_when_its_environment_is_active(hooks, working, command):
    """The person started the runtime with LoopX's environment active: a bare
    `pip` is LoopX's, and reinstalls it with the agent's code."""
    env = {"PATH": _installed()["bin"] + os.pathsep + os.environ.get("PATH", "")}
    res = hooks.spawn(
        "claude-code",
        "pre-tool-use",
        payload("claude/pre_tool_use_bash.json", CWD=str(working.root), COMMAND=command),
        env=env,
    )
    assert "the installed LoopX" in deny_reason(res)
