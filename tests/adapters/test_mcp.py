"""`loopx mcp` driven by the official MCP SDK's own stdio client."""

from __future__ import annotations

import json
import os
import sys
from contextlib import asynccontextmanager

from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

TOOLS = {"next", "claim", "writeback", "gate_ask", "gate_status", "handoff", "context"}


@asynccontextmanager
async def session(board, agent: str | None):
    env = {"LOOPX_DB": board.url, "PYTHONPATH": os.pathsep.join(sys.path)}
    if agent:
        env["LOOPX_AGENT"] = agent
    params = StdioServerParameters(command=sys.executable, args=["-m", "loopx_core", "mcp"], env=env, cwd=str(board.root))
    with open(os.devnull, "w") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write):
            async with ClientSession(read, write) as client:
                await client.initialize()
                yield client


async def call(client, name: str, **arguments):
    result = await client.call_tool(name, arguments)
    text = result.content[0].text
    return result.is_error, text


async def test_the_agent_turn_over_mcp(team):
    team.ok("card", "add", "First card")
    team.ok("card", "add", "Second card")
    async with session(team, "a2") as client:
        listed = (await client.list_tools()).tools
        assert {t.name for t in listed} == TOOLS
        assert not any("answer" in t.name for t in listed)
        assert all(len(t.description) <= 140 for t in listed)
        assert all(len(json.dumps(t.input_schema)) < 1500 for t in listed)

        err, text = await call(client, "next")
        assert not err and json.loads(text)["action"] == "idle"
        err, text = await call(client, "next", claim=True)
        data = json.loads(text)
        assert not err and data["action"] == "work" and data["card"]["id"] == "LX-1"
        err, text = await call(client, "claim", card="LX-2")
        assert not err and json.loads(text)["card"]["status"] == "active"

        err, text = await call(client, "writeback", card="LX-1", summary="parsed the dates", next="cover the Z suffix", todos_added=["add a test"], tokens=1200)
        data = json.loads(text)
        assert not err and data["evidence"]["source"] == "mcp" and data["card"]["next"] == "cover the Z suffix"

        err, text = await call(client, "gate_ask", card="LX-1", question="May I push to main?", scope="git:push")
        gate = json.loads(text)["gate"]
        assert not err and gate["status"] == "pending" and gate["scope"] == "git:push"
        err, text = await call(client, "gate_status", gate=gate["id"])
        assert not err and json.loads(text)["gate"]["status"] == "pending"

        err, text = await call(client, "context", card="LX-1")
        assert not err and text.startswith("# LX-1: First card") and "parsed the dates" in text and gate["id"] in text

        err, text = await call(client, "handoff", card="LX-2", to="a1", summary="over to you", pending=["finish it"])
        assert not err and json.loads(text)["handoff"]["to"] == "a1"

        # refusals come back as tool errors carrying LoopX's message and hint
        err, text = await call(client, "claim", card="LX-99")
        assert err and "[unknown_card] no card LX-99" in text and "hint: `loopx card list`" in text
        err, text = await call(client, "writeback", card="LX-1", summary="   ")
        assert err and "[invalid_input]" in text and "summary" in text
        err, text = await call(client, "gate_answer", gate=gate["id"], decision="approve")
        assert err  # there is no such tool
    assert team.cli("gate", "status", gate["id"]).data["gate"]["status"] == "pending"  # still a person's to answer


async def test_without_an_agent_identity(team):
    async with session(team, None) as client:
        err, text = await call(client, "next")
        assert err and "no agent identity" in text and "LOOPX_AGENT" in text
