"""Enter on a card: the drill-down, kept live, and the artifact viewer."""

from __future__ import annotations

from loopx_core.ops.writeback import writeback
from loopx_tui.screens.artifact import ArtifactScreen, read_artifact
from loopx_tui.screens.card import CardScreen
from loopx_tui.widgets.evidence_log import EvidenceLog


def first_artifact(log) -> int:
    return next(i for i in range(log.option_count) if not log.get_option_at_index(i).disabled)


from .conftest import feed, show_done


def static_text(screen, selector: str) -> str:
    return str(screen.query_one(selector).render())


async def test_enter_opens_the_card_with_every_facet(make_app, seeded):
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await show_done(app, pilot)
        assert app.board_screen.select_card(1)
        await pilot.press("enter")
        assert isinstance(app.screen, CardScreen) and app.screen.card_id == 1
        screen = app.screen
        header = static_text(screen, "#card-header")
        for part in ("LX-1", "Write the login form", "done", "owner claude-1", "turns 3/8", "tokens 16k", "$0.09"):
            assert part in header
        await app.reads_idle()
        await pilot.pause()
        log = screen.query_one(EvidenceLog)
        assert len(log.entries) == 4
        paths = [art.path for key, art in log.artifacts.items() if key.startswith("E-")]
        assert paths == ["src/login.html", "src/login.css", "src/login.js"]
        assert screen.query_one("#card-sparkline").data == [5400.0, 4100.0, 6200.0, 0.0] and str(
            screen.query_one("#card-sparkline").render()
        ).startswith("▇▆█ ")
        assert "card_added" in static_text(screen, "#card-events") and "done" in static_text(screen, "#card-events")
        await pilot.press("escape")
        assert not isinstance(app.screen, CardScreen)


async def test_gates_and_handoffs_on_the_card_screen(make_app, seeded):
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        app.open_card(10)
        await pilot.pause()
        gates = static_text(app.screen, "#card-gates")
        assert "rejected" in gates and "by human:seed" in gates and "wait for the Friday window" in gates
        await pilot.press("escape")
        app.open_card(2)
        await pilot.pause()
        await pilot.press("3")
        handoffs = static_text(app.screen, "#card-handoffs")
        assert "codex-1 → claude-1" in handoffs and "not accepted yet" in handoffs and "run in CI" in handoffs


async def test_the_card_screen_follows_new_evidence(make_app, seeded):
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        app.open_card(6)
        await pilot.pause()
        await app.reads_idle()
        await pilot.pause()
        log = app.screen.query_one(EvidenceLog)
        first = log.get_option_at_index(0)
        assert len(log.entries) == 1
        (seeded.root / "notes" / "more.md").write_text("more\n")
        writeback(
            app.store,
            6,
            "claude-1",
            {"summary": "Wrote more notes", "artifacts": ["notes/more.md"], "tokens": 900},
            base=seeded.root,
        )
        await feed(app)
        await app.reads_idle()
        await pilot.pause()
        assert len(log.entries) == 2 and log.get_option_at_index(0) is first  # appended, not re-rendered
        assert app.screen.query_one("#card-sparkline").data == [3600.0, 900.0]


async def test_an_artifact_opens_in_the_viewer_checked_against_its_hash(make_app, seeded):
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        app.open_card(1)
        await pilot.pause()
        await app.reads_idle()
        await pilot.pause()
        log = app.screen.query_one(EvidenceLog)
        log.focus()
        log.highlighted = first_artifact(log)
        await pilot.press("enter")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert isinstance(app.screen, ArtifactScreen)
        assert app.screen.artifact.path == "src/login.html"
        assert "matches the evidence" in static_text(app.screen, "#artifact-header")
        body = app.screen.query_one("#artifact-text").render()
        assert body is not None
        await pilot.press("escape")
        assert isinstance(app.screen, CardScreen)


async def test_a_slow_artifact_does_not_freeze_the_viewer(make_app, seeded, monkeypatch):
    """Reading and hashing happen in a thread: the screen answers keys meanwhile."""
    import threading

    from loopx_core.shapes.values import Artifact
    from loopx_tui.screens import artifact as artifact_screen

    release, real = threading.Event(), artifact_screen.read_artifact

    def slow(art, root):
        release.wait(10)
        return real(art, root)

    monkeypatch.setattr(artifact_screen, "read_artifact", slow)
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        app.open_card(1)
        await pilot.pause()
        app.open_artifact(1, Artifact("src/login.html", None, None))
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, ArtifactScreen) and screen.view is None
        assert "reading and checking the file" in static_text(screen, "#artifact-header")
        await pilot.press("escape")  # answered while the read is still blocked
        assert isinstance(app.screen, CardScreen)
        app.open_artifact(1, Artifact("src/login.html", None, None))
        await pilot.pause()
        release.set()
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert app.screen.view is not None and app.screen.view.text is not None
        assert "reading" not in static_text(app.screen, "#artifact-header")


def test_an_edited_or_escaping_artifact_is_flagged(seeded):
    from loopx_core.shapes.values import Artifact

    view = read_artifact(Artifact("src/login.css", 57, "0" * 64), str(seeded.root))
    assert view.matches is False and view.text.startswith("#login")
    outside = read_artifact(Artifact("../../etc/passwd", 1, None), str(seeded.root))
    assert outside.text is None and "outside" in outside.note
    gone = read_artifact(Artifact("src/nope.txt", None, None, True), str(seeded.root))
    assert gone.text is None and "missing" in gone.note


async def test_times_on_the_card_screen_move_with_the_clock(make_app, seeded):
    """The card screen left open: "37s ago" becomes "2m ago" as the (frozen,
    stepped) clock moves — in the evidence and in the gates alike."""
    from loopx_core.rules import clock
    from loopx_tui.screens.card import gates_text

    t0 = seeded.now
    app = make_app()
    async with app.run_test(size=(120, 36)) as pilot:
        writeback(app.store, 6, "claude-1", {"summary": "One more turn", "tokens": 300}, base=seeded.root)
        app.open_card(6)
        await app.reads_idle()
        await pilot.pause()
        screen = app.screen
        log = screen.query_one(EvidenceLog)
        newest = log.get_option_at_index(log.get_option_index(f"E-{log.entries[-1].id}"))
        clock.freeze(t0 + 37)
        app.tick()
        await pilot.pause()
        assert "37s ago" in str(newest.prompt)
        clock.freeze(t0 + 120)
        app.tick()
        await pilot.pause()
        assert "2m ago" in str(newest.prompt) and "37s ago" not in str(newest.prompt)
        await pilot.press("escape")
        app.open_card(10)
        await app.reads_idle()
        await pilot.pause()
        shown = static_text(app.screen, "#card-gates")
        gate_at = app.screen.detail.gates[0].created_at
        clock.freeze(gate_at + 3 * 3600)
        app.tick()
        await pilot.pause()
        moved = static_text(app.screen, "#card-gates")
        assert moved != shown and "3h ago" in moved
        assert moved == gates_text(app.screen.detail, gate_at + 3 * 3600).plain


async def test_enter_opens_the_first_artifact_at_once(make_app, seeded):
    """The footer offers "⏎ Open artifact" as the card opens: Enter does it,
    no ↓ first. A card without artifacts does not offer it."""
    from loopx_tui.widgets.footer import KeyBar

    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        app.open_card(10)  # no evidence, no artifact
        await app.reads_idle()
        await pilot.pause()
        assert "enter" not in app.screen.query_one(KeyBar).keys
        await pilot.press("escape")
        app.open_card(1)
        await app.reads_idle()
        await pilot.pause()
        assert "enter" in app.screen.query_one(KeyBar).keys
        await pilot.press("enter")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert isinstance(app.screen, ArtifactScreen) and app.screen.artifact.path == "src/login.html"


async def test_a_long_summary_wraps_under_itself_and_one_entry_is_one_cell_of_burn(make_app, seeded):
    summary = (
        "Rewrote the session store so that every request carries its own expiry and the old cookies are refused " * 2
    )
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        app.open_card(6)  # one entry so far
        await app.reads_idle()
        await pilot.pause()
        burn = app.screen.query_one("#card-sparkline")
        assert str(burn.render()) == "█" and burn.size.width > 10  # a cell, not the row in one block
        writeback(app.store, 6, "claude-1", {"summary": summary.strip(), "tokens": 1200}, base=seeded.root)
        await feed(app)
        await app.reads_idle()
        await pilot.pause()
        log = app.screen.query_one(EvidenceLog)
        entry = str(log.get_option_at_index(log.get_option_index(f"E-{log.entries[-1].id}")).prompt).split("\n")
        body = entry[entry.index(next(line for line in entry if line.startswith("  Rewrote"))) :][:4]
        assert len(body) >= 3 and all(line.startswith("  ") and line.strip() for line in body[:3]), body
        assert max(len(line) for line in entry) <= log.scrollable_content_region.width
        assert str(burn.render()) == "█▃"  # 3.6k then 1.2k tokens
