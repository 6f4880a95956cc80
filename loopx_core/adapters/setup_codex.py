"""What ``loopx init --for codex`` writes, as pure functions of the old text.

Looked up in the source of Codex (github.com/openai/codex, ``codex-rs``) and
tried against the real ``@openai/codex`` 0.171.0 binary (``tests/e2e``):

- ``.codex/config.toml`` (the project layer, read only in a trusted project),
  edited as text between markers so the person's comments survive:
  - a top block with ``default_permissions = "loopx"`` (a top-level key, so it
    must stand before the first table), selecting the permission profile below;
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
  - ``[[hooks.<Event>]]`` groups (``config/src/hook_config.rs``).
- ``$CODEX_HOME/config.toml`` (the person's own, default ``~/.codex``), one
  block per project: ``[projects."<root>"] trust_level = "trusted"`` (without
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

EVENTS = (("SessionStart", "session-start", None, 30), ("PreToolUse", "pre-tool-use", "*", 30), ("Stop", "stop", None, 60))
TOP_BEGIN = "# loopx:begin-top — managed by `loopx init --for codex` (the permission profile below)"
TOP_END = "# loopx:end-top"
BEGIN = "# loopx:begin — managed by `loopx init --for codex`; this block is rewritten on every init"
END = "# loopx:end"
# Read-only inside the writable project. Only paths that exist when init runs:
# Codex's bwrap fails to start a command (now and then, "Can't bind mount …
# Unable to remount destination") when a listed path is missing (0.171).
READ_ONLY = (".loopx", ".claude", ".mcp.json")


class ConfigError(Exception):
    pass


def _toml_str(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)  # a TOML basic string


def block(agent: str, exe: list[str], commands: dict[str, str], db: str | None, key_dir: str | None, root: Path) -> str:
    env = {"LOOPX_AGENT": agent, **({"LOOPX_DB": db} if db else {})}
    lines = [
        BEGIN,
        "[mcp_servers.loopx]",
        f"command = {_toml_str(exe[0])}",
        "args = [" + ", ".join(_toml_str(a) for a in [*exe[1:], "mcp"]) + "]",
        "env = { " + ", ".join(f"{k} = {_toml_str(v)}" for k, v in env.items()) + " }",
        "required = true",
        # LoopX's tools need no prompt: the operators behind them check authority,
        # and `codex exec` (approval policy "never") fails a tool that needs one.
        'default_tools_approval_mode = "approve"',
    ]
    if key_dir is not None:
        lines += [
            "",
            "[permissions.loopx]",
            'extends = ":workspace"',
            "[permissions.loopx.filesystem]",
            f'{_toml_str(key_dir)} = "deny"',
            '[permissions.loopx.filesystem.":workspace_roots"]',
            *(f'{_toml_str(p)} = "read"' for p in READ_ONLY if (root / p).exists()),
        ]
    for event, name, matcher, timeout in EVENTS:
        lines += ["", f"[[hooks.{event}]]"]
        if matcher is not None:
            lines.append(f"matcher = {_toml_str(matcher)}")
        lines += [f"[[hooks.{event}.hooks]]", 'type = "command"', f"command = {_toml_str(commands[name])}", f"timeout = {timeout}"]
    lines.append(END)
    return "\n".join(lines) + "\n"


def _cut(text: str, begin: str, end: str) -> tuple[str, str, str] | None:
    """(before, block, after) around a managed block, or None."""
    start = text.find(begin[: begin.index(" —")] if " —" in begin else begin)
    if start == -1:
        return None
    stop = text.find(end, start)
    if stop == -1:
        return None
    stop += len(end)
    if text[stop : stop + 1] == "\n":
        stop += 1
    return text[:start], text[start:stop], text[stop:]


def merge_project(before: str | None, tail: str, sandbox: bool) -> str:
    text = before or ""
    if text.strip():
        try:
            old = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise ConfigError(f"is not valid TOML ({exc}); fix it and run init again") from None
    else:
        old = {}
    cut = _cut(text, TOP_BEGIN, TOP_END)
    if cut:
        text = cut[0] + cut[2]
    cut = _cut(text, BEGIN, END)
    if cut:
        text = cut[0] + tail + cut[2]
    elif text.strip():
        text = text.rstrip("\n") + "\n\n" + tail
    else:
        text = tail
    if sandbox:
        for key in ("sandbox_mode", "default_permissions"):
            if key in old and not _ours_top(before or "", key):
                raise ConfigError(f"sets `{key}` already; LoopX selects its own permission profile there. Remove it, or run init with --no-sandbox")
        text = f'{TOP_BEGIN}\ndefault_permissions = "loopx"\n{TOP_END}\n' + text
    try:
        parsed = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"would not be valid TOML with LoopX's entries ({exc}): is [mcp_servers.loopx], [permissions.loopx] or a loopx hook already defined outside the loopx block?") from None
    if "loopx" not in parsed.get("mcp_servers", {}):
        raise ConfigError("the loopx MCP server entry did not land in [mcp_servers]")
    return text


def _ours_top(text: str, key: str) -> bool:
    cut = _cut(text, TOP_BEGIN, TOP_END)
    return bool(cut and re.search(rf"^{key}\s*=", cut[1], re.M))


# -- trust, in the person's own Codex config --------------------------------------------------

def codex_home() -> Path:
    return Path(os.environ.get("CODEX_HOME") or Path.home() / ".codex")


def _canonical(value):
    if isinstance(value, dict):
        return {k: _canonical(value[k]) for k in sorted(value)}
    if isinstance(value, list):
        return [_canonical(v) for v in value]
    return value


def hook_hash(event: str, matcher: str | None, handler: dict) -> str:
    normalized = {"type": "command", "command": handler["command"], "timeout": max(1, int(handler.get("timeout") or 600)), "async": bool(handler.get("async", False))}
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
    text = before or ""
    begin, end = f"# loopx:begin {root} — managed by `loopx init --for codex`: trusts this project and LoopX's hooks in it", f"# loopx:end {root}"
    cut = _cut(text, begin, end)
    if cut:
        text = cut[0] + cut[2]
    try:
        old = tomllib.loads(text) if text.strip() else {}
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"is not valid TOML ({exc}); fix it and run init again") from None
    lines = [begin]
    project = old.get("projects", {}).get(str(root))
    if project is None:
        lines += [f"[projects.{_toml_str(str(root))}]", 'trust_level = "trusted"']
    elif project.get("trust_level") != "trusted":
        raise ConfigError(f"marks {root} as {project.get('trust_level')!r}; Codex would ignore .codex/config.toml there. Trust the project (`codex` asks at start) and run init again")
    states = old.get("hooks", {}).get("state", {})
    for key, digest in trust.items():
        if key in states:
            if states[key].get("trusted_hash") != digest:
                raise ConfigError(f"already has [hooks.state.{_toml_str(key)}] with another hash; remove that table and run init again")
            continue
        lines += ["", f"[hooks.state.{_toml_str(key)}]", f"trusted_hash = {_toml_str(digest)}"]
    lines.append(end)
    after = (text.rstrip("\n") + "\n\n" if text.strip() else "") + "\n".join(lines) + "\n"
    try:
        tomllib.loads(after)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"would not be valid TOML with LoopX's trust entries ({exc})") from None
    return after


# -- a turn in a card's workspace (issue #26) ---------------------------------------------------

def workspace_overrides(bounds, main_config: dict, key_dir: str) -> list[str]:
    """``codex exec`` arguments (``-c key=value``) for a turn started in a card's
    workspace, when the main checkout's ``.codex/config.toml`` selects LoopX's
    permission profile (``init`` without ``--no-sandbox``).

    Codex keeps the main repository's git folder read-only from a linked
    worktree, so a commit there fails ("index.lock: Read-only file system").
    The profile is given again, whole, on the command line (it replaces the
    project's, whose ``.loopx`` entry names a path a workspace does not have:
    bwrap then cannot start a command): the person's LoopX folder unreadable,
    the git paths a commit needs writable (``rules/workspace_bounds``), and
    inside them every other card's branch and reflog read-only; the runtimes'
    settings in the workspace read-only (Codex keeps ``.codex`` so by itself).
    Where the workspace has no ``.codex/config.toml`` of its own, the loopx MCP
    server comes from the main checkout's."""
    from ..rules import workspace_bounds

    args: list[str] = []
    if main_config.get("default_permissions") == "loopx":
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
            table += ', ":workspace_roots" = { ' + ", ".join(f"{_toml_str(k)} = {_toml_str(v)}" for k, v in roots.items()) + " }"
        args += ["-c", 'default_permissions="loopx"', "-c", f'permissions.loopx={{ extends = ":workspace", filesystem = {{ {table} }} }}']
    server = (main_config.get("mcp_servers") or {}).get("loopx")
    if isinstance(server, dict) and not (Path(bounds.workspace) / ".codex" / "config.toml").exists():
        args += ["-c", f"mcp_servers.loopx={_inline(server)}"]
    return args


def _inline(value) -> str:
    """A TOML inline value (tables and arrays of strings, numbers and booleans)."""
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{_toml_str(k)} = {_inline(v)}" for k, v in value.items()) + " }"
    if isinstance(value, list):
        return "[" + ", ".join(_inline(v) for v in value) + "]"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return str(value)
    return _toml_str(str(value))
