"""``loopx init --for claude-code|codex``: register the agent and write the
runtime's configuration, merged into what the project already has.

- Claude Code: ``.claude/settings.json`` gets ``hooks.SessionStart``,
  ``hooks.PreToolUse`` (matcher ``*``) and ``hooks.Stop`` entries running
  ``LOOPX_AGENT=<id> loopx hook claude-code <event>`` (structure: event →
  matcher groups → ``{"type": "command", "command", "timeout"}``; Claude Code
  settings docs, https://code.claude.com/docs/en/hooks "Configuration"). Other
  keys and the user's own hooks are kept; our entry is found again by its
  command and replaced in place. CLAUDE.md gets a delimited section.
- Codex: ``.codex/config.toml`` (the project layer; Codex reads it in trusted
  projects) gets ``[mcp_servers.loopx]`` (``command``, ``args``, ``env``:
  Codex ``docs/config.md`` "MCP servers") and the same three hooks as
  ``[[hooks.<Event>]]`` matcher groups with ``[[hooks.<Event>.hooks]]``
  handlers (``codex-rs/config/src/hook_config.rs``: ``HooksToml`` flattens the
  PascalCase events into ``[hooks]``; a handler is ``type = "command"``,
  ``command``, ``timeout`` in seconds). The file is edited as text — one block
  between ``# loopx:begin`` and ``# loopx:end`` — so the user's comments and
  layout survive; the result is parsed with ``tomllib`` before it is written.
  AGENTS.md (read by Codex before work, https://agents.md) gets a delimited
  section.

Markdown sections sit between ``<!-- loopx:begin -->`` and
``<!-- loopx:end -->`` and are replaced in place. Running init twice changes
nothing; ``dry_run`` returns unified diffs and writes nothing.
"""

from __future__ import annotations

import difflib
import json
import os
import re
import shlex
import shutil
import sys
import tomllib
from pathlib import Path

MD_BEGIN, MD_END = "<!-- loopx:begin -->", "<!-- loopx:end -->"
TOML_BEGIN = "# loopx:begin — managed by `loopx init --for codex`; this block is rewritten on every init"
TOML_END = "# loopx:end"
EVENTS = (("SessionStart", "session-start", None, 30), ("PreToolUse", "pre-tool-use", "*", 30), ("Stop", "stop", None, 60))


class SetupError(Exception):
    pass


class FileChange:
    def __init__(self, path: Path, root: Path, before: str | None, after: str | None, problem: str | None = None):
        self.path, self.before, self.after, self.problem = path, before, after, problem
        try:
            self.rel = str(path.relative_to(root))
        except ValueError:
            self.rel = str(path)

    @property
    def action(self) -> str:
        if self.problem:
            return "conflict"
        if self.before is None:
            return "create"
        return "unchanged" if self.after is None or self.after == self.before else "update"

    def diff(self) -> str:
        if self.action not in ("create", "update"):
            return ""
        lines = difflib.unified_diff(
            (self.before or "").splitlines(keepends=True),
            self.after.splitlines(keepends=True),
            fromfile="/dev/null" if self.before is None else f"a/{self.rel}",
            tofile=f"b/{self.rel}",
        )
        return "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines)


class SetupResult:
    def __init__(self, runtime: str, agent: str, capabilities: list[str], agent_action: str, files: list[FileChange], notes: list[str], dry_run: bool):
        self.runtime, self.agent, self.capabilities, self.agent_action = runtime, agent, capabilities, agent_action
        self.files, self.notes, self.dry_run = files, notes, dry_run

    @property
    def changed(self) -> bool:
        return self.agent_action not in ("unchanged",) or any(f.action in ("create", "update") for f in self.files)

    def to_json(self) -> dict:
        return {
            "runtime": self.runtime,
            "agent": {"id": self.agent, "capabilities": self.capabilities, "action": self.agent_action},
            "files": [{"path": f.rel, "action": f.action, **({"problem": f.problem} if f.problem else {})} for f in self.files],
            "dry_run": self.dry_run,
            "changed": self.changed,
            "diff": "".join(f.diff() for f in self.files) if self.dry_run else "",
            "notes": self.notes,
        }

    @property
    def text(self) -> str:
        verb = {"create": "would create", "update": "would update"} if self.dry_run else {"create": "created", "update": "updated"}
        caps = ", ".join(self.capabilities) or "no scopes"
        lines = [f"{self.runtime}: agent {self.agent} ({caps}) {self.agent_action}"]
        for f in self.files:
            if f.problem:
                lines.append(f"  ! {f.rel}: {f.problem}")
            else:
                lines.append(f"  {verb.get(f.action, f.action)} {f.rel}")
        if self.dry_run:
            diff = "".join(f.diff() for f in self.files)
            lines.append(diff.rstrip("\n") if diff else "(no file changes)")
            lines.append("dry run: nothing was written")
        lines += [f"note: {n}" for n in self.notes]
        return "\n".join(lines)


# -- the agent -------------------------------------------------------------------

def default_agent_id(runtime: str) -> str:
    try:
        import getpass

        user = getpass.getuser()
    except Exception:
        user = "user"
    user = re.sub(r"[^A-Za-z0-9._-]+", "-", user).strip("-._") or "user"
    return f"{runtime}-{user}"[:64]


def _ask(prompt: str, default: str) -> str:
    sys.stderr.write(f"{prompt} [{default}]: ")
    sys.stderr.flush()
    line = sys.stdin.readline()
    return line.strip() or default


# -- file merging ---------------------------------------------------------------------

def hook_command(runtime: str, event: str, agent: str, exe: str, db: str | None) -> str:
    env = f"LOOPX_AGENT={shlex.quote(agent)}"
    if db:
        env += f" LOOPX_DB={shlex.quote(db)}"
    return f"{env} {exe} hook {runtime} {event}"


def _marker(runtime: str, event: str) -> re.Pattern:
    return re.compile(rf"\bhook\s+{re.escape(runtime)}\s+{re.escape(event)}\b")


def merge_claude_settings(before: str | None, commands: dict[str, str]) -> str | None:
    """New text of .claude/settings.json, or None when it already holds exactly this."""
    data = {}
    if before is not None and before.strip():
        try:
            data = json.loads(before)
        except ValueError as exc:
            raise SetupError(f"is not valid JSON ({exc}); fix it and run init again") from None
    if not isinstance(data, dict):
        raise SetupError("is not a JSON object")
    original = json.loads(json.dumps(data))
    hooks = data.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise SetupError('"hooks" is not an object')
    for event, name, matcher, timeout in EVENTS:
        groups = hooks.setdefault(event, [])
        if not isinstance(groups, list):
            raise SetupError(f'"hooks.{event}" is not a list')
        marker = _marker("claude-code", name)
        found = False
        emptied = []
        for group in groups:
            handlers = group.get("hooks") if isinstance(group, dict) else None
            if not isinstance(handlers, list):
                continue
            for handler in list(handlers):
                if isinstance(handler, dict) and isinstance(handler.get("command"), str) and marker.search(handler["command"]):
                    if found:
                        handlers.remove(handler)  # a duplicate of ours: keep one
                        if not handlers:
                            emptied.append(group)
                        continue
                    handler["type"] = "command"
                    handler["command"] = commands[name]
                    handler.setdefault("timeout", timeout)
                    found = True
        hooks[event] = [g for g in groups if not any(g is e for e in emptied)]
        if not found:
            group = {"hooks": [{"type": "command", "command": commands[name], "timeout": timeout}]}
            if matcher is not None:
                group = {"matcher": matcher, **group}
            hooks[event].append(group)
    if before is not None and data == original:
        return None
    return json.dumps(data, indent=_indent(before), ensure_ascii=False) + "\n"


def _indent(text: str | None):
    """The file's own indentation (2 spaces for a new file)."""
    for line in (text or "").splitlines()[1:]:
        stripped = line.lstrip(" \t")
        if stripped and stripped != line:
            lead = line[: len(line) - len(stripped)]
            return "\t" if lead.startswith("\t") else len(lead)
    return 2


def merge_markdown(before: str | None, body: str) -> str:
    block = f"{MD_BEGIN}\n{body.strip()}\n{MD_END}\n"
    text = before or ""
    start = text.find(MD_BEGIN)
    end = text.find(MD_END, start + 1) if start != -1 else -1
    if start != -1 and end != -1:
        tail = text[end + len(MD_END) :]
        if tail.startswith("\n"):
            tail = tail[1:]
        return text[:start] + block + tail
    if not text:
        return block
    return text.rstrip("\n") + "\n\n" + block


def _toml_str(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)  # a TOML basic string


def codex_block(agent: str, exe: list[str], commands: dict[str, str], db: str | None) -> str:
    env = {"LOOPX_AGENT": agent, **({"LOOPX_DB": db} if db else {})}
    lines = [
        TOML_BEGIN,
        "[mcp_servers.loopx]",
        f"command = {_toml_str(exe[0])}",
        "args = [" + ", ".join(_toml_str(a) for a in [*exe[1:], "mcp"]) + "]",
        "env = { " + ", ".join(f"{k} = {_toml_str(v)}" for k, v in env.items()) + " }",
    ]
    for event, name, _matcher, timeout in EVENTS:
        lines += [
            "",
            f"[[hooks.{event}]]",
            f"[[hooks.{event}.hooks]]",
            'type = "command"',
            f"command = {_toml_str(commands[name])}",
            f"timeout = {timeout}",
        ]
    lines.append(TOML_END)
    return "\n".join(lines) + "\n"


def merge_codex_config(before: str | None, block: str) -> str:
    text = before or ""
    if text.strip():
        try:
            tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise SetupError(f"is not valid TOML ({exc}); fix it and run init again") from None
    start = text.find(TOML_BEGIN[: len("# loopx:begin")])
    end = text.find(TOML_END + "\n", start + 1) if start != -1 else -1
    if end == -1 and start != -1 and text.endswith(TOML_END):
        end = len(text) - len(TOML_END)
    if start != -1 and end != -1:
        after = text[:start] + block + text[end + len(TOML_END) + 1 :]
    elif not text:
        after = block
    else:
        after = text.rstrip("\n") + "\n\n" + block
    try:
        parsed = tomllib.loads(after)
    except tomllib.TOMLDecodeError as exc:
        raise SetupError(f"would not be valid TOML with LoopX's entries ({exc}): is [mcp_servers.loopx] or a loopx hook already defined outside the loopx block?") from None
    if "loopx" not in parsed.get("mcp_servers", {}):
        raise SetupError("the loopx MCP server entry did not land in [mcp_servers]")
    return after


# -- the sections -------------------------------------------------------------------------

def _section(runtime: str, agent: str) -> str:
    tools = (
        "The `loopx` MCP server offers the same turn as tools (next, claim, writeback, gate_ask, gate_status, handoff, context)."
        if runtime == "codex"
        else "The hooks in `.claude/settings.json` enforce it."
    )
    return f"""## LoopX (agent `{agent}`)

This project's work is tracked on a LoopX board. Work in turns, and keep the board true:

1. Start of a turn: `loopx next --agent {agent}` (add `--claim` to take the best ready card), then
   `loopx context LX-n` for the card's continuation: objective, next action, todos, last evidence.
2. Do the card's next action. Before anything that needs authority (git push, deploys, publishing,
   writing or deleting outside the project) expect a check: a denial names a gate a human must
   answer — wait with `loopx gate status G-n`, never work around it.
3. End of a turn: `loopx writeback LX-n --agent {agent} --summary "what this turn did" [--artifact PATH]… [--next "the next step"]`.
   When the card is finished: `loopx done LX-n --agent {agent} --summary "…"`.
4. Handing over: `loopx handoff LX-n --agent {agent} --to OTHER --summary "…"`.

Only a person answers gates. {tools} This text is advice; the hooks are enforcement."""


# -- init ----------------------------------------------------------------------------

def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.loopx-tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def _executable() -> list[str]:
    """How the runtime should call us: the console script when it is on PATH."""
    if shutil.which("loopx"):
        return ["loopx"]
    return [sys.executable, "-m", "loopx_core"]


def init_runtime(
    store,
    runtime: str,
    *,
    agent: str | None = None,
    can: list[str] | None = None,
    dry_run: bool = False,
    root: Path | None = None,
    location=None,
    person=None,
) -> SetupResult:
    """Plan (and unless ``dry_run``, apply) a runtime's setup. ``store`` is None
    only for a dry run on a board that does not exist yet (``location`` says where)."""
    from ..agents import add_agent
    from ..errors import Conflict, InvalidInput
    from ..inputs import validate
    from ..models import Agent

    can = list(can or [])
    if agent is None and sys.stdin.isatty():
        agent = _ask(f"agent id for {runtime}", default_agent_id(runtime))
        if not can:
            caps = _ask("its capabilities (scopes, space-separated, e.g. git:push)", "")
            can = caps.replace(",", " ").split()
    agent = agent or default_agent_id(runtime)
    data = validate("agent", {"id": agent, "runtime": runtime, "can": can})
    existing, existing_caps, existing_runtime = None, [], None
    if store is not None:
        with store.read():
            existing = Agent.get_or_none(Agent.id == data["id"])
            existing_caps = list(existing.capabilities or []) if existing else []
            existing_runtime = existing.runtime if existing else None
            if existing is not None:  # keep its watch folders and token window
                data.update(watch=list(existing.watch or []), tokens=existing.token_limit, window=existing.window_seconds)
    if existing is not None and not can:
        data["can"] = existing_caps  # keep what it may do unless told otherwise
    caps = sorted(set(data["can"]))
    location = store.location if store is not None else location
    root = root or location.project_root or Path.cwd()
    db = location.url if location.source in ("flag", "env") else None
    exe = _executable()
    exe_text = " ".join(shlex.quote(e) for e in exe)
    commands = {name: hook_command(runtime, name, data["id"], exe_text, db) for _, name, _, _ in EVENTS}
    files: list[FileChange] = []
    notes: list[str] = []

    def plan(path: Path, make) -> None:
        before = _read(path)
        try:
            after = make(before)
        except SetupError as exc:
            files.append(FileChange(path, root, before, None, str(exc)))
            return
        files.append(FileChange(path, root, before, after))

    if runtime == "claude-code":
        plan(root / ".claude" / "settings.json", lambda before: merge_claude_settings(before, commands))
        plan(root / "CLAUDE.md", lambda before: merge_markdown(before, _section(runtime, data["id"])))
        notes.append("Claude Code reads hooks when a session starts: restart it, or review them under /hooks")
    elif runtime == "codex":
        plan(root / ".codex" / "config.toml", lambda before: merge_codex_config(before, codex_block(data["id"], exe, commands, db)))
        plan(root / "AGENTS.md", lambda before: merge_markdown(before, _section(runtime, data["id"])))
        notes.append("Codex reads .codex/config.toml only in a trusted project, and runs new hooks only once you trust them (it asks at the next start)")
    else:  # pragma: no cover - the parser only offers the two
        raise InvalidInput(f"unknown runtime {runtime!r}", "use --for claude-code or --for codex")
    if exe[0] != "loopx":
        notes.append(f"`loopx` is not on PATH, so the hooks call {exe_text}")
    conflicts = [f for f in files if f.problem]
    if conflicts:
        raise Conflict(
            "; ".join(f"{f.rel} {f.problem}" for f in conflicts),
            "nothing was changed; fix the file and run `loopx init --for " + runtime + "` again",
            code="setup_conflict",
            data={"setup": SetupResult(runtime, data["id"], caps, "unchanged", files, notes, dry_run).to_json()},
        )
    if existing is None:
        action = "would be registered" if dry_run else "registered"
    elif caps != sorted(existing_caps) or existing_runtime != runtime:
        action = "would be updated" if dry_run else "updated"
    else:
        action = "unchanged"
    if not dry_run and action != "unchanged":
        add_agent(store, {**data, "can": caps}, person)  # a person's signed decision (agents.add_agent refuses anything else)

    if not dry_run:
        for change in files:
            if change.action in ("create", "update"):
                _write(change.path, change.after)
    return SetupResult(runtime, data["id"], caps, action, files, notes, dry_run)

