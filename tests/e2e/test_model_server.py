"""The scripted model itself, over HTTP on 127.0.0.1 (no runtime needed)."""

from __future__ import annotations

import json
import urllib.request

from .model_server import Call, Say, ScriptedModel


def ask(model: ScriptedModel, result: str | None) -> dict:
    messages = [{"role": "user", "content": "go"}]
    if result is not None:
        messages.append({"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "content": result}]})
    body = json.dumps({"model": "claude-x", "messages": messages, "tools": [{"name": "Bash"}], "stream": True}).encode()
    request = urllib.request.Request(f"{model.url}/v1/messages", body, {"content-type": "application/json"})
    with urllib.request.urlopen(request, timeout=30) as response:
        events = [json.loads(line[6:]) for line in response.read().decode().splitlines() if line.startswith("data: ")]
    blocks = [e["content_block"] for e in events if e["type"] == "content_block_start"]
    return blocks[-1]


def test_an_mcp_server_not_up_yet_is_waited_for_and_the_call_made_again():
    with ScriptedModel() as model:
        model.script([Call("mcp__loopx__next", {"claim": True}), Say("done")])
        assert ask(model, None)["name"] == "mcp__loopx__next"
        wait = ask(model, "<tool_use_error>Error: No such tool available: mcp__loopx__next</tool_use_error>")
        assert wait["name"] == "WaitForMcpServers"
        assert ask(model, "[WaitForMcpServers] connected=loopx")["name"] == "mcp__loopx__next"
        assert ask(model, '{"action": "work"}') == {"type": "text", "text": ""}
        assert [r.step for r in model.agent_requests()] == [0, 1]
        assert model.agent_requests()[1].last_tool_result() == '{"action": "work"}'
        assert len(model.usage_reported) == 4  # every reply the runtime was charged for
