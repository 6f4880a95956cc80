"""Each agent's runner on the board: the owner view says under every agent's
name what its runner does, the header sums them up, and p / u / s pause,
resume and stop the focused agent's runner — a person's signed decision,
through the app's one path for decisions (a read-only board refuses)."""

from __future__ import annotations

from loopx_core.ops import runners
from loopx_core.store.backends import Store
from tests.polling import until_async

from .conftest import export, feed, settled

DEAD_PID = 2**22 + 4242


def with_runners(seeded) -> None:
    """claude-1 running turn 3 on LX-1, codex-1 waiting on G-1, shell-1 asleep for 10 minutes."""
    store = Store.open(seeded.location)
    try:
        for agent, runtime in (("claude-1", "claude-code"), ("codex-1", "codex"), ("shell-1", "shell")):
            runners.start(store, agent, f"r-{agent}", runtime, DEAD_PID, "elsewhere")
        for _ in range(3):
            runners.start_turn(store, "claude-1", "r-claude-1", 1, "t")
        runners.set_state(store, "codex-1", "r-codex-1", "waiting", card=2, gate=1)
        runners.set_state(store, "shell-1", "r-shell-1", "asleep", wake_at=seeded.now + 600, detail="no ready card")
    finally:
        store.close()


async def owner_view(pilot) -> None:
    """The board on screen, in owner view."""
    await pilot.app.loaded.wait()
    await pilot.pause()
    await pilot.press("v")
    await pilot.pause()


def test_owner_view_with_runners(seeded, make_app, snap_compare):
    with_runners(seeded)
    assert snap_compare(make_app(), press=["v"], terminal_size=(120, 36), run_before=settled)


def test_owner_view_with_runners_at_80_columns(seeded, make_app, snap_compare):
    """At 80×24 the header keeps its status (gate, need you, runners) and cuts
    the objective; each runner's state has a line of its own in its column."""
    with_runners(seeded)
    assert snap_compare(make_app(), press=["v"], terminal_size=(80, 24), run_before=settled)


def test_owner_view_with_runners_at_160_columns(seeded, make_app, snap_compare):
    with_runners(seeded)
    assert snap_compare(make_app(), press=["v"], terminal_size=(160, 48), run_before=settled)


async def test_the_header_keeps_its_status_and_cuts_the_objective(seeded, make_app):
    with_runners(seeded)
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await owner_view(pilot)
        header = str(app.board_screen.query_one("#board-header").render())
        assert header.startswith(" LoopX  ⚑ G-1 waiting — g")  # the gate queued behind the person's keys, first
        assert "3 need you" in header and "runners ▶1 ⚑1 ☾1" in header and "view:owner" in header
        assert "Ship" not in header  # no room left for it
        lines = {
            key: str(column.runner_line.render())
            for key, column in app.board_screen.board.columns.items()
            if column.runner_line is not None
        }
        assert lines == {"claude-1": "▶ LX-1 #3 0s", "codex-1": "⚑ wait G-1", "shell-1": "☾ sleep 10m"}


async def test_without_runners_the_objective_gets_what_is_left(make_app):
    async with make_app().run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        header = str(pilot.app.board_screen.query_one("#board-header").render())
        assert "Ship the… " in header and header.endswith(
            "3 need you  view:status"
        )  # (after the waiting gate, what is left)


async def test_the_owner_view_says_what_each_runner_does(seeded, make_app):
    with_runners(seeded)
    app = make_app()
    async with app.run_test(size=(160, 40)) as pilot:
        await owner_view(pilot)
        columns = app.board_screen.board.columns
        assert columns["claude-1"].subtitle == "▶ LX-1 #3 0s"
        assert columns["codex-1"].subtitle == "⚑ wait G-1"
        assert columns["shell-1"].subtitle == "☾ sleep 10m"
        assert columns["cursor-1"].subtitle == ""  # no runner
        header = str(app.board_screen.query_one("#board-header").render())
        assert "runners: 1 running · 1 waiting · 1 asleep" in header
        await pilot.press("v")  # status view: no column is an agent's
        await pilot.pause()
        assert all(c.subtitle == "" for c in app.board_screen.board.columns.values())


async def test_p_u_and_s_decide_for_the_focused_agents_runner(seeded, make_app):
    from loopx_tui.widgets.footer import KeyBar

    with_runners(seeded)
    app = make_app()
    async with app.run_test(size=(160, 40)) as pilot:
        await owner_view(pilot)
        screen = app.board_screen
        bar = screen.query_one(KeyBar)
        assert screen.select_card(screen.board.columns["cursor-1"].card_ids()[0])  # no runner for cursor-1
        await pilot.pause()
        assert not {"p", "u", "s"} & set(bar.keys)
        card = screen.board.columns["claude-1"].card_ids()[0]
        assert screen.select_card(card)
        await pilot.pause()
        assert {"p", "u", "s"} <= set(bar.keys) and "Pause" in str(bar.render())  # in the footer where they apply
        for key in ("p", "u", "s"):
            await pilot.press(key)
            await app.ops_idle()
        await feed(app)
        await pilot.pause()
        assert screen.board.columns["claude-1"].subtitle.endswith(" stopping")
    decided = [
        e
        for e in export(seeded.location)["events"]
        if e["kind"].startswith("runner_") and e["actor"].startswith("human:")
    ]
    assert [(e["kind"], e["data"]["agent"], e["signed"]) for e in decided] == [
        ("runner_paused", "claude-1", True),
        ("runner_resumed", "claude-1", True),
        ("runner_stopped", "claude-1", True),
    ]


async def test_a_read_only_board_decides_nothing_for_a_runner(seeded, make_app):
    with_runners(seeded)
    before = export(seeded.location)
    app = make_app(person=None, read_only="opened without a key")
    async with app.run_test(size=(160, 40)) as pilot:
        await owner_view(pilot)
        app.board_screen.select_card(app.board_screen.board.columns["claude-1"].card_ids()[0])
        await pilot.press("s")
        await app.ops_idle()
        assert any("read-only" in message for _, message in app.notices)
    assert export(seeded.location) == before


async def test_the_command_palette_finds_the_runners_by_runner(seeded, make_app):
    from textual.command import CommandList, CommandPalette

    with_runners(seeded)
    app = make_app()
    async with app.run_test(size=(160, 40)) as pilot:
        await owner_view(pilot)
        await pilot.press("ctrl+p")
        await pilot.pause()
        await pilot.press(*"runner")
        palette = app.screen
        assert isinstance(palette, CommandPalette)
        found = palette.query_one(CommandList)

        def prompts() -> str:
            shown = [str(found.get_option_at_index(i).prompt) for i in range(found.option_count)]
            return " | ".join(shown) if sum("runner of" in p for p in shown) >= 9 else ""

        titles = await until_async(
            prompts, what="the palette's answers to 'runner'", pause=pilot.pause
        )  # (it searches in a worker)
        for what in ("Pause runner of claude-1", "Resume runner of codex-1", "Stop runner of shell-1"):
            assert what.replace(" ", "") in titles.replace(" ", ""), titles
