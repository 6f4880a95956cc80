"""Codex: everything LoopX knows of it, in one place (the registry,
``runtimes/__init__.py``, says what each runtime module provides).

- **Its turns** (``Command``): ``codex exec --json PROMPT``. The stream
  (``codex-rs/exec``'s ``exec_events``): ``thread.started`` with
  ``thread_id``, item events, and ``turn.completed`` with the turn's total
  ``usage`` only at its end. The usage of each model call is in the rollout —
  ``<CODEX_HOME>/sessions/YYYY/MM/DD/rollout-…-<thread_id>.jsonl``,
  ``event_msg`` ``token_count`` — which the runner follows while the turn runs
  (``Usage.poll``).
- **Its transcript** (``read_transcript``: ``transcript_path``, the rollout
  JSONL under ``~/.codex/sessions``, may be null). Lines are ``{"timestamp",
  "type", "payload"}``; a user prompt is an ``event_msg`` with ``payload.type
  == "user_message"`` before 0.171, and from 0.171 on an ``event_msg``
  ``item_completed`` whose ``item.type`` is ``"UserMessage"``
  (``response_item`` messages with role ``user`` also carry AGENTS.md and hook
  feedback, so they are not prompts); every model call reports an
  ``event_msg`` of ``payload.type == "token_count"`` with
  ``info.last_token_usage`` (``input_tokens`` — cached included —,
  ``cached_input_tokens``, ``output_tokens``, ``reasoning_output_tokens``).
  Source: ``codex-rs/rollout`` and ``codex-rs/protocol`` in
  github.com/openai/codex. Its subagents' rollouts: ``subagent_transcripts``.
- **Its hooks** — ``codex-rs/hooks/schema/generated/*.command.{input,output}.schema.json``
  and ``codex-rs/hooks/src/engine/output_parser.rs`` in github.com/openai/codex.
  The same three events and shapes: PreToolUse input ``tool_name`` (``Bash`` with
  ``tool_input.command``, ``apply_patch`` with the patch in
  ``tool_input.command``, MCP tools as ``mcp__server__tool``), ``turn_id``,
  nullable ``transcript_path``; PreToolUse output ``permissionDecision: "deny"``
  with a non-empty reason blocks — ``allow`` without ``updatedInput`` and
  ``ask`` are rejected as unsupported, so an allowed call prints nothing; Stop
  output ``{"decision": "block", "reason"}``; SessionStart output
  ``hookSpecificOutput.additionalContext``.
  The answers: ``approved``, ``continue_turn``, ``session_env``, ``unasked_permission`` below.
- **Its settings** (``write_settings``, the merging in ``codex_settings``).
- **Its processes** (``BINARY``, ``PACKAGE``, ``ENV_MARKS``), which the
  person's unlock refuses to sign for. The tools its hook input names are in
  the registry (``HOOK_TOOLS``): the cold PreToolUse hook reads them there.
"""

from __future__ import annotations

import json
import os

from . import base

# Neither typing nor pathlib at import: the cold PreToolUse hook asks this
# module for its answer to an approved call (tests/adapters/test_hooks_claude.py,
# "stays lean"). mypy reads TYPE_CHECKING by its name.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable
    from pathlib import Path

    from ..rules.workspace_bounds import Bounds
    from . import transcript

NAME = "codex"
TITLE = "Codex"
CHARGE_PREFIX = "cx"  # a charge's turn id: cx:SESSION:LINE
SETTINGS_FILE = ".codex/config.toml"  # where `init --for` writes its hooks
BINARY = "codex"  # its executable (``--bin`` overrides it)
PACKAGE = "@openai/codex"  # the npm package its argv names when node runs it
# What it sets in the environment of the commands it runs (CODEX_SANDBOX… and
# CODEX_… in its shells).
ENV_MARKS = ("CODEX_SANDBOX", "CODEX_THREAD_ID=", "CODEX_MANAGED_BY")
QUESTION_TOOL = None  # no question tool of its own that LoopX answers
ANSWERS_WITH_INPUT = False  # Codex refuses updatedInput in a PermissionRequest answer


# -- its turns -----------------------------------------------------------------------


class Usage(base.LiveUsage):
    def __init__(self) -> None:
        super().__init__()
        self._rollout: str | None = None
        self._offset = 0
        self._line = 0
        self._model: str | None = None

    def feed(self, line: bytes) -> None:
        event = base.event(line)
        if event is None:
            return
        kind = event.get("type")
        if kind == "thread.started" and isinstance(event.get("thread_id"), str):
            self.session = event["thread_id"]
        elif kind == "turn.completed" and isinstance(event.get("usage"), dict):
            usage = event["usage"]
            self.final = {
                "tokens": sum(v for k, v in usage.items() if k in ("input_tokens", "output_tokens") and type(v) is int)
            }
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
            import glob

            found = sorted(
                glob.glob(
                    os.path.join(glob.escape(home), "sessions", "**", f"rollout-*-{glob.escape(self.session)}.jsonl"),
                    recursive=True,
                )
            )
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
            entry = base.event(raw)
            payload = entry.get("payload") if entry else None
            if not entry or not isinstance(payload, dict):
                continue
            if entry.get("type") == "turn_context" and isinstance(payload.get("model"), str):
                self._model = payload["model"]
            elif entry.get("type") == "event_msg" and payload.get("type") == "token_count":
                info = payload.get("info")
                usage = info.get("last_token_usage") if isinstance(info, dict) else None
                if isinstance(usage, dict):
                    self.add(codex_call(usage, self._model, f"line:{self._line - 1}"))


class Command(base.Runtime):
    name = NAME
    measured = True
    usage_class = Usage

    def argv(self, prompt: str, cwd: str | None = None) -> list[str]:
        return [self.binary or BINARY, "exec", "--json", *self._bounded(cwd), prompt]

    def by_hand(self, cwd: str) -> list[str]:
        return [self.binary or BINARY, *self._bounded(cwd)]

    def _bounded(self, cwd: str | None) -> list[str]:
        """In a workspace, LoopX's permission profile bounded to it (``-c``), and the
        person's arguments without a ``--sandbox workspace-write`` that would win over
        it; without the profile (``init --no-sandbox``), that mode's extra writable
        roots: the git paths a commit in the workspace writes. Its hooks and MCP
        server come with LoopX's Codex home (``environ``), with or without the profile."""
        bounds, more = base.workspace(cwd), []
        if bounds is not None:
            from . import codex_settings

            more = codex_settings.workspace_overrides(bounds, _main_codex_config(bounds), base.key_folder())
        extra = (
            _without_workspace_write(self.extra)
            if any(a.startswith("permissions.loopx=") for a in more)
            else self.extra
        )
        return [*more, *extra]

    def stdin(self, packet: str) -> str | None:
        return None

    def environ(self, cwd: str | None = None) -> dict[str, str]:
        """In a card's workspace, ``CODEX_HOME`` is LoopX's (``codex_settings.workspace_home``):
        the person's config and files, LoopX's hooks trusted there, no project layer
        loaded — a ``.codex/config.toml`` the agent committed or planted in its
        workspace would otherwise be read outside the sandbox (its MCP servers started
        as the person), and LoopX's hooks would run only when it exists."""
        from pathlib import Path

        bounds = base.workspace(cwd)
        if bounds is None:
            return {}
        from . import codex_settings

        person = Path(os.environ.get("CODEX_HOME") or Path.home() / ".codex")
        home = codex_settings.workspace_home(
            codex_settings.home_for(bounds.main, self.agent), person, _main_codex_config(bounds), bounds.main
        )
        return {**super().environ(cwd), "CODEX_HOME": str(home)}

    def identity_problem(self, root: Path) -> str | None:
        """Codex has no per-checkout settings: ``init --for codex`` names the agent in
        the hook commands and the MCP server's env of ``.codex/config.toml`` (trusted
        by hash, so not overridable per run). Driving another agent there would make
        its hooks and tools act as that one."""
        import re
        from pathlib import Path

        try:
            text = (Path(root) / ".codex" / "config.toml").read_text(encoding="utf-8", errors="replace")
        except OSError:
            return None
        named = sorted(
            set(re.findall(r'LOOPX_AGENT\s*=\s*"([^"]*)"', text))
            | set(re.findall(r"LOOPX_AGENT=([A-Za-z0-9_.-]+)", text))
        )
        if named and named != [self.agent]:
            return f"this checkout's .codex/config.toml is set up for agent {', '.join(named)}, not {self.agent}: its hooks and MCP server would act as {named[0]}"
        return None

    def step(self, event: dict) -> str | None:
        """``--json``'s error, or a completed item's message or command."""
        from ..rules.tool_text import readable

        kind = event.get("type")
        if kind in ("error", "turn.failed"):
            detail = event["error"] if isinstance(event.get("error"), dict) else event
            return f"error: {detail.get('message') or kind}"
        item = event.get("item") if kind in ("item.completed", "item.started") else None
        if isinstance(item, dict):
            if item.get("type") == "agent_message" and isinstance(item.get("text"), str):
                return "said: " + item["text"].strip()
            if item.get("type") == "command_execution" and isinstance(item.get("command"), str):
                return f"ran: {readable('shell', {'command': item['command']})}"
            if item.get("type") == "error" and isinstance(item.get("message"), str):
                return f"error: {item['message']}"
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


def _main_codex_config(bounds: Bounds) -> dict:
    """The main checkout's ``.codex/config.toml`` (``init --for codex``), as data."""
    import tomllib
    from pathlib import Path

    try:
        return tomllib.loads(Path(bounds.main, ".codex", "config.toml").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}


# -- its transcript --------------------------------------------------------------------


def _is_prompt(entry: dict) -> bool:
    payload = entry.get("payload")
    if not isinstance(payload, dict) or entry.get("type") != "event_msg":
        return False
    if payload.get("type") == "user_message":  # before 0.171
        return True
    item = payload.get("item")
    # 0.171: the prompt is an item_completed UserMessage (a Stop hook's feedback is a HookPrompt)
    return payload.get("type") == "item_completed" and isinstance(item, dict) and item.get("type") == "UserMessage"


def read_transcript(path: str) -> transcript.Turn:
    """The session's rollout: where the turn began, its model calls."""
    from . import transcript

    entries = transcript.lines(path)
    markers: list[str] = []
    calls: list[tuple[int, transcript.Call]] = []
    prompt_index = started = None
    model = None  # from the latest turn_context: token_count events do not name it
    for i, entry in enumerate(entries):
        markers.append(f"line:{i}")
        if _is_prompt(entry):
            prompt_index, started = i, transcript.parse_time(entry.get("timestamp"))
            continue
        payload = entry.get("payload")
        if entry.get("type") == "turn_context" and isinstance(payload, dict) and isinstance(payload.get("model"), str):
            model = payload["model"]
            continue
        if entry.get("type") != "event_msg" or not isinstance(payload, dict) or payload.get("type") != "token_count":
            continue
        info = payload.get("info")
        usage = info.get("last_token_usage") if isinstance(info, dict) else None
        if not isinstance(usage, dict):
            continue
        calls.append((i, codex_call(usage, model, f"line:{i}")))
    return transcript.Turn(started, prompt_index, markers, calls)


def codex_call(usage: dict, model: str | None, identity: str) -> transcript.Call:
    """One Codex model call from a ``token_count`` event's ``last_token_usage``."""
    from . import transcript

    detail = {
        k: transcript.count(usage, k)
        for k in ("input_tokens", "cached_input_tokens", "output_tokens", "reasoning_output_tokens")
    }
    # OpenAI counts cached input inside input_tokens, and reasoning inside output_tokens.
    cached = min(detail["cached_input_tokens"], detail["input_tokens"])
    parts = {"input": detail["input_tokens"] - cached, "cache_read": cached, "output": detail["output_tokens"]}
    return transcript.Call(identity, detail["input_tokens"], detail["output_tokens"], detail, model, parts)


META_BYTES = 1 << 20  # a rollout's first line (session_meta, with the base instructions: ~22 KB on 0.171)
SCANNED = 2000  # rollouts looked at for one session's subagents, at most (the newest)


def session_meta(path: str) -> dict | None:
    """A Codex rollout's ``session_meta`` payload (its first line), or None."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(64 * 1024)  # the line is ~22 KB: a rollout of many MB is not read whole
            while b"\n" not in head and len(head) < META_BYTES:
                more = fh.read(64 * 1024)
                if not more:
                    break
                head += more
    except OSError:
        return None
    line = head.split(b"\n", 1)[0]
    try:
        entry = json.loads(line)
    except ValueError:
        return None
    payload = entry.get("payload") if isinstance(entry, dict) and entry.get("type") == "session_meta" else None
    return payload if isinstance(payload, dict) else None


def subagent_transcripts(path: str) -> list[str]:
    """The rollouts of the subagents a Codex session spawned, at any depth: each
    one's ``session_meta`` has ``session_id`` = the session's own id (0.171: the
    root thread; ``id`` is the subagent's thread, ``source.subagent.thread_spawn``
    names its parent). Rollouts live in ``sessions/YYYY/MM/DD/rollout-<local
    time>-<thread id>.jsonl``: a subagent's is in the session's day folder or a
    later one, named no earlier than the session's own."""
    meta = session_meta(path)
    own = meta.get("id") if meta else None
    if not isinstance(own, str) or not own:
        return []
    day = os.path.dirname(path)
    name = os.path.basename(path)
    stamp = name[len("rollout-") : len("rollout-") + 19] if name.startswith("rollout-") else ""
    parts = day.split(os.sep)[-3:]
    days = [day]
    if len(parts) == 3 and all(p.isdigit() for p in parts):
        sessions = os.path.dirname(os.path.dirname(os.path.dirname(day)))
        days = [d for d in _day_folders(sessions) if d.split(os.sep)[-3:] >= parts]
    candidates = []
    for folder in days:
        try:
            names = os.listdir(folder)
        except OSError:
            continue
        candidates += [
            os.path.join(folder, n)
            for n in names
            if n.startswith("rollout-") and n.endswith(".jsonl") and n[len("rollout-") : len("rollout-") + 19] >= stamp
        ]
    candidates = sorted(c for c in candidates if c != path)[-SCANNED:]
    found = []
    for candidate in candidates:
        child = session_meta(candidate)
        if child and child.get("session_id") == own and child.get("id") != own and os.path.isfile(candidate):
            found.append(candidate)
    return found


def _day_folders(top: str) -> list[str]:
    out: list[str] = []
    for level in (0, 1, 2):
        parents = [top] if level == 0 else out
        out = []
        for parent in parents:
            try:
                out += sorted(os.path.join(parent, n) for n in os.listdir(parent) if n.isdigit())
            except OSError:
                continue
    return out


# -- its hooks' answers ---------------------------------------------------------------


def expected_last_message(payload: dict) -> str | None:
    """Codex's Stop payload names no last message: the transcript is read as it is."""
    return None


def approved(reason: str) -> dict | None:
    """PreToolUse's answer to an approved call: nothing (``allow`` without
    ``updatedInput`` is rejected as unsupported)."""
    return None


def continue_turn(reason: str) -> dict:
    """Stop's answer sending the model back with ``reason``."""
    return {"decision": "block", "reason": reason}


def session_env(agent: str, note: base.Note) -> None:
    """Nothing: recent Codex builds accept ``hookSpecificOutput.env``, but older
    ones reject unknown fields and would drop the whole answer, so the session's
    context names ``--agent`` explicitly instead."""


def unasked_permission(agent: str) -> dict | None:
    """PermissionRequest's answer when nobody can be asked (no card): deny —
    never left to Codex's own automatic reviewer (``--approve-for-me``), which
    would let a model decide to run a command outside the sandbox."""
    return {
        "behavior": "deny",
        "message": f"LoopX: agent {agent} holds no card to ask the person on; take your card first",
    }


def gc_homes(main: str, at_work: Callable[[], Iterable[str]], dry_run: bool) -> list[dict]:
    """``workspace gc``: LoopX's Codex homes for the project at ``main``
    (``codex_settings.home_for``: one per agent whose Codex turns ran in its
    workspaces) of agents not in ``at_work()`` (an open workspace here, a live
    runner): removed (a turn writes its home afresh). Their links into the
    person's own Codex home go as links; that home is never touched."""
    from . import codex_settings

    homes = codex_settings.homes_of(main)
    if not homes:
        return []
    needed = {codex_settings.home_name(a) for a in at_work()}
    out = []
    for home in homes:
        if home.name in needed:
            continue
        item = {"agent": home.name, "path": str(home), "removed": True}
        if not dry_run:
            try:
                codex_settings.remove_home(home, codex_settings.codex_home())
            except (OSError, codex_settings.ConfigError) as exc:
                item.update(removed=False, why=getattr(exc, "strerror", None) or str(exc))
        out.append(item)
    return out


# -- its settings -----------------------------------------------------------------------


def write_settings(
    plan: base.Plan,
    root: Path,
    agent: str,
    exe: list[str],
    command: base.HookCommand,
    db: str | None,
    key_dir: str,
    sandbox: bool,
    instructions: base.Edit,
    notes: list[str],
) -> None:
    """``init --for codex``'s files, each through ``plan(path, make)``: the
    hooks (``command(event, agent)``: Codex has no per-checkout settings file,
    so they name the agent), MCP server and permission profile in
    ``.codex/config.toml``, their trust in the person's Codex config,
    ``instructions`` in ``AGENTS.md``."""
    from . import codex_settings as settings

    commands = {name: command(name, agent) for _, name, _, _ in settings.EVENTS}  # the events Codex has
    ours = settings.entries(agent, exe, commands, db, key_dir if sandbox else None, root)
    project = plan(root / SETTINGS_FILE, lambda before: settings.merge_project(before, ours, sandbox))
    written = project.after if project.after is not None else project.before
    if not project.problem and written is not None:
        trust = settings.trusted_hooks(written, root / SETTINGS_FILE, commands)
        plan(settings.codex_home() / "config.toml", lambda before: settings.merge_user(before, root, trust))
    plan(root / "AGENTS.md", instructions)
    notes.append(
        f"{settings.codex_home() / 'config.toml'} now trusts this project and LoopX's hooks in it (codex exec skips untrusted hooks)"
    )
