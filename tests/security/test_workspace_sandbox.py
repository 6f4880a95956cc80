"""What a runtime's sandbox is told for a turn in a card's workspace (issue #26):
real git, real worktrees; the real runtimes enforce it in
``tests/e2e/test_workspace_bounds.py``."""

from __future__ import annotations

import json
import os
import subprocess
import tomllib
from pathlib import Path

import pytest

from loopx_core import runtimes
from loopx_core.rules import workspace_bounds
from loopx_core.runtimes import claude_code_settings as setup_claude
from loopx_core.runtimes import codex_settings as setup_codex
from loopx_core.runtimes.base import key_folder


def git(cwd, *args) -> str:
    env = {
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@localhost",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@localhost",
        "PATH": "/usr/bin:/bin",
        "HOME": str(cwd),
    }
    return subprocess.run(
        ["git", *args], cwd=cwd, env=env, capture_output=True, text=True, check=True, timeout=60
    ).stdout


@pytest.fixture
def repo(tmp_path):
    main = tmp_path / "project"
    main.mkdir()
    git(main, "init", "-q", "-b", "main")
    git(main, "commit", "-q", "--allow-empty", "-m", "first")
    git(main, "worktree", "add", "-q", "-b", "loopx/LX-1", str(tmp_path / "ws" / "LX-1"), "main")
    git(main, "worktree", "add", "-q", "-b", "loopx/LX-2", str(tmp_path / "ws" / "LX-2"), "main")
    git(main, "update-ref", "refs/loopx/LX-1/wip/t1", "main")
    return main


def test_a_workspace_knows_its_repository_and_a_main_checkout_is_no_workspace(repo):
    ws = repo.parent / "ws" / "LX-1"
    (ws / "src").mkdir()
    b = workspace_bounds.find(ws / "src")
    assert (b.workspace, b.common, b.main, b.branch) == (str(ws), str(repo / ".git"), str(repo), "loopx/LX-1")
    assert Path(b.admin).parent == repo / ".git" / "worktrees"
    assert workspace_bounds.find(repo) is None
    assert workspace_bounds.find(repo.parent) is None


def test_writable_is_the_workspace_and_what_a_commit_there_writes(repo):
    b = workspace_bounds.find(repo.parent / "ws" / "LX-1")
    common = repo / ".git"
    assert set(workspace_bounds.writable(b)) == {
        b.workspace,
        b.admin,
        str(common / "refs" / "heads" / "loopx"),
        str(common / "logs" / "refs" / "heads" / "loopx"),
    }
    guarded = set(workspace_bounds.guarded(b))
    for kept in (
        "refs/heads/main",
        "refs/heads/loopx/LX-2",
        "logs/refs/heads/loopx/LX-2",
        "refs/loopx",
        "HEAD",
        "index",
        "config",
        "hooks",
        "objects",
        f"worktrees/{(repo.parent / 'ws' / 'LX-2').name}",
    ):
        assert str(common / kept) in guarded, kept
    for own in ("refs/heads/loopx/LX-1", f"worktrees/{Path(b.admin).name}", "refs/heads/loopx"):
        assert str(common / own) not in guarded, own
    # Codex keeps the common dir read-only by itself: only what lies inside a writable path
    assert set(workspace_bounds.inside_writable(b, sorted(guarded))) == {
        str(common / "refs/heads/loopx/LX-2"),
        str(common / "logs/refs/heads/loopx/LX-2"),
        str(Path(b.admin, "gitdir")),
        str(Path(b.admin, "commondir")),
    }


def test_claude_codes_turn_in_a_workspace_takes_the_main_checkouts_settings_only(repo):
    ws = repo.parent / "ws" / "LX-1"
    main_settings = setup_claude.merge_settings(
        None,
        {name: f"loopx hook claude-code {name}" for _event, name, _matcher, _timeout in setup_claude.EVENTS},
        "~/.config/loopx",
        True,
        lambda n: __import__("re").compile(n),
    )
    (repo / ".claude").mkdir()
    (repo / ".claude" / "settings.json").write_text(main_settings)
    (repo / ".mcp.json").write_text('{"mcpServers": {"loopx": {"command": "loopx", "args": ["mcp"]}}}')
    argv = runtimes.make("claude-code", [], "claude", "a1").argv("go", str(ws))
    flag = json.loads(argv[argv.index("--settings") + 1])
    assert flag["env"] == {"LOOPX_AGENT": "a1"} and "PreToolUse" in flag["hooks"]
    # the workspace's own settings and MCP servers, which the agent can write, count for nothing
    assert argv[argv.index("--setting-sources") + 1] == "user" and "--strict-mcp-config" in argv
    assert argv[argv.index("--mcp-config") + 1] == str(repo / ".mcp.json")
    fs = flag["sandbox"]["filesystem"]
    assert flag["sandbox"]["enabled"] is True and flag["sandbox"]["allowUnsandboxedCommands"] is False
    assert str(repo / ".git" / "refs" / "heads" / "loopx") in fs["allowWrite"]
    assert {
        str(repo / ".git" / "refs" / "heads" / "main"),
        str(repo / ".git" / "packed-refs"),
        str(ws / ".claude" / "settings.json"),
        str(repo / ".claude" / "settings.json"),
    } <= set(fs["denyWrite"])
    assert (repo / ".git" / "packed-refs").exists()  # made, so that it can be kept read-only
    # the main checkout's rules spelled absolutely: flag settings have no folder a "/.loopx" could be relative to
    # (Claude Code 2.1.335 bound "/tmp/claude-<uid>/.loopx", shared by every session, and raced another session's placeholder)
    deny = flag["permissions"]["deny"]
    assert f"Edit(/{repo}/.loopx/**)" in deny and not any(r.startswith("Edit(/.") for r in deny)
    # outside a workspace: the checkout's own settings, as before
    assert "--setting-sources" not in runtimes.make("claude-code", [], "claude", "a1").argv("go", str(repo))


def test_codex_turn_in_a_workspace_gets_the_profile_with_the_git_paths(repo):
    ws = repo.parent / "ws" / "LX-1"
    (repo / ".loopx").mkdir()
    ours = setup_codex.entries(
        "a1",
        ["loopx"],
        {n: f"loopx hook codex {n}" for _, n, *_ in setup_codex.EVENTS},
        None,
        "/home/p/.config/loopx",
        repo,
    )
    (repo / ".codex").mkdir()
    (repo / ".codex" / "config.toml").write_text(setup_codex.merge_project(None, ours, True))
    argv = runtimes.make("codex", [], "codex", "a1").argv("go", str(ws))
    overrides = [argv[i + 1] for i, a in enumerate(argv) if a == "-c"]
    assert 'default_permissions="loopx"' in overrides
    profile = tomllib.loads(next(o for o in overrides if o.startswith("permissions.loopx=")))["permissions"]["loopx"]
    fs = profile["filesystem"]
    assert profile["extends"] == ":workspace" and fs[key_folder()] == "deny"
    assert (
        fs[str(repo / ".git" / "refs" / "heads" / "loopx")] == "write"
        and fs[str(repo / ".git" / "refs" / "heads" / "loopx" / "LX-2")] == "read"
    )
    assert str(repo / ".git" / "refs" / "heads" / "main") not in fs  # read-only: Codex keeps the common dir so
    assert fs[":workspace_roots"][".claude"] == "read"
    assert not any(
        o.startswith(("mcp_servers", "hooks")) for o in overrides
    )  # they come with LoopX's Codex home (below)
    assert "-c" not in runtimes.make("codex", [], "codex", "a1").argv("go", str(repo))
    # README's `-- --sandbox workspace-write` would win over the profile: in a workspace it is the profile
    assert "--sandbox" not in runtimes.make("codex", ["--sandbox", "workspace-write"], "codex", "a1").argv(
        "go", str(ws)
    )
    assert "--sandbox" in runtimes.make("codex", ["--sandbox", "workspace-write"], "codex", "a1").argv("go", str(repo))


@pytest.fixture
def outside_tmp():
    """A folder outside /tmp: LoopX refuses a Codex home where Codex's sandbox writes."""
    import shutil
    import uuid

    base = Path.home().resolve() / ".cache" / "loopx-tests" / uuid.uuid4().hex[:10]
    base.mkdir(parents=True)
    yield base
    shutil.rmtree(base, ignore_errors=True)


def _main_config(repo) -> dict:
    ours = setup_codex.entries(
        "a1",
        ["loopx"],
        {n: f"/venv/python -I -m loopx_core hook codex {n}" for _, n, *_ in setup_codex.EVENTS},
        None,
        "/home/p/.config/loopx",
        repo,
    )
    return tomllib.loads(setup_codex.merge_project(None, ours, True))


def test_codex_turn_in_a_workspace_gets_loopxs_codex_home(repo, outside_tmp):
    """The person's Codex config without its project trust (no worktree's
    .codex/config.toml loads), LoopX's hooks trusted by hash at the home's own config
    path (Codex runs no other), the loopx server, the person's trust decisions kept,
    and every other entry of the person's home linked."""
    person = outside_tmp / "person"
    person.mkdir()
    (person / "config.toml").write_text(
        f'model = "gpt-x"\n[projects."{repo}"]\ntrust_level = "trusted"\n'
        f'[[hooks.Stop]]\n[[hooks.Stop.hooks]]\ntype = "command"\ncommand = "notify-me"\n'
        f'[hooks.state."{person}/config.toml:stop:0:0"]\ntrusted_hash = "sha256:theirs"\n'
    )
    (person / "auth.json").write_text("{}")
    home = setup_codex.workspace_home(outside_tmp / "loopx-home", person, _main_config(repo), str(repo))
    config = tomllib.loads((home / "config.toml").read_text())
    assert config["model"] == "gpt-x" and config["projects"] == {str(repo.resolve()): {"trust_level": "untrusted"}}
    state = config["hooks"]["state"]
    assert state[f"{home}/config.toml:stop:0:0"] == {
        "trusted_hash": "sha256:theirs"
    }  # the person's own hook, as trusted as before
    for event in ("SessionStart", "PreToolUse", "Stop"):
        g = len(config["hooks"][event]) - 1
        group = config["hooks"][event][g]
        assert group["hooks"][0]["command"].endswith(f"hook codex {setup_codex._snake(event).replace('_', '-')}")
        assert state[f"{home}/config.toml:{setup_codex._snake(event)}:{g}:0"]["trusted_hash"] == setup_codex.hook_hash(
            event, group.get("matcher"), group["hooks"][0]
        )
    assert config["mcp_servers"]["loopx"]["env"]["LOOPX_AGENT"] == "a1"
    assert (home / "auth.json").is_symlink() and (home / "auth.json").resolve() == (person / "auth.json").resolve()
    assert (home / "sessions").resolve() == (person / "sessions").resolve()  # where the runner follows the rollout
    # again: the same file, nothing doubled
    assert setup_codex.workspace_home(outside_tmp / "loopx-home", person, _main_config(repo), str(repo)) == home
    assert tomllib.loads((home / "config.toml").read_text()) == config


def test_a_codex_home_where_the_sandbox_writes_is_refused(repo, tmp_path):
    with pytest.raises(setup_codex.ConfigError, match="temporary folder"):
        setup_codex.workspace_home(tmp_path / "loopx-home", tmp_path / "person", _main_config(repo), str(repo))


def test_codex_environment_in_a_workspace_names_loopxs_home_and_elsewhere_nothing(repo, outside_tmp, monkeypatch):
    monkeypatch.setenv("XDG_DATA_HOME", str(outside_tmp / "data"))
    monkeypatch.setenv("CODEX_HOME", str(outside_tmp / "person"))
    (repo / ".codex").mkdir()
    (repo / ".codex" / "config.toml").write_text(
        setup_codex.merge_project(
            None,
            setup_codex.entries(
                "a1", ["loopx"], {n: f"loopx_core hook codex {n}" for _, n, *_ in setup_codex.EVENTS}, None, "/k", repo
            ),
            True,
        )
    )
    codex = runtimes.make("codex", [], "codex", "a1")
    env = codex.environ(str(repo.parent / "ws" / "LX-1"))
    assert Path(env["CODEX_HOME"]).parent.parent == (outside_tmp / "data" / "loopx" / "codex-home").resolve()
    # in a workspace every runtime's git writes its objects into the workspace's quarantine (#38)
    b = workspace_bounds.find(repo.parent / "ws" / "LX-1")
    quarantine = {
        "GIT_OBJECT_DIRECTORY": str(Path(b.admin, "loopx-objects")),
        "GIT_ALTERNATE_OBJECT_DIRECTORIES": str(repo / ".git" / "objects"),
    }
    assert {k: env[k] for k in quarantine} == quarantine
    assert codex.environ(str(repo)) == {}
    # Claude Code's turn there: the quarantine and its git's ignore file (the sandbox's placeholders, #39), no Codex home
    claude = runtimes.make("claude-code", [], "claude", "a1").environ(str(repo.parent / "ws" / "LX-1"))
    assert {k: claude[k] for k in quarantine} == quarantine
    assert claude["GIT_CONFIG_KEY_0"] == "core.excludesFile" and "CODEX_HOME" not in claude


def test_codex_without_loopxs_profile_gets_the_commits_git_paths_as_extra_writable_roots(repo):
    """Without LoopX's profile (`init --no-sandbox`) Codex's turns run in the card's
    workspace too (before, the project folder): its workspace-write mode keeps a
    worktree's common dir read-only, so the turn's command line gives that mode
    exactly the git paths a commit there writes as extra writable roots, and keeps
    the person's `--sandbox workspace-write`."""
    (repo / ".codex").mkdir()
    (repo / ".codex" / "config.toml").write_text('[mcp_servers.loopx]\ncommand = "loopx"\n')
    ws = repo.parent / "ws" / "LX-1"
    codex = runtimes.make("codex", ["--sandbox", "workspace-write"], "codex", "a1")
    codex.project = str(repo)
    assert codex.in_workspace is True
    argv = codex.argv("go", str(ws))
    b = workspace_bounds.find(ws)
    at = argv.index("-c")
    key, _, value = argv[at + 1].partition("=")
    assert key == "sandbox_workspace_write.writable_roots"
    assert tomllib.loads("v = " + value)["v"] == [p for p in workspace_bounds.writable(b) if p != b.workspace]
    assert str(repo / ".git") not in tomllib.loads("v = " + value)["v"]  # never the whole git folder
    assert argv[-3:-1] == ["--sandbox", "workspace-write"] and not any("permissions" in a for a in argv)
    assert codex.argv("go", str(repo)) == [
        "codex",
        "exec",
        "--json",
        "--sandbox",
        "workspace-write",
        "go",
    ]  # the main checkout: as before
    assert runtimes.make("claude-code", [], "claude", "a1").in_workspace is True


def test_refs_only_in_packed_refs_get_a_file_to_keep_read_only(repo):
    """After `git pack-refs --all` (or a gc) the base branch, other cards' branches
    and LoopX's refs have no loose file, so no path a sandbox could keep read-only
    — and git reads a loose ref an agent creates before packed-refs (the e2e shows
    `main` moved that way on Claude Code). Before a turn each gets its file, of the
    same value; the agent's own branch and the ref folders a commit writes are left
    writable (made again when a gc emptied them)."""
    git(repo, "pack-refs", "--all")
    common = repo / ".git"
    values = {
        r: git(repo, "rev-parse", r).strip()
        for r in ("refs/heads/main", "refs/heads/loopx/LX-2", "refs/loopx/LX-1/wip/t1")
    }
    assert not (common / "refs" / "heads" / "main").exists() and not (common / "refs" / "heads" / "loopx").exists()
    b = workspace_bounds.find(repo.parent / "ws" / "LX-1")
    workspace_bounds.prepare(b)
    for ref in ("refs/heads/main", "refs/heads/loopx/LX-2"):  # listed one by one: each gets its file
        assert (common / ref).read_text().strip() == values[ref]
    for ref, value in values.items():
        assert git(repo, "rev-parse", ref).strip() == value
    # LoopX's refs are kept read-only as a whole folder: it is made, no file written in it
    assert (common / "refs" / "loopx").is_dir() and not (common / "refs" / "loopx" / "LX-1").exists()
    assert not (common / "refs" / "heads" / "loopx" / "LX-1").exists()  # its own: the agent commits there
    assert (common / "logs" / "refs" / "heads" / "loopx").is_dir()
    guarded = set(workspace_bounds.guarded(b))
    assert {
        str(common / "refs" / "heads" / "main"),
        str(common / "refs" / "heads" / "loopx" / "LX-2"),
        str(common / "refs" / "loopx"),
    } <= guarded
    assert not list(common.rglob("*.lock"))


def test_thousands_of_packed_tags_cost_one_folder_not_a_file_each(repo):
    """A repository with 2,000 packed tags: before every sandboxed turn `prepare`
    wrote a loose file for each (and the sandbox then listed each). A tag needs no
    file of its own: `refs/tags` is beside the way down to the writable ref folder,
    so the sandbox keeps it read-only whole — made if a pack emptied it. Branches
    (listed one by one) still get theirs."""
    head = git(repo, "rev-parse", "HEAD").strip()
    git(repo, "branch", "feature/x")
    (repo / ".git" / "packed-refs").write_text(
        "# pack-refs with: peeled fully-peeled sorted \n" + "".join(f"{head} refs/tags/v{i:04d}\n" for i in range(2000))
    )
    git(repo, "pack-refs", "--all")
    common = repo / ".git"
    (common / "refs" / "tags").rmdir()  # (git keeps it empty; a clone by another tool may lack it)
    assert git(repo, "rev-parse", "v1999").strip() == head
    b = workspace_bounds.find(repo.parent / "ws" / "LX-1")
    before = sum(len(files) for _, _, files in os.walk(common / "refs"))
    workspace_bounds.prepare(b)
    written = sum(len(files) for _, _, files in os.walk(common / "refs")) - before
    assert written == 2  # main and loopx/LX-2: nothing for the tags, nothing for the agent's own branch
    assert (common / "refs" / "tags").is_dir() and not any((common / "refs" / "tags").iterdir())
    assert (common / "refs" / "heads" / "feature").is_dir() and not (
        common / "refs" / "heads" / "feature" / "x"
    ).exists()
    guarded = set(workspace_bounds.guarded(b))
    assert {
        str(common / "refs" / "tags"),
        str(common / "refs" / "heads" / "feature"),
        str(common / "refs" / "heads" / "main"),
    } <= guarded
    assert len(guarded) < 40  # the sandbox's list stays short too
    assert git(repo, "rev-parse", "v0000", "v1999", "feature/x").split() == [head] * 3
