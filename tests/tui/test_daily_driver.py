"""Issue #14: the board as a daily driver. One test per defect and friction
item, each failing without its fix, driven as a person would (Pilot keys and
clicks, real processes for the other side)."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import threading

from rich.cells import cell_len
from textual import events

from loopx_core.ops import cards as card_ops
from loopx_core.ops import gates
from loopx_core.rules.text import terminal_safe
from loopx_core.store.backends import SqliteStore, Store
from loopx_tui.modals.add_card import AddCardModal
from loopx_tui.modals.gate import GateModal
from loopx_tui.screens.board import BoardScreen
from loopx_tui.screens.card import CardScreen
from loopx_tui.widgets.card_list import CardList
from tests.polling import until_async

from .conftest import arm, card_spot, card_text, feed, idle, loopx, show_done

HOSTILE = (
    "esc \x1b[31mred\x1b[0m \x07bell \x1b]0;pwned\x07 \u202eevil \u200bzw \U0001f469\u200d\U0001f4bb \u3164x"
    + "q"
    + "\u0301" * 12
)


def drawable(text: str) -> bool:
    """Every character has a width the terminal and the layout agree on."""
    import unicodedata

    for ch in text:
        if ch < " " or "\x7f" <= ch < "\xa0":
            return False
        if unicodedata.category(ch) in ("Cf", "Cc", "Co", "Cn"):
            return False
        if cell_len(ch) == 0 and unicodedata.category(ch) not in ("Mn", "Me"):
            return False
    return True


# -- defect 1: agents' text on the board ---------------------------------------------------


async def test_agents_text_is_made_safe_on_every_screen(make_app, seeded):
    added = loopx(seeded.location, "card", "add", HOSTILE, "--next", "next \x1b[2J step")
    assert added.returncode == 0, added.stderr
    proc = loopx(
        seeded.location,
        "writeback",
        "LX-6",
        "--summary",
        "summary \x1b]8;;http://x\x07link\x1b]8;;\x07 \x1b[1A up",
        agent="claude-1",
    )
    assert proc.returncode == 0, proc.stderr
    proc = loopx(
        seeded.location,
        "gate",
        "ask",
        "LX-6",
        "--question",
        "Deploy? \x1b[5m blink \u202e",
        "--scope",
        "deploy:prod",
        agent="claude-1",
    )
    assert proc.returncode == 6, proc.stdout + proc.stderr
    app = make_app()
    async with app.run_test(size=(140, 40)) as pilot:
        card = app.model.cards[12]
        assert card.title == terminal_safe(HOSTILE) and drawable(card.title)
        cards = app.board_screen.board.column_of_card(12).body
        await laid_out(pilot, cards)
        face = card_text(app, 12)
        assert all(drawable(line) for line in face.splitlines())
        assert {cell_len(line) for line in face.splitlines()} == {
            cards.scrollable_content_region.width
        }  # the border stays put
        assert all(line[-1] in "│┃╮╯┓┛" for line in face.splitlines())
        await pilot.press("g")  # the seeded gate first; Esc leaves it, and the agent's comes next
        await app.reads_idle()
        await pilot.pause()
        await pilot.press("escape")
        await app.reads_idle()
        await pilot.pause()
        assert isinstance(app.screen, GateModal) and app.screen.gate_id != seeded.gate
        question = str(app.screen.query_one("#gate-question").render())
        assert "blink" in question and drawable(question)
        await pilot.press("escape", "escape")
        await pilot.pause()
        app.open_card(6)
        await app.reads_idle()
        await pilot.pause()
        from loopx_tui.widgets.evidence_log import evidence_text

        log = str(app.screen.query_one("#card-events").render()) + "\n".join(
            evidence_text(ev, seeded.now).plain for ev in app.screen.query_one("EvidenceLog").entries
        )
        assert "link" in log and all(drawable(line) for line in log.splitlines())
    # ... and stored exactly as given.
    import json

    shown = loopx(seeded.location, "card", "show", "LX-12")
    assert json.loads(shown.stdout)["card"]["title"] == HOSTILE


# -- defect 2: one click, one card screen ------------------------------------------------------


async def test_a_click_opens_the_card_once(make_app, seeded):
    app = make_app()
    async with app.run_test(size=(120, 36)) as pilot:
        cards, spot = card_spot(app, 6)
        await pilot.click(cards, offset=spot)
        await app.reads_idle()
        await pilot.pause()
        assert [type(s).__name__ for s in app.screen_stack].count("CardScreen") == 1
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, BoardScreen)


# -- defect 3: the selected card can be told apart, with or without colour --------------------


async def _selected_is_distinct(app, pilot) -> None:
    board = app.board_screen.board
    await show_done(app, pilot)
    for card_id in (7, 9, 1, 3):  # ready, backlog, done, waiting (the orange one)
        assert app.board_screen.select_card(card_id)
        await pilot.pause()
        column = board.column_of_card(card_id)
        for other_id in column.card_ids():
            corner = column.body.card_text(other_id)[0]
            if other_id == card_id:
                assert corner == "┏", (card_id, corner)  # a heavy edge
            else:
                assert corner == "╭", (card_id, other_id, corner)


async def test_the_selected_card_stands_out_in_every_column(make_app):
    app = make_app()
    async with app.run_test(size=(140, 40)) as pilot:
        await _selected_is_distinct(app, pilot)


async def test_the_selected_card_stands_out_without_colour(make_app, monkeypatch):
    monkeypatch.setenv("NO_COLOR", "1")
    app = make_app()
    async with app.run_test(size=(140, 40)) as pilot:
        await _selected_is_distinct(app, pilot)


# -- defect 4: the gate dialog's clock moves ------------------------------------------------------


async def test_the_gate_dialog_counts_time(make_app, seeded):
    now = [seeded.now]
    app = make_app(now=lambda: now[0])
    async with app.run_test(size=(120, 36)) as pilot:
        from loopx_core.rules import clock

        clock.set_clock(lambda: now[0])
        app.gates.deferred.add(seeded.gate)  # (the gate pending at open: this test is about a new one)
        gate, _, _ = await asyncio.to_thread(
            gates.ask, app.store, 6, "claude-1", {"question": "Merge now?", "scope": "git:merge", "deadline": 600}
        )
        await feed(app)
        await idle(pilot)
        modal = app.screen
        assert isinstance(modal, GateModal) and modal.gate_id == gate.id
        dialog = modal.query_one("#gate-dialog")
        assert dialog.border_subtitle == "asked 0s ago"
        assert "in 10m" in str(modal.query_one("#gate-facts").render())
        now[0] += 150
        app.tick()  # what the app's clock interval does every second
        await pilot.pause()
        assert dialog.border_subtitle == "asked 2m30s ago"
        assert "in 7m30s" in str(modal.query_one("#gate-facts").render())


# -- defect 7: keys typed fast after n land in the right fields -----------------------------------


async def test_keys_typed_fast_after_n_land_in_the_right_fields(make_app):
    app = make_app()
    async with app.run_test(size=(120, 36)) as pilot:
        typed = ["n", *"Add a logout button", "tab", *"git:push", "tab", "tab", *"1"]
        for key in typed:  # all at once, as a terminal delivers a fast typist's keys
            app.post_message(events.Key(key, key if len(key) == 1 else None))
        await pilot.pause()
        await pilot.pause()
        assert isinstance(app.screen, AddCardModal)
        values = app.screen.values()
        assert (values["title"], values["needs"], values["after"], values["priority"]) == (
            "Add a logout button",
            "git:push",
            "",
            "1",
        )


async def test_a_key_typed_before_a_gate_appears_never_answers_it(make_app, seeded):
    app = make_app()
    async with app.run_test(size=(120, 36)) as pilot:
        app.post_message(events.Key("g", "g"))
        app.post_message(events.Key("y", "y"))  # meant for something else, typed as the gate popped
        await app.reads_idle()
        await pilot.pause()
        await pilot.pause()
        assert isinstance(app.screen, GateModal)
        assert (await asyncio.to_thread(gates.status, app.store, seeded.gate)).status == "pending"


# -- defect 8: words on the board ----------------------------------------------------------------


async def test_a_board_with_one_card_says_one_card_and_a_scoped_gate_is_a_permission(make_app, seeded, tmp_path):
    from loopx_core.authority.keys import ephemeral
    from loopx_core.ops.board import init_board
    from loopx_core.ops.cards import add_card
    from loopx_core.store.discovery import parse_target

    location = parse_target(str(tmp_path / "one" / ".loopx" / "board.db"), "flag")
    me = ephemeral("tester")
    store, _ = init_board(location, "one", me, pin=False)
    add_card(store, {"title": "only"}, me)
    store.close()
    app = make_app(location, person=me)
    async with app.run_test(size=(100, 30)):
        header = str(app.board_screen.query_one("#board-header").render())
        assert " 1 card " in header + " " and "1 cards" not in header
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("g")
        await app.reads_idle()
        await pilot.pause()
        assert app.screen.query_one("#gate-dialog").border_title.endswith("permission")


# -- defect 9's kind: what is on screen is read after the layout --------------------------------


async def laid_out(pilot, widget) -> None:
    """Wait for the layout that gives ``widget`` its size (an event, not a sleep)."""
    while widget.content_size.width == 0:
        await pilot.pause()


# -- friction --------------------------------------------------------------------------------------


async def test_tab_keeps_focus_on_a_visible_card(make_app):
    app = make_app()
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.pause()
        for _ in range(6):
            await pilot.press("tab")
            focused = app.focused
            assert isinstance(focused, CardList) and focused.selected is not None
            shown = focused.card_region(focused.selected.id)
            assert app.screen.region.contains_region(shown) and shown.area > 0
        await pilot.press("shift+tab")
        assert isinstance(app.focused, CardList)


async def test_an_unknown_status_in_the_filter_is_said_not_silently_empty(make_app):
    app = make_app()
    async with app.run_test(size=(140, 36)) as pilot:
        await pilot.press("slash", *"status:bogus")
        await pilot.pause()
        header = str(app.board_screen.query_one("#board-header").render())
        assert "no status 'bogus'" in header
        assert sum(col.total for col in app.board_screen.board.columns.values()) == 11  # nothing hidden by it


async def test_the_filter_bar_takes_the_footers_row_and_the_columns_keep_their_height(make_app):
    """Opening and closing the filter never lays the cards out again: the bar
    shows in the footer's row (its placeholder says Enter keeps, Esc clears), and
    the footer comes back with the board's keys."""
    from textual.widgets import Input

    from loopx_tui.widgets.footer import KeyBar

    app = make_app()
    async with app.run_test(size=(140, 36)) as pilot:
        screen = app.board_screen
        footer = screen.query_one(KeyBar)
        heights = {key: column.region.height for key, column in screen.board.columns.items()}
        keys = footer.keys
        await pilot.press("slash")
        await pilot.pause()
        bar = screen.query_one("#filter", Input)
        assert bar.display and app.focused is bar and not footer.display
        assert bar.region.y == 35  # the last row: the footer's
        assert {key: column.region.height for key, column in screen.board.columns.items()} == heights
        await pilot.press("escape")
        await pilot.pause()
        assert footer.display and not bar.display and isinstance(app.focused, CardList)
        assert footer.keys == keys and "slash" in keys
        assert {key: column.region.height for key, column in screen.board.columns.items()} == heights


async def test_the_key_bar_shows_the_screens_keys_and_a_click_presses_one(make_app):
    from loopx_tui.widgets.footer import KeyBar

    app = make_app()
    async with app.run_test(size=(140, 36)) as pilot:
        bar = app.board_screen.query_one(KeyBar)
        line = str(bar.render())
        assert bar.keys[:3] == ["enter", "t", "v"] and "View" in line and line.rstrip().endswith("palette")
        x = line.index("vView")
        await pilot.hover(bar, offset=(x + 2, 0))
        assert bar.tooltip and "one column per agent" in bar.tooltip
        await pilot.click(bar, offset=(x + 1, 0))
        await pilot.pause()
        assert app.model.mode == "owner"
        await pilot.click(bar, offset=(line.index("palette"), 0))
        await pilot.pause()
        assert type(app.screen).__name__ == "CommandPalette"


async def test_the_backlog_box_is_empty_until_ticked(make_app):
    app = make_app()
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.press("n")
        await pilot.pause()
        box = app.screen.query_one("#f-backlog")
        assert "X" not in box.render().plain
        box.value = True
        await pilot.pause()
        assert "X" in box.render().plain


async def test_notices_wait_while_a_gate_is_on_screen_at_80x24(make_app, seeded):
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("g")
        await app.reads_idle()
        await pilot.pause()
        assert isinstance(app.screen, GateModal)
        assert not app._notifications  # the start-up toast is gone: nothing covers the question
        app.notice("LX-7 moved to ready")
        await pilot.pause()
        assert not app._notifications
        await pilot.press("escape")
        await pilot.pause()
        assert any("LX-7 moved to ready" in n.message for n in app._notifications)


async def test_the_first_artifact_is_highlighted_one_down_the_next_and_the_footer_says_so(make_app):
    app = make_app()
    async with app.run_test(size=(120, 36)) as pilot:
        app.open_card(1)
        await app.reads_idle()
        await pilot.pause()
        log = app.screen.query_one("EvidenceLog")
        assert log.highlighted_artifact is not None and log.highlighted_artifact.path == "src/login.html"  # no ↓ needed
        await pilot.press("down")
        assert log.highlighted_artifact.path == "src/login.css"  # the entry between is skipped
        from loopx_tui.widgets.footer import KeyBar

        await pilot.pause()
        shown = str(app.screen.query_one(KeyBar).render())  # what the key bar shows
        assert "Next artifact" in shown and "Open artifact" in shown


async def test_a_done_card_shows_who_finished_it(make_app, seeded):
    proc = loopx(seeded.location, "claim", "LX-7", agent="codex-1")
    assert proc.returncode == 0, proc.stderr
    assert loopx(seeded.location, "writeback", "LX-7", "--summary", "limiter added", agent="codex-1").returncode == 0
    assert loopx(seeded.location, "done", "LX-7", "--summary", "shipped", agent="codex-1").returncode == 0
    app = make_app()
    async with app.run_test(size=(140, 40)) as pilot:
        await show_done(app, pilot)
        await laid_out(pilot, app.board_screen.board.column_of_card(7).body)
        assert "by codex-1" in card_text(app, 7)


# -- gate notifications ----------------------------------------------------------------------------


async def test_a_gate_rings_and_notifies_the_desktop_while_the_person_looks_elsewhere(make_app, seeded, tmp_path):
    from loopx_tui.alert import GateAlert

    log = tmp_path / "notified.txt"
    notifier = tmp_path / "notify-send"
    notifier.write_text(f"#!/bin/sh\nprintf '%s\\n' \"$@\" >> {log}\n")
    notifier.chmod(0o755)
    app = make_app()
    app.alert = GateAlert(app, bell=True, desktop=True, command=[str(notifier)])
    async with app.run_test(size=(120, 36)) as pilot:
        app.post_message(events.AppBlur())  # the person is in another pane
        await pilot.pause()
        g1, _, _ = await asyncio.to_thread(
            gates.ask, app.store, 6, "claude-1", {"question": "Use GitHub?", "scope": "oauth:github"}
        )
        await feed(app)
        await app.reads_idle()
        await pilot.pause()
        assert app.bells == 1
        assert app.alert.sent and all(p.wait(30) == 0 for p in app.alert.sent)
        assert "Use GitHub?" in log.read_text() and "G-" in log.read_text()
        # Looking at the board: the bell, no desktop notification. Switched off: neither.
        app.post_message(events.AppFocus())
        await pilot.press("escape")
        await pilot.pause()
        sent = len(app.alert.sent)
        await asyncio.to_thread(
            gates.ask, app.store, 6, "claude-1", {"question": "Use Google?", "scope": "oauth:google"}
        )
        await feed(app)
        await pilot.pause()
        assert app.bells == 2 and len(app.alert.sent) == sent
        app.alert.bell = False
        await pilot.press("escape")
        await asyncio.to_thread(gates.ask, app.store, 6, "claude-1", {"question": "Use both?", "scope": "oauth:both"})
        await feed(app)
        await pilot.pause()
        assert app.bells == 2


# -- no store work on the UI thread -----------------------------------------------------------------


async def test_no_store_work_happens_on_the_ui_thread(make_app, seeded, monkeypatch):
    seen: list[str] = []
    main = threading.main_thread()

    def spy(name, real):
        def wrapped(self, *a, **kw):
            if threading.current_thread() is main:
                seen.append(name)
            return real(self, *a, **kw)

        return wrapped

    for name in ("run", "read", "change_token", "max_seq", "thread_connection"):  # (the board is SQLite's)
        monkeypatch.setattr(SqliteStore, name, spy(name, getattr(SqliteStore, name)))
    real_open = Store.open.__func__
    monkeypatch.setattr(
        Store,
        "open",
        classmethod(
            lambda cls, *a, **kw: (
                (seen.append("open") if threading.current_thread() is main else None) or real_open(cls, *a, **kw)
            )
        ),
    )
    app = make_app()
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.press("v", "v", "enter")
        await app.reads_idle()
        await pilot.press("down", "enter")
        await app.workers.wait_for_complete()
        await pilot.pause()
        await pilot.press("escape", "t")
        await app.reads_idle()
        await pilot.press("escape", "escape", "t")
        await app.reads_idle()
        await pilot.press("escape", "g")
        await app.reads_idle()
        await pilot.press("y")
        await app.ops_idle()
        assert app.board_screen.select_card(9)
        await pilot.press("x", "y")
        await app.ops_idle()
        await pilot.pause()
    assert seen == [], seen


WRITE_LOCK = r"""
import sqlite3, sys
con = sqlite3.connect(sys.argv[1], isolation_level=None, timeout=30)
con.execute("BEGIN IMMEDIATE")
con.execute("UPDATE setting SET value = value WHERE key = 'objective'")
print("locked", flush=True)
sys.stdin.readline()  # hold the write lock until told
con.execute("COMMIT")
"""


async def test_keys_answer_while_another_process_holds_the_write_lock(make_app, seeded):
    app = make_app()
    async with app.run_test(size=(120, 36)) as pilot:
        holder = subprocess.Popen(
            [sys.executable, "-c", WRITE_LOCK, str(seeded.location.path)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        try:
            assert holder.stdout.readline().strip() == "locked"
            # A person's action waits for the lock in its worker…
            assert app.board_screen.select_card(9)
            await pilot.press("r")
            # …while every key still answers: views, a card, its timeline, a gate.
            await pilot.press("v")
            assert app.model.mode == "owner"
            await pilot.press("v")
            assert app.board_screen.select_card(6)
            await pilot.press("enter")
            assert isinstance(app.screen, CardScreen) and app.screen.card_id == 6
            await app.reads_idle()  # WAL: reads never wait for the writer
            await pilot.pause()
            assert app.screen.detail is not None
            await pilot.press("escape", "g")
            await app.reads_idle()
            await pilot.pause()
            assert isinstance(app.screen, GateModal)
            await pilot.press("escape")
            assert [w for w in app.workers if w.group == "ops" and not w.is_finished]  # still waiting for the lock
        finally:
            holder.stdin.write("\n")
            holder.stdin.flush()
            holder.wait(30)
        await app.ops_idle()
        await pilot.pause()
        assert app.model.cards[9].status == "ready"


async def test_a_card_opens_drawn_with_its_detail_and_a_slow_read_does_not_hold_it_back(make_app, seeded, monkeypatch):
    """Enter on a card: its detail is read first (a few ms) and the screen drawn
    once, with the evidence — never a "reading…" frame first. A slow read (a
    busy store) does not hold the screen back: it opens, says it is reading, and
    fills in when the read lands."""
    import threading

    from loopx_tui.reads import BoardReader

    app = make_app()
    shown: list[tuple[int, int]] = []  # (card, details applied) as each card screen came on screen
    monkeypatch.setattr(
        CardScreen, "on_screen_resume", lambda self: shown.append((self.card_id, self.loads)), raising=False
    )
    async with app.run_test(size=(120, 36)) as pilot:
        for card_id in (6, 9):  # the screen built, then the same screen reused
            assert app.board_screen.select_card(card_id)
            await pilot.press("enter")
            await app.reads_idle()
            await pilot.pause()
            assert (
                isinstance(app.screen, CardScreen) and app.screen.card_id == card_id and app.screen.detail is not None
            )
            await pilot.press("escape")
        assert shown == [(6, 1), (9, 1)]

        release = threading.Event()
        read = BoardReader.card_detail
        monkeypatch.setattr(BoardReader, "card_detail", lambda self, card_id: release.wait(60) and read(self, card_id))
        assert app.board_screen.select_card(6)
        await pilot.press("enter")
        await until_async(
            lambda: isinstance(app.screen, CardScreen),
            what="the card screen, before its detail",
            pause=lambda: pilot.pause(0.02),
        )
        assert app.screen.card_id == 6 and app.screen.loads == 0
        assert "reading the card" in str(app.screen.query_one("#card-burn-label").render())
        release.set()
        await app.reads_idle()
        await pilot.pause()
        assert app.screen.loads == 1 and app.screen.detail.card.id == 6
        assert shown[-1] == (6, 0)


async def test_a_long_column_scrolls_to_the_selection_and_reads_on(make_app, tmp_path):
    """The cards in hand are a scroll away; "+N more" counts those below the
    screen; ↓ past the last card in hand reads the next page and goes on."""
    from loopx_core.authority.keys import ephemeral
    from loopx_core.ops.board import init_board
    from loopx_core.ops.cards import add_card
    from loopx_core.store.discovery import parse_target
    from loopx_tui.state import PAGE
    from loopx_tui.widgets.card_face import CARD_ROWS

    location = parse_target(str(tmp_path / "long" / ".loopx" / "board.db"), "flag")
    me = ephemeral("tester")
    store, _ = init_board(location, "long", me, pin=False)
    for i in range(30):
        add_card(store, {"title": f"card {i}"}, me)
    store.close()
    app = make_app(location, person=me)
    async with app.run_test(size=(100, 40)) as pilot:
        ready = app.board_screen.board.column("ready")
        cards = ready.body
        assert ready.total == 30 and len(ready.cards) == PAGE < 30
        fits = cards.end_of_view()  # 36 rows under the header: 7 cards and part of an 8th
        assert fits == 8 and ready.more.startswith(f"+{30 - fits:,} more")
        await pilot.resize_terminal(100, 60)  # taller: more cards on screen, fewer below
        await pilot.pause()
        assert cards.end_of_view() == 12 and ready.more.startswith("+18 more")
        await pilot.resize_terminal(100, 40)
        await pilot.pause()
        assert app.board_screen.select_card(ready.card_ids()[0])
        for row in range(1, 30):
            await pilot.press("down")
            await app.reads_idle()  # (past the 24th card: the next page is read)
            await pilot.pause()
            assert cards.cursor == row and cards.selected.title == f"card {row}", (row, cards.cursor)
        assert len(ready.cards) == 30 and cards.selected.title == "card 29"
        shown = cards.card_region(cards.selected.id)
        assert shown.height == CARD_ROWS and cards.region.contains_region(shown)  # scrolled to, whole
        assert ready.more == ""  # nothing below it


async def test_a_read_only_board_refuses_every_human_action_and_says_so(make_app, seeded):
    """Started with LOOPX_AGENT (or without an unlocked key): HumanActions, the one
    place every human action goes through, refuses them all; the header says why."""

    def statuses():
        store = Store.open(seeded.location)
        try:
            return [c.status for c in card_ops.list_cards(store)]
        finally:
            store.close()

    before = await asyncio.to_thread(statuses)
    app = make_app(person=None, read_only="started with LOOPX_AGENT=claude-1: an agent cannot decide")
    async with app.run_test(size=(140, 36)) as pilot:
        assert "an agent cannot decide" in str(app.board_screen.query_one("#board-header").render())
        assert app.board_screen.select_card(9)
        await pilot.press("r")
        await pilot.press("g")
        await app.reads_idle()
        await pilot.pause()
        await arm(pilot)
        await pilot.press("y")
        await app.ops_idle()
        await pilot.pause()
        refusals = [m for sev, m in app.notices if sev == "error"]
        assert any("move LX-9" in m and "read-only" in m for m in refusals)
        assert any("answer G-" in m and "read-only" in m for m in refusals)
    assert await asyncio.to_thread(statuses) == before


async def test_an_empty_first_column_hands_the_selection_on(make_app, tmp_path):
    """Ready is empty: the selection starts on the first card there is, and
    a click on an empty column's space does not strand the keys."""
    from loopx_core.authority.keys import ephemeral
    from loopx_core.ops.board import init_board
    from loopx_core.ops.cards import add_card, move_card
    from loopx_core.store.discovery import parse_target

    location = parse_target(str(tmp_path / "sparse" / ".loopx" / "board.db"), "flag")
    me = ephemeral("tester")
    store, _ = init_board(location, "sparse", me, pin=False)
    add_card(store, {"title": "dependency"}, me)
    for title in ("first", "second"):
        add_card(store, {"title": title, "after": [1]}, me)  # blocked by it
    move_card(store, 1, "cancelled", me)  # (in Done, not read on open)
    store.close()
    app = make_app(location, person=me)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        board = app.board_screen.board
        assert not board.column("ready").cards
        assert app.board_screen.selected_card().title == "first"
        await pilot.click(board.column("ready").body, offset=(3, 10))  # nothing there
        await pilot.press("down")
        assert app.board_screen.selected_card().title in ("first", "second")
        await pilot.press("down")
        assert app.board_screen.selected_card().title == "second"
