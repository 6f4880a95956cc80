"""Claude Code: everything LoopX knows of it, in one place (the registry,
``runtimes/__init__.py``, says what each runtime module provides).

- **Its turns** (``Command``): ``claude -p PROMPT --allowedTools mcp__loopx
  --output-format stream-json --verbose --settings '{"env": {"LOOPX_AGENT":
  AGENT}}' --permission-prompt-tool mcp__loopx__permission_prompt`` (the loopx
  MCP tools usable headless; the agent's identity for its hooks and MCP
  server, over the one the checkout's local settings name; the runtime's own
  permission prompts and questions asked of the person through gates).
  The stream (``Usage``) is one JSON object a line (the Agent SDK's
  ``SDKMessage``, its ``sdk.d.ts``): ``system``/``init`` carries
  ``session_id``; every ``assistant`` message carries its Messages-API
  ``usage`` (streamed: input and cache tokens in full, output as far as it
  got, the same ``message.id`` repeated per content block); ``result`` ends
  the turn with the totals, ``total_cost_usd``, ``is_error`` and the final
  text.
- **Its transcript** (``read_transcript``): ``transcript_path`` of every hook
  payload, ``<config>/projects/<folder>/<session_id>.jsonl``
  (``CLAUDE_CONFIG_DIR``, default ``~/.claude``), one entry a line. A user
  prompt is ``{"type": "user", "message": {"role": "user", "content": <str |
  blocks>}, "uuid", "timestamp", …}``; tool results come back as ``user``
  entries whose content is only ``tool_result`` blocks, hook feedback as
  ``isMeta`` entries, and (2.1.197 and 2.1.335 alike) a background task's
  notice as a ``user`` entry with ``origin.kind: "task-notification"`` and
  content ``<task-notification>…`` — none of them starts a turn. Model calls
  are ``{"type": "assistant", "requestId", "message": {"id", "usage":
  {"input_tokens", "output_tokens", "cache_creation_input_tokens",
  "cache_read_input_tokens"}}, "uuid", …}``. Claude Code writes one line per
  content block and streams partial usage first, so the same ``message.id`` +
  ``requestId`` repeats: each API call counts once, with its largest usage.
  Sources: Claude Code hooks reference, "Common input fields"
  (https://code.claude.com/docs/en/hooks: the transcript is written
  asynchronously and may lag); transcript shape as documented in
  github.com/DRMacIver/claude-reliability notes/transcript-format.md; the
  duplicate-usage rule from ccusage/ccusage#888 and
  Owloops/claude-powerline#108. Its subagents' transcripts sit beside it.
- **Its hooks** — hooks reference, https://code.claude.com/docs/en/hooks
  ("Hook input", "JSON output", "PreToolUse decision control", "Stop decision
  control"). Input: ``session_id``, ``transcript_path``, ``cwd``,
  ``permission_mode``, ``hook_event_name``; PreToolUse adds ``tool_name``,
  ``tool_input``, ``tool_use_id``; SessionStart adds ``source``; Stop adds
  ``stop_hook_active`` and ``last_assistant_message``. Output: SessionStart
  ``{"hookSpecificOutput": {"hookEventName": "SessionStart",
  "additionalContext": …}}``; PreToolUse ``{"hookSpecificOutput":
  {"hookEventName": "PreToolUse", "permissionDecision": "allow"|"deny"|"ask",
  "permissionDecisionReason": …}}`` (deny: the reason is shown to Claude; exit
  0 with empty stdout lets the call proceed through the normal permission
  flow); Stop ``{"hookSpecificOutput": {"hookEventName": "Stop",
  "additionalContext": …}}`` (``{"decision": "block", "reason"}`` also continues
  the turn but is shown as "Stop hook error occurred"; the text is Claude's
  next instruction; ``stop_hook_active`` is true when Claude is already
  continuing because of a stop hook — we never block then, so it cannot loop).
  SessionStart hooks may append ``export`` lines to ``$CLAUDE_ENV_FILE`` to set
  variables for later Bash commands. ``PreSkillShellCommand`` (2.1.335, the
  SDK's ``sdk.d.ts``) carries a skill's shell command as ``tool_name`` Bash or
  PowerShell with ``tool_input.command``; its answer is PreToolUse's with
  ``hookEventName: "PreSkillShellCommand"`` (a deny keeps it from running).
  The answers: ``approved``, ``continue_turn``, ``session_env``, ``unasked_permission`` below.
- **Its settings** (``write_settings``, the merging in ``claude_code_settings``).
- **Its questions**: the question tool (``QUESTION_TOOL``) and the permission
  prompt tool (``PERMISSION_PROMPT``), listed over MCP to Claude Code alone
  (``PROMPT_CLIENT``).
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
    from pathlib import Path

    from . import transcript

NAME = "claude-code"
TITLE = "Claude Code"
CHARGE_PREFIX = "cc"  # a charge's turn id: cc:SESSION:ENTRY
SETTINGS_FILE = ".claude/settings.json"  # where `init --for` writes its hooks
BINARY = "claude"  # its executable (``--bin`` overrides it)
PACKAGE = "@anthropic-ai/claude-code"  # the npm package its argv names when node runs it
ENV_MARKS = ("CLAUDECODE=",)  # what it sets in the environment of the processes it runs
QUESTION_TOOL = "AskUserQuestion"  # its question tool (runtime_questions reads its input)
PROMPT_CLIENT = "claude-code"  # the MCP clientInfo name Claude Code (2.1.197, 2.1.335) sends
# Its permission prompt tool (``claude -p --permission-prompt-tool
# mcp__loopx__permission_prompt``, which ``loopx run`` passes): headless, Claude
# Code calls it when it would ask the person whether a tool may run, and only
# with it does `-p` offer the model its question tool (AskUserQuestion; 2.1.197
# and 2.1.335). Called with the tool's name, input and call id; answers with one
# text block holding ``{"behavior": "allow", "updatedInput": …}`` or
# ``{"behavior": "deny", "message": …}`` (the binaries' own parser of it).
# ``loopx mcp`` lists it to Claude Code alone (its ``initialize`` names the
# client ``PROMPT_CLIENT``; Claude Code keeps the prompt tool it was given out of
# the model's tools) and answers it (``adapters/mcp_server``): it asks the
# person only in a runner's turn (``LOOPX_TURN_ID``) and denies at once anywhere
# else. A model calling it itself only asks the person a question — its answer
# allows nothing.
PERMISSION_PROMPT = {
    "name": "permission_prompt",
    "title": "Ask the person (the runtime's permission prompt)",
    "description": "Used by Claude Code itself to ask the person whether a tool may run; not for the model.",
    "inputSchema": {
        "type": "object",
        "properties": {"tool_name": {"type": "string"}, "input": {"type": "object"}, "tool_use_id": {"type": "string"}},
        "required": ["tool_name", "input"],
    },
    "annotations": {
        "title": "Ask the person",
        "readOnlyHint": False,
        "openWorldHint": False,
        "destructiveHint": False,
        "idempotentHint": True,
    },
}
PROMPT_TOOL = (
    f"mcp__loopx__{PERMISSION_PROMPT['name']}"  # the prompt tool as Claude Code names it (the `loopx` server's)
)
ANSWERS_WITH_INPUT = True  # a PermissionRequest answer may carry updatedInput (its question tool's answers)


# -- its turns -----------------------------------------------------------------------


class Usage(base.LiveUsage):
    def feed(self, line: bytes) -> None:
        event = base.event(line)
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
                self.add(claude_call(message, usage, identity if identity != ":" else str(event.get("uuid"))))
            text = _text(message)
            if text:
                self.said = text
        elif kind == "result":
            usage = event.get("usage")
            if not isinstance(usage, dict):
                usage = {}
            total = sum(
                v
                for k, v in usage.items()
                if k in ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens", "output_tokens")
                and type(v) is int
            )
            self.final = {
                "tokens": total,
                "usd": event.get("total_cost_usd"),
                "subtype": event.get("subtype"),
                "is_error": event.get("is_error"),
            }
            if isinstance(event.get("result"), str) and event["result"].strip():
                self.said = event["result"]
            if event.get("is_error") or event.get("subtype") != "success":
                self.error = f"claude ended with {event.get('subtype')}" + (
                    f": {event.get('result')}" if isinstance(event.get("result"), str) else ""
                )

    def transcript_path(self, env: dict) -> str | None:
        if not self.session:
            return None
        import glob

        config = env.get("CLAUDE_CONFIG_DIR") or os.path.join(env.get("HOME") or os.path.expanduser("~"), ".claude")
        found = sorted(
            glob.glob(os.path.join(glob.escape(config), "projects", "*", glob.escape(self.session) + ".jsonl"))
        )
        return found[0] if found else None


class Command(base.Runtime):
    name = NAME
    measured = True
    usage_class = Usage

    def argv(self, prompt: str, cwd: str | None = None) -> list[str]:
        from pathlib import Path

        # ``--allowedTools mcp__loopx``: `claude -p` denies a tool that needs a
        # permission nobody is there to give, and the loopx MCP tools are how a
        # sandboxed agent writes back (the operators behind them check authority).
        # ``--settings``: the checkout's .claude/settings.local.json names the agent
        # `init` set up, and settings' env wins over the process's: without the flag
        # settings (which win over local settings) the hooks and the MCP server of
        # another agent's runner would act as that agent.
        bounds = base.workspace(cwd)
        root = Path(bounds.main) if bounds is not None else (Path(cwd) if cwd else Path.cwd())
        return [
            self.binary or BINARY,
            "-p",
            prompt,
            "--allowedTools",
            "mcp__loopx",
            "--output-format",
            "stream-json",
            "--verbose",
            *self._bounded(cwd),
            *self._prompt_tool(root),
            *self.extra,
        ]

    def by_hand(self, cwd: str) -> list[str]:
        return [self.binary or BINARY, *self._bounded(cwd), *self.extra]

    def _bounded(self, cwd: str | None) -> list[str]:
        """``--settings`` naming the agent; in a workspace, the main checkout's hooks,
        sandbox (bounded to the workspace) and loopx server, and nothing of the workspace's."""
        from pathlib import Path

        settings, more = {"env": {"LOOPX_AGENT": self.agent}}, []
        bounds = base.workspace(cwd)
        if bounds is not None:
            from . import claude_code_settings

            settings.update(
                claude_code_settings.workspace_settings(
                    bounds, base.json_file(Path(bounds.main, ".claude", "settings.json")), base.key_folder()
                )
            )
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
        servers = base.json_file(root / ".mcp.json").get("mcpServers")
        if not isinstance(servers, dict) or "loopx" not in servers:
            return []
        return ["--permission-prompt-tool", PROMPT_TOOL]

    def stdin(self, packet: str) -> str | None:
        return None

    def environ(self, cwd: str | None = None) -> dict[str, str]:
        """In a card's workspace: the object quarantine (as every runtime), and git
        told to ignore the placeholders Claude Code's sandbox binds there, or the
        agent's `git add -A` fails (#39, workspace/excludes)."""
        bounds = base.workspace(cwd)
        if bounds is None:
            return {}
        from ..workspace import excludes

        return {**super().environ(cwd), **excludes.turn_env(bounds, os.environ)}

    def step(self, event: dict) -> str | None:
        """stream-json's last words (``result``), an error, or an assistant
        message's last text or tool call (``rules.tool_text``)."""
        from ..rules.tool_text import readable

        kind = event.get("type")
        if kind == "result" and isinstance(event.get("result"), str) and event["result"].strip():
            return ("error: " if event.get("is_error") else "said: ") + event["result"].strip()
        if kind == "error":
            detail = event["error"] if isinstance(event.get("error"), dict) else event
            return f"error: {detail.get('message') or kind}"
        message = event.get("message") if kind == "assistant" else None
        blocks = message.get("content") if isinstance(message, dict) else None
        for block in reversed(blocks) if isinstance(blocks, list) else ():
            if not isinstance(block, dict):
                continue
            if block.get("type") == "text" and isinstance(block.get("text"), str) and block["text"].strip():
                return "said: " + block["text"].strip()
            if block.get("type") == "tool_use" and isinstance(block.get("name"), str):
                return f"called {block['name']}: {readable(block['name'], block.get('input'))}"
        return None


# -- its transcript --------------------------------------------------------------------


def _is_prompt(entry: dict) -> bool:
    if entry.get("type") != "user" or entry.get("isMeta") or entry.get("isSidechain"):
        return False
    origin = entry.get("origin")
    if isinstance(origin, dict) and origin.get("kind") not in (None, "user", "human"):
        return False  # a background task's notice (2.1.x: kind "task-notification"), not a person
    message = entry.get("message")
    if not isinstance(message, dict):
        return False
    content = message.get("content")
    if isinstance(content, str):
        return bool(content.strip()) and not content.lstrip().startswith("<task-notification>")
    if isinstance(content, list):
        kinds = {block.get("type") for block in content if isinstance(block, dict)}
        return "tool_result" not in kinds and bool(kinds & {"text", "image"})
    return False


def read_transcript(path: str) -> transcript.Turn:
    """The session's transcript: where the turn began, its model calls (each
    once, with its largest usage), its last assistant text."""
    from . import transcript

    entries = transcript.lines(path)
    markers: list[str] = []
    calls: list[tuple[int, transcript.Call]] = []
    best: dict[str, tuple[int, transcript.Call]] = {}
    prompt_index = started = last_text = None
    for i, entry in enumerate(entries):
        markers.append(str(entry.get("uuid") or f"line:{i}"))
        if _is_prompt(entry):
            prompt_index, started = i, transcript.parse_time(entry.get("timestamp"))
            continue
        if entry.get("type") != "assistant":
            continue
        message = entry.get("message")
        text = _text(message)
        if text:
            last_text = text
        usage = message.get("usage") if isinstance(message, dict) else None
        if not isinstance(message, dict) or not isinstance(usage, dict):
            continue
        identity = f"{message.get('id') or ''}:{entry.get('requestId') or ''}"
        if identity == ":":
            identity = markers[-1]
        call = claude_call(message, usage, identity)
        earlier = best.get(identity)
        if earlier is None or (call.tokens_out, call.tokens_in) > (earlier[1].tokens_out, earlier[1].tokens_in):
            best[identity] = (earlier[0] if earlier else i, call)
    calls = sorted(best.values(), key=lambda pc: pc[0])
    return transcript.Turn(started, prompt_index, markers, calls, last_text)


def _text(message: object) -> str | None:
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, str):
        return content.strip() or None
    if isinstance(content, list):
        text = "".join(
            b.get("text", "")
            for b in content
            if isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str)
        )
        return text.strip() or None
    return None


def claude_call(message: dict, usage: dict, identity: str) -> transcript.Call:
    """One Claude Code model call from its Messages-API ``usage`` (a transcript
    entry's, or a ``stream-json`` assistant event's: the same message shape)."""
    from . import transcript

    detail = {
        k: transcript.count(usage, k)
        for k in ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens", "output_tokens")
    }
    parts = {
        "input": detail["input_tokens"],
        "cache_write": detail["cache_creation_input_tokens"],
        "cache_read": detail["cache_read_input_tokens"],
        "output": detail["output_tokens"],
    }
    model = message.get("model") if isinstance(message.get("model"), str) else None
    return transcript.Call(
        identity,
        parts["input"] + parts["cache_write"] + parts["cache_read"],
        detail["output_tokens"],
        detail,
        model,
        parts,
    )


def subagent_transcripts(path: str) -> list[str]:
    """The transcripts of the session's subagents (the Task/Agent tool), whose
    model calls its own does not hold: ``<session>/subagents/*.jsonl`` beside
    ``<session>.jsonl`` (2.1.197 and 2.1.335)."""
    folder = os.path.join(os.path.splitext(path)[0], "subagents")
    try:
        names = sorted(n for n in os.listdir(folder) if n.endswith(".jsonl"))
    except OSError:
        return []
    return [os.path.join(folder, n) for n in names if os.path.isfile(os.path.join(folder, n))]


# -- its hooks' answers ---------------------------------------------------------------


def expected_last_message(payload: dict) -> str | None:
    """What the Stop payload says the turn's last message was
    (``last_assistant_message``): the transcript is read once it holds it."""
    text = payload.get("last_assistant_message") if isinstance(payload, dict) else None
    return text.strip() if isinstance(text, str) else None


def approved(reason: str) -> dict | None:
    """PreToolUse's answer to a call a person already approved (a gate in this
    lease, a remembered grant): say so. Claude Code's own deny/ask rules still
    apply to an "allow"."""
    return {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "allow",
            "permissionDecisionReason": reason,
        }
    }


def continue_turn(reason: str) -> dict:
    """Stop's answer sending the model back with ``reason`` as its next input
    (2.1.197 and 2.1.335 alike); ``decision: block`` does too, but is shown to
    the person as "Stop hook error occurred". The next Stop has stop_hook_active."""
    return {"hookSpecificOutput": {"hookEventName": "Stop", "additionalContext": reason}}


def session_env(agent: str, note: base.Note) -> None:
    """A SessionStart hook may export variables for later Bash commands through
    ``$CLAUDE_ENV_FILE``: the agent's id, for its shell's ``loopx``."""
    import shlex

    env_file = os.environ.get("CLAUDE_ENV_FILE")
    if not env_file:
        return
    try:
        with open(env_file, "a", encoding="utf-8") as fh:
            fh.write(f"export LOOPX_AGENT={shlex.quote(agent)}\n")
    except OSError as exc:
        note(f"cannot write CLAUDE_ENV_FILE: {exc.strerror}")


def unasked_permission(agent: str) -> dict | None:
    """PermissionRequest's answer when nobody can be asked (no card): None,
    Claude Code asks as it would without LoopX."""
    return None


# -- its questions ----------------------------------------------------------------------


def questions(tool_input: object) -> list[dict] | None:
    """The questions of an ``AskUserQuestion`` input, each {question, header,
    options, multi}, or None when it does not read as one.

    ``AskUserQuestion``'s input (``sdk-tools.d.ts``, ``AskUserQuestionInput``, the
    same in Claude Code 2.1.197 and 2.1.335): ``questions`` (1–4), each with
    ``question``, ``header``, ``options`` (2–4, each ``label`` and
    ``description``) and ``multiSelect``; and ``answers`` (question text → the
    chosen label; several labels comma-separated), "collected by the permission
    component". The tool returns those answers to the model ("Your questions have
    been answered: …"), so an answer is the same input with ``answers`` filled in
    (``updatedInput``). Each question becomes a gate offering its labels; the
    person picks one (``gate answer --choose``) or writes their own words
    (``--text``: Claude Code's "Other", or several labels of a multi-select)."""
    from ..rules import limits

    asked = tool_input.get("questions") if isinstance(tool_input, dict) else None
    if not isinstance(asked, list) or not 1 <= len(asked) <= 4:
        return None
    out = []
    for q in asked:
        if not isinstance(q, dict) or not isinstance(q.get("question"), str) or not q["question"].strip():
            return None
        labels = [o.get("label") for o in q.get("options") or [] if isinstance(o, dict)]
        labels = [
            " ".join(label.split())[: limits.OPTION_MAX] for label in labels if isinstance(label, str) and label.strip()
        ]
        header = q.get("header")
        out.append(
            {
                "question": q["question"],
                "header": " ".join(header.split())[:40] if isinstance(header, str) else "",
                "options": list(dict.fromkeys(labels))[: limits.OPTIONS_MAX],
                "multi": q.get("multiSelect") is True,
            }
        )
    return out


def answered(tool_input: dict, said: list) -> dict:
    """The question tool's input with the person's answers (question text ->
    what they chose or wrote, in the order of its questions): what the tool
    returns to the model."""
    answers = {q["question"]: text for q, text in zip(tool_input["questions"], said) if text}
    return dict(tool_input, answers=answers)


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
    """``init --for claude-code``'s files, each through ``plan(path, make)``:
    the hooks (``command(event, None)``: no agent id, it comes from the
    session's env) and sandbox in ``.claude/settings.json``, the agent in
    ``.claude/settings.local.json``, the loopx server in ``.mcp.json``,
    ``instructions`` (a merge of LoopX's section) in ``CLAUDE.md``."""
    import re

    from . import claude_code_settings as settings

    commands = {name: command(name, None) for _event, name, _matcher, _timeout in settings.EVENTS}
    marker = lambda event: re.compile(rf"\bhook\s+{re.escape(NAME)}\s+{re.escape(event)}\b")
    plan(root / SETTINGS_FILE, lambda before: settings.merge_settings(before, commands, key_dir, sandbox, marker))
    plan(root / ".claude" / "settings.local.json", lambda before: settings.merge_local(before, agent))
    plan(root / ".mcp.json", lambda before: settings.merge_mcp_json(before, exe, db))
    plan(root / "CLAUDE.md", instructions)
    notes.append("Claude Code reads hooks when a session starts: restart it, or review them under /hooks")
    if sandbox:
        notes.append(
            "the sandbox needs bubblewrap and socat on Linux (Debian: apt-get install bubblewrap socat); without them Claude Code refuses to start (failIfUnavailable) — or run init with --no-sandbox"
        )
