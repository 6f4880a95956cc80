"""Everything a person decides, also on the board (issue #40), under its one
unlock: `:` runs a person's command by the verb's own handler — the CLI's
checks and signature, no passphrase — and `e` edits a card's title,
objective, next action and verify. A refused one says why and changes nothing;
a read-only board runs none."""

from __future__ import annotations

from loopx_core.ops import cards as card_ops
from loopx_tui.modals.command import CommandModal, EditCardModal

from .conftest import HUMAN


async def command(app, pilot, line: str) -> None:
    await pilot.press("colon")
    assert isinstance(app.screen, CommandModal)
    app.screen.query_one("#command-line").value = line
    await pilot.press("enter")
    await app.ops_idle()
    await pilot.pause()


async def test_colon_runs_a_persons_commands_signed_with_the_boards_unlock(make_app, seeded):
    app = make_app()
    async with app.run_test(size=(110, 34)) as pilot:
        await command(app, pilot, "workspace cap 20G")
        await command(app, pilot, "notify set -- /bin/true")
        await command(app, pilot, "notify test")
        await command(app, pilot, "dangerous set 'db:*'")
        await command(app, pilot, "price set m1 --input 1 --output 2")
        await command(app, pilot, "agent add w9 --runtime shell --can git:push --tokens 1000 --window 1h")
        await command(app, pilot, "card window LX-1 --every 1h --turns 5")
        said = "\n".join(message for _, message in app.notices)
        for expected in (
            "capped at 20.0 GB",
            "runs: /bin/true",
            "the command ran",
            "db:*",
            "m1: input $1",
            "registered agent w9",
            "LX-1",
        ):
            assert expected in said, said
        assert not [m for severity, m in app.notices if severity == "error"], app.notices
    rows = app.store.query(
        """SELECT "actor", "kind", "sig" FROM "event" WHERE "kind" IN ('setting_changed', 'price_set', 'agent_added', 'window_set')"""
    )
    assert rows and all(actor == HUMAN and sig for actor, _, sig in rows), rows


async def test_a_refused_command_says_why_and_changes_nothing(make_app, seeded):
    app = make_app()
    async with app.run_test(size=(110, 34)) as pilot:
        before = app.store.query("""SELECT max("seq") FROM "event\"""")
        for line in (
            "card budget LX-1",
            "agent add w9 --runtime shel",
            "notify set -- true",
            "card edit LX-999 --title x",
            "key lock",
            "run --agent a --runtime shell",
        ):
            await command(app, pilot, line)
        errors = [m for severity, m in app.notices if severity == "error"]
        assert len(errors) == 6, app.notices
        assert "nothing to add" in errors[0] and "did you mean 'shell'" in errors[1] and "absolute path" in errors[2]
        assert (
            "no card LX-999" in errors[3]
            and "not run from the board" in errors[4]
            and "not run from the board" in errors[5]
        )
        assert app.store.query("""SELECT max("seq") FROM "event\"""") == before


async def test_e_edits_the_selected_card(make_app, seeded):
    app = make_app()
    async with app.run_test(size=(110, 34)) as pilot:
        assert app.board_screen.select_card(4)
        await pilot.press("e")
        await app.reads_idle()
        await pilot.pause()
        form = app.screen
        assert isinstance(form, EditCardModal)
        before = card_ops.show_card(app.store, 4)
        assert form.query_one("#e-title").value == before.title and form.query_one("#e-body").value == before.body
        form.query_one("#e-verify").value = "pytest -q"
        form.query_one("#e-title").value = "Build the login form, tested"
        await pilot.press("enter")
        await app.ops_idle()
        await pilot.pause()
        card = card_ops.show_card(app.store, 4)
        assert card.title == "Build the login form, tested" and card.verify == "pytest -q" and card.body == before.body
        rows = app.store.query("""SELECT "actor", "data", "sig" FROM "event" WHERE "kind" = 'card_edited'""")
        assert len(rows) == 1 and rows[0][0] == HUMAN and rows[0][2], rows
        assert (
            "Build the login form, tested" in rows[0][1] and "pytest -q" in rows[0][1] and "objective" not in rows[0][1]
        )


async def test_a_read_only_board_runs_no_command(make_app, seeded):
    app = make_app(person=None, read_only="started with LOOPX_AGENT=claude-1: an agent cannot decide")
    async with app.run_test(size=(110, 34)) as pilot:
        before = app.store.query("""SELECT max("seq") FROM "event\"""")
        await command(app, pilot, "workspace cap 1G")
        assert any("read-only" in m for severity, m in app.notices if severity == "error"), app.notices
        assert app.store.query("""SELECT max("seq") FROM "event\"""") == before


async def test_a_persons_half_hour_on_the_board_asks_the_passphrase_once(make_app, seeded, tmp_path, monkeypatch):
    """The board asks when it opens (its key sealed with a passphrase here),
    then the person's usual half hour — agent add, card add, budget, window,
    the notification command set and tested, a gate answered, a runner paused
    and resumed, the workspace cap — asks nothing more."""
    from loopx_core.authority import keys, people
    from loopx_core.demo.seed import seed_person

    sealed = keys.save(tmp_path / "seed.key.json", seed_person(), "the board's passphrase")
    monkeypatch.setenv("LOOPX_KEY", str(sealed.path))
    asked: list[str] = []

    def ask(prompt: str) -> str:
        asked.append(prompt)
        return "the board's passphrase"

    from loopx_core.store.backends import Store

    store = Store.open(seeded.location)
    person, why, _ = people.session_person(store, ask=ask)
    store.close()
    assert person is not None, why
    app = make_app(person=person)
    async with app.run_test(size=(110, 34)) as pilot:
        for line in (
            "agent add w9 --runtime shell --can git:push",
            "card add 'ship it' --max-turns 2",
            f"card budget LX-{4} --add-turns 3",
            "card window LX-4 --every 1h --turns 5",
            "notify set -- /bin/true",
            "notify test",
            f"gate answer G-{seeded.gate} approve",
            "runner pause claude-1",
            "runner resume claude-1",
            "workspace cap 20G",
        ):
            await command(app, pilot, line)
        assert not [m for severity, m in app.notices if severity == "error"], app.notices
    assert len(asked) == 1
    assert (
        app.store.query(
            """SELECT count(*) FROM "event" WHERE "actor" = ? AND "sig" IS NOT NULL AND "seq" > 0""", (HUMAN,)
        )[0][0]
        >= 10
    )


async def test_the_palette_opens_each_persons_command(make_app, seeded):
    from textual.command import CommandPalette

    from tests.polling import until_async

    app = make_app()
    async with app.run_test(size=(110, 34)) as pilot:
        await pilot.press("ctrl+p")
        assert isinstance(app.screen, CommandPalette)
        await pilot.press(*"notifications test")
        await until_async(
            lambda: "Notifications: test" in str(app.screen.query_one("CommandList").get_option_at_index(0).prompt),
            what="the palette's match",
            pause=lambda: pilot.pause(0.05),
        )
        await pilot.press("enter")
        await until_async(
            lambda: isinstance(app.screen, CommandModal), what="the command line", pause=lambda: pilot.pause(0.05)
        )
        assert app.screen.query_one("#command-line").value == "notify test"
        await pilot.press("enter")
        await app.ops_idle()
        await pilot.pause()
        assert any("the command failed" in m or "no notification command" in m for _, m in app.notices), app.notices
