"""The runtimes a runner drives: how one bounded turn is started, what its
output says about usage, and where its transcript is.

- **claude-code**: ``claude -p PROMPT --allowedTools mcp__loopx
  --output-format stream-json --verbose --settings '{"env": {"LOOPX_AGENT":
  AGENT}}' --permission-prompt-tool mcp__loopx__permission_prompt`` (the loopx
  MCP tools usable headless; the agent's identity for its hooks and MCP
  server, over the one the checkout's local settings name; the runtime's own
  permission prompts and questions asked of the person through gates).
  The stream is one JSON object a line (the Agent SDK's ``SDKMessage``, its
  ``sdk.d.ts``): ``system``/``init`` carries ``session_id``; every
  ``assistant`` message carries its Messages-API ``usage`` (streamed: input
  and cache tokens in full, output as far as it got, the same ``message.id``
  repeated per content block); ``result`` ends the turn with the totals,
  ``total_cost_usd``, ``is_error`` and the final text. The transcript is
  ``<config>/projects/<folder>/<session_id>.jsonl`` (``CLAUDE_CONFIG_DIR``,
  default ``~/.claude``).
- **codex**: ``codex exec --json PROMPT``. The stream (``codex-rs/exec``'s
  ``exec_events``): ``thread.started`` with ``thread_id``, item events, and
  ``turn.completed`` with the turn's total ``usage`` only at its end. The
  usage of each model call is in the rollout — ``<CODEX_HOME>/sessions/
  YYYY/MM/DD/rollout-…-<thread_id>.jsonl``, ``event_msg`` ``token_count`` —
  which the runner follows while the turn runs.
- **shell**: any command. It gets the continuation packet on stdin and in
  ``LOOPX_CONTEXT``; it reports its own usage in its writebacks.

The prompt of the first two is the continuation packet (``loopx context``)
with who the agent is and the turn's id.
"""

from __future__ import annotations

import glob
import json
import os
import re
from pathlib import Path

from ..adapters import transcript
from ..rules import limits

NAMES = limits.RUNTIMES
PROMPT_TOOL = "mcp__loopx__permission_prompt"  # adapters/mcp_server.PROMPT_TOOL, as Claude Code names it


class LiveUsage:
    """What a turn has used so far, as its runtime reports it."""

    def __init__(self):
        self.best: dict[str, transcript.Call] = {}  # a model call by its identity, its largest report
        self.session: str | None = None
        self.final: dict | None = None  # the runtime's own totals at the end, when it gives them
        self.said: str | None = None  # the last thing the runtime said (for a failed turn's record)
        self.error: str | None = None

    def add(self, call: transcript.Call) -> None:
        earlier = self.best.get(call.identity)
        if earlier is None or (call.tokens_out, call.tokens_in) > (earlier.tokens_out, earlier.tokens_in):
            self.best[call.identity] = call

    @property
    def calls(self) -> list[transcript.Call]:
        return list(self.best.values())

    @property
    def tokens(self) -> int:
        live = sum(c.tokens_in + c.tokens_out for c in self.best.values())
        return max(live, self.final.get("tokens", 0)) if self.final else live

    def feed(self, line: bytes) -> None:
        """One stdout line of the runtime."""

    def poll(self, env: dict) -> None:
        """Look at what the runtime writes elsewhere (Codex's rollout)."""

    def transcript_path(self, env: dict) -> str | None:
        return None


def _event(line: bytes) -> dict | None:
    try:
        value = json.loads(line)
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


def last_step(output: str) -> str | None:
    """What a turn's output says it did last, as a person reads it (a failed
    turn's record): the runtime's last words, its error, or the tool it
    called last (``rules.tool_text``) — read from Claude Code's stream-json
    or Codex's ``--json`` events, newest first; a plain line as itself (a
    shell agent). None: nothing to say. Never a raw JSON line."""
    from ..rules.tool_text import readable

    for line in reversed(output.splitlines()):
        line = line.strip()
        if not line:
            continue
        if not line.startswith("{"):
            return line
        event = _event(line.encode("utf-8", "surrogateescape"))
        if event is None:
            continue  # (the tail's first line, cut mid-way)
        kind = event.get("type")
        if kind == "result" and isinstance(event.get("result"), str) and event["result"].strip():
            return ("error: " if event.get("is_error") else "said: ") + event["result"].strip()
        if kind in ("error", "turn.failed"):
            detail = event["error"] if isinstance(event.get("error"), dict) else event
            return f"error: {detail.get('message') or kind}"
        message = event.get("message") if kind == "assistant" else None
        blocks = message.get("content") if isinstance(message, dict) else None
        if isinstance(blocks, list):
            for block in reversed(blocks):
                if not isinstance(block, dict):
                    continue
                if block.get("type") == "text" and isinstance(block.get("text"), str) and block["text"].strip():
                    return "said: " + block["text"].strip()
                if block.get("type") == "tool_use" and isinstance(block.get("name"), str):
                    return f"called {block['name']}: {readable(block['name'], block.get('input'))}"
        item = event.get("item") if kind in ("item.completed", "item.started") else None
        if isinstance(item, dict):
            if item.get("type") == "agent_message" and isinstance(item.get("text"), str):
                return "said: " + item["text"].strip()
            if item.get("type") == "command_execution" and isinstance(item.get("command"), str):
                return f"ran: {readable('shell', {'command': item['command']})}"
            if item.get("type") == "error" and isinstance(item.get("message"), str):
                return f"error: {item['message']}"
    return None


class ClaudeUsage(LiveUsage):
    def feed(self, line: bytes) -> None:
        event = _event(line)
        if event is None:
            return
        kind = event.get("type")
        if isinstance(event.get("session_id"), str):
            self.session = event["session_id"]
        if kind == "assistant":
            message = event.get("message")
            usage = message.get("usage") if isinstance(message, dict) else None
            if isinstance(message, dict) and isinstance(usage, dict):
                identity = f"{message.get('id') or ''}:{event.get('request_id') or ''}"
                self.add(transcript.claude_call(message, usage, identity if identity != ":" else str(event.get("uuid"))))
            text = _claude_text(message)
            if text:
                self.said = text
        elif kind == "result":
            usage = event.get("usage")
            if not isinstance(usage, dict):
                usage = {}
            total = sum(v for k, v in usage.items() if k in ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens", "output_tokens") and type(v) is int)
            self.final = {"tokens": total, "usd": event.get("total_cost_usd"), "subtype": event.get("subtype"), "is_error": event.get("is_error")}
            if isinstance(event.get("result"), str) and event["result"].strip():
                self.said = event["result"]
            if event.get("is_error") or event.get("subtype") != "success":
                self.error = f"claude ended with {event.get('subtype')}" + (f": {event.get('result')}" if isinstance(event.get("result"), str) else "")

    def transcript_path(self, env: dict) -> str | None:
        if not self.session:
            return None
        base = env.get("CLAUDE_CONFIG_DIR") or os.path.join(env.get("HOME") or os.path.expanduser("~"), ".claude")
        found = sorted(glob.glob(os.path.join(glob.escape(base), "projects", "*", glob.escape(self.session) + ".jsonl")))
        return found[0] if found else None


def _claude_text(message) -> str | None:
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, list):
        text = "".join(b.get("text", "") for b in content if isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str))
        return text.strip() or None
    return content.strip() or None if isinstance(content, str) else None


class CodexUsage(LiveUsage):
    def __init__(self):
        super().__init__()
        self._rollout: str | None = None
        self._offset = 0
        self._line = 0
        self._model: str | None = None

    def feed(self, line: bytes) -> None:
        event = _event(line)
        if event is None:
            return
        kind = event.get("type")
        if kind == "thread.started" and isinstance(event.get("thread_id"), str):
            self.session = event["thread_id"]
        elif kind == "turn.completed" and isinstance(event.get("usage"), dict):
            usage = event["usage"]
            self.final = {"tokens": sum(v for k, v in usage.items() if k in ("input_tokens", "output_tokens") and type(v) is int)}
        elif kind in ("turn.failed", "error"):
            detail = event.get("error")
            if not isinstance(detail, dict):
                detail = event
            self.error = f"codex: {detail.get('message') or kind}"
        elif kind == "item.completed" and isinstance(event.get("item"), dict):
            item = event["item"]
            if item.get("type") == "agent_message" and isinstance(item.get("text"), str):
                self.said = item["text"]

    def transcript_path(self, env: dict) -> str | None:
        if not self.session:
            return None
        if self._rollout is None:
            home = env.get("CODEX_HOME") or os.path.join(env.get("HOME") or os.path.expanduser("~"), ".codex")
            found = sorted(glob.glob(os.path.join(glob.escape(home), "sessions", "**", f"rollout-*-{glob.escape(self.session)}.jsonl"), recursive=True))
            self._rollout = found[0] if found else None
        return self._rollout

    def poll(self, env: dict) -> None:
        """Follow the rollout: every model call reports a ``token_count`` there as it ends."""
        path = self.transcript_path(env)
        if path is None:
            return
        try:
            with open(path, "rb") as fh:
                fh.seek(self._offset)
                data = fh.read(8 * 1024 * 1024)
        except OSError:
            return
        end = data.rfind(b"\n")
        if end < 0:
            return
        self._offset += end + 1
        for raw in data[: end + 1].split(b"\n"):
            if not raw.strip():
                continue
            self._line += 1
            entry = _event(raw)
            payload = entry.get("payload") if entry else None
            if not entry or not isinstance(payload, dict):
                continue
            if entry.get("type") == "turn_context" and isinstance(payload.get("model"), str):
                self._model = payload["model"]
            elif entry.get("type") == "event_msg" and payload.get("type") == "token_count":
                info = payload.get("info")
                usage = info.get("last_token_usage") if isinstance(info, dict) else None
                if isinstance(usage, dict):
                    self.add(transcript.codex_call(usage, self._model, f"line:{self._line - 1}"))


class Runtime:
    """How to start one turn of a runtime."""

    name = "shell"
    project: str | None = None  # the board's project folder (the runner sets it)
    measured = False  # its usage is measured from a transcript after the turn
    usage_class = LiveUsage

    @property
    def in_workspace(self) -> bool:
        """Its turns run in the card's workspace (issue #26). Claude Code's and Codex's
        hooks, MCP server and sandbox come from settings in the checkout, which a
        worktree lacks: their `argv` carries the main checkout's, bounded to the
        workspace (rules/workspace_bounds); a runtime that could not answers
        False and runs in the project folder, never in a worktree without hooks."""
        return True

    def __init__(self, extra: list[str], binary: str | None = None, agent: str = ""):
        self.extra = list(extra)
        self.binary = binary
        self.agent = agent

    def argv(self, prompt: str, cwd=None) -> list[str]:
        """The command of one turn started in ``cwd``."""
        return list(self.extra)

    def by_hand(self, cwd) -> list[str]:
        """The command a person runs interactively in the workspace ``cwd``
        (``loopx workspace start``), bounded as the runner's turns there."""
        raise NotImplementedError(self.name)

    def stdin(self, packet: str) -> str | None:
        return packet

    def environ(self, cwd=None) -> dict[str, str]:
        """What the turn started in ``cwd`` gets in its environment besides the
        runner's (may write files the runtime reads; raises OSError or a setup error).
        In a card's workspace, git's object quarantine: the turn's objects go to the
        workspace's own folder, the shared store is read only (issue #38)."""
        bounds = _workspace(cwd)
        if bounds is None:
            return {}
        from ..workspace import quarantine

        return quarantine.turn_env(bounds.common, bounds.admin)

    def live(self) -> LiveUsage:
        return self.usage_class()

    def identity_problem(self, root) -> str | None:
        """Why this runtime, started in ``root``, would not act as the runner's agent."""
        return None


class ClaudeCode(Runtime):
    name = "claude-code"
    measured = True
    usage_class = ClaudeUsage

    def argv(self, prompt: str, cwd=None) -> list[str]:
        # ``--allowedTools mcp__loopx``: `claude -p` denies a tool that needs a
        # permission nobody is there to give, and the loopx MCP tools are how a
        # sandboxed agent writes back (the operators behind them check authority).
        # ``--settings``: the checkout's .claude/settings.local.json names the agent
        # `init` set up, and settings' env wins over the process's: without the flag
        # settings (which win over local settings) the hooks and the MCP server of
        # another agent's runner would act as that agent.
        bounds = _workspace(cwd)
        root = Path(bounds.main) if bounds is not None else (Path(cwd) if cwd else Path.cwd())
        return [
            self.binary or "claude", "-p", prompt, "--allowedTools", "mcp__loopx",
            "--output-format", "stream-json", "--verbose", *self._bounded(cwd), *self._prompt_tool(root), *self.extra,
        ]

    def by_hand(self, cwd) -> list[str]:
        return [self.binary or "claude", *self._bounded(cwd), *self.extra]

    def _bounded(self, cwd) -> list[str]:
        """``--settings`` naming the agent; in a workspace, the main checkout's hooks,
        sandbox (bounded to the workspace) and loopx server, and nothing of the workspace's."""
        settings, more = {"env": {"LOOPX_AGENT": self.agent}}, []
        bounds = _workspace(cwd)
        if bounds is not None:
            from ..adapters import setup_claude
            from ..adapters.setup import key_folder

            settings.update(setup_claude.workspace_settings(bounds, _json(Path(bounds.main, ".claude", "settings.json")), key_folder()))
            # the workspace's own settings and MCP servers count for nothing (an agent
            # writes the workspace): the main checkout's hooks, sandbox and loopx server hold
            more = ["--setting-sources", "user", "--strict-mcp-config"]
            if Path(bounds.main, ".mcp.json").is_file():
                more += ["--mcp-config", str(Path(bounds.main, ".mcp.json"))]
        return ["--settings", json.dumps(settings), *more]

    def _prompt_tool(self, root: Path) -> list[str]:
        """``--permission-prompt-tool mcp__loopx__permission_prompt`` when ``root``'s
        .mcp.json names the loopx server (``init --for claude-code``) and the person
        named no prompt tool of their own: headless, Claude Code then asks the
        person (a gate) instead of denying at once — 2.1.197 runs no
        PermissionRequest hook under `-p` — and offers the model its question tool,
        which it leaves out of `-p` without one (DESIGN §8)."""
        if any(a == "--permission-prompt-tool" or a.startswith("--permission-prompt-tool=") for a in self.extra):
            return []
        servers = _json(root / ".mcp.json").get("mcpServers")
        if not isinstance(servers, dict) or "loopx" not in servers:
            return []
        return ["--permission-prompt-tool", PROMPT_TOOL]

    def stdin(self, packet: str) -> str | None:
        return None

    def environ(self, cwd=None) -> dict[str, str]:
        """In a card's workspace: the object quarantine (as every runtime), and git
        told to ignore the placeholders Claude Code's sandbox binds there, or the
        agent's `git add -A` fails (#39, workspace/excludes)."""
        bounds = _workspace(cwd)
        if bounds is None:
            return {}
        from ..workspace import excludes

        return {**super().environ(cwd), **excludes.turn_env(bounds, os.environ)}


class Codex(Runtime):
    name = "codex"
    measured = True
    usage_class = CodexUsage

    def argv(self, prompt: str, cwd=None) -> list[str]:
        return [self.binary or "codex", "exec", "--json", *self._bounded(cwd), prompt]

    def by_hand(self, cwd) -> list[str]:
        return [self.binary or "codex", *self._bounded(cwd)]

    def _bounded(self, cwd) -> list[str]:
        """In a workspace, LoopX's permission profile bounded to it (``-c``), and the
        person's arguments without a ``--sandbox workspace-write`` that would win over
        it; without the profile (``init --no-sandbox``), that mode's extra writable
        roots: the git paths a commit in the workspace writes. Its hooks and MCP
        server come with LoopX's Codex home (``environ``), with or without the profile."""
        bounds, more = _workspace(cwd), []
        if bounds is not None:
            from ..adapters import setup_codex
            from ..adapters.setup import key_folder

            more = setup_codex.workspace_overrides(bounds, _main_codex_config(bounds), key_folder())
        extra = _without_workspace_write(self.extra) if any(a.startswith("permissions.loopx=") for a in more) else self.extra
        return [*more, *extra]

    def stdin(self, packet: str) -> str | None:
        return None

    def environ(self, cwd=None) -> dict[str, str]:
        """In a card's workspace, ``CODEX_HOME`` is LoopX's (``setup_codex.workspace_home``):
        the person's config and files, LoopX's hooks trusted there, no project layer
        loaded — a ``.codex/config.toml`` the agent committed or planted in its
        workspace would otherwise be read outside the sandbox (its MCP servers started
        as the person), and LoopX's hooks would run only when it exists."""
        bounds = _workspace(cwd)
        if bounds is None:
            return {}
        from ..adapters import setup_codex

        person = Path(os.environ.get("CODEX_HOME") or Path.home() / ".codex")
        home = setup_codex.workspace_home(setup_codex.home_for(bounds.main, self.agent), person, _main_codex_config(bounds), bounds.main)
        return {**super().environ(cwd), "CODEX_HOME": str(home)}

    def identity_problem(self, root) -> str | None:
        """Codex has no per-checkout settings: ``init --for codex`` names the agent in
        the hook commands and the MCP server's env of ``.codex/config.toml`` (trusted
        by hash, so not overridable per run). Driving another agent there would make
        its hooks and tools act as that one."""
        try:
            text = (Path(root) / ".codex" / "config.toml").read_text(encoding="utf-8", errors="replace")
        except OSError:
            return None
        named = sorted(set(re.findall(r'LOOPX_AGENT\s*=\s*"([^"]*)"', text)) | set(re.findall(r"LOOPX_AGENT=([A-Za-z0-9_.-]+)", text)))
        if named and named != [self.agent]:
            return f"this checkout's .codex/config.toml is set up for agent {', '.join(named)}, not {self.agent}: its hooks and MCP server would act as {named[0]}"
        return None


def _without_workspace_write(extra: list[str]) -> list[str]:
    """The person's Codex arguments without ``--sandbox workspace-write`` (README's
    runner command): that legacy mode would win over the permission profile the
    turn gets in a workspace, which is the same mode bounded to the workspace, and
    a commit there would fail (the main repository's .git read-only). Any other
    sandbox the person asks for is theirs."""
    out, skip = [], False
    for i, a in enumerate(extra):
        if skip:
            skip = False
            continue
        if a in ("--sandbox", "-s") and i + 1 < len(extra) and extra[i + 1] == "workspace-write":
            skip = True
            continue
        if a == "--sandbox=workspace-write":
            continue
        out.append(a)
    return out


def _workspace(cwd):
    """The bounds of the card's workspace a turn starts in (a linked worktree of a
    main checkout), or None: then the runtime's settings are the checkout's own."""
    if cwd is None:
        return None
    from ..rules import workspace_bounds

    bounds = workspace_bounds.find(cwd)
    return bounds if bounds is not None and bounds.main is not None else None


def _main_codex_config(bounds) -> dict:
    """The main checkout's ``.codex/config.toml`` (``init --for codex``), as data."""
    import tomllib

    try:
        return tomllib.loads(Path(bounds.main, ".codex", "config.toml").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}


def _json(path: Path) -> dict:
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return value if isinstance(value, dict) else {}


RUNTIMES = {"claude-code": ClaudeCode, "codex": Codex, "shell": Runtime}


def make(name: str, extra: list[str], binary: str | None = None, agent: str = "") -> Runtime:
    return RUNTIMES[name](extra, binary, agent)


def prompt(packet: str, agent: str, card_key: str, turn_id: str) -> str:
    """What a headless runtime (Claude Code, Codex) is asked: its continuation
    packet, who it is, this turn's id — and the loopx MCP tools as the way to
    record the turn and finish the card: its shell runs in the runtime's sandbox,
    where `loopx writeback` and `loopx done` cannot write the board (#39)."""
    return (
        f"You are agent `{agent}`, working through LoopX on {card_key}. This is one bounded turn: "
        f"do the next action below (in a card's workspace, commit your work), then record what you did with the loopx MCP tool "
        f"`writeback` (card {card_key}, turn_id {turn_id}, summary, artifacts: the files you made, next) before you stop "
        f"(a turn that writes no evidence is recorded as failed). "
        f"If you need a person's approval, ask with the tool `gate_ask` and stop; "
        f"if the card is finished, write back and then call the tool `done` (card {card_key}, summary): it runs the card's "
        f"verify command, and a branch with commits then waits for a person's merge. "
        f"Your shell's `loopx` cannot write the board from the sandbox: use the tools.{_where_loopx()}"
        f"\n\n{packet}"
    )


def _where_loopx() -> str:
    """Where ``loopx`` is, for a runtime whose shell resets PATH (Codex runs
    commands in a login shell: ``bash -lc``): reading the board works from there."""
    import sys

    script = Path(sys.executable).with_name("loopx")
    return f" (`loopx` is {script} if it is not on your PATH.)" if script.exists() else ""
