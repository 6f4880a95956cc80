"""One pane for every board a person has (issue #42): the header's figure of
what needs them on all their boards, ``B``'s list, Enter switching the pane,
a board that is gone shown as gone. Two real boards made with the real CLI
and operators in the test's folders; the person's list is in the test's own
config folder (tests/conftest.py ``_person_env``)."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path

import pytest

from tests.conftest import Board
from tests.polling import until_async

from .conftest import Ticks, board_app_class


@pytest.fixture
def two_boards(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """alpha: one gate waiting. beta: a gate waiting and a card paused by its budget (two)."""
    alpha = Board(tmp_path / "alpha", monkeypatch)
    beta = Board(tmp_path / "beta", monkeypatch)
    for b, objective in ((alpha, "Ship the login page"), (beta, "Beta's objective")):
        b.root.mkdir()
        b.ok("init", "--objective", objective)
        b.ok("agent", "add", "a1")
    alpha.ok("card", "add", "Alpha work")
    alpha.ok("claim", "LX-1", agent="a1")
    assert alpha.cli("gate", "ask", "LX-1", "--question", "may I?", "--scope", "deploy:prod", agent="a1").code == 6
    beta.ok("card", "add", "Beta paused", "--max-turns", "1")
    beta.ok("claim", "LX-1", agent="a1")
    beta.ok("writeback", "LX-1", "--summary", "turn 1", agent="a1")
    beta.ok("card", "add", "Beta asks")
    beta.ok("claim", "LX-2", agent="a1")
    assert beta.cli("gate", "ask", "LX-2", "--question", "may I?", "--scope", "db:drop", agent="a1").code == 6
    assert beta.ok("card", "show", "LX-1")["card"]["status"] == "paused"
    return alpha, beta


def _app(board: Board, tester, **kw):
    from loopx_core.authority.people import member
    from loopx_core.store.discovery import parse_target

    store = board.store()
    person = member(store, tester)
    store.close()
    kw.setdefault("background", False)
    return board_app_class()(parse_target(str(board.db), "flag"), person=person, ticks=Ticks(), gate_idle=60.0, **kw)


def _header(app) -> str:
    from loopx_tui.widgets.board import BoardHeader

    return app.board_screen.query_one(BoardHeader).render().plain


async def _surveyed(app, pilot) -> None:
    await asyncio.wait_for(app.surveyed.wait(), 30)
    await pilot.pause()


async def _boards_list(app, pilot):
    """``B``, and the list once every board was read."""
    from loopx_tui.modals.boards import BoardsModal

    await pilot.press("B")
    await until_async(lambda: isinstance(app.screen, BoardsModal), what="the boards list", pause=pilot.pause)
    await _surveyed(app, pilot)
    return app.screen


async def _choose(app, pilot, name: str) -> None:
    """↓ to the board called ``name`` in the list, then Enter."""
    names = [s.board.name for s in app.screen.standings]
    for _ in range(names.index(name)):
        await pilot.press("down")
    await pilot.press("enter")


async def test_the_header_adds_up_what_needs_you_on_every_board(two_boards, tester):
    alpha, _beta = two_boards
    app = _app(alpha, tester)
    async with app.run_test(size=(160, 30)) as pilot:
        await _surveyed(app, pilot)
        assert "Σ3 on 2 boards (B)" in _header(app)  # alpha's gate, beta's gate and its paused card
        assert app.everywhere() == (3, 2)


async def test_B_lists_the_boards_and_enter_switches_the_pane(two_boards, tester):

    alpha, beta = two_boards
    app = _app(alpha, tester, background=True, poll_interval=0.05)
    async with app.run_test(size=(160, 30)) as pilot:
        await _surveyed(app, pilot)
        first_store = app.store
        await _boards_list(app, pilot)
        modal = app.screen
        names = [s.board.name for s in modal.standings]
        assert sorted(names) == ["alpha", "beta"]
        texts = [str(modal.query_one("OptionList").get_option_at_index(i).prompt) for i in range(2)]
        beta_line = texts[names.index("beta")]
        assert "2 need you" in beta_line and "1 gate, 1 paused" in beta_line
        assert "⚑ G-1 db:drop on LX-2: may I?" in beta_line and "⚑ LX-1 paused (budget): Beta paused" in beta_line
        assert "(this pane)" in texts[names.index("alpha")]
        await _choose(app, pilot, "beta")
        await until_async(
            lambda: app.loaded.is_set() and app.board_screen is not None and app.location.path == beta.db,
            what="beta on screen",
            pause=pilot.pause,
        )
        await app.reads_idle()
        await pilot.pause()
        assert app.store is not first_store and app.model.objective == "Beta's objective"
        assert {c.title for c in app.model.cards.values()} == {"Beta paused", "Beta asks"}
        assert app.person is not None and app.read_only is None  # the person's key, as beta knows them
        # its workers follow the new store: a card an agent adds on beta appears
        await until_async(
            lambda: app.poller is not None and app.poller.reader.store is app.store,
            what="the poller",
            pause=pilot.pause,
        )
        beta.ok("card", "add", "Added on beta after the switch")
        await until_async(
            lambda: any(c.title == "Added on beta after the switch" for c in app.model.cards.values()),
            what="the poller on beta",
            pause=lambda: pilot.pause(0.05),
        )
        # and what happens on alpha no longer reaches this pane
        alpha.ok("card", "add", "Added on alpha")
        await asyncio.sleep(0.3)
        await pilot.pause()
        assert not any(c.title == "Added on alpha" for c in app.model.cards.values())
        assert "Σ3 on 2 boards (B)" in _header(app)  # the same people-wide figure, from beta's side
        # beta's waiting gate opens once the person pauses, as on any board the pane opened
        from loopx_tui.modals.gate import GateModal

        app.ticks.step(app.gate_idle + 1)
        await until_async(lambda: isinstance(app.screen, GateModal), what="beta's gate", pause=lambda: pilot.pause(0.1))
        assert app.screen.gate_id in app.model.pending and app.screen.brief.card.title == "Beta asks"


async def test_a_board_that_is_gone_is_shown_gone_and_not_opened(two_boards, tester):

    alpha, beta = two_boards
    shutil.rmtree(beta.root / ".loopx")
    app = _app(alpha, tester)
    async with app.run_test(size=(160, 30)) as pilot:
        await _surveyed(app, pilot)
        assert "Σ1 on 2 boards (B)" in _header(app)  # a gone board needs nothing
        await _boards_list(app, pilot)
        modal = app.screen
        names = [s.board.name for s in modal.standings]
        text = str(modal.query_one("OptionList").get_option_at_index(names.index("beta")).prompt)
        assert "gone" in text and "its file is gone" in text
        await _choose(app, pilot, "beta")
        await pilot.pause()
        assert app.location.path == alpha.db and app.board_screen is not None  # still alpha
        assert any("beta is gone" in text for _, text in app.notices), app.notices
        assert not (beta.root / ".loopx").exists()  # nothing was created


async def test_an_unreachable_board_never_freezes_the_pane(two_boards, tester, monkeypatch):
    """A board that does not answer (a PostgreSQL server that is down) is
    unreachable after the survey's deadline; the pane answers keys meanwhile."""
    import threading

    from loopx_core.ops import my_boards

    alpha, _beta = two_boards
    real = my_boards.standing
    hung = threading.Event()  # beta answers only once the test is over

    def slow(board, timeout):
        if board.name == "beta":
            hung.wait(120)
        return real(board, timeout)

    monkeypatch.setattr(my_boards, "standing", slow)
    monkeypatch.setattr(my_boards, "WAIT", 0.5)
    app = _app(alpha, tester)
    try:
        async with app.run_test(size=(160, 30)) as pilot:
            await pilot.press("v")  # (keys go on while the survey waits)
            assert app.model.mode == "owner"
            await _surveyed(app, pilot)
            beta = next(s for s in app.my_boards if s.board.name == "beta")
            assert beta.state == "unreachable" and "no answer within 0.5 s" in beta.why
    finally:
        hung.set()


async def test_names_are_text_never_markup(tmp_path, monkeypatch, tester):

    odd = Board(tmp_path / "[reverse]odd[blink]", monkeypatch)
    odd.root.mkdir()
    odd.ok("init")
    home = Board(tmp_path / "home", monkeypatch)
    home.root.mkdir()
    home.ok("init")
    app = _app(home, tester)
    async with app.run_test(size=(160, 30)) as pilot:
        await _surveyed(app, pilot)
        await _boards_list(app, pilot)
        prompts = [str(app.screen.query_one("OptionList").get_option_at_index(i).prompt) for i in range(2)]
        assert any("[reverse]odd[blink]" in p for p in prompts), prompts


# -- the list as the person sees it ----------------------------------------------------------------

HERE = "/home/pat/projects/seeded/.loopx/board.db"


def _fixed_boards(monkeypatch):
    """Four boards of every kind and state, and this pane's, at fixed places (a snapshot never shows a tmp path)."""
    from loopx_core.ops.my_boards import BoardStanding, Needs
    from loopx_core.store.known_boards import KnownBoard
    from loopx_tui import reads
    from loopx_tui.app import LoopxApp

    def board(target, kind, name, checkout=None):
        return KnownBoard(target, kind, name, checkout, 0.0)

    standings = [
        BoardStanding(board(HERE, "local", "seeded"), "ok", Needs(gates=1)),
        BoardStanding(
            board("/home/pat/projects/shop/.loopx/board.db", "local", "shop"),
            "ok",
            Needs(2, 1, 0, 1),
            "",
            (
                "G-4 deploy:prod on LX-9: Deploy the checkout to production?",
                "G-5 merge on LX-3: Merge loopx/LX-3 into main?",
                "LX-2 paused (budget): Refund flow",
            ),
        ),
        BoardStanding(
            board("postgresql://pat@db.internal/api", "team", "api [beta]", "/home/pat/projects/api"),
            "ok",
            Needs(0, 0, 1, 0),
            "",
            ("G-2 question on LX-1: Bash: $ rm -rf [bold]build[/bold]",),
        ),
        BoardStanding(board("/home/pat/old/notes/.loopx/board.db", "local", "notes"), "gone", None, "its file is gone"),
        BoardStanding(
            board("postgresql://pat@infra.internal/ops", "team", "ops", "/home/pat/projects/ops"),
            "unreachable",
            None,
            "no answer within 2 s",
        ),
    ]
    monkeypatch.setattr(reads, "survey_boards", lambda wait=None: list(standings))
    monkeypatch.setattr(LoopxApp, "here", lambda self: HERE)
    return standings


def test_snapshot_boards_list(make_app, snap_compare, monkeypatch):
    """`B`: each board's name, kind, place and what needs you there; gone and unreachable ones said so."""
    from .conftest import settled

    _fixed_boards(monkeypatch)

    async def boards(pilot):
        await settled(pilot)
        await pilot.press("B")
        await pilot.app.reads_idle()
        await pilot.pause()

    assert snap_compare(make_app(), terminal_size=(110, 32), run_before=boards)


async def test_the_list_says_every_state_and_counts_in_the_header(make_app, monkeypatch):
    from loopx_tui.modals.boards import BoardsModal

    _fixed_boards(monkeypatch)
    app = make_app()
    async with app.run_test(size=(160, 36)) as pilot:
        await _surveyed(app, pilot)
        paused = sum(n for status, _, n in app.model.tally.rows if status == "paused")
        here = app.needs_here().total  # this board live: its pending gates and paused cards
        assert here == len(app.model.pending) + paused
        total = here + 4 + 1  # shop 4, api 1; gone and unreachable need nothing known
        assert app.everywhere() == (total, 5)
        assert f"Σ{total} on 5 boards (B)" in _header(app)
        await pilot.press("B")
        await until_async(lambda: isinstance(app.screen, BoardsModal), what="the boards list", pause=pilot.pause)
        await app.reads_idle()
        await pilot.pause()
        options = app.screen.query_one("OptionList")
        texts = [str(options.get_option_at_index(i).prompt) for i in range(options.option_count)]
        assert "(this pane)" in texts[0]
        assert "4 need you (2 gates, 1 merge, 1 paused)" in texts[1]
        assert "⚑ G-5 merge on LX-3: Merge loopx/LX-3 into main?" in texts[1] and "… and 1 more there" in texts[1]
        assert "$ rm -rf [bold]build[/bold]" in texts[2]  # an agent's words as text, never markup
        assert "api [beta]" in texts[2] and "/home/pat/projects/api" in texts[2] and "1 question" in texts[2]
        assert "gone" in texts[3] and "unreachable" in texts[4] and "no answer within 2 s" in texts[4]
        assert f"{total} need you across 5 boards · 2 not read" in str(app.screen.query_one("#boards-total").render())
        await pilot.press("down", "down", "down", "down", "enter")  # the unreachable one: refused, the pane stays
        await pilot.pause()
        assert app.board_screen is not None and any("ops is unreachable" in t for _, t in app.notices)
        await pilot.press("B", "escape")
        await pilot.pause()
        assert app.screen is app.board_screen


async def test_no_board_here_B_opens_one_of_yours(two_boards, tester, tmp_path):
    """`loopx` in a folder without a board: the "No LoopX board here" screen's `B` lists yours, Enter opens one."""
    from loopx_core.store.discovery import parse_target
    from loopx_tui.screens.no_board import NoBoardScreen

    _alpha, beta = two_boards
    (tmp_path / "elsewhere").mkdir()
    nowhere = parse_target(str(tmp_path / "elsewhere" / ".loopx" / "board.db"), "none")
    app = board_app_class()(nowhere, person=tester, ticks=Ticks(), background=False)
    async with app.run_test(size=(160, 30)) as pilot:
        assert isinstance(app.screen, NoBoardScreen) and app.exit_code == 4
        await _boards_list(app, pilot)
        await _choose(app, pilot, "beta")
        await until_async(
            lambda: app.board_screen is not None and app.location.path == beta.db, what="beta", pause=pilot.pause
        )
        await app.reads_idle()
        assert app.exit_code == 0 and app.person is not None and app.person.name == "tester"
        assert not (tmp_path / "elsewhere" / ".loopx").exists()


async def test_switching_to_a_team_board_on_postgresql(tmp_path, monkeypatch, tester, pg_url):
    """A team board (the suite's PostgreSQL) in the list by its URL and this
    machine's checkout: Enter opens it in the pane, followed live."""

    local = Board(tmp_path / "local", monkeypatch)
    local.root.mkdir()
    local.ok("init")
    team = Board(tmp_path / "teamwork", monkeypatch, pg_url)
    team.root.mkdir()
    team.ok("init", "--objective", "The team's board")
    team.ok("card", "add", "Shared work")
    app = _app(local, tester, background=True, poll_interval=0.05)
    async with app.run_test(size=(160, 30)) as pilot:
        await _surveyed(app, pilot)
        await _boards_list(app, pilot)
        kinds = [s.board.kind for s in app.screen.standings]
        assert sorted(kinds) == ["local", "team"] and all(s.state == "ok" for s in app.screen.standings)
        for _ in range(kinds.index("team")):
            await pilot.press("down")
        await pilot.press("enter")
        await until_async(
            lambda: app.board_screen is not None and app.store is not None and app.store.backend == "postgresql",
            what="the team board on screen",
            pause=pilot.pause,
        )
        await app.reads_idle()
        assert app.model.objective == "The team's board" and app.person is not None
        assert app.location.checkout == team.root
        team.ok("card", "add", "Added by a teammate")
        await until_async(
            lambda: any(c.title == "Added by a teammate" for c in app.model.cards.values()),
            what="the team board followed",
            pause=lambda: pilot.pause(0.05),
        )


def test_the_board_remembers_each_board_it_opens(tmp_path, monkeypatch):
    """`loopx` on a board not in the list (made elsewhere, say on another
    machine's list): opening it puts it in the person's list."""
    from loopx_core.store import known_boards
    from loopx_core.store.discovery import parse_target
    from loopx_tui import launch
    from loopx_tui.app import LoopxApp

    made = Board(tmp_path / "made", monkeypatch)
    made.root.mkdir()
    made.ok("init")
    known_boards.forget(str(made.root))
    assert known_boards.known() == []
    monkeypatch.setattr(LoopxApp, "run", lambda self, *a, **kw: 0)
    assert launch.run_board(parse_target(str(made.db), "nearest")) == 0
    assert [b.target for b in known_boards.known()] == [str(made.db)]
    assert launch.run_board(parse_target(str(tmp_path / "none" / ".loopx" / "board.db"), "none")) == 0
    assert [b.target for b in known_boards.known()] == [str(made.db)]  # no board there: nothing remembered


async def test_switching_from_a_card_screen_leaves_nothing_of_the_old_board(two_boards, tester):
    """The switch (here from the palette's entry, over a card's screen): the old
    board's screens go with it, and the new board's cards open as usual."""
    from loopx_core.store.known_boards import known
    from loopx_tui.screens.card import CardScreen

    alpha, beta = two_boards
    app = _app(alpha, tester)
    async with app.run_test(size=(160, 30)) as pilot:
        await _surveyed(app, pilot)
        await pilot.press("enter")
        await until_async(lambda: isinstance(app.screen, CardScreen), what="alpha's card", pause=pilot.pause)
        app.switch_board(next(b for b in known() if b.name == "beta"))
        await until_async(
            lambda: app.board_screen is not None and app.location.path == beta.db, what="beta", pause=pilot.pause
        )
        await app.reads_idle()
        await pilot.pause()
        assert app.screen is app.board_screen and app.card_screen is None
        await pilot.press("enter")
        await until_async(lambda: isinstance(app.screen, CardScreen), what="beta's card", pause=pilot.pause)
        assert app.screen.card.title.startswith("Beta")
        assert len([m for m in app._modes if m.startswith("board")]) == 1


async def test_a_board_that_fails_to_open_leaves_B_to_go_elsewhere(two_boards, tester, tmp_path):
    """A board that could not be opened after all (damaged since it was read):
    the pane says why, and B there opens another board."""
    from loopx_core.store import known_boards
    from loopx_core.store.discovery import parse_target
    from loopx_tui.screens.no_board import NoBoardScreen

    alpha, beta = two_boards
    bad = tmp_path / "bad" / ".loopx" / "board.db"
    bad.parent.mkdir(parents=True)
    bad.write_bytes(b"not a board at all" * 100)
    entry = known_boards.remember(parse_target(str(bad), "flag"))
    app = _app(beta, tester)
    async with app.run_test(size=(160, 30)) as pilot:
        await _surveyed(app, pilot)
        assert next(s for s in app.my_boards if s.board.name == "bad").state == "broken"
        app.my_boards = []  # (as if it had been read before it was damaged)
        app.switch_board(entry)
        await until_async(lambda: isinstance(app.screen, NoBoardScreen), what="the refusal", pause=pilot.pause)
        assert app.exit_code != 0
        await _boards_list(app, pilot)
        await _choose(app, pilot, "alpha")
        await until_async(
            lambda: app.board_screen is not None and app.location.path == alpha.db, what="alpha", pause=pilot.pause
        )
        assert app.exit_code == 0
        await pilot.pause()
        assert [m for m in app._modes if m.startswith("opening")] == []
