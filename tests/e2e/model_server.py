"""A scripted model on 127.0.0.1 for the real runtimes.

It speaks just enough of two wire formats for a real Claude Code or Codex
binary to run a session against it:

- the Anthropic Messages API — ``POST /v1/messages`` (JSON, or server-sent
  events when the request says ``"stream": true``) and
  ``POST /v1/messages/count_tokens``;
- the OpenAI Responses API — ``POST /v1/responses`` (server-sent events), what
  Codex's custom model provider (``wire_api = "responses"``) calls.

A test hands it a *script*: a list of steps, each one model reply. A step is a
``Say`` (text, ending the turn) or a ``Call`` (one tool call), or a function of
the request that returns one (so a step can read the tool result the binary
sent back, or act as a person in between). Each step reports the usage numbers
it carries, so a test can compare what the card was charged with what the
"model" said it used. Every request is kept (``server.requests``) so a test can
see what the binary sent: tool results, hook-injected context, tool lists.

Requests that are not the agent's own loop (Claude Code's title and topic
side-calls carry no tools) get a short text answer and do not consume a step.
Bounded: at most ``MAX_REQUESTS`` model calls per server (a runaway loop ends
with a text reply and is recorded in ``server.problems``), request bodies up
to 16 MB, every socket with a timeout.
"""

from __future__ import annotations

import itertools
import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Union

MAX_REQUESTS = 60
MAX_BODY = 16 * 1024 * 1024


@dataclass
class Usage:
    input: int = 100
    output: int = 20
    cache_read: int = 0
    cache_write: int = 0


@dataclass
class Say:
    """A text reply that ends the model's turn."""

    text: str
    usage: Usage = field(default_factory=Usage)


@dataclass
class Call:
    """One tool call. ``tool`` is the runtime's own tool name (``Bash``,
    ``exec_command``, ``mcp__loopx__next``…); ``args`` its input."""

    tool: str
    args: dict
    usage: Usage = field(default_factory=Usage)
    text: str = ""  # said before the call


Step = Union[Say, Call, Callable[["Request"], Say | Call]]


@dataclass
class Request:
    path: str
    body: dict
    wire: str  # "anthropic" | "openai"
    step: int | None  # which script step answered it (None: a side call)
    detour: bool = False  # answered with WaitForMcpServers (see ScriptedModel._reply)
    superseded: bool = False  # its step was answered again after such a detour

    # -- what the binary sent ---------------------------------------------------
    def tool_names(self) -> list[str]:
        names = []
        for tool in self.body.get("tools") or []:
            if not isinstance(tool, dict):
                continue
            if tool.get("type") == "namespace":  # Codex groups an MCP server's tools
                names += [f"{tool.get('name')}{t.get('name')}" for t in tool.get("tools") or []]
            else:
                names.append(tool.get("name") or tool.get("type"))
        return names

    def text(self) -> str:
        """Everything the binary sent as conversation, as one string (for searching)."""
        return json.dumps(self.body.get("messages") or self.body.get("input") or [], ensure_ascii=False) + json.dumps(
            self.body.get("system") or self.body.get("instructions") or "", ensure_ascii=False
        )

    def last_tool_result(self) -> str | None:
        """The output of the most recent tool call, as the model sees it."""
        if self.wire == "anthropic":
            for message in reversed(self.body.get("messages") or []):
                content = message.get("content")
                if message.get("role") != "user" or not isinstance(content, list):
                    continue
                for block in reversed(content):
                    if isinstance(block, dict) and block.get("type") == "tool_result":
                        return _flatten(block.get("content"))
            return None
        for item in reversed(self.body.get("input") or []):
            if isinstance(item, dict) and item.get("type") in (
                "function_call_output",
                "custom_tool_call_output",
                "mcp_tool_call_output",
            ):
                return _flatten(item.get("output"))
        return None


def _flatten(content) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(_flatten(c.get("text") if isinstance(c, dict) and "text" in c else c) for c in content)
    if isinstance(content, dict):
        for key in ("content", "text", "output"):
            if key in content:
                return _flatten(content[key])
    return json.dumps(content)


class ScriptedModel:
    """The server. ``with ScriptedModel() as model: model.script([...])``."""

    def __init__(self):
        self.requests: list[Request] = []
        self.problems: list[str] = []
        self.usage_reported: list[Usage] = []
        self._steps: list[Step] = []
        self._next = 0
        self._answered: dict = {}  # step → the reply it gave (callables resolved)
        self._replay = None  # (step, reply) to give again after a WaitForMcpServers detour
        self._detours: dict = {}  # step → how many detours it took
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        # Seconds a streamed Anthropic reply waits, its content sent, before its final
        # usage (message_delta): the binary has written the call's partial usage to the
        # transcript meanwhile — the race of a Stop hook reading it early, made likely.
        self.usage_delay = 0.0
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    @property
    def port(self) -> int:
        return self._httpd.server_address[1]

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._httpd.shutdown()
        self._httpd.server_close()

    def script(self, steps: list[Step]) -> None:
        with self._lock:
            self._steps = list(steps)
            self._next = 0
            self._answered, self._replay, self._detours = {}, None, {}
            self.requests.clear()
            self.problems.clear()
            self.usage_reported.clear()

    @property
    def steps_left(self) -> int:
        return len(self._steps) - self._next

    def agent_requests(self) -> list[Request]:
        """The requests the script answered, one per step (detours left out)."""
        return [r for r in self.requests if r.step is not None and not r.detour and not r.superseded]

    def log(self) -> str:
        """A readable account of the session, for a failing test's output."""
        lines = []
        for r in self.requests:
            lines.append(f"--- {r.wire} {r.path} step={r.step} tools={len(r.tool_names())}")
            result = r.last_tool_result()
            if result is not None:
                lines.append(f"    last tool result: {result[:600]!r}")
        lines += [f"!!! {p}" for p in self.problems]
        return "\n".join(lines)

    # -- choosing the reply ----------------------------------------------------------
    def _reply(self, request_body: dict, path: str, wire: str):
        with self._lock:
            agent_loop = bool(request_body.get("tools"))
            if len(self.requests) >= MAX_REQUESTS:
                self.problems.append(f"more than {MAX_REQUESTS} model calls: the session was cut short")
                agent_loop = False
            request = Request(path, request_body, wire, None)
            step = Say("LoopX e2e")
            if agent_loop:
                step = self._next_step(request)
            self.requests.append(request)
        if callable(step):
            try:
                step = step(request)
            except Exception as exc:  # a broken script step must show in the test, not hang the binary
                self.problems.append(f"step {request.step} raised {type(exc).__name__}: {exc}")
                step = Say(f"(script error: {exc})")
            self._answered[request.step] = step
        if request.step is not None:
            self.usage_reported.append(step.usage)
        return step

    def _next_step(self, request: Request):
        """The script's next step — or, when Claude Code 2.1.197 answered an MCP call with
        "is still connecting. Call WaitForMcpServers" or "No such tool available" (it does
        not wait for MCP servers before the first request), what a model does: wait, then
        make the same call again (three times at most)."""
        result = request.last_tool_result() or ""
        if self._replay is not None:
            request.step, step = self._replay
            self._replay = None
            return step
        earlier = [r for r in self.requests if r.step is not None and not r.detour]
        not_up = "is still connecting. Call WaitForMcpServers" in result or "No such tool available: mcp__" in result
        if (
            not_up
            and earlier
            and isinstance(self._answered.get(earlier[-1].step), Call)
            and self._detours.get(earlier[-1].step, 0) < 3
        ):
            self._detours[earlier[-1].step] = self._detours.get(earlier[-1].step, 0) + 1
            earlier[-1].superseded = True
            request.step, request.detour = earlier[-1].step, True
            self._replay = (earlier[-1].step, self._answered[earlier[-1].step])
            return Call("WaitForMcpServers", {"servers": ["loopx"]}, usage=Usage())
        if self._next < len(self._steps):
            request.step = self._next
            step = self._steps[self._next]
            self._next += 1
        else:
            request.step, step = len(self._steps), Say("(the script is over)")
        if not callable(step):
            self._answered[request.step] = step
        return step

    def new_id(self, prefix: str) -> str:
        return f"{prefix}_{next(self._ids):04d}"


# -- the HTTP side ---------------------------------------------------------------------------


def _handler(model: ScriptedModel):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        timeout = 60

        def log_message(self, *args):  # quiet: the requests are kept instead
            pass

        def _body(self) -> dict:
            length = int(self.headers.get("content-length") or 0)
            if length > MAX_BODY:
                raise ValueError("request body too large")
            raw = self.rfile.read(length) if length else b"{}"
            if self.headers.get("content-encoding") == "zstd":
                raise ValueError("zstd request bodies are not supported")
            return json.loads(raw or b"{}")

        def _json(self, status: int, data: dict) -> None:
            raw = json.dumps(data).encode()
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(raw)))
            self.end_headers()
            self.wfile.write(raw)

        def _sse(self, events: list[tuple[str, dict]]) -> None:
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.send_header("cache-control", "no-cache")
            self.send_header("connection", "close")
            self.end_headers()
            for name, data in events:
                if name == "message_delta" and model.usage_delay:
                    self.wfile.flush()
                    time.sleep(model.usage_delay)  # bounded: a test sets a fraction of a second
                self.wfile.write(f"event: {name}\ndata: {json.dumps(data)}\n\n".encode())
            self.wfile.flush()
            self.close_connection = True

        def do_HEAD(self):
            self.send_response(200)
            self.send_header("content-length", "0")
            self.end_headers()

        def do_GET(self):
            path = self.path.split("?")[0]
            if path.endswith("/models"):
                return self._json(200, {"data": [], "models": []})
            self._json(404, {"error": {"type": "not_found", "message": path}})

        def do_POST(self):
            path = self.path.split("?")[0]
            try:
                body = self._body()
            except ValueError as exc:
                model.problems.append(f"bad request to {path}: {exc}")
                return self._json(400, {"error": {"type": "invalid_request_error", "message": str(exc)}})
            if path.endswith("/messages/count_tokens"):
                return self._json(200, {"input_tokens": max(1, len(json.dumps(body)) // 4)})
            if path.endswith("/messages"):
                step = model._reply(body, path, "anthropic")
                message = anthropic_message(model, body, step)
                if body.get("stream"):
                    return self._sse(anthropic_events(message))
                return self._json(200, message)
            if path.endswith("/responses"):
                step = model._reply(body, path, "openai")
                return self._sse(openai_events(model, body, step))
            model.problems.append(f"unexpected POST {path}")
            self._json(404, {"error": {"type": "not_found", "message": path}})

    return Handler


# -- Anthropic Messages ---------------------------------------------------------------------


def anthropic_message(model: ScriptedModel, body: dict, step: Say | Call) -> dict:
    usage = {
        "input_tokens": step.usage.input,
        "output_tokens": step.usage.output,
        "cache_creation_input_tokens": step.usage.cache_write,
        "cache_read_input_tokens": step.usage.cache_read,
    }
    content: list[dict] = []
    if isinstance(step, Call):
        if step.text:
            content.append({"type": "text", "text": step.text})
        content.append({"type": "tool_use", "id": model.new_id("toolu"), "name": step.tool, "input": step.args})
        stop = "tool_use"
    else:
        content.append({"type": "text", "text": step.text})
        stop = "end_turn"
    return {
        "id": model.new_id("msg"),
        "type": "message",
        "role": "assistant",
        "model": body.get("model") or "claude-scripted",
        "content": content,
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": usage,
    }


def anthropic_events(message: dict) -> list[tuple[str, dict]]:
    start = dict(message, content=[], stop_reason=None, usage=dict(message["usage"], output_tokens=1))
    events = [("message_start", {"type": "message_start", "message": start})]
    for i, block in enumerate(message["content"]):
        if block["type"] == "text":
            events.append(
                (
                    "content_block_start",
                    {"type": "content_block_start", "index": i, "content_block": {"type": "text", "text": ""}},
                )
            )
            events.append(
                (
                    "content_block_delta",
                    {"type": "content_block_delta", "index": i, "delta": {"type": "text_delta", "text": block["text"]}},
                )
            )
        else:
            events.append(
                (
                    "content_block_start",
                    {"type": "content_block_start", "index": i, "content_block": dict(block, input={})},
                )
            )
            events.append(
                (
                    "content_block_delta",
                    {
                        "type": "content_block_delta",
                        "index": i,
                        "delta": {"type": "input_json_delta", "partial_json": json.dumps(block["input"])},
                    },
                )
            )
        events.append(("content_block_stop", {"type": "content_block_stop", "index": i}))
    events.append(
        (
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": message["stop_reason"], "stop_sequence": None},
                "usage": message["usage"],
            },
        )
    )
    events.append(("message_stop", {"type": "message_stop"}))
    return events


# -- OpenAI Responses ---------------------------------------------------------------------------


def openai_events(model: ScriptedModel, body: dict, step: Say | Call) -> list[tuple[str, dict]]:
    response_id = model.new_id("resp")
    items: list[dict] = []
    if isinstance(step, Call):
        if step.text:
            items.append(_openai_text(model, step.text))
        call = {
            "type": "function_call",
            "id": model.new_id("fc"),
            "call_id": model.new_id("call"),
            "name": step.tool,
            "arguments": json.dumps(step.args),
            "status": "completed",
        }
        if step.tool.startswith("mcp__") and step.tool.count("__") >= 2:
            # Codex offers an MCP server's tools as a namespace ("mcp__loopx") of plain
            # names; a call names both.
            server, _, name = step.tool[len("mcp__") :].partition("__")
            call.update(namespace=f"mcp__{server}", name=name)
        elif "." in step.tool:
            # Codex's own namespaced tools (0.171: "multi_agent_v1" holds spawn_agent, wait_agent…)
            namespace, _, name = step.tool.partition(".")
            call.update(namespace=namespace, name=name)
        items.append(call)
    else:
        items.append(_openai_text(model, step.text))
    head = {
        "id": response_id,
        "object": "response",
        "status": "in_progress",
        "model": body.get("model") or "gpt-scripted",
        "output": [],
    }
    events = [("response.created", {"type": "response.created", "response": head})]
    for i, item in enumerate(items):
        events.append(
            ("response.output_item.added", {"type": "response.output_item.added", "output_index": i, "item": item})
        )
        if item["type"] == "message":
            events.append(
                (
                    "response.output_text.delta",
                    {
                        "type": "response.output_text.delta",
                        "item_id": item["id"],
                        "output_index": i,
                        "content_index": 0,
                        "delta": item["content"][0]["text"],
                    },
                )
            )
        events.append(
            ("response.output_item.done", {"type": "response.output_item.done", "output_index": i, "item": item})
        )
    usage = {
        "input_tokens": step.usage.input + step.usage.cache_read,  # OpenAI counts cached input inside input_tokens
        "input_tokens_details": {"cached_tokens": step.usage.cache_read},
        "output_tokens": step.usage.output,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": step.usage.input + step.usage.cache_read + step.usage.output,
    }
    done = dict(head, status="completed", output=items, usage=usage)
    events.append(("response.completed", {"type": "response.completed", "response": done}))
    return events


def _openai_text(model: ScriptedModel, text: str) -> dict:
    return {
        "type": "message",
        "role": "assistant",
        "id": model.new_id("msg"),
        "status": "completed",
        "content": [{"type": "output_text", "text": text, "annotations": []}],
    }
