"""Every token the real runtimes spend is charged, exactly once, by kind (#29).

The scripted model reports each reply's usage (input, cache write, cache read,
output); the card's figures — ``card show --json``'s ``usage`` and the
board's Usage tab (read headless after the session) — must be exactly what it served, whatever the
runtime's hook sequence and timing. The timing is forced, not hoped for:
``LOOPX_FAULT=transcript-lag`` (``loopx_core/rules/faults.py``) makes every
Stop hook read each transcript as if its last model call had not been
written yet — the lag Claude Code 2.1.197 showed once in two runs, here on
every Stop of both pinned versions."""

from __future__ import annotations

import json

import pytest

from .harness import ALL, as_person
from .model_server import Call, Say, Usage
from .test_turns import started

CLAUDE = [r for r in ALL if r.setup == "claude-code"]
CODEX = next(r for r in ALL if r.name == "codex")
KINDS = ("input", "cache_write", "cache_read", "output")
PRICES = {"input": 3.0, "cache_write": 3.75, "cache_read": 0.3, "output": 15.0}  # dollars per million tokens


def served(model, runtime) -> dict:
    """What the scripted model reported, by kind, as the runtime's wire carries it
    (OpenAI has no cache-write figure: the server sends none to Codex)."""
    kinds = dict.fromkeys(KINDS, 0)
    for u in model.usage_reported:
        kinds["input"] += u.input
        kinds["cache_read"] += u.cache_read
        kinds["output"] += u.output
        if runtime.setup == "claude-code":
            kinds["cache_write"] += u.cache_write
    return kinds


def charged(project, card) -> tuple[dict, dict]:
    """``card show --json``: the card's usage summed over its agents, by kind; and the card."""
    shown = project.loopx("card", "show", card).data
    kinds = dict.fromkeys(KINDS + ("unsplit",), 0)
    for agent in shown["usage"]["agents"]:
        for kind, n in agent["kinds"].items():
            kinds[kind] += n
    return kinds, shown


def priced(project, name: str) -> None:
    as_person(
        project, "price", "set", name, "--input", "3", "--output", "15", "--cache-read", "0.3", "--cache-write", "3.75"
    )


def on_the_board(project, card: str):
    """The card's Usage tab, as the person's board shows it (read only, headless)."""
    import asyncio

    from loopx_core.store.discovery import parse_target
    from loopx_tui.app import LoopxApp
    from loopx_tui.widgets.usage_table import UsageView

    location = parse_target(str(project.root / ".loopx" / "board.db"), "flag")

    async def read():
        app = LoopxApp(location, background=False, read_only="the e2e suite reads the board")
        async with app.run_test(size=(140, 40)) as pilot:
            await asyncio.wait_for(app.loaded.wait(), 60)
            await app.reads_idle()
            app.open_card(int(card.split("-")[1]))
            await pilot.pause()
            await app.reads_idle()
            await pilot.pause()
            await pilot.press("6")
            return app.screen.query_one(UsageView).model

    return asyncio.run(read())


def assert_charged_exactly(project, model, runtime, card) -> list[dict]:
    want = served(model, runtime)
    kinds, shown = charged(project, card)
    assert kinds == dict(want, unsplit=0), (kinds, want)
    board = on_the_board(project, card)  # the board's figures: the same, per kind and in dollars
    assert (board.kinds, board.tokens, board.usd) == (
        kinds,
        sum(want.values()),
        round(shown["card"]["quota"]["usd"]["used"], 6),
    )
    assert shown["card"]["quota"]["tokens"]["used"] == sum(want.values())
    usd = sum(want[k] * PRICES[k] for k in KINDS) / 1e6
    assert shown["card"]["quota"]["usd"]["used"] == pytest.approx(usd, abs=1e-6)
    charges = [e for e in project.evidence(card) if e["source"] == "hook"]
    assert sum(e["usage"]["tokens"] for e in charges) == sum(want.values())
    return charges


@pytest.mark.parametrize("runtime", CLAUDE, ids=repr)
def test_every_token_is_charged_once_when_each_stop_reads_the_transcript_before_its_last_call(project, model, runtime):
    """A turn sent back by its first Stop (no writeback), with a subagent, every
    Stop blind to the last call of the session's transcript and of the
    subagent's: the next Stop, then SessionEnd, charge what each missed — the
    card ends charged exactly what the model served, per kind and in dollars."""
    agent, card = started(project, runtime)
    priced(project, "claude")

    def spawn(request):
        tool = "Agent" if "Agent" in request.tool_names() else "Task"
        return Call(
            tool,
            {
                "description": "find the callers",
                "prompt": "List the callers of parse().",
                "subagent_type": "general-purpose",
                "run_in_background": False,
            },
            usage=Usage(input=700, output=60, cache_read=900, cache_write=40),
        )

    steps = [
        runtime.tool("next", claim=True),
        spawn,
        Say(
            "parse() has no callers.", usage=Usage(input=333, output=44, cache_read=500, cache_write=20)
        ),  # the subagent's own call
        Say("All done."),  # no writeback: the first Stop sends the model back
        runtime.tool("writeback", card=card, summary="Checked the callers"),
        Say("Recorded."),
    ]
    for n, step in enumerate(steps):
        if not callable(step):
            step.usage = Usage(input=1000 + n, output=300 + 7 * n, cache_read=2000 + 11 * n, cache_write=50 + n)
    session = runtime.run(project, model, steps, env={"LOOPX_FAULT": "transcript-lag"})
    assert session.code == 0, session.stderr[-2000:]
    assert model.steps_left == 0 and not model.problems
    assert any("wrote no evidence" in r.text() for r in model.agent_requests())  # the first Stop sent it back
    charges = assert_charged_exactly(project, model, runtime, card)
    # The lag was real: the Stops charged less than was served; SessionEnd charged the rest.
    by_stop = sum(e["usage"]["tokens"] for e in charges if "stop hook" in e["summary"])
    by_end = [e for e in charges if "session-end hook" in e["summary"]]
    assert 0 < by_stop < sum(served(model, runtime).values())
    assert by_end and any("(subagent)" in e["summary"] for e in by_end)


def _thread(request) -> str:
    """Which Codex thread sent a request: its turn metadata names the thread and the
    session (the root thread); a subagent's thread is not the session's."""
    meta = request.body.get("client_metadata") or {}
    try:
        turn = json.loads(meta.get("x-codex-turn-metadata") or "{}")
    except ValueError:
        turn = {}
    return "root" if turn.get("thread_id") == turn.get("session_id") else "subagent"


class Spawner:
    """Codex's model across two threads: the root claims, spawns a subagent
    (``multi_agent_v1.spawn_agent``, on by default in 0.171), waits for it, writes
    back and ends; the subagent answers once. Requests are routed by thread, so
    the order the two threads' requests arrive in does not matter."""

    def __init__(self, card: str):
        self.card = card
        self.root = [self.claim, self.spawn, self.wait, self.write_back, self.end]
        self.subagent = [lambda r: Say("parse() has no callers.", usage=Usage(input=333, output=44, cache_read=120))]

    def __call__(self, request):
        queue = self.root if _thread(request) == "root" else self.subagent
        return queue.pop(0)(request) if queue else Say("(nothing left)")

    def claim(self, request):
        return Call("mcp__loopx__next", {"claim": True}, usage=Usage(input=500, output=10, cache_read=200))

    def spawn(self, request):
        return Call(
            "multi_agent_v1.spawn_agent",
            {"message": "List the callers of parse()."},
            usage=Usage(input=700, output=60, cache_read=300),
        )

    def wait(self, request):
        spawned = json.loads(request.last_tool_result() or "{}")
        return Call(
            "multi_agent_v1.wait_agent",
            {"targets": [spawned.get("agent_id")], "timeout_ms": 60000},
            usage=Usage(input=800, output=30, cache_read=400),
        )

    def write_back(self, request):
        return Call(
            "mcp__loopx__writeback",
            {"card": self.card, "summary": "Checked the callers"},
            usage=Usage(input=900, output=40, cache_read=500),
        )

    def end(self, request):
        return Say("Done.", usage=Usage(input=1000, output=5, cache_read=600))


def test_a_codex_subagents_calls_are_charged_to_the_card_of_the_turn_that_started_it(project, model):
    """Codex 0.171 writes a spawned subagent's model calls to a rollout of its
    own (its ``session_meta`` names the session); neither the parent's rollout
    nor ``codex exec --json``'s usage holds them. The Stop hook charges them to
    the card of the turn that spawned it, each call once, by kind."""
    agent, card = started(project, CODEX)
    priced(project, "gpt-5.1-codex")
    brain = Spawner(card)
    session = CODEX.run(project, model, [brain] * 8)
    assert session.code == 0, session.stderr[-2000:]
    assert not model.problems and not brain.root and not brain.subagent, model.log()
    turn = next(e for e in session.events if e.get("type") == "turn.completed")
    assert turn["usage"]["input_tokens"] < sum(
        u.input + u.cache_read for u in model.usage_reported
    )  # the runtime's own total leaves the subagent out
    charges = assert_charged_exactly(project, model, CODEX, card)
    assert any("(subagent)" in e["summary"] for e in charges)


def test_a_codex_runners_turn_is_charged_exactly_when_each_stop_reads_before_the_last_call(project, model, tmp_path):
    """Codex has no SessionEnd: what its Stop could not see yet — every Stop
    lagging here, blind to the last call of the rollout and of the subagent's —
    is charged by ``loopx run`` once the runtime exits (README's runner
    command), subagent included: exactly what the model served."""
    from . import runtimes
    from .harness import LOOPX, codex_env, codex_model_args
    from .test_runner import Runners

    agent, card = started(project, CODEX)
    priced(project, "gpt-5.1-codex")
    brain = Spawner(card)
    model.script([brain] * 8)
    runners = Runners(project, model, tmp_path)
    argv = [
        str(LOOPX),
        "run",
        "--agent",
        agent,
        "--runtime",
        "codex",
        "--bin",
        str(runtimes.binary("codex")),
        "--turn-limit",
        "90s",
        "--turns",
        "1",
        "--",
        "--sandbox",
        "workspace-write",
        *codex_model_args(model),
    ]
    try:
        proc = runners.spawn(agent, argv, dict(codex_env(project), LOOPX_FAULT="transcript-lag"), project.root)
        assert runners.ended(proc) == 0, runners.explain()
    finally:
        runners.close()
    assert not model.problems and not brain.root and not brain.subagent, runners.explain()
    charges = assert_charged_exactly(project, model, CODEX, card)
    by_stop = sum(e["usage"]["tokens"] for e in charges if "stop hook" in e["summary"])
    by_runner = [e for e in charges if "loopx run" in e["summary"]]
    assert 0 < by_stop < sum(served(model, CODEX).values())
    assert any("(subagent)" in e["summary"] for e in by_runner) and any(
        "(subagent)" not in e["summary"] for e in by_runner
    )
