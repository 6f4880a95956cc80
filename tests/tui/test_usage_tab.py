"""The card screen's Usage tab (#29): per turn and per agent, tokens by kind and
dollars, the same figures ``card show --json`` gives (``ops.cards.usage_of``),
adding up to what the runtime reported."""

from __future__ import annotations

import io
import json

from rich.console import Console

from loopx_tui.screens.card import CardScreen
from loopx_tui.widgets.usage_table import UsageView, usage_model, usage_renderables

from .conftest import loopx, show_done

# A Claude Code session's transcript as the runtime wrote it: two model calls of
# the turn, one of them split over two entries (the same call: counted once).
CALLS = [
    (
        "msg_1",
        {
            "input_tokens": 1200,
            "cache_creation_input_tokens": 300,
            "cache_read_input_tokens": 4000,
            "output_tokens": 80,
        },
    ),
    (
        "msg_2",
        {"input_tokens": 900, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 5000, "output_tokens": 40},
    ),
    (
        "msg_2",
        {"input_tokens": 900, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 5000, "output_tokens": 40},
    ),
]
REPORTED = {"input": 2100, "cache_write": 300, "cache_read": 9000, "output": 120}  # msg_1 + msg_2, by kind
SUBAGENT = {"input_tokens": 333, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0, "output_tokens": 44}


def _transcript(path, calls, prompt: str) -> None:
    lines = [
        {
            "type": "user",
            "uuid": "u-0",
            "timestamp": "2026-03-11T02:40:00.000Z",
            "message": {"role": "user", "content": prompt},
        }
    ]
    for i, (msg, usage) in enumerate(calls):
        lines.append(
            {
                "type": "assistant",
                "uuid": f"a-{i}",
                "requestId": f"req-{msg}",
                "timestamp": "2026-03-11T02:40:01.000Z",
                "message": {
                    "id": msg,
                    "role": "assistant",
                    "model": "claude-sonnet",
                    "content": [{"type": "text", "text": "ok"}],
                    "usage": usage,
                },
            }
        )
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))


def charge_a_session(seeded, tmp_path) -> None:
    """What Claude Code's Stop hook does at the end of a turn of claude-1 on LX-1
    (``adapters.charge``), with a subagent beside it, at the person's prices."""
    from loopx_core.adapters import charge
    from loopx_core.runtimes import transcript
    from loopx_core.store.backends import Store

    path = tmp_path / "s-usage.jsonl"
    _transcript(path, CALLS, "Do the next step.")
    sub = tmp_path / "s-usage" / "subagents"
    sub.mkdir(parents=True)
    _transcript(sub / "agent-1.jsonl", [("msg_s", SUBAGENT)], "Find the callers.")
    store = Store.open(seeded.location)
    try:
        loopx(
            seeded.location,
            "price",
            "set",
            "claude-sonnet",
            "--input",
            "3",
            "--output",
            "15",
            "--cache-read",
            "0.3",
            "--cache-write",
            "3.75",
        )
        turn = transcript.read("claude-code", str(path))
        assert (
            charge.charge_transcript(
                store, "claude-1", "claude-code", "s-usage", str(path), turn, 1, print, by="the test"
            )
            is not None
        )
        assert charge.charge_subagents(store, "claude-1", "claude-code", "s-usage", str(path), 1, print, by="the test")
    finally:
        store.close()


def test_the_view_model_arranges_the_figures_as_they_came():
    usage = {
        "agents": [
            {
                "agent": "a1",
                "turns": 2,
                "tokens": 1500,
                "tokens_in": 0,
                "tokens_out": 0,
                "usd": 0.02,
                "kinds": {"input": 1000, "cache_write": 0, "cache_read": 200, "output": 100, "unsplit": 200},
            }
        ],
        "turns": [
            {
                "agent": "a1",
                "turn_id": "t1",
                "source": "hook",
                "subagent": True,
                "tokens": 1300,
                "kinds": {"input": 1000, "cache_write": 0, "cache_read": 200, "output": 100, "unsplit": 0},
                "usd": 0.015,
                "at": "2026-03-11T02:40:00Z",
            },
            {
                "agent": "a1",
                "turn_id": "t2",
                "source": "cli",
                "subagent": False,
                "tokens": 200,
                "kinds": {"input": 0, "cache_write": 0, "cache_read": 0, "output": 0, "unsplit": 200},
                "usd": 0.005,
                "at": "2026-03-11T02:41:00Z",
            },
        ],
        "turns_left_out": 3,
    }
    model = usage_model(usage)
    assert (model.tokens, model.usd, model.left_out) == (1500, 0.02, 3)
    assert model.shown_kinds == ("input", "cache_read", "output", "unsplit")  # no cache writes: no column
    assert [row.who for row in model.turns] == ["a1 (subagent)", "a1"]
    assert model.kinds == {"input": 1000, "cache_write": 0, "cache_read": 200, "output": 100, "unsplit": 200}
    assert usage_model(None).agents == () and usage_model(None).tokens == 0


async def test_the_usage_tab_shows_card_shows_figures_which_add_up_to_what_the_runtime_reported(
    make_app, seeded, tmp_path
):
    charge_a_session(seeded, tmp_path)
    shown = json.loads(loopx(seeded.location, "card", "show", "LX-1").stdout)
    app = make_app()
    async with app.run_test(size=(140, 40)) as pilot:
        await show_done(app, pilot)
        app.open_card(1)
        await pilot.pause()
        await app.reads_idle()
        await pilot.pause()
        await pilot.press("6")
        screen = app.screen
        assert isinstance(screen, CardScreen) and screen.query_one("#card-tabs").active == "usage"
        model = screen.query_one(UsageView).model
        # The board's figures are card show's: per agent and per turn, by kind and in dollars.
        assert [(r.who, r.turns, r.tokens, r.usd, r.kinds) for r in model.agents] == [
            (a["agent"], a["turns"], a["tokens"], a["usd"], a["kinds"]) for a in shown["usage"]["agents"]
        ]
        assert [(r.when, r.source, r.tokens, r.usd, r.kinds) for r in model.turns] == [
            (t["at"], t["source"], t["tokens"], t["usd"], t["kinds"]) for t in shown["usage"]["turns"]
        ]
        assert model.tokens == shown["card"]["quota"]["tokens"]["used"]
        assert model.usd == round(shown["card"]["quota"]["usd"]["used"], 6)
        # … and they add up to what the runtime reported: the session's two calls and its subagent's, by kind,
        # beside the seeded writebacks' own totals (5,400 + 4,100 + 6,200 tokens, $0.09, not split by kind).
        hook = [r for r in model.turns if r.source == "hook"]
        assert [r.who for r in hook] == ["claude-1", "claude-1 (subagent)"]
        assert hook[0].kinds == dict(REPORTED, unsplit=0)
        assert hook[1].kinds == {"input": 333, "cache_write": 0, "cache_read": 0, "output": 44, "unsplit": 0}
        usd = (2100 * 3 + 300 * 3.75 + 9000 * 0.3 + 120 * 15 + 333 * 3 + 44 * 15) / 1e6
        assert sum(r.usd for r in hook) == round(usd, 6) or abs(sum(r.usd for r in hook) - usd) < 1e-6
        assert model.kinds == {
            "input": 2100 + 333,
            "cache_write": 300,
            "cache_read": 9000,
            "output": 120 + 44,
            "unsplit": 5400 + 4100 + 6200,
        }
        assert model.tokens == sum(REPORTED.values()) + 333 + 44 + 15700
        console = Console(width=140, record=True, file=io.StringIO())
        console.print(*usage_renderables(model))
        text = console.export_text()
        assert "claude-1 (subagent)" in text and f"{sum(REPORTED.values()):,}" in text
        assert str(screen.query_one("#card-tabs").get_tab("usage").label) == "Usage 5"


def test_usage_tab_snapshot(make_app, seeded, tmp_path, snap_compare):
    charge_a_session(seeded, tmp_path)

    async def open_usage(pilot):
        await show_done(pilot.app, pilot)
        pilot.app.open_card(1)
        await pilot.pause()
        await pilot.app.reads_idle()
        await pilot.pause()
        await pilot.press("6")
        await pilot.pause()

    assert snap_compare(make_app(), terminal_size=(120, 36), run_before=open_usage)
