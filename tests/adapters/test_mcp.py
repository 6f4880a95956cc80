"""`loopx mcp` driven by the official MCP SDK's own stdio client."""

from __future__ import annotations

import json
import os
import sys
from contextlib import asynccontextmanager

from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

TOOLS = {"next", "claim", "writeback", "gate_ask", "gate_status", "handoff", "context", "cards", "done"}


@asynccontextmanager
async def session(board, agent: str | None):
    env = {"LOOPX_DB": board.url, "PYTHONPATH": os.pathsep.join(sys.path)}
    if agent:
        env["LOOPX_AGENT"] = agent
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "loopx_core", "mcp"], env=env, cwd=str(board.root)
    )
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

        err, text = await call(
            client,
            "writeback",
            card="LX-1",
            summary="parsed the dates",
            next="cover the Z suffix",
            todos_added=["add a test"],
            tokens=1200,
        )
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


READ_ONLY = {"gate_status", "context", "cards"}


async def test_every_parameter_is_described_and_read_only_tools_say_so(team):
    """What an agent's model sees in tools/list: a description for every
    parameter (card and scope formats, turn_id, release, todos_done …) and the
    MCP annotations (readOnlyHint etc.) the SDK's ToolAnnotations define."""
    async with session(team, "a2") as client:
        listed = {t.name: t for t in (await client.list_tools()).tools}
    for name, tool in listed.items():
        props = tool.input_schema["properties"]
        for param, spec in props.items():
            assert spec.get("description"), (name, param)
        assert tool.input_schema.get("additionalProperties") is False
        notes = tool.annotations
        assert notes is not None and notes.open_world_hint is False, name
        assert notes.read_only_hint is (name in READ_ONLY), name
        if name not in READ_ONLY:
            assert notes.destructive_hint is (name == "handoff"), name
    writeback = listed["writeback"].input_schema["properties"]
    assert "LX-12" in writeback["card"]["description"]
    assert "retry" in writeback["turn_id"]["description"]
    assert "ready" in writeback["release"]["description"]
    assert "todos" in writeback["todos_done"]["description"] and writeback["todos_done"]["items"]["type"] == "integer"
    assert "git:push" in listed["gate_ask"].input_schema["properties"]["scope"]["description"]
    assert "G-7" in listed["gate_status"].input_schema["properties"]["gate"]["description"]


async def test_bad_arguments_come_back_as_tool_errors_naming_the_parameter(team):
    team.ok("card", "add", "First card")
    async with session(team, "a2") as client:
        await call(client, "next", claim=True)
        err, text = await call(client, "writeback", card="LX-1", summary="x", tokens="many")
        assert err and "`tokens` must be a whole number" in text
        err, text = await call(client, "writeback", card="LX-1")
        assert err and "needs `summary`" in text
        err, text = await call(client, "claim", card="LX-1", force=True)
        assert err and "no argument 'force'" in text
        err, text = await call(client, "writeback", card="LX-1", summary="x", todos_done=[True])
        assert err and "a list of whole numbers" in text
    assert team.ok("log", "LX-1")["evidence"] == []  # nothing was recorded


async def test_the_cards_tool_pages_like_card_list(team):
    for i in range(5):
        team.ok("card", "add", f"card {i}")
    team.ok("claim", "LX-2", agent="a1")
    async with session(team, "a2") as client:
        err, text = await call(client, "cards", limit=2)
        page = json.loads(text)
        assert not err and page == team.ok("card", "list", "--limit", "2")  # the CLI's rows and cursor
        assert [c["id"] for c in page["cards"]] == ["LX-1", "LX-2"] and page["next_after"] == "LX-2"
        err, text = await call(client, "cards", status="ready", after=page["next_after"])
        assert not err and json.loads(text) == {
            "cards": team.ok("card", "list", "--status", "ready", "--after", "LX-2")["cards"],
            "next_after": None,
        }
        assert [c["id"] for c in json.loads(text)["cards"]] == ["LX-3", "LX-4", "LX-5"]
        err, text = await call(client, "cards")
        assert not err and len(json.loads(text)["cards"]) == 5 and "todos" not in text
        err, text = await call(client, "cards", limit=0)
        assert err and text.startswith("[invalid_input]") and "1 to 1000" in text
        err, text = await call(client, "cards", status="doing")
        assert err and "one of: ready" in text


def test_the_protocol_itself_without_the_sdk(team):
    """Malformed lines, unknown methods, notifications, ping and a batch, on a
    real `loopx mcp` process: every request gets exactly one answer."""
    import subprocess

    lines = [
        b"not json\n",
        b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"1999-01-01","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}\n',
        b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n',
        b'{"jsonrpc":"2.0","id":2,"method":"ping"}\n',
        b'{"jsonrpc":"2.0","id":3,"method":"resources/list"}\n',
        b'[{"jsonrpc":"2.0","id":4,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":9}}]\n',
        b'{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"gate_answer","arguments":{"gate":"G-1"}}}\n',
        b"[" * 5000 + b"\n",
    ]
    env = {**os.environ, "LOOPX_DB": team.url, "LOOPX_AGENT": "a2", "PYTHONPATH": os.pathsep.join(sys.path)}
    proc = subprocess.run(
        [sys.executable, "-m", "loopx_core", "mcp"],
        input=b"".join(lines),
        capture_output=True,
        env=env,
        cwd=team.root,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    replies = [json.loads(line) for line in proc.stdout.splitlines()]
    assert replies[0]["error"]["code"] == -32700 and replies[0]["id"] is None
    assert replies[1]["result"]["protocolVersion"] == "2025-11-25" and replies[1]["result"]["capabilities"] == {
        "tools": {"listChanged": False}
    }
    assert replies[2] == {"jsonrpc": "2.0", "id": 2, "result": {}}
    assert replies[3]["error"]["code"] == -32601
    assert replies[4] == [{"jsonrpc": "2.0", "id": 4, "result": {}}]
    assert (
        replies[5]["result"]["isError"] is True
        and "only a person answers gates" in replies[5]["result"]["content"][0]["text"]
    )
    assert replies[6]["error"]["code"] == -32700
    assert len(replies) == 7


async def test_a_writeback_is_one_path_for_the_cli_and_mcp(team):
    """`loopx writeback` and the MCP tool are one service (ops/turn_report): a
    turn that reported through the CLI and retries through MCP under the same
    op id gets the first result back — one evidence row — where the two
    surfaces used to fingerprint the op differently and the retry was refused
    as a different operation."""
    team.ok("card", "add", "Parse dates")
    team.ok("claim", "LX-1", agent="a2")
    first = team.ok(
        "writeback", "LX-1", "--summary", "parsed the dates", "--tokens", "100", "--op-id", "turn-7-report", agent="a2"
    )
    assert first["created"] is True and first["warnings"] == []
    async with session(team, "a2") as client:
        err, text = await call(
            client, "writeback", card="LX-1", summary="parsed the dates", tokens=100, op_id="turn-7-report"
        )
        assert not err, text
        assert json.loads(text)["evidence"]["id"] == first["evidence"]["id"]
        err, text = await call(client, "writeback", card="LX-1", summary="something else", op_id="turn-7-report")
        assert err and "op_conflict" in text
    assert team.ok("card", "show", "LX-1")["card"]["evidence_count"] == 1


async def test_the_option_a_person_chose_reaches_the_agent_over_mcp(team):
    """#29: gate_status and context carry the person's choice; no tool chooses."""
    team.ok("card", "add", "Pick a store")
    async with session(team, "a2") as client:
        await call(client, "next", claim=True)
        err, text = await call(client, "gate_ask", card="LX-1", question="Which store?", options=["sqlite", "postgres"])
        gate = json.loads(text)["gate"]
        err, text = await call(client, "gate_answer", gate=gate["id"], choice="sqlite")
        assert err  # there is no such tool
        team.ok("gate", "answer", gate["id"], "--choose", "postgres", tty=True)
        err, text = await call(client, "gate_status", gate=gate["id"])
        got = json.loads(text)["gate"]
        assert not err and (got["status"], got["choice"]) == ("approved", "postgres")
        err, text = await call(client, "context", card="LX-1")
        assert not err and "the person chose: **postgres**" in text
