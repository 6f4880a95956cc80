"""The real wheel, installed into a fresh venv (no site packages, deps from
the wheel's requirements), starts the board headless: the styles ship."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import zipfile
from pathlib import Path

import pytest

from loopx_tui.paths import STYLE_FILES

REPO = Path(__file__).resolve().parents[2]

SCRIPT = textwrap.dedent(
    """
    import asyncio, sys
    from pathlib import Path
    import loopx_tui
    from loopx_tui.paths import styles_dir
    from loopx_tui.app import LoopxApp
    from loopx_core.ops.board import init_board
    from loopx_core.ops.cards import add_card
    from loopx_core.store.discovery import parse_target
    from loopx_core.authority.keys import ephemeral

    here = styles_dir()
    assert "site-packages" in str(here) and here.parent == Path(loopx_tui.__file__).parent, here
    location = parse_target(sys.argv[1], "flag")
    me = ephemeral("ci")
    store, _ = init_board(location, "wheel check", me, pin=False)
    add_card(store, {"title": "from the wheel"}, me)
    store.close()

    async def main():
        app = LoopxApp(location, background=False, person=me)
        async with app.run_test(size=(80, 24)) as pilot:
            await asyncio.wait_for(app.loaded.wait(), 60)
            await pilot.pause()
            cards = app.board_screen.board.column_of_card(1).body
            drawn = cards.card_text(1)
            assert cards.selected.title == "from the wheel" and "from the" in drawn and drawn.startswith("┏"), drawn  # selected: heavy
            # The styles in styles/card.tcss are applied: the cards' background and the selected edge's colour.
            look = cards.look()
            assert look.face.bgcolor is not None and look.selected.color is not None, look
            await pilot.press("v")
            await pilot.press("t")  # the timeline: textual-plotext came with the wheel
            await app.reads_idle()
            await pilot.pause()
            assert type(app.screen).__name__ == "TimelineScreen" and app.screen.loads == 1
            await pilot.press("escape", "q")
        print("OK", here)

    asyncio.run(main())
    """
)


@pytest.mark.slow
def test_the_wheel_installs_and_the_board_starts(tmp_path):
    dist = tmp_path / "dist"
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    build = subprocess.run([sys.executable, "-m", "pip", "wheel", str(REPO), "--no-deps", "-q", "-w", str(dist)], env=env, capture_output=True, text=True, timeout=600)
    assert build.returncode == 0, build.stderr
    wheel = next(dist.glob("loopx-*.whl"))
    names = set(zipfile.ZipFile(wheel).namelist())
    for name in STYLE_FILES:
        assert f"loopx_tui/styles/{name}" in names
    assert "loopx_core/demo/agent.py" in names

    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    py = venv / "bin" / "python"
    install = subprocess.run([str(py), "-m", "pip", "install", "-q", "--disable-pip-version-check", str(wheel)], env=env, capture_output=True, text=True, timeout=900)
    assert install.returncode == 0, install.stderr[-3000:]

    work = tmp_path / "elsewhere"  # not the repo: only the installed wheel can be imported
    work.mkdir()
    run = subprocess.run([str(py), "-c", SCRIPT, str(work / ".loopx" / "board.db")], cwd=work, env=dict(env, TEXTUAL_ANIMATIONS="none"), capture_output=True, text=True, timeout=180)
    assert run.returncode == 0, run.stdout + run.stderr
    assert run.stdout.startswith("OK") and "site-packages/loopx_tui/styles" in run.stdout
