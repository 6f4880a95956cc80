"""``loopx mcp``: the agent-turn operators as MCP tools over stdio.

The Model Context Protocol's stdio transport is JSON-RPC 2.0, one message per
line (specification, "Transports" and "Lifecycle"; the shapes below follow the
``mcp_types`` package of the official Python SDK: ``InitializeResult``,
``Tool``, ``ToolAnnotations``, ``CallToolResult``). This module speaks it with
the standard library alone: importing the SDK costs about a second on the
machines LoopX runs on, and a runtime (Codex) may send its first model request
before a slow server has answered ``initialize``. The kernel (peewee, the
pydantic input models) is imported on the first tool call, not at start.

Nine tools, short descriptions, small schemas (context is precious): cards (a
page of short rows, like ``loopx card list``), next, claim, writeback, gate_ask,
gate_status, handoff, done, context — each declared with its verb in
``shapes/verbs.py`` (``tool=Tool(...)``), answered by the ``tool_*`` function
it names below. Every parameter says its format. There is no tool that answers a gate: only a person does
that, from the board or a terminal. The agent identity comes from
``LOOPX_AGENT``; every call goes through the same operators and validation as
the CLI, and a refusal comes back as a tool error (``isError: true``) carrying
LoopX's message and hint, so the model can correct itself.
"""

from __future__ import annotations

import json
import sys

from .. import __version__

TYPE_CHECKING = False  # (annotations only: typing is not imported on the cold path; checkers read this as typing's)
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable
    from types import ModuleType
    from typing import Any, BinaryIO

    from ..shapes.verbs import Tool
    from ..store.backends import Store

    Reply = dict[str, Any]  # a JSON-RPC reply

PROTOCOL_VERSIONS = ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")  # the initialize handshake's, newest first
INSTRUCTIONS = (
    "LoopX board tools. Each turn: `next` (resume or claim work), `context` (the card's continuation), "
    "do the work, then `writeback` (what the turn did); when the card is finished, `done`. Ask a human with `gate_ask`; poll `gate_status`. "
    "Only a person answers gates."
)


def _tool(tool: Tool) -> dict[str, Any]:
    """A declared tool (shapes/verbs.py) as ``tools/list`` shows it."""
    annotations = {"title": tool.title, "readOnlyHint": tool.read_only, "openWorldHint": False}
    if not tool.read_only:
        annotations.update(destructiveHint=tool.destructive, idempotentHint=tool.idempotent)
    return {
        "name": tool.name,
        "title": tool.title,
        "description": tool.description,
        "inputSchema": {
            "type": "object",
            "properties": tool.properties,
            "required": list(tool.required),
            "additionalProperties": False,
        },
        "annotations": annotations,
    }


def _declared() -> dict[str, Tool]:
    """The verbs that are MCP tools, by tool name (each declared once, in shapes/verbs.py)."""
    from ..shapes import verbs

    return {v.tool.name: v.tool for v in verbs.VERBS.values() if v.tool is not None}


_DECLARED = _declared()
TOOLS = [_tool(t) for t in _DECLARED.values()]
_BY_NAME = {t["name"]: t for t in TOOLS}


def _prompting(client: str | None) -> ModuleType | None:
    """The runtime whose permission prompt tool the client is (its module's
    ``PROMPT_CLIENT`` and ``PERMISSION_PROMPT``: Claude Code's), or None."""
    from .. import runtimes

    for name in runtimes.HOOKED:
        module = runtimes.module(name)
        if client is not None and getattr(module, "PROMPT_CLIENT", None) == client:
            return module
    return None


def _listed(tools: Tools) -> list[dict[str, Any]]:
    """The tools listed to the client: with its permission prompt tool when it
    is a runtime that has one (``_prompting``)."""
    prompting = _prompting(getattr(tools, "client", None))
    return TOOLS + [prompting.PERMISSION_PROMPT] if prompting is not None else TOOLS


_KINDS = {
    "string": "a text",
    "boolean": "true or false",
    "integer": "a whole number",
    "number": "a number",
    "array": "a list",
    "object": "an object",
}
_JSON_TYPES: dict[str, type | tuple[type, ...]] = {
    "string": str,
    "boolean": bool,
    "integer": int,
    "number": (int, float),
    "array": list,
    "object": dict,
}


class ToolFailed(Exception):
    """A refusal the model should read (a tool result with isError)."""


# -- the protocol ------------------------------------------------------------------------------


def serve(db_flag: str | None = None, stdin: BinaryIO | None = None, stdout: BinaryIO | None = None) -> int:
    """Answer JSON-RPC messages from stdin until it closes."""
    reader = stdin if stdin is not None else sys.stdin.buffer
    writer = stdout if stdout is not None else sys.stdout.buffer
    tools = Tools(db_flag)
    try:
        while True:
            line = reader.readline()
            if not line:
                return 0
            if not line.strip():
                continue
            reply = handle_line(line, tools)
            if reply is not None:
                writer.write(
                    json.dumps(reply, ensure_ascii=False, separators=(",", ":")).encode("utf-8", "replace") + b"\n"
                )
                writer.flush()
    except (KeyboardInterrupt, BrokenPipeError):
        return 0
    finally:
        tools.close()


def handle_line(line: bytes, tools: Tools) -> Reply | list[Reply] | None:
    try:
        message = json.loads(line)
    except (ValueError, RecursionError):
        return _error(None, -32700, "Parse error: a message must be one JSON object per line")
    if isinstance(message, list):  # a batch (protocol 2025-03-26)
        replies = [r for r in (handle(m, tools) for m in message) if r is not None]
        return replies or None
    return handle(message, tools)


def handle(message: object, tools: Tools) -> Reply | None:
    if not isinstance(message, dict) or message.get("jsonrpc") != "2.0" or not isinstance(message.get("method"), str):
        if isinstance(message, dict) and "method" not in message and ("result" in message or "error" in message):
            return None  # a reply to a request we never send
        return _error(message.get("id") if isinstance(message, dict) else None, -32600, "Invalid request")
    method = message["method"]
    if "id" not in message:
        return None  # a notification (initialized, cancelled …): nothing to answer
    msg_id = message["id"]
    params = message.get("params")
    if not isinstance(params, dict):
        params = {}
    if method == "initialize":
        client = params.get("clientInfo")
        if tools is not None and isinstance(client, dict):
            tools.client = client.get("name")
        asked = params.get("protocolVersion")
        version = asked if asked in PROTOCOL_VERSIONS else PROTOCOL_VERSIONS[0]
        return _result(
            msg_id,
            {
                "protocolVersion": version,
                "capabilities": {"tools": {"listChanged": False}},
                "serverInfo": {"name": "loopx", "title": "LoopX", "version": __version__},
                "instructions": INSTRUCTIONS,
            },
        )
    if method == "ping":
        return _result(msg_id, {})
    if method == "tools/list":
        return _result(msg_id, {"tools": _listed(tools)})
    if method == "tools/call":
        name = params.get("name")
        arguments = params.get("arguments")
        text, failed = tools.call(name, arguments if arguments is not None else {})
        return _result(msg_id, {"content": [{"type": "text", "text": text}], "isError": failed})
    return _error(msg_id, -32601, f"Method not found: {method}")


def _result(msg_id: object, result: dict[str, Any]) -> Reply:
    return {"jsonrpc": "2.0", "id": msg_id, "result": result}


def _error(msg_id: object, code: int, message: str) -> Reply:
    return {"jsonrpc": "2.0", "id": msg_id, "error": {"code": code, "message": message}}


# -- the tools ---------------------------------------------------------------------------------


class Tools:
    """The tools over one board, opened on the first call."""

    def __init__(self, db_flag: str | None) -> None:
        self.db_flag = db_flag
        self._store: Store | None = None
        self.client: str | None = None  # the client's name, from its initialize

    @property
    def store(self) -> Store:
        if self._store is None:
            from ..store.backends import Store
            from ..store.discovery import discover

            try:
                location = discover(self.db_flag)
            except ValueError as exc:
                from ..shapes.errors import UsageError

                raise UsageError(str(exc), "set LOOPX_DB to a board path or URL") from None
            self._store = Store.open(location)
        return self._store

    def close(self) -> None:
        if self._store is not None:
            self._store.close()
            self._store = None

    def call(self, name: object, arguments: object) -> tuple[str, bool]:
        """(text, is_error) for one tool call; never raises."""
        import contextlib

        prompting = _prompting(self.client)
        if prompting is not None and name == prompting.PERMISSION_PROMPT["name"]:
            return self.permission_prompt(arguments, prompting.NAME)
        tool = _BY_NAME.get(name) if isinstance(name, str) else None
        if tool is None:
            return (
                f"[unknown_tool] no tool {str(name)[:60]!r}; the tools are {', '.join(_BY_NAME)} (only a person answers gates)",
                True,
            )
        try:
            args = check_arguments(tool, arguments)
            from ..shapes.verbs import resolve

            declared = _DECLARED[tool["name"]]  # (the tool named ``name``)
            answer = resolve(declared.call)
            return self._waiting_out_restarts(declared, args, lambda: answer(self, **args)), False
        except ToolFailed as exc:
            return str(exc), True
        except Exception as exc:
            from ..store.failures import explain

            known = explain(exc)
            if known is not None and known.code == "board_unreachable":
                # The server went away (a restart): the next call opens the board afresh.
                sys.stderr.write(f"loopx mcp: {known.message}; the next call reconnects\n")
                with contextlib.suppress(Exception):
                    self.close()
                self._store = None
            if known is not None and known.code == "board_damaged":
                from ..store.failures import remember_damage

                remember_damage(self._store, known)  # (as the CLI does: writes refuse the board from now on)
            exc = known or exc
            from ..shapes.errors import LoopxError

            if isinstance(exc, LoopxError):
                text = f"[{exc.code}] {exc.message}"
                if exc.hint:
                    text += f"\nhint: {exc.hint}"
                if exc.data:
                    text += "\n" + _json(exc.data)
                return text, True
            sys.stderr.write(f"loopx mcp: {name}: {type(exc).__name__}: {exc}\n")
            return f"[internal] {type(exc).__name__}: {exc}", True

    def _waiting_out_restarts(self, declared: Tool, args: dict[str, Any], run: Callable[[], str]) -> str:
        """``run()``; when the board's server goes away under it (a PostgreSQL
        restart) and the call may run again (``failures.may_run_again``: it only
        reads, is idempotent — a writeback with an op id — or was cut off before
        its commit), run it again: the store waits out the reconnect as it does
        for ``run`` and ``watch`` (``pg.reconnect``), for up to
        ``LOOPX_RECONNECT_WAIT`` in all (#44). Anything else is raised."""
        import contextlib
        import time

        from ..store.failures import may_run_again, reconnect_wait

        deadline, delay = None, 0.2
        idempotent = declared.idempotent or bool(args.get("op_id"))
        while True:
            try:
                with contextlib.redirect_stdout(sys.stderr):  # stdout carries the protocol: nothing else may reach it
                    return run()
            except Exception as exc:
                if not may_run_again(exc, reads_only=declared.read_only, idempotent=idempotent):
                    raise
                deadline = deadline if deadline is not None else time.monotonic() + reconnect_wait()
                if time.monotonic() + delay > deadline:
                    raise
                sys.stderr.write(
                    f"loopx mcp: {declared.name}: {str(getattr(exc, 'message', exc)).splitlines()[0][:200]}; running it again once the board is back\n"
                )
                if self._store is None or getattr(exc, "code", None) == "board_unreachable":
                    with contextlib.suppress(Exception):
                        self.close()  # (the next attempt opens the board afresh)
                    self._store = None
                    time.sleep(delay)  # (opening does not wait: pace the attempts)
                    delay = min(delay * 2, 5.0)

    def permission_prompt(self, arguments: object, runtime: str) -> tuple[str, bool]:
        """A runtime's permission prompt (Claude Code's: ``runtimes/claude_code.PERMISSION_PROMPT``),
        answered by the person through a gate (``runtime_questions.decide``, the
        rule the PermissionRequest hook uses)."""
        import contextlib
        import os

        from .runtime_questions import decide

        tool, given = (
            (arguments.get("tool_name"), arguments.get("input")) if isinstance(arguments, dict) else (None, None)
        )
        if not isinstance(tool, str) or not isinstance(given, dict):
            return json.dumps(
                {"behavior": "deny", "message": "LoopX could not read this permission prompt (no tool_name or input)"}
            ), False
        if not os.environ.get("LOOPX_TURN_ID"):
            return json.dumps(
                {
                    "behavior": "deny",
                    "message": "LoopX asks the person only in a runner's turn (`loopx run`); not asked here",
                }
            ), False
        try:
            with contextlib.redirect_stdout(sys.stderr):
                decision = decide(self.store, _agent(), runtime, tool, given)
        except Exception as exc:
            sys.stderr.write(f"loopx mcp: permission_prompt: {type(exc).__name__}: {exc}\n")
            decision = {"behavior": "deny", "message": f"LoopX could not ask the person ({type(exc).__name__})"}
        if decision is None:
            decision = {"behavior": "deny", "message": "LoopX: this agent holds no card to ask the person on"}
        if decision["behavior"] == "allow":
            decision.setdefault("updatedInput", given)
        return json.dumps(decision, ensure_ascii=False), False


# -- the tools' answers (each named by its verb's declaration: ``call(tools, **arguments)``) --


def tool_next(tools: Tools, claim: bool = False) -> str:
    from ..ops.claims import next_turn
    from ..shapes.inputs import validate

    data = validate("next", {"agent": _agent(), "claim": claim})
    return _with_workspace(tools, next_turn(tools.store, data["agent"], claim=data["claim"]).to_json(), data["agent"])


def tool_claim(tools: Tools, card: str) -> str:
    from ..ops.claims import claim

    agent = _agent()
    return _with_workspace(tools, claim(tools.store, _card(card), agent).to_json(), agent)


def _with_workspace(tools: Tools, answer: dict[str, Any], agent: str) -> str:
    """The card's workspace named in the answer (made at its first claim), as the CLI's ``next`` does."""
    from ..ops.workspace_open import name_in

    warnings = name_in(tools.store, answer, agent)
    if warnings:
        answer["warnings"] = warnings
    return _json(answer)


def tool_writeback(
    tools: Tools,
    card: str,
    summary: str,
    artifacts: Iterable[str] = (),
    next: str = "",
    todos_added: Iterable[str] = (),
    todos_done: Iterable[int] = (),
    tokens: int = 0,
    usd: float = 0.0,
    turn_id: str = "",
    release: bool = False,
    lease_token: int | None = None,
    op_id: str = "",
) -> str:
    """The CLI's writeback (``ops/turn_report.record``): the same operator,
    fenced by the same lease token (default: the runner's turn,
    ``rules/turn_env``), under the same op id."""
    from ..ops.turn_report import record
    from ..rules import turn_env
    from ..shapes.inputs import validate

    data = validate(
        "evidence",
        _drop_none(
            {
                "summary": summary,
                "artifacts": list(artifacts),
                "next": next or None,
                "todos_added": list(todos_added),
                "todos_done": list(todos_done),
                "tokens": tokens or None,
                "usd": usd or None,
                "turn_id": turn_env.turn_id(turn_id or None),
                "release": release,
            }
        ),
    )
    result, _, _ = record(
        tools.store,
        _card(card),
        _agent(),
        data,
        lease_token=turn_env.lease_token(lease_token),
        op_id=op_id or None,
        source="mcp",
    )
    return _json(result)


def tool_done(tools: Tools, card: str, summary: str) -> str:
    """The CLI's ``done``: evidence first, no pending gate, the card's verify
    command (a person's, or vetted as the agent's own shell command, as the
    CLI does) — run here, in the server's process outside the runtime's
    sandbox, so run confined: ``adapters/confine`` (issue #39)."""
    from ..ops.done import done
    from ..rules import turn_env
    from ..shapes.inputs import validate
    from .confine import verify_prefix
    from .hooks import vet_verify

    agent = _agent()
    data = validate("done", {"summary": summary})
    store = tools.store
    view, evidence = done(
        store,
        _card(card),
        agent,
        data["summary"],
        turn_env.lease_token(None),
        vet=lambda command: vet_verify(store, agent, command),
        confine=verify_prefix,
    )
    answer: dict[str, object] = {"card": view.to_json(), "evidence": evidence.to_json()}
    if view.to_json()["status"] == "waiting":
        answer["note"] = (
            "finished; its branch waits for a person to merge it — you cannot merge it yourself. Stop here."
        )
    return _json(answer)


def tool_gate_ask(tools: Tools, card: str, question: str, scope: str = "", options: Iterable[str] = ()) -> str:
    from ..ops.gates import ask
    from ..shapes.inputs import validate

    data = validate("gate_ask", _drop_none({"question": question, "scope": scope or None, "options": list(options)}))
    gate, card_view, _ = ask(tools.store, _card(card), _agent(), data)
    return _json({"gate": gate.to_json(), "card": card_view.to_json()})


def tool_gate_status(tools: Tools, gate: str) -> str:
    from ..ops.gates import status
    from ..rules import ids
    from ..shapes.errors import InvalidInput

    try:
        gid = ids.parse(ids.GATE, gate)
    except ValueError as exc:
        raise InvalidInput(str(exc), "gates look like G-7") from None
    return _json({"gate": status(tools.store, gid).to_json()})


def tool_handoff(
    tools: Tools, card: str, to: str, summary: str, done: Iterable[str] = (), pending: Iterable[str] = ()
) -> str:
    from ..ops.handoffs import handoff
    from ..shapes.inputs import validate

    data = validate("handoff", {"to": to, "summary": summary, "done": list(done), "pending": list(pending)})
    packet, card_view = handoff(tools.store, _card(card), _agent(), data)
    return _json({"handoff": packet.to_json(), "card": card_view.to_json()})


def tool_cards(tools: Tools, status: str = "", limit: int | None = None, after: str = "") -> str:
    from ..ops.cards import card_page
    from ..rules import ids
    from ..rules.columns import COLUMN_OF
    from ..shapes.errors import InvalidInput
    from ..shapes.inputs import page_limit

    if status and status not in COLUMN_OF:
        raise InvalidInput(f"no status {status[:40]!r}", "one of: " + ", ".join(COLUMN_OF))
    views, last = card_page(tools.store, status or None, limit=page_limit(limit), after=_card(after) if after else 0)
    return _json({"cards": [c.to_row() for c in views], "next_after": ids.fmt(ids.CARD, last)})


def tool_context(tools: Tools, card: str) -> str:
    from ..ops.context import TOOLS, build, to_markdown

    return to_markdown(build(tools.store, _card(card)), TOOLS)  # asked over MCP: its reader writes back with the tools


def check_arguments(tool: dict[str, Any], arguments: object) -> dict[str, Any]:
    """The arguments as the schema says, or ToolFailed naming what is wrong."""
    if not isinstance(arguments, dict):
        raise ToolFailed("[invalid_input] arguments must be a JSON object")
    schema = tool["inputSchema"]
    props = schema["properties"]
    unknown = [k for k in arguments if k not in props]
    if unknown:
        raise ToolFailed(
            f"[invalid_input] {tool['name']} takes no argument {unknown[0]!r}; it takes {', '.join(props)}"
        )
    for key in schema["required"]:
        if key not in arguments:
            raise ToolFailed(f"[invalid_input] {tool['name']} needs `{key}`: {props[key]['description']}")
    for key, value in arguments.items():
        spec = props[key]
        if not _is(value, spec["type"]) or (
            spec["type"] == "array" and not all(_is(v, spec["items"]["type"]) for v in value)
        ):
            kind = (
                _KINDS[spec["type"]]
                if spec["type"] != "array"
                else f"a list of {_KINDS[spec['items']['type']].split(' ', 1)[-1]}s"
            )
            raise ToolFailed(f"[invalid_input] `{key}` must be {kind}: {spec['description']}")
    return arguments


def _is(value: object, kind: str) -> bool:
    if isinstance(value, bool) and kind in ("integer", "number"):
        return False
    return isinstance(value, _JSON_TYPES[kind])


def _agent() -> str:
    from ..rules import turn_env
    from ..shapes.errors import UsageError

    agent = turn_env.agent()
    if not agent:
        raise UsageError(
            "no agent identity",
            "start the server with LOOPX_AGENT=<your agent id> (register it with `loopx agent add ID`)",
        )
    return agent


def _card(text: str) -> int:
    from ..rules import ids
    from ..shapes.errors import InvalidInput

    try:
        return ids.parse(ids.CARD, text)
    except ValueError as exc:
        raise InvalidInput(str(exc), "cards look like LX-12") from None


def _json(data: dict[str, Any]) -> str:
    return json.dumps(data, separators=(",", ":"), default=str)


def _drop_none(data: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in data.items() if v is not None}
