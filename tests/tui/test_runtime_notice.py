"""#29: a runtime's own "needs you" (Claude Code's Notification hook, recorded
as a ``runtime_notice`` event) on the board: the bell, a toast, and a mark in
the card's corner until the card's next turn or writeback."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys

from loopx_core.rules import clock
from loopx_core.shapes.values import EventView
from loopx_tui.notices import follow, notice_of
from loopx_tui.widgets.card_face import badge
from tests.polling import until_async

from .conftest import card_text, feed, loopx
from .test_state import card as make_card

# What Claude Code sends (``sdk.d.ts`` NotificationHookInput), as tests/adapters/test_runtime_questions.py does,
# with a runtime's text that tries to drive the terminal and Textual's markup.
HOSTILE = "Claude needs your permission to use \x1b[2J\x1b]0;owned\x07[bold red]Bash[/]\u202e"


def event(seq: int, kind: str, card: int | None, **data) -> EventView:
    return EventView(seq, 0.0, "agent:claude-1", card, kind, data)


def notice_event(seq: int, card: int | None = 6, kind: str = "permission_prompt", message: str = HOSTILE) -> EventView:
    return event(
        seq,
        "runtime_notice",
        card,
        runtime="claude-code",
        agent_id="claude-1",
        type=kind,
        message=message,
        title="Claude Code",
    )


def test_a_notice_marks_its_card_until_the_cards_next_turn_or_writeback():
    marks: dict[int, str] = {}
    said = follow(
        marks,
        [notice_event(1), notice_event(2, card=4, kind="idle_prompt", message="Claude is waiting for your input")],
    )
    assert [(n.card, n.title, n.badge) for n in said] == [
        (6, "Claude Code (claude-1) needs you", "⚐ permission"),
        (4, "Claude Code (claude-1) needs you", "⚐ idle"),
    ]
    assert marks == {6: "⚐ permission", 4: "⚐ idle"}
    assert follow(marks, [event(3, "turn_started", 6), event(4, "heartbeat", 4)]) == []
    assert marks == {4: "⚐ idle"}  # the next turn clears LX-6's; a heartbeat is not the person's attention
    follow(marks, [event(5, "evidence_added", 4)])
    assert marks == {}  # a writeback clears it too
    assert (
        follow(marks, [notice_event(6, card=None)])[0].card is None and marks == {}
    )  # an agent holding no card: said, marks nothing


def test_the_runtimes_text_reaches_the_board_terminal_safe():
    notice = notice_of(notice_event(1, message=HOSTILE + "\nand a second line"))
    assert notice is not None
    assert notice.message == "Claude needs your permission to use [bold red]Bash[/] and a second line"
    assert not any(ord(ch) < 32 or ch == "\u202e" for ch in notice.message + notice.title)
    assert notice_of(event(1, "heartbeat", 6)) is None


def test_a_gate_outranks_the_notice_in_the_cards_corner():
    card = make_card(6, status="active", owner="claude-1")
    assert badge(card, "⚐ permission") == "⚐ permission"
    assert badge(card._replace(pending_gate=9), "⚐ permission") == "⚑G-9"
    assert badge(card) == ""


def hook_process(location, payload: dict) -> subprocess.CompletedProcess:
    """``loopx hook claude-code notification`` as Claude Code runs it: a cold process, claude-1's."""
    env = {k: v for k, v in os.environ.items() if k not in ("LOOPX_AGENT", "CLAUDE_ENV_FILE", "CLAUDE_PROJECT_DIR")}
    env.update(LOOPX_DB=str(location.path), LOOPX_AGENT="claude-1", LOOPX_NOW=repr(clock.now()))
    return subprocess.run(
        [sys.executable, "-m", "loopx_core", "hook", "claude-code", "notification"],
        input=json.dumps(payload),
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


async def test_the_open_board_shows_a_notice_the_real_hook_recorded(make_app, seeded):
    app = make_app()
    async with app.run_test(size=(120, 36)) as pilot:
        bells = app.bells
        payload = {
            "session_id": "3f8e2c1a-5b6d-4e7f-8a9b-0c1d2e3f4a5b",
            "transcript_path": "/nonexistent/t.jsonl",
            "cwd": str(seeded.root),
            "permission_mode": "default",
            "hook_event_name": "Notification",
            "notification_type": "permission_prompt",
            "message": HOSTILE,
            "title": "Claude Code",
        }
        done = await asyncio.to_thread(hook_process, seeded.location, payload)
        assert (done.returncode, done.stdout) == (0, ""), done.stderr
        await feed(app)
        await until_async(
            lambda: "⚐ permission" in card_text(app, 6), what="LX-6's mark", pause=lambda: pilot.pause(0.05)
        )
        assert app.bells == bells + 1
        assert (
            "warning",
            "Claude needs your permission to use \\[bold red]Bash\\[/] on LX-6",
        ) in app.notices  # safe, and markup said as text
        # claude-1 writes its turn back: the runtime had its person; the mark goes.
        wrote = await asyncio.to_thread(
            loopx, seeded.location, "writeback", "LX-6", "--summary", "used Bash, as allowed", agent="claude-1"
        )
        assert wrote.returncode == 0, wrote.stderr
        await feed(app)
        await until_async(
            lambda: "⚐" not in card_text(app, 6), what="LX-6's mark cleared", pause=lambda: pilot.pause(0.05)
        )
