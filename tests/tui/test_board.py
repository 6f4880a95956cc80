"""The board screen: what it shows, the filter, the forms, and live updates
from other processes without reloading the whole board."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from loopx_core.ops import cards as card_ops
from loopx_core.store.discovery import parse_target
from loopx_tui.modals.add_card import AddCardModal
from loopx_tui.modals.budget import BudgetModal
from loopx_tui.screens.help import HelpScreen
from loopx_tui.screens.no_board import NoBoardScreen
from tests.polling import until_async

from .conftest import arm, board_app_class, card_text, idle, loopx
from .test_daily_driver import laid_out


def visible(app) -> dict[str, list[int]]:
    return {key: col.card_ids() for key, col in app.board_screen.board.columns.items()}


async def wait_until(pilot, check, timeout: float = 30.0, what: str = "the board to catch up") -> bool:
    """Let the app run until ``check()`` holds (the poller works in real time)."""
    return bool(await until_async(check, what=what, timeout=timeout, pause=lambda: pilot.pause(0.05)))


async def test_columns_by_status_then_by_owner(make_app, seeded):
    app = make_app()
    async with app.run_test(size=(120, 36)) as pilot:
        cols = visible(app)
        assert list(cols) == ["ready", "active", "needs_you", "blocked", "done"]
        assert set(cols["needs_you"]) == {3, 4, 5}  # a gate, a budget, no progress
        assert set(cols["active"]) == {2, 6}  # a handoff and a lease
        await pilot.press("v")
        await pilot.pause()
        cols = visible(app)
        assert list(cols) == ["claude-1", "codex-1", "cursor-1", "shell-1", "@unassigned"]
        assert set(cols["claude-1"]) == {1, 2, 6} and 7 in cols["@unassigned"]
        await pilot.press("v")
        await pilot.pause()
        assert list(visible(app)) == ["ready", "active", "needs_you", "blocked", "done"]


async def test_a_card_shows_id_title_owner_quota_lease_evidence_and_gate(make_app, seeded):
    app = make_app()
    async with app.run_test(size=(120, 36)):
        top, *inside, bottom = card_text(app, 6).splitlines()
        text = "\n".join(inside)
        assert "Choose the OAuth" in text and "claude-1" in text and "25m" in text and "≡1" in text
        assert top.startswith("╭─ LX-6 ─") and len(inside) == 3
        waiting = card_text(app, 3).splitlines()
        assert waiting[-1].endswith(" ⚑G-1 ─╯")
        # A waiting card's edge is drawn in the waiting colour (styles/card.tcss).
        cards = app.board_screen.board.column_of_card(3).body
        assert next(iter(cards.drawn(3)[0])).style.color == cards.look().edges["waiting"].color
        paused = card_text(app, 4).splitlines()
        assert "100%" in paused[3] and paused[-1].endswith(" ‖ budget ─╯")
        assert card_text(app, 5).splitlines()[-1].endswith(" ‖ stalled ─╯")


async def test_filter_by_text_owner_and_status(make_app, seeded):
    app = make_app()
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.press("slash", *"login")
        await pilot.pause()
        shown = {cid for ids in visible(app).values() for cid in ids}
        assert shown == {1, 7, 8, 11}  # titles, and a next action ("describe the login flow")
        await pilot.press("enter")
        assert app.model.query.text == "login"
        await pilot.press("slash", *["backspace"] * 5, *"@codex")
        await pilot.pause()
        shown = {cid for ids in visible(app).values() for cid in ids}
        assert shown == {3}
        await pilot.press(*["backspace"] * 6, *"status:paused")
        await pilot.pause()
        shown = {cid for ids in visible(app).values() for cid in ids}
        assert shown == {4, 5}
        assert "filter: status:paused" in str(app.board_screen.query_one("#board-header").render())
        await pilot.press("escape")
        await pilot.pause()
        assert not app.model.query.active
        assert sum(len(v) for v in visible(app).values()) == 11


async def test_n_adds_a_card_validated_like_the_cli(make_app, seeded):
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("n")
        assert isinstance(app.screen, AddCardModal)
        await pilot.press("enter")  # no title
        error = str(app.screen.query_one("#add-error").render())
        assert "title" in error and "empty" in error
        await pilot.press(*"Ship the logout button", "tab", *"git:push", "tab", *"LX-1", "tab", *"1", "tab", *"codex-1")
        await pilot.press("enter")
        await app.ops_idle()
        await pilot.pause()
        assert not isinstance(app.screen, AddCardModal)
        card = card_ops.show_card(app.store, 12)
        assert (card.title, card.needs, card.after, card.priority, card.assignee, card.status) == (
            "Ship the logout button",
            ("git:push",),
            (1,),
            1,
            "codex-1",
            "ready",
        )
        assert 12 in app.board_screen.board.column("ready").card_ids()


async def test_add_card_refuses_a_bad_priority(make_app, seeded):
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("n", *"x", "tab", "tab", "tab", *"9", "enter")
        assert isinstance(app.screen, AddCardModal)
        assert "priority" in str(app.screen.query_one("#add-error").render())
        await pilot.press("escape")
        assert not isinstance(app.screen, AddCardModal)
        assert len(card_ops.list_cards(app.store)) == 11


async def test_plus_raises_a_paused_cards_budget(make_app, seeded):
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        assert app.board_screen.select_card(4)
        await pilot.press("plus")
        assert isinstance(app.screen, BudgetModal)
        await pilot.press(*"2", "enter")
        await app.ops_idle()
        await pilot.pause()
        card = card_ops.show_card(app.store, 4)
        assert card.status == "active" and card.quota.turns.limit == 5
        assert app.model.column_of(app.model.cards[4]) == "active"


async def test_help_lists_every_key(make_app):
    from loopx_tui.modals.confirm import ConfirmModal
    from loopx_tui.modals.gate import GateModal
    from loopx_tui.screens.artifact import ArtifactScreen
    from loopx_tui.screens.board import BoardScreen
    from loopx_tui.screens.card import CardScreen
    from loopx_tui.screens.timeline import TimelineScreen
    from loopx_tui.widgets.evidence_log import EvidenceLog

    app = make_app()
    async with app.run_test(size=(100, 40)) as pilot:
        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen)
        from loopx_tui.screens.help import HelpText

        await pilot.pause()
        shown = app.screen.query_one(HelpText)
        assert shown.region.height > 20  # laid out, as tall as the dialog allows
        text = " ".join(shown.text.split())  # (wrapped at the dialog's width)
        for screen in (BoardScreen, GateModal, CardScreen, EvidenceLog, ArtifactScreen, TimelineScreen, ConfirmModal):
            for binding in screen.BINDINGS:
                assert " ".join((binding.tooltip or binding.description).split()) in text, binding
        await pilot.press("escape")
        assert not isinstance(app.screen, HelpScreen)


async def test_the_help_is_laid_out_ahead_and_the_first_question_mark_only_draws_it(make_app, monkeypatch):
    from loopx_tui.screens import help

    layouts = []
    renderables = help.help_renderables
    monkeypatch.setattr(help, "_LAID_OUT", {})  # (none left by another test in this process)
    monkeypatch.setattr(help, "help_renderables", lambda app: layouts.append(app) or renderables(app))
    app = make_app()
    async with app.run_test(size=(160, 48)) as pilot:
        await app.reads_idle()  # (laid out after the first paint, with the history check)
        assert len(layouts) == 1
        await pilot.press("question_mark")
        await pilot.pause()
        shown = app.screen.query_one(help.HelpText)
        assert shown.content_size.width == help.WIDTH and "this list of keys" in shown.text
        assert len(layouts) == 1  # drawn from what was laid out ahead


async def test_command_palette_entries(make_app):
    app = make_app()
    async with app.run_test(size=(100, 30)):
        titles = [c.title for c in app.get_system_commands(app.screen)]
        for wanted in (
            "Board: toggle view",
            "Board: filter cards",
            "Board: add a card",
            "Gates: answer waiting gates",
            "Help: every key",
        ):
            assert wanted in titles


async def test_a_card_added_by_another_process_shows_up_live_without_a_reload(make_app, seeded):
    app = make_app(background=True, poll_interval=0.02)
    async with app.run_test(size=(120, 36)) as pilot:
        board = app.board_screen.board
        drawn = lambda cid: board.column_of_card(cid).body.drawn(cid)  # noqa: E731
        before = {cid: drawn(cid) for cid in (6, 7)}
        assert all(before.values())
        proc = loopx(seeded.location, "card", "add", "From another process")
        assert proc.returncode == 0, proc.stderr
        assert await wait_until(pilot, lambda: 12 in board.column("ready").card_ids())
        await laid_out(pilot, board.column("ready").body)  # what is on screen is drawn after the layout, not before it
        assert await wait_until(pilot, lambda: drawn(12) is not None)
        assert "From another process" in card_text(app, 12)
        # Only the new card was drawn; the others' lines are the very same.
        assert all(drawn(cid) is lines for cid, lines in before.items())
        # An agent's write elsewhere moves a card live.
        proc = loopx(
            seeded.location, "writeback", "LX-6", "--summary", "More notes", "--tokens", "100", agent="claude-1"
        )
        assert proc.returncode == 0, proc.stderr
        assert await wait_until(pilot, lambda: app.model.cards[6].evidence_count == 2)
        assert await wait_until(pilot, lambda: "≡2" in "".join(s.text for s in drawn(6) or ()))
        assert "≡2" in card_text(app, 6) and drawn(7) is before[7]


async def test_a_gate_asked_by_another_process_pops_live(make_app, seeded):
    from loopx_tui.modals.gate import GateModal

    app = make_app(background=True, poll_interval=0.02)
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.press("g", "escape")  # the gate pending at open, left for later
        proc = loopx(
            seeded.location,
            "gate",
            "ask",
            "LX-6",
            "--question",
            "Use GitHub?",
            "--scope",
            "oauth:github",
            agent="claude-1",
        )
        assert proc.returncode == 6, proc.stdout + proc.stderr
        assert await wait_until(pilot, lambda: app.gates.queue)  # seen live; it waits for the person to be idle
        await idle(pilot)
        assert await wait_until(
            pilot, lambda: isinstance(app.screen, GateModal) and app.screen.ready
        )  # on screen, so keys answer it
        assert app.bells == 1
        await arm(pilot)
        await pilot.press("y")
        await app.ops_idle()
        assert await wait_until(pilot, lambda: app.model.cards[6].status == "active")


WRITER = r"""
import sys, time
from loopx_core.store.discovery import parse_target
from loopx_core.store.backends import Store
from loopx_core.ops import cards
store = Store.open(parse_target(sys.argv[1], "flag"))
for i in range(int(sys.argv[3])):
    cards.add_card(store, {"title": f"{sys.argv[2]} card {i}", "priority": i % 5}, "agent:" + sys.argv[2])
store.close()
"""


@pytest.mark.slow
async def test_eight_agents_writing_at_once(make_app, seeded):
    app = make_app(background=True, poll_interval=0.02)
    async with app.run_test(size=(120, 36)) as pilot:
        env = dict(os.environ)
        procs = [
            subprocess.Popen([sys.executable, "-c", WRITER, str(seeded.location.path), f"w{i}", "15"], env=env)
            for i in range(8)
        ]
        while any(p.poll() is None for p in procs):
            await pilot.pause(0.05)
        assert all(p.returncode == 0 for p in procs)
        assert await wait_until(pilot, lambda: len(app.model.cards) == 11 + 8 * 15, timeout=20)
        await pilot.pause()
        truth = {c.id: c for c in card_ops.list_cards(app.store)}
        assert app.model.cards == truth
        on_screen = sum(col.total for col in app.board_screen.board.columns.values())
        assert on_screen == len(truth)


async def test_an_empty_board(tmp_path):
    from loopx_core.authority.keys import ephemeral
    from loopx_core.ops.board import init_board

    location = parse_target(str(tmp_path / ".loopx" / "board.db"), "flag")
    me = ephemeral("tester")
    init_board(location, None, me, pin=False)[0].close()
    app = board_app_class()(location, background=False, person=me)
    async with app.run_test(size=(80, 24)) as pilot:
        for key in ("enter", "a", "plus", "g", "r", "shift+right", "down", "left", "v", "slash", "escape", "v"):
            await pilot.press(key)
        await pilot.pause()
        assert all(col.total == 0 for col in app.board_screen.board.columns.values())
        assert any("No gates" in m for _, m in app.notices)


async def test_a_missing_board_says_how_to_create_one(tmp_path):
    location = parse_target(str(tmp_path / "nowhere" / "board.db"), "flag")
    app = board_app_class()(location, background=False)
    async with app.run_test(size=(80, 24)) as pilot:
        assert isinstance(app.screen, NoBoardScreen)
        text = str(app.screen.query_one("#no-board").render())
        assert "loopx init" in text and "no board at" in text
        await pilot.press("q")
    assert app.return_value == 4


async def test_no_color_is_respected(make_app, monkeypatch):
    monkeypatch.setenv("NO_COLOR", "1")
    app = make_app()
    assert app.no_color
    async with app.run_test(size=(80, 24)):
        assert any(type(f).__name__ in ("Monochrome", "NoColor") for f in app._filters)
        svg = app.export_screenshot()
    # Only greys on screen (#c5c8c6 is the SVG theme's default text colour).
    import re

    def grey(hex6: str) -> bool:
        rgb = [int(hex6[i : i + 2], 16) for i in (0, 2, 4)]
        return max(rgb) - min(rgb) <= 4

    colours = set(re.findall(r"fill: #([0-9a-f]{6})", svg))
    assert colours and all(grey(c) for c in colours)


async def test_an_agents_change_redraws_what_changed_not_the_whole_board(make_app, seeded, monkeypatch):
    """A writeback from an agent repaints the regions that changed. (Pushed
    over the opening screen, the board was repainted whole on every change:
    Textual keeps the screen under the top one current, and its repaints
    covered the whole board — ~40 ms a change at 160×48.)"""
    from textual._compositor import Compositor

    from .conftest import feed

    app = make_app()
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.pause()
        updates: list[str] = []
        full, partial = Compositor.render_full_update, Compositor.render_partial_update
        monkeypatch.setattr(
            Compositor, "render_full_update", lambda self, *a, **kw: updates.append("full") or full(self, *a, **kw)
        )
        monkeypatch.setattr(
            Compositor,
            "render_partial_update",
            lambda self, *a, **kw: updates.append("partial") or partial(self, *a, **kw),
        )
        proc = loopx(
            seeded.location, "writeback", "LX-6", "--summary", "More notes", "--tokens", "100", agent="claude-1"
        )
        assert proc.returncode == 0, proc.stderr
        await feed(app)
        for _ in range(5):
            await pilot.pause()
        assert "≡2" in card_text(app, 6)  # on screen
        assert updates and "full" not in updates, updates


async def test_the_owner_view_is_built_ahead_and_kept_up_to_date(make_app, seeded):
    """Its first cards are read after the first paint and its columns built
    hidden: the first `v` only shows them — with what changed meanwhile."""
    from .conftest import feed

    app = make_app()
    async with app.run_test(size=(120, 36)) as pilot:
        await app.reads_idle()
        await pilot.pause()
        board = app.board_screen.board
        ahead = board.views.get("owner")
        assert ahead is not None and not ahead.display  # built, hidden
        proc = loopx(seeded.location, "writeback", "LX-6", "--summary", "More notes", agent="claude-1")
        assert proc.returncode == 0, proc.stderr
        await feed(app)
        await pilot.pause()
        await pilot.press("v")
        await pilot.pause()
        assert board.views["owner"] is ahead and ahead.display  # the same columns, shown
        assert "≡2" in card_text(app, 6)  # the change made while it was hidden


async def test_a_cards_time_left_counts_down_on_the_board(make_app, seeded):
    from loopx_core.rules import clock

    app = make_app()
    async with app.run_test(size=(120, 36)) as pilot:
        assert "25m" in card_text(app, 6).splitlines()[2]  # LX-6's lease, as the board opened
        now = clock.now()
        clock.set_clock(lambda: now + 600)
        app.tick()  # what the app's clock does every second
        await pilot.pause()
        assert "15m" in "".join(
            s.text for s in app.board_screen.board.column_of_card(6).body.drawn(6)
        )  # drawn on screen again


async def test_without_colour_a_full_quota_bar_stands_out(make_app, monkeypatch):
    """NO_COLOR: the bar's filled cells are drawn in the text's own grey (a
    red bar became a dark grey on a dark card), its empty cells a light shade."""
    from textual.color import Color

    from loopx_tui.widgets.card_face import CARD_ROWS

    monkeypatch.setenv("NO_COLOR", "1")
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        body = app.board_screen.board.column_of_card(4).body  # LX-4: its budget spent (100%)
        row = body.index_of(4) * CARD_ROWS + 3  # its quota line
        segments = list(body.render_line(row))
        background = Color.parse("black")
        for shown in app._filters:
            segments = shown.apply(segments, background)
        filled = [s for s in segments if "█" in s.text and "100%" not in s.text]
        assert filled, [s.text for s in segments]
        for seg in filled:
            fg, bg = seg.style.color.triplet, seg.style.bgcolor.triplet
            assert abs(sum(fg) - sum(bg)) / 3 > 100, (seg.text, fg, bg)  # far apart in brightness
