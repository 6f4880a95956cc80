"""``loopx`` / ``loopx board`` and ``loopx demo`` entry points."""

from __future__ import annotations

from loopx_tui import launch
from loopx_tui.app import LoopxApp
from tests.polling import until_async


def _run_headless(seen: dict, keys=("q",)):
    """``App.run`` replaced by a headless run: the app starts, the test looks, keys quit it."""

    def fake_run(self, *a, **k):
        import asyncio

        async def go():
            async with self.run_test(size=(80, 24)) as pilot:
                await asyncio.wait_for(self.loaded.wait(), 60)
                await pilot.pause()
                seen["screen"] = type(self.screen).__name__
                seen["store"] = self.store
                seen["text"] = (
                    str(self.screen.query_one("#no-board").render()) if seen["screen"] == "NoBoardScreen" else ""
                )
                await pilot.press(*keys)
            return self.return_value

        return asyncio.run(go())

    return fake_run


def test_run_board_without_a_board_shows_how_to_create_one(tmp_path, monkeypatch):
    """Not a hidden board, not a line on stderr: the "No LoopX board here" screen, then exit 4."""
    seen: dict = {}
    monkeypatch.setattr(LoopxApp, "run", _run_headless(seen))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.delenv("LOOPX_DB", raising=False)
    from loopx_core.store.discovery import discover

    location = discover()
    assert location.source == "none"
    code = launch.run_board(location)
    assert code == 4
    assert seen["screen"] == "NoBoardScreen" and seen["store"] is None
    assert "No LoopX board here" in seen["text"] and "loopx init" in seen["text"]
    assert not (tmp_path / ".loopx").exists() and not (tmp_path / "data").exists()


def test_run_board_opens_the_app_on_the_board(seeded, monkeypatch):
    seen: dict = {}
    monkeypatch.setattr(LoopxApp, "run", _run_headless(seen))
    monkeypatch.setenv(
        "LOOPX_GATE_IDLE", "3600"
    )  # (real time passes here: the pending gate must not open before the test looks)
    assert launch.run_board(seeded.location) == 0
    assert seen["screen"] == "BoardScreen"
    assert seen["store"].location.path == seeded.location.path


def test_run_demo_starts_agents_and_cleans_up(tmp_path, monkeypatch):
    import asyncio

    from loopx_core.demo import runner

    monkeypatch.setenv("LOOPX_DEMO_PACE", "0.05")
    started = {}
    real_start = runner.DemoAgents.start

    def start(self):
        self.delay = 0.05
        real_start(self)
        started["procs"] = list(self.procs)

    monkeypatch.setattr(runner.DemoAgents, "start", start)

    def fake_run(self, *a, **k):
        async def go():
            async with self.run_test(size=(100, 30)) as pilot:
                # the agents' writes arrive through the change poller
                await until_async(
                    lambda: any(c.evidence_count for c in self.model.cards.values()),
                    what="the demo agents' first evidence",
                    pause=lambda: pilot.pause(0.1),
                )
                started["evidence"] = sum(c.evidence_count for c in self.model.cards.values())
                started["demo"] = self.demo

        asyncio.run(go())
        return 0

    monkeypatch.setattr(LoopxApp, "run", fake_run)
    keep = tmp_path / "kept"
    assert launch.run_demo(keep=str(keep)) == 0
    assert started["demo"] and started["evidence"] > 0
    assert len(started["procs"]) == 5 and all(p.poll() is not None for p in started["procs"])  # stopped on exit
    assert (keep / ".loopx" / "board.db").exists()


def test_the_demo_writes_nothing_into_the_persons_folder_and_says_where_it_was(tmp_path, monkeypatch, capsys):
    """The board verifies its history and anchors it: the demo's anchors go in
    its own throwaway folder, the person's LoopX folder stays untouched, and
    on quit it says where the board was and how to keep one."""
    import asyncio
    from pathlib import Path

    from loopx_core.demo import runner

    mine = tmp_path / "my-config"
    monkeypatch.setenv("XDG_CONFIG_HOME", str(mine))
    monkeypatch.setenv("LOOPX_DEMO_PACE", "0.05")
    monkeypatch.setattr(runner.DemoAgents, "start", lambda self: None)  # no runners: the board alone anchors
    seen = {}

    def fake_run(self, *a, **k):
        async def go():
            async with self.run_test(size=(100, 30)) as pilot:
                folder = Path(self.location.path).parents[1]
                seen["folder"] = folder
                await until_async(
                    lambda: (folder / ".config" / "loopx" / "anchors.json").exists(),
                    what="the demo's own anchor",
                    pause=lambda: pilot.pause(0.1),
                )

        asyncio.run(go())
        return 0

    monkeypatch.setattr(LoopxApp, "run", fake_run)
    assert launch.run_demo() == 0
    assert not (mine / "loopx" / "anchors.json").exists() and not mine.exists()
    out = capsys.readouterr().out
    assert str(seen["folder"]) in out and "loopx demo --keep DIR" in out
    assert not seen["folder"].exists()
    import os

    assert os.environ["XDG_CONFIG_HOME"] == str(mine)  # given back


def test_the_board_decides_as_the_person_whose_key_unlocks(seeded, monkeypatch):
    """The board's one unlock: the person's key, one of the board's people; an
    agent identity, no key, or a key the board does not know opens it read-only."""
    from loopx_core.authority import keys
    from loopx_core.authority.people import session_person
    from loopx_core.demo.seed import KEY_FILE
    from loopx_core.store.backends import Store

    store = Store.open(seeded.location)
    try:
        monkeypatch.setenv("LOOPX_KEY", str(seeded.root / ".loopx" / KEY_FILE))
        person, why, hint = session_person(store)
        assert person.actor == "human:seed" and why is None
        monkeypatch.setenv("LOOPX_AGENT", "claude-1")
        person, why, hint = session_person(store)
        assert person is None and "LOOPX_AGENT" in why
        monkeypatch.delenv("LOOPX_AGENT")
        monkeypatch.setenv("LOOPX_HUMAN", "seed")  # a name proves nothing
        monkeypatch.setenv("LOOPX_KEY", str(seeded.root / "nope.json"))
        person, why, hint = session_person(store)
        assert person is None and "no LoopX key" in why
        stranger = keys.create(seeded.root / "stranger.json", "seed", None)
        monkeypatch.setenv("LOOPX_KEY", str(stranger.path))
        person, why, hint = session_person(store)
        assert person is None and "not one of this board's people" in why
    finally:
        store.close()


def test_an_artifact_opens_in_the_pager(seeded, monkeypatch):
    import contextlib

    from loopx_core.shapes.values import Artifact
    from loopx_tui.screens import artifact as viewer

    calls = []
    monkeypatch.setenv("PAGER", "less -R")
    monkeypatch.setattr(viewer.subprocess, "call", lambda argv: calls.append(argv) or 0)

    class FakeApp:
        def suspend(self):
            return contextlib.nullcontext()

        def notify(self, *a, **k):
            calls.append(("notify", a))

    viewer.open_in_pager(FakeApp(), Artifact("src/login.html", 1, None), str(seeded.root))
    assert calls == [["less", "-R", str(seeded.root / "src" / "login.html")]]
    viewer.open_in_pager(FakeApp(), Artifact("../outside", 1, None), str(seeded.root))
    assert calls[-1][0] == "notify"


def _sealed_key(seeded, monkeypatch, passphrase: str = "open sesame"):
    """The seeded person's key, sealed with ``passphrase``, as LOOPX_KEY."""
    from loopx_core.authority import keys
    from loopx_core.demo.seed import KEY_FILE

    found = keys.read(seeded.root / ".loopx" / KEY_FILE)
    path = seeded.root / "sealed.json"
    found_copy = keys.KeyFile(path, dict(found.doc))
    keys.reseal(found_copy, found.unlock(), passphrase)
    monkeypatch.setenv("LOOPX_KEY", str(path))
    return path


def test_a_mistyped_passphrase_is_asked_again_three_times_in_all(seeded, monkeypatch):
    from loopx_core.store.backends import Store

    _sealed_key(seeded, monkeypatch)
    store = Store.open(seeded.location)
    try:
        typed, prompts = iter(["open sesam", "open sesme", "open sesame"]), []
        app = launch.board_app(seeded.location, store, ask=lambda prompt: prompts.append(prompt) or next(typed))
        assert app.person is not None and app.person.actor == "human:seed" and app.read_only is None
        assert len(prompts) == 3 and "try again (2 of 3)" in prompts[1] and "(3 of 3)" in prompts[2]
        typed, prompts = iter(["no", "nope", "still no", "never asked"]), []
        app = launch.board_app(seeded.location, store, ask=lambda prompt: prompts.append(prompt) or next(typed))
        assert app.person is None and len(prompts) == 3
        assert app.read_only == "3 wrong passphrases for your key"
        assert "run `loopx board` again" in app.read_only_hint and "sealed.json" in app.read_only_hint
        assert "key init" not in app.read_only_hint  # that would make a new key
    finally:
        store.close()


def test_enter_at_the_passphrase_opens_read_only_at_once(seeded, monkeypatch):
    from loopx_core.authority import keys
    from loopx_core.store.backends import Store

    _sealed_key(seeded, monkeypatch)
    asked = []
    monkeypatch.setattr(keys, "ask_terminal", lambda prompt: asked.append(prompt) or "")
    store = Store.open(seeded.location)
    try:
        app = launch.board_app(seeded.location, store)
        assert app.person is None and len(asked) == 1 and "Enter: open read-only" in asked[0]
        assert "pressed Enter" in app.read_only and "run `loopx board` again" in app.read_only_hint
    finally:
        store.close()
