"""What ``loopx init --for claude-code`` writes, as pure functions of the old text.

Every setting below was looked up in the type definitions shipped with
``@anthropic-ai/claude-agent-sdk`` 0.3.335 (Claude Code 2.1.335): ``sdk.d.ts``,
type ``Settings`` (``hooks``, ``env``, ``permissions``, ``sandbox``,
``enabledMcpjsonServers``) and the hook command entry (``onFailure``), and tried
against the real binaries 2.1.197 and 2.1.335 (``tests/e2e``).

- ``.claude/settings.json`` (shared, committed): the hooks (SessionStart,
  PreToolUse, Stop, SessionEnd, PermissionRequest, PreSkillShellCommand,
  Notification, and a PreToolUse entry of its own for the question tool,
  ``AskUserQuestion``, with a 600 s timeout), each ``<absolute loopx> hook
  claude-code <event>`` — no agent id in it. PreToolUse and PreSkillShellCommand
  carry ``"onFailure": "block"``: a hook that cannot start, times out or
  prints bad JSON then blocks the tool call (2.1.335; 2.1.197 ignores the key
  and fails open, so the hook itself must never fail). ``sandbox`` runs every
  Bash command under the OS sandbox (bubblewrap on Linux):
  ``enabled``/``failIfUnavailable`` (no silent fallback to running unsandboxed),
  ``allowUnsandboxedCommands: false`` (the model's ``dangerouslyDisableSandbox``
  is ignored), ``filesystem.denyWrite`` for the board and the runtimes' settings,
  ``filesystem.denyRead`` for the person's LoopX folder (the human key).
  Unix sockets stay blocked (the default on Linux: seccomp), so a sandboxed
  command cannot reach the person's tmux server. ``permissions.deny`` gives the
  file tools (Edit, Write, Read) the same limits, sandbox or not — Claude Code
  also merges ``Edit(…)``/``Read(…)`` deny rules into the sandbox's lists and
  refuses a Bash command that names a denied path literally (a speed bump: a
  program or a variable path gets past it; the sandbox is the boundary).
  ``enabledMcpjsonServers: ["loopx"]`` approves the project's MCP server.
- ``.mcp.json`` (shared): the ``loopx`` MCP server (``command``, ``args``).
- ``.claude/settings.local.json`` (this checkout only; Claude Code keeps it out
  of git): ``env.LOOPX_AGENT`` — the agent id for the session, its hooks, its
  MCP server and its shell. A runner starting several agents on one checkout
  passes ``--settings '{"env": {"LOOPX_AGENT": "…"}}'`` (flag settings win over
  local settings).

Hooks, the MCP server and Claude Code itself run outside the sandbox, so the
agent's LoopX calls still reach the board — through MCP, not its shell.
"""

from __future__ import annotations

import json
import os
import re

from . import base

TYPE_CHECKING = False  # (annotations only; checkers read this as typing's)
if TYPE_CHECKING:
    from collections.abc import Callable

    from ..rules.workspace_bounds import Bounds

EVENTS = (
    ("SessionStart", "session-start", None, 30),
    ("PreToolUse", "pre-tool-use", "*", 30),
    ("Stop", "stop", None, 60),
    (
        "SessionEnd",
        "session-end",
        None,
        30,
    ),  # charges what the last Stop could not see yet (adapters/hooks.session_end)
    (
        "PermissionRequest",
        "permission-request",
        "*",
        600,
    ),  # the runtime's own question joins the person's queue (2.1.335)
    ("PreSkillShellCommand", "pre-skill-shell-command", "*", 30),  # skills' `!` shell commands (2.1.335)
    (
        "PreToolUse",
        "question",
        "AskUserQuestion",
        600,
    ),  # Claude's question tool answered from the board (adapters/hooks.question)
    ("Notification", "notification", None, 30),  # "Claude needs you" reaches the person's notification command
)
GUARDS = ("PreToolUse", "PreSkillShellCommand")  # events that guard an action: a failed hook blocks it

# Paths relative to the project root (Claude Code resolves project settings'
# sandbox paths against it; permission rules starting with "/" likewise).
# Not all of .claude/: the sandbox mounts its own read-only guards inside it
# (.claude/commands, …) and cannot create them under a read-only .claude
# ("bwrap: Can't create file at …/.claude/commands", 2.1.197).
GUARDED_DIRS = (".loopx", ".codex")
GUARDED_FILES = (".mcp.json", ".claude/settings.json", ".claude/settings.local.json")
GUARDED = GUARDED_DIRS + GUARDED_FILES


class SettingsError(base.SettingsConflict):
    """The file says something LoopX's entries would contradict (exit 5)."""


class MalformedSettings(SettingsError, base.SettingsMalformed):
    """The file is not JSON at all (exit 3): nothing is written."""


def load_object(before: str | None) -> dict:
    if before is None or not before.strip():
        return {}
    try:
        data = json.loads(before)
    except ValueError as exc:
        raise MalformedSettings(f"is not valid JSON ({exc}); fix it and run init again") from None
    if not isinstance(data, dict):
        raise SettingsError("is not a JSON object")
    return data


def dump(data: dict, before: str | None) -> str:
    return json.dumps(data, indent=_indent(before), ensure_ascii=False) + "\n"


def _indent(text: str | None) -> str | int:
    """The file's own indentation (2 spaces for a new file)."""
    for line in (text or "").splitlines()[1:]:
        stripped = line.lstrip(" \t")
        if stripped and stripped != line:
            lead = line[: len(line) - len(stripped)]
            return "\t" if lead.startswith("\t") else len(lead)
    return 2


def sandbox_settings(key_dir: str) -> dict:
    return {
        "enabled": True,
        "failIfUnavailable": True,
        "allowUnsandboxedCommands": False,
        "filesystem": {"denyWrite": list(GUARDED), "denyRead": [key_dir]},
    }


def deny_rules(key_dir: str) -> list[str]:
    return [f"Edit(/{d}/**)" for d in GUARDED_DIRS] + [f"Edit(/{f})" for f in GUARDED_FILES] + [f"Read({key_dir}/**)"]


def merge_settings(
    before: str | None, commands: dict[str, str], key_dir: str, sandbox: bool, marker: Callable[[str], re.Pattern[str]]
) -> str | None:
    """New text of .claude/settings.json, or None when it already holds exactly this.
    ``sandbox`` False: ``init --no-sandbox`` (no sandbox block is written)."""
    data = load_object(before)
    original = json.loads(json.dumps(data))
    hooks = data.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise SettingsError('"hooks" is not an object')
    for event, name, matcher, timeout in EVENTS:
        _place_hook(hooks, event, matcher, marker(name), _handler(commands[name], timeout, event))
    if sandbox:
        data["sandbox"] = _merged(data.get("sandbox"), sandbox_settings(key_dir))
    # The file tools' limits hold with or without the sandbox (Claude Code also
    # refuses a Bash command that names a denied path).
    permissions = data.setdefault("permissions", {})
    if not isinstance(permissions, dict):
        raise SettingsError('"permissions" is not an object')
    deny = permissions.setdefault("deny", [])
    if not isinstance(deny, list):
        raise SettingsError('"permissions.deny" is not a list')
    deny += [rule for rule in deny_rules(key_dir) if rule not in deny]
    # Claude Code before 2.1.335 runs a skill's or slash command's `!` shell
    # command with no hook at all: off unless the person turned it on here
    # (with 2.1.335's PreSkillShellCommand hook guarding them, they may).
    data.setdefault("disableSkillShellExecution", True)
    enabled = data.setdefault("enabledMcpjsonServers", [])
    if not isinstance(enabled, list):
        raise SettingsError('"enabledMcpjsonServers" is not a list')
    if "loopx" not in enabled:
        enabled.append("loopx")
    if before is not None and data == original:
        return None
    return dump(data, before)


def _handler(command: str, timeout: int, event: str) -> dict:
    handler = {"type": "command", "command": command, "timeout": timeout}
    if event in GUARDS:
        handler["onFailure"] = "block"  # fail closed where the runtime supports it (ignored on Stop)
    return handler


def _absolute_rule(rule: object, main: str) -> object:
    """A permission rule of the main checkout's settings as flag settings must say
    it: ``Edit(/.loopx/**)`` is relative to the settings file's folder, and flag
    settings have none — Claude Code (2.1.335) read it under its shared temp folder
    (``/tmp/claude-<uid>/.loopx``) and bound a placeholder there, which another
    session removed under it ("bwrap: Can't get type of source"). ``//`` is an
    absolute path."""
    found = re.fullmatch(r"(\w+)\(/([^/].*)\)", rule) if isinstance(rule, str) else None
    return f"{found.group(1)}(/{os.path.join(main, found.group(2))})" if found else rule


def _merged(current: object, ours: dict) -> dict:
    """Ours over the person's sandbox block, keeping their other keys and paths."""
    if not isinstance(current, dict):
        return ours
    out = dict(current, **{k: v for k, v in ours.items() if k != "filesystem"})
    fs = dict(current.get("filesystem") or {})
    for key, paths in ours["filesystem"].items():
        have = list(fs.get(key) or [])
        fs[key] = have + [p for p in paths if p not in have]
    out["filesystem"] = fs
    return out


def _place_hook(hooks: dict, event: str, matcher: str | None, marker: re.Pattern[str], handler: dict) -> None:
    groups = hooks.setdefault(event, [])
    if not isinstance(groups, list):
        raise SettingsError(f'"hooks.{event}" is not a list')
    found = False
    for group in groups:
        handlers = group.get("hooks") if isinstance(group, dict) else None
        if not isinstance(handlers, list):
            continue
        for i, existing in enumerate(list(handlers)):
            if (
                isinstance(existing, dict)
                and isinstance(existing.get("command"), str)
                and marker.search(existing["command"])
            ):
                if found:
                    handlers.remove(existing)  # a duplicate of ours: keep one
                    continue
                handlers[handlers.index(existing)] = handler
                found = True
    hooks[event] = [g for g in groups if not (isinstance(g, dict) and g.get("hooks") == [])]
    if not found:
        group = {"hooks": [handler]}
        if matcher is not None:
            group = {"matcher": matcher, **group}
        hooks[event].append(group)


def merge_mcp_json(before: str | None, exe: list[str], db: str | None) -> str | None:
    data = load_object(before)
    servers = data.setdefault("mcpServers", {})
    if not isinstance(servers, dict):
        raise SettingsError('"mcpServers" is not an object')
    entry: dict[str, object] = {"command": exe[0], "args": [*exe[1:], "mcp"]}
    if db:
        entry["env"] = {"LOOPX_DB": db}
    if servers.get("loopx") == entry:
        return None
    servers["loopx"] = entry
    return dump(data, before)


def merge_local(before: str | None, agent: str) -> str | None:
    data = load_object(before)
    env = data.setdefault("env", {})
    if not isinstance(env, dict):
        raise SettingsError('"env" is not an object')
    if env.get("LOOPX_AGENT") == agent:
        return None
    env["LOOPX_AGENT"] = agent
    return dump(data, before)


# -- a turn in a card's workspace (issue #26) ---------------------------------------------------


def workspace_settings(bounds: Bounds, main_settings: dict, key_dir: str) -> dict:
    """What a turn started in a card's workspace gets as its ``--settings`` (flag
    settings: the agent cannot edit them), the runner passing
    ``--setting-sources user`` beside them so that the workspace's own
    ``.claude/settings*.json`` — whatever an agent committed or planted there —
    count for nothing: the main checkout's settings, whose hooks run outside the
    sandbox, are the ones that hold.

    Claude Code makes the main repository's whole git folder writable from a
    linked worktree. So, when the main checkout's settings turn the sandbox on:
    the same sandbox, plus writable exactly the git paths a commit in this
    worktree needs (``rules/workspace_bounds.writable``), read-only everything
    else git would let it move (``guarded``: the base branch, other cards'
    branches, reflogs and workspaces, ``refs/loopx``, ``packed-refs`` — made to
    exist first —, the main checkout's HEAD and index), the main checkout's
    ground spelled absolutely, and the runtimes' settings inside the workspace,
    existing or not."""
    from ..rules import workspace_bounds

    out = {k: v for k, v in main_settings.items() if k not in ("env", "sandbox")}
    if isinstance(out.get("permissions"), dict):
        out["permissions"] = {
            k: [_absolute_rule(r, bounds.main) for r in v] if isinstance(v, list) else v
            for k, v in out["permissions"].items()
        }
    sandbox = main_settings.get("sandbox")
    if isinstance(sandbox, dict) and sandbox.get("enabled") is True:
        ours = _merged(sandbox, sandbox_settings(key_dir))
        workspace_bounds.prepare(
            bounds
        )  # packed-refs, packed-only refs' loose files, the ref folders: paths to keep or open
        ours["filesystem"] = {
            **ours["filesystem"],
            "allowWrite": [
                *(
                    os.path.join(bounds.main, p)
                    for p in ours["filesystem"].get("allowWrite") or []
                    if isinstance(p, str)
                ),  # the person's own, from the main checkout
                *(p for p in workspace_bounds.writable(bounds) if p != bounds.workspace),
            ],
            "denyWrite": [
                *(p for p in (os.path.join(bounds.main, rel) for rel in GUARDED) if os.path.exists(p)),
                *workspace_bounds.guarded(bounds),
                *workspace_bounds.settings_files(bounds),
            ],
        }
        out["sandbox"] = ours
    return out
