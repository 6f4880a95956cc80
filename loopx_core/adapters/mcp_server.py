"""``loopx mcp``: the agent-turn operators as MCP tools over stdio.

Built on the official MCP Python SDK (``mcp`` 2.x: ``mcp.server.mcpserver.MCPServer``,
the class 1.x called ``FastMCP``; tools are registered with ``add_tool`` and
served with ``run("stdio")``; a ``ToolError`` raised by a tool comes back as a
result with ``isError: true`` and the message as its text — see
``mcp/server/mcpserver/server.py`` and ``exceptions.py`` in
github.com/modelcontextprotocol/python-sdk).

Seven tools, short descriptions, small schemas (context is precious): next,
claim, writeback, gate_ask, gate_status, handoff, context. There is no tool that
answers a gate: only a person does that, from the board or a terminal. The
agent identity comes from ``LOOPX_AGENT``; every call goes through the same
operators and validation as the CLI, and a refusal comes back as a tool error
carrying LoopX's message and hint.
"""

from __future__ import annotations

import json
import os

INSTRUCTIONS = (
    "LoopX board tools. Each turn: `next` (resume or claim work), `context` (the card's continuation), "
    "do the work, then `writeback` (what the turn did). Ask a human with `gate_ask`; poll `gate_status`. "
    "Only a person answers gates."
)


class Board:
    """The board, opened lazily (a tool error, not a crash, when it is missing)."""

    def __init__(self, db_flag: str | None):
        self.db_flag = db_flag
        self._store = None

    @property
    def store(self):
        if self._store is None:
            from ..discovery import discover
            from ..store import Store

            try:
                location = discover(self.db_flag)
            except ValueError as exc:
                from ..errors import UsageError

                raise UsageError(str(exc), "set LOOPX_DB to a board path or URL") from None
            self._store = Store.open(location)
        return self._store

    def close(self) -> None:
        if self._store is not None:
            self._store.close()
            self._store = None


def _agent() -> str:
    from ..errors import UsageError

    agent = os.environ.get("LOOPX_AGENT")
    if not agent:
        raise UsageError("no agent identity", "start the server with LOOPX_AGENT=<your agent id> (register it with `loopx agent add ID`)")
    return agent


def _card(text: str) -> int:
    from .. import ids
    from ..errors import InvalidInput

    try:
        return ids.parse(ids.CARD, text)
    except ValueError as exc:
        raise InvalidInput(str(exc), "cards look like LX-12") from None


def _json(data: dict) -> str:
    return json.dumps(data, separators=(",", ":"), default=str)


def build_server(db_flag: str | None = None):
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.exceptions import ToolError

    from .. import __version__
    from ..errors import LoopxError
    from ..inputs import validate

    board = Board(db_flag)
    server = MCPServer("loopx", instructions=INSTRUCTIONS, version=__version__, log_level="WARNING")

    def call(fn):
        """Run an operator; a LoopX refusal becomes a tool error with message and hint."""
        try:
            return fn()
        except LoopxError as err:
            text = f"[{err.code}] {err.message}"
            if err.hint:
                text += f"\nhint: {err.hint}"
            if err.data:
                text += "\n" + _json(err.data)
            raise ToolError(text) from None

    def drop_none(data: dict) -> dict:
        return {k: v for k, v in data.items() if v is not None}

    async def next(claim: bool = False) -> str:
        """What to do this turn: resume your card, accept a handoff, wait, or (claim=true) take the best ready card."""
        from ..claims import next_turn

        def run():
            data = validate("next", {"agent": _agent(), "claim": claim})
            return _json(next_turn(board.store, data["agent"], claim=data["claim"]).to_json())

        return call(run)

    async def claim(card: str) -> str:
        """Claim a ready card (LX-n)."""
        from ..claims import claim as claim_card

        return call(lambda: _json(claim_card(board.store, _card(card), _agent()).to_json()))

    async def writeback(
        card: str,
        summary: str,
        artifacts: list[str] = [],  # noqa: B006 - pydantic copies defaults; plain types keep the schema small
        next: str = "",
        todos_added: list[str] = [],  # noqa: B006
        todos_done: list[int] = [],  # noqa: B006
        tokens: int = 0,
        usd: float = 0.0,
        turn_id: str = "",
        release: bool = False,
    ) -> str:
        """Record what this turn did on your card: summary, artifact paths, next action, todos, usage."""
        from ..writeback import writeback as write

        def run():
            data = validate("evidence", drop_none({
                "summary": summary, "artifacts": list(artifacts), "next": next or None, "todos_added": list(todos_added),
                "todos_done": list(todos_done), "tokens": tokens or None, "usd": usd or None, "turn_id": turn_id or None, "release": release,
            }))
            evidence, card_view, created = write(board.store, _card(card), _agent(), data, source="mcp")
            return _json({"evidence": evidence.to_json(), "card": card_view.to_json(), "created": created})

        return call(run)

    async def gate_ask(card: str, question: str, scope: str = "", options: list[str] = []) -> str:  # noqa: B006
        """Ask a human (returns at once; poll gate_status). With a scope a grant may approve it at once."""
        from ..gates import ask

        def run():
            data = validate("gate_ask", drop_none({"question": question, "scope": scope or None, "options": list(options)}))
            gate, card_view, _ = ask(board.store, _card(card), _agent(), data)
            return _json({"gate": gate.to_json(), "card": card_view.to_json()})

        return call(run)

    async def gate_status(gate: str) -> str:
        """A gate's status and answer (G-n)."""
        from .. import ids
        from ..errors import InvalidInput
        from ..gates import status

        def run():
            try:
                gid = ids.parse(ids.GATE, gate)
            except ValueError as exc:
                raise InvalidInput(str(exc), "gates look like G-7") from None
            return _json({"gate": status(board.store, gid).to_json()})

        return call(run)

    async def handoff(card: str, to: str, summary: str, done: list[str] = [], pending: list[str] = []) -> str:  # noqa: B006
        """Hand your card to another agent with a summary, done and pending lists."""
        from ..handoffs import handoff as hand

        def run():
            data = validate("handoff", {"to": to, "summary": summary, "done": list(done), "pending": list(pending)})
            h, card_view = hand(board.store, _card(card), _agent(), data)
            return _json({"handoff": h.to_json(), "card": card_view.to_json()})

        return call(run)

    async def context(card: str) -> str:
        """The card's continuation packet as Markdown: objective, next action, todos, last evidence, gates."""
        from ..context import build, to_markdown

        return call(lambda: to_markdown(build(board.store, _card(card))))

    for fn in (next, claim, writeback, gate_ask, gate_status, handoff, context):
        server.add_tool(fn, name=fn.__name__, description=fn.__doc__, structured_output=False)
    server._loopx_board = board  # closed by serve()
    return server


def serve(db_flag: str | None = None) -> int:
    try:
        server = build_server(db_flag)
    except ImportError as exc:
        import sys

        sys.stderr.write(f"loopx mcp: the MCP SDK is not installed ({exc}); pip install 'mcp>=1.9'\n")
        return 1
    try:
        server.run("stdio")
    except KeyboardInterrupt:
        pass
    finally:
        server._loopx_board.close()
    return 0
