"""What ``loopx init --for codex`` writes, as pure functions of the old text.

Looked up in the source of Codex (github.com/openai/codex, ``codex-rs``) and
tried against the real ``@openai/codex`` 0.171.0 binary (``tests/e2e``):

- ``.codex/config.toml`` (the project layer, read only in a trusted project),
  edited with tomlkit, so the person's comments, order and layout survive and
  LoopX's own entries are updated where they stand (DESIGN §8 "Codex"):
  - ``default_permissions = "loopx"`` (a top-level key, before the first
    table), selecting the permission profile below;
  - ``[permissions.loopx]`` (``config/src/permissions_toml.rs``):
    ``extends = ":workspace"`` (workspace-write: the project and temp folders
    writable, no network), ``filesystem."<key folder>" = "deny"`` (no reads of
    the person's LoopX folder, where the human key lives) and
    ``filesystem.":workspace_roots"`` making ``.loopx`` (the board) and the
    other runtime's settings read-only inside the writable project. Codex
    itself keeps ``.codex`` and ``.git`` read-only. So yes: Codex 0.171 can make
    a subfolder of the workspace read-only; the board need not move out.
  - ``[mcp_servers.loopx]`` with ``required = true`` (the session does not
    start until the server is up, so its tools exist at the first request) and
    ``default_tools_approval_mode = "approve"`` (``codex exec`` runs with the
    approval policy "never" and fails an MCP call that would need a prompt);
  - ``[[hooks.<Event>]]`` groups (``config/src/hook_config.rs``): SessionStart,
    PreToolUse, Stop and PermissionRequest (run before Codex's automatic
    reviewer of an escalation under ``codex exec --approve-for-me``; DESIGN §8
    #29).
- ``$CODEX_HOME/config.toml`` (the person's own, default ``~/.codex``), edited
  the same way: ``[projects."<root>"] trust_level = "trusted"`` (without
  it Codex ignores ``.codex/config.toml``) and ``[hooks.state."<key>"]
  trusted_hash`` for each LoopX hook: ``codex exec`` silently skips a hook
  whose hash is not trusted. The key is ``<.codex/config.toml path>:<event in
  snake case>:<group>:<handler>`` and the hash ``sha256:`` of the canonical JSON
  (keys sorted, compact) of ``{"event_name", "matcher"?, "hooks": [handler
  with "async": false]}`` (``hooks/src/engine/discovery.rs``
  ``command_hook_hash``, ``config/src/fingerprint.rs`` ``version_for_toml``).
  The e2e suite proves the hooks run without ``--dangerously-bypass-hook-trust``.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import tomllib
from pathlib import Path

from . import base

TYPE_CHECKING = False  # (annotations only: tomlkit is imported by init alone; checkers read this as typing's)
if TYPE_CHECKING:
    from tomlkit.container import Container
    from tomlkit.items import AbstractTable, Table
    from tomlkit.toml_document import TOMLDocument

    from ..rules.workspace_bounds import Bounds

EVENTS = (
    ("SessionStart", "session-start", None, 30),
    ("PreToolUse", "pre-tool-use", "*", 30),
    ("Stop", "stop", None, 60),
    (
        "PermissionRequest",
        "permission-request",
        "*",
        600,
    ),  # an approval Codex would ask the person for joins the queue (#29)
)
PROFILE = "loopx"  # the permission profile's name, LoopX's own
# Read-only inside the writable project. Only paths that exist when init runs:
# Codex's bwrap fails to start a command (now and then, "Can't bind mount …
# Unable to remount destination") when a listed path is missing (0.171).
READ_ONLY = (".loopx", ".claude", ".mcp.json")
# The comment lines that framed LoopX's entries before they were edited with
# tomlkit (a config written by an older init): dropped, the entries kept.
_OLD_MARKER = re.compile(r"^# loopx:(begin|end)\b.*\n?", re.M)


class ConfigError(base.SettingsConflict):
    """The file says something LoopX's entries would contradict (exit 5)."""


class MalformedConfig(ConfigError, base.SettingsMalformed):
    """The file is not TOML at all (exit 3): nothing is written."""


def entries(
    agent: str, exe: list[str], commands: dict[str, str], db: str | None, key_dir: str | None, root: Path
) -> dict:
    """What LoopX puts in ``.codex/config.toml``, as plain data: the MCP
    server, the permission profile (None without the sandbox) and one hook
    group per event."""
    env = {"LOOPX_AGENT": agent, **({"LOOPX_DB": db} if db else {})}
    server = {
        "command": exe[0],
        "args": [*exe[1:], "mcp"],
        "env": env,
        "required": True,
        # LoopX's tools need no prompt: the operators behind them check authority,
        # and `codex exec` (approval policy "never") fails a tool that needs one.
        "default_tools_approval_mode": "approve",
    }
    profile = None
    if key_dir is not None:
        profile = {
            "extends": ":workspace",
            "filesystem": {key_dir: "deny", ":workspace_roots": {p: "read" for p in READ_ONLY if (root / p).exists()}},
        }
    hooks = {}
    for event, name, matcher, timeout in EVENTS:
        group: dict = {} if matcher is None else {"matcher": matcher}
        group["hooks"] = [{"type": "command", "command": commands[name], "timeout": timeout}]
        hooks[event] = group
    return {"server": server, "profile": profile, "hooks": hooks}


def _parse(text: str) -> TOMLDocument:
    import tomlkit  # (only `init --for codex` pays for it)
    from tomlkit.exceptions import ParseError

    try:
        return tomlkit.parse(text)
    except ParseError as exc:
        raise MalformedConfig(f"is not valid TOML ({exc}); fix it and run init again") from None


def _plain(text: str) -> dict:
    return tomllib.loads(text) if text.strip() else {}


def _is_ours(handler: object) -> bool:
    """A hook handler LoopX wrote: it runs ``loopx_core hook codex <event>``."""
    command = handler.get("command") if isinstance(handler, dict) else None
    return isinstance(command, str) and any(
        command.endswith(f"loopx_core hook codex {name}") for _, name, _, _ in EVENTS
    )


def _our_server(server: object) -> bool:
    """The MCP entry LoopX wrote: it runs ``loopx mcp`` for an agent."""
    return (
        isinstance(server, dict)
        and list(server.get("args", []))[-1:] == ["mcp"]
        and "LOOPX_AGENT" in server.get("env", {})
    )


def _super_table(doc: Container | AbstractTable, key: str) -> AbstractTable:
    """``doc[key]``, made as a table whose header is never written on its own (``[a.b]`` only)."""
    import tomlkit

    if key not in doc:
        doc[key] = tomlkit.table(is_super_table=True)
    return doc[key]


def _put(parent: AbstractTable, key: str, values: dict, inline: tuple = ()) -> None:
    """``parent[key] = values``: a table of its own (the keys named in ``inline``
    as inline tables), or an inline table inside a parent written inline."""
    from tomlkit.items import InlineTable

    parent[key] = values if isinstance(parent, InlineTable) else _table(values, inline)


def _table(values: dict, inline: tuple = ()) -> Table:
    import tomlkit

    table = tomlkit.table()
    for key, value in values.items():
        if key in inline:
            small = tomlkit.inline_table()
            small.update(value)
            value = small
        table[key] = value
    table.add(tomlkit.nl())  # a blank line before whatever follows
    return table


def _group(group: dict) -> Table:
    """A hook group as tomlkit writes an array of tables (``[[hooks.E]]``, ``[[hooks.E.hooks]]``)."""
    import tomlkit

    table = tomlkit.table()
    for key, value in group.items():
        if key != "hooks":
            table[key] = value
    handlers = tomlkit.aot()
    for handler in group["hooks"]:
        handlers.append(_table(handler))
    table["hooks"] = handlers
    return table


def merge_project(before: str | None, ours: dict, sandbox: bool) -> str:
    import tomlkit

    text = _OLD_MARKER.sub("", before or "")
    doc = _parse(text)
    if sandbox:
        for key in ("sandbox_mode", "default_permissions"):
            if key in doc and doc[key] != PROFILE:
                raise ConfigError(
                    f"sets `{key}` already; LoopX selects its own permission profile there. Remove it, or run init with --no-sandbox"
                )
    servers = doc.get("mcp_servers", {})
    if "loopx" in servers and not _our_server(servers["loopx"]):
        raise ConfigError("already defines [mcp_servers.loopx] (not LoopX's): rename that server and run init again")

    # the top-level key first: tomlkit puts a new one after the last top-level key, before every table
    if sandbox and ours["profile"] is not None:
        doc["default_permissions"] = PROFILE
    elif doc.get("default_permissions") == PROFILE:
        del doc["default_permissions"]
    _put(_super_table(doc, "mcp_servers"), "loopx", ours["server"], inline=("env",))
    if sandbox and ours["profile"] is not None:
        _put(_super_table(doc, "permissions"), PROFILE, ours["profile"])
    elif PROFILE in doc.get("permissions", {}):
        del doc["permissions"][PROFILE]
        if not doc["permissions"]:
            del doc["permissions"]
    from tomlkit.items import Array

    hooks = _super_table(doc, "hooks")
    for event, group in ours["hooks"].items():
        if event not in hooks:
            hooks[event] = tomlkit.aot()
        groups = hooks[event]
        mine = [i for i, g in enumerate(groups) if any(_is_ours(h) for h in g.get("hooks", []))]
        group = group if isinstance(groups, Array) else _group(group)  # (an array written inline takes a plain one)
        for i in reversed(mine):
            del groups[i]
        groups.insert(mine[0] if mine else len(groups), group)  # where it stood
    after = tomlkit.dumps(doc).rstrip("\n") + "\n"
    try:
        parsed = tomllib.loads(after)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"would not be valid TOML with LoopX's entries ({exc})") from None
    if "loopx" not in parsed.get("mcp_servers", {}):
        raise ConfigError("the loopx MCP server entry did not land in [mcp_servers]")
    if before is not None and parsed == _plain(before):
        return before  # already says it: the file is left byte for byte
    return after


# -- trust, in the person's own Codex config --------------------------------------------------


def codex_home() -> Path:
    return Path(os.environ.get("CODEX_HOME") or Path.home() / ".codex")


def _canonical(value: object) -> object:
    if isinstance(value, dict):
        return {k: _canonical(value[k]) for k in sorted(value)}
    if isinstance(value, list):
        return [_canonical(v) for v in value]
    return value


def hook_hash(event: str, matcher: str | None, handler: dict) -> str:
    normalized = {
        "type": "command",
        "command": handler["command"],
        "timeout": max(1, int(handler.get("timeout") or 600)),
        "async": bool(handler.get("async", False)),
    }
    identity = {"event_name": _snake(event), "hooks": [normalized]}
    if matcher is not None:
        identity["matcher"] = matcher
    text = json.dumps(_canonical(identity), separators=(",", ":"), ensure_ascii=False)
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()


def _snake(event: str) -> str:
    return re.sub(r"(?<!^)([A-Z])", r"_\1", event).lower()


def trusted_hooks(project_text: str, config_path: Path, commands: dict[str, str]) -> dict[str, str]:
    """``hooks.state`` key → hash for each of our handlers in the project config as written."""
    hooks = tomllib.loads(project_text).get("hooks", {})
    out = {}
    for event, name, _matcher, _timeout in EVENTS:
        for g, group in enumerate(hooks.get(event, [])):
            for h, handler in enumerate(group.get("hooks", [])):
                if handler.get("command") == commands[name]:
                    out[f"{config_path}:{_snake(event)}:{g}:{h}"] = hook_hash(event, group.get("matcher"), handler)
    return out


def merge_user(before: str | None, root: Path, trust: dict[str, str]) -> str:
    import tomlkit

    text = _OLD_MARKER.sub("", before or "")
    doc = _parse(text)
    projects = _super_table(doc, "projects")
    project = projects.get(str(root))
    if project is None:
        _put(projects, str(root), {"trust_level": "trusted"})
    elif project.get("trust_level") != "trusted":
        raise ConfigError(
            f"marks {root} as {project.get('trust_level')!r}; Codex would ignore .codex/config.toml there. Trust the project (`codex` asks at start) and run init again"
        )
    # A key names the place of one of LoopX's hooks in the project's config
    # (path, event, group, handler): what is trusted there is LoopX's hook now.
    states = _super_table(_super_table(doc, "hooks"), "state")
    for key, digest in trust.items():
        _put(states, key, {"trusted_hash": digest})
    after = tomlkit.dumps(doc)
    try:
        parsed = tomllib.loads(after)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"would not be valid TOML with LoopX's trust entries ({exc})") from None
    if before is not None and parsed == _plain(before):
        return before
    return after


# -- a turn in a card's workspace (issue #26) ---------------------------------------------------


def workspace_overrides(bounds: Bounds, main_config: dict, key_dir: str) -> list[str]:
    """``codex exec`` arguments (``-c key=value``) for a turn started in a card's
    workspace: LoopX's permission profile bounded to it when the main checkout's
    ``.codex/config.toml`` selects it (``init`` without ``--no-sandbox``), else the
    workspace-write mode's extra writable roots (below).

    Codex keeps the main repository's git folder read-only from a linked
    worktree, so a commit there fails ("index.lock: Read-only file system").
    The profile is given again, whole, on the command line (it replaces the
    project's, whose ``.loopx`` entry names a path a workspace does not have:
    bwrap then cannot start a command): the person's LoopX folder unreadable,
    the git paths a commit needs writable (``rules/workspace_bounds``), and
    inside them every other card's branch and reflog read-only; the runtimes'
    settings in the workspace read-only (Codex keeps ``.codex`` so by itself).
    The hooks and the loopx MCP server come with LoopX's Codex home
    (``workspace_home``), not from the workspace."""
    from ..rules import workspace_bounds

    args: list[str] = []
    if main_config.get("default_permissions") != "loopx":
        # Without LoopX's profile (`init --no-sandbox`) Codex's own sandbox is whatever
        # the person runs it with; in its workspace-write mode the main repository's
        # git folder is read-only from a worktree, so a commit fails. Its extra
        # writable roots are given exactly the git paths a commit there writes
        # (what the profile makes writable; nothing kept read-only inside them:
        # the legacy mode cannot say so). Other modes ignore the key.
        workspace_bounds.prepare(bounds)
        git_paths = [p for p in workspace_bounds.writable(bounds) if p != bounds.workspace]
        return ["-c", "sandbox_workspace_write.writable_roots=[" + ", ".join(_toml_str(p) for p in git_paths) + "]"]
    if main_config.get("default_permissions") == "loopx":
        workspace_bounds.prepare(
            bounds
        )  # the ref folders a commit writes exist; packed-only refs get a file to keep read-only
        entries = {key_dir: "deny"}
        entries.update({p: "write" for p in workspace_bounds.writable(bounds) if p != bounds.workspace})
        entries.update({p: "read" for p in workspace_bounds.inside_writable(bounds, workspace_bounds.guarded(bounds))})
        # `.claude` made (empty: git keeps no empty folder) so it can be bound read-only:
        # a Claude Code session started here later must not find settings planted in it
        workspace = Path(bounds.workspace)
        (workspace / ".claude").mkdir(exist_ok=True)
        roots = {rel: "read" for rel in READ_ONLY if (workspace / rel).exists()}
        table = ", ".join(f"{_toml_str(k)} = {_toml_str(v)}" for k, v in entries.items())
        if roots:
            table += (
                ', ":workspace_roots" = { '
                + ", ".join(f"{_toml_str(k)} = {_toml_str(v)}" for k, v in roots.items())
                + " }"
            )
        args += [
            "-c",
            'default_permissions="loopx"',
            "-c",
            f'permissions.loopx={{ extends = ":workspace", filesystem = {{ {table} }} }}',
        ]
    return args


def _toml_str(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)  # a TOML basic string


# -- LoopX's Codex home for a turn in a card's workspace (issue #26) ---------------------------
#
# Codex 0.171 reads hooks from every config layer but runs only those whose hash
# is trusted in a *user* layer (``$CODEX_HOME/config.toml``), keyed by the path of
# the file that declares them; hooks given with ``-c`` (the session-flags layer)
# did not run, even with ``-c hooks.state…`` trusting their hash (tried on 0.171).
# In a linked worktree it loads the worktree's own
# ``.codex/config.toml`` as a project layer, trusted because the main checkout is
# (``resolve_root_git_project_for_trust``), with its hooks swapped for the main
# checkout's (``merge_root_checkout_project_hooks``): so LoopX's hooks run there
# only if the workspace has a ``.codex`` folder, and then whatever else that file
# says (an MCP server, started outside the sandbox) is loaded too — a file the
# agent can commit on its branch. A turn the runner starts in a workspace gets a
# Codex home of LoopX's instead: the person's config without its project trust
# (so no project layer loads: "Untrusted project-local configuration is
# disabled"), plus LoopX's hooks trusted by hash at that file's path and the
# loopx MCP server; every other entry of the person's home (auth, sessions,
# history, rules…) is a link to theirs. It lives in the person's data folder,
# outside every workspace and every folder the sandbox lets the agent write.

HOME_OWN = ("config.toml",)  # written here; every other entry of the person's home is linked


def home_for(main: str, agent: str) -> Path:
    """LoopX's Codex home for ``agent``'s turns in the workspaces of the project
    whose main checkout is ``main``."""
    from platformdirs import user_data_dir

    project = hashlib.sha256(os.path.realpath(main).encode()).hexdigest()[:16]
    return Path(user_data_dir("loopx")) / "codex-home" / project / home_name(agent)


def home_name(agent: str) -> str:
    """The folder of ``agent``'s home in its project's (a name, never a path)."""
    return re.sub(r"[^A-Za-z0-9._-]", "_", agent)


def workspace_home(home: Path, person_home: Path, main_config: dict, main: str) -> Path:
    """Write ``home`` (see above) from the person's Codex home and the main
    checkout's ``.codex/config.toml`` (LoopX's hooks and MCP server as ``init``
    wrote them). Returns the home, resolved: Codex keys hook trust by the real
    path of its config file. Raises ConfigError when the person's config is not
    TOML (Codex would refuse to start as well)."""
    import tomlkit

    home.mkdir(parents=True, exist_ok=True)
    home = home.resolve()
    _outside_the_sandbox(home)
    person_home = Path(os.path.realpath(person_home))
    try:
        config = tomllib.loads((person_home / "config.toml").read_text(encoding="utf-8"))
    except FileNotFoundError:
        config = {}
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(
            f"{person_home / 'config.toml'} cannot be read as TOML ({exc}); fix it, then the runner's next turn uses it"
        ) from None
    # No project is trusted here, so no worktree's .codex/config.toml loads; the main
    # checkout is marked untrusted outright (its worktrees inherit that), so an
    # interactive `codex` started in a workspace asks no trust question either.
    config["projects"] = {os.path.realpath(main): {"trust_level": "untrusted"}}
    hooks: dict = config["hooks"] if isinstance(config.get("hooks"), dict) else {}
    found = hooks.pop("state", None)
    state: dict = found if isinstance(found, dict) else {}
    # the person's own trust decisions follow their files here (the same hashes, this home's paths)
    here = str(home / "config.toml")
    own = str(person_home) + os.sep
    state = {
        (str(home) + os.sep + key[len(own) :] if key.startswith(own) else key): value for key, value in state.items()
    }
    for event, _name, _matcher, _timeout in EVENTS:
        groups: list = hooks[event] if isinstance(hooks.get(event), list) else []
        hooks[event] = groups
        for group in (main_config.get("hooks") or {}).get(event, []):
            if not any(_is_ours(h) for h in group.get("hooks", [])):
                continue
            g = len(groups)
            groups.append(group)
            for h, handler in enumerate(group["hooks"]):
                state[f"{here}:{_snake(event)}:{g}:{h}"] = {
                    "trusted_hash": hook_hash(event, group.get("matcher"), handler)
                }
    hooks["state"] = state
    config["hooks"] = hooks
    server = (main_config.get("mcp_servers") or {}).get("loopx")
    if isinstance(server, dict):
        config.setdefault("mcp_servers", {})["loopx"] = server
    fresh = home / "config.toml.loopx-new"
    fresh.write_text(tomlkit.dumps(config), encoding="utf-8")
    os.replace(fresh, home / "config.toml")
    _link_person_home(home, person_home)
    return home


def _outside_the_sandbox(home: Path) -> None:
    """Refuse a home in a temporary folder: Codex's sandbox lets the agent write
    those (and Codex puts no helper binary there), and whoever writes this config
    chooses the next turn's hooks and MCP servers."""
    import tempfile

    for temp in {"/tmp", "/var/tmp", os.path.realpath(tempfile.gettempdir())}:
        if home == Path(temp) or Path(temp) in home.parents:
            raise ConfigError(
                f"LoopX's Codex home for workspace turns would be {home}, inside the temporary folder {temp}, which Codex's sandbox lets the agent write; "
                "set XDG_DATA_HOME (LoopX's data folder) to a folder outside it"
            )


def _link_person_home(home: Path, person_home: Path) -> None:
    """Every entry of the person's Codex home but the config, linked (their login,
    their sessions — where ``codex resume`` and the runner find the rollout —
    history and rules). Entries that appear later are linked at the next turn."""
    if not person_home.is_dir():
        return
    (person_home / "sessions").mkdir(exist_ok=True)
    for entry in os.listdir(person_home):
        if entry in HOME_OWN or entry.startswith("config.toml"):
            continue
        target = home / entry
        if not os.path.lexists(target):
            os.symlink(person_home / entry, target)


def homes_of(main: str) -> list[Path]:
    """LoopX's Codex homes for the project whose main checkout is ``main`` (one per
    agent that had a turn in one of its workspaces)."""
    project = home_for(main, "_").parent
    try:
        return sorted(
            project / n for n in os.listdir(project) if not os.path.islink(project / n) and (project / n).is_dir()
        )
    except OSError:
        return []


def remove_home(home: Path, person_home: Path) -> None:
    """Remove one of LoopX's Codex homes (``home_for``). Its links to the person's
    own Codex home are removed as links — never followed: ``shutil.rmtree``
    unlinks a symlink it meets, and refuses one at the top. Never the person's own
    home, nor a home that holds it (their ``CODEX_HOME`` pointed inside LoopX's
    folder): ConfigError."""
    import shutil

    if os.path.islink(home) or not home.is_dir():
        raise ConfigError(f"{home} is not a folder of LoopX's: left alone")
    mine, theirs = os.path.realpath(home), os.path.realpath(person_home)
    if theirs == mine or theirs.startswith(mine + os.sep) or mine.startswith(theirs + os.sep):
        raise ConfigError(f"{home} is (or holds, or lies in) your own Codex home {person_home}: left alone")
    shutil.rmtree(home)
    try:
        home.parent.rmdir()  # the project's folder, once its last agent's home is gone
    except OSError:
        pass
