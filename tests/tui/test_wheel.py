"""The real wheel, installed the way README's "Install" says (`uv tool install`,
`pipx install`: a venv of the tool's own, deps from the wheel's requirements),
runs the agent guide's turn by hand, writes `init --for` commands that run the installed
copy, starts the board headless (the styles ship) and completes in bash."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import textwrap
import zipfile
from pathlib import Path

import pytest

from loopx_core import DISTRIBUTION, __version__
from loopx_tui.paths import STYLE_FILES
from tests.test_readme_quickstart import run_quickstart

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


def build_wheel(dest: Path, env: dict) -> Path:
    build = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", str(REPO), "--no-deps", "-q", "-w", str(dest)],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert build.returncode == 0, build.stderr
    return next(dest.glob(f"{DISTRIBUTION.replace('-', '_')}-*.whl"))


def clean_env(tmp_path: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LOOPX_", "PYTHON", "VIRTUAL_ENV"))}
    env["PATH"] = os.pathsep.join(p for p in env.get("PATH", "").split(os.pathsep) if not p.startswith(str(REPO)))
    return env


def install(how: str, wheel: Path, tmp_path: Path, env: dict) -> tuple[Path, Path]:
    """README's install commands, with the wheel in place of the registry's name:
    the tool's own venv, and the `loopx` program it puts on PATH."""
    bin_dir = tmp_path / "bin"
    if how == "uv":
        env.update(UV_TOOL_DIR=str(tmp_path / "tools"), UV_TOOL_BIN_DIR=str(bin_dir))
        argv = [
            shutil.which("uv", path=str(Path(sys.executable).parent)) or "uv",
            "tool",
            "install",
            "--python",
            sys.executable,
            str(wheel),
        ]
        venv = tmp_path / "tools" / DISTRIBUTION
    else:
        env.update(PIPX_HOME=str(tmp_path / "pipx"), PIPX_BIN_DIR=str(bin_dir), PIPX_MAN_DIR=str(tmp_path / "man"))
        argv = [sys.executable, "-m", "pipx", "install", "--python", sys.executable, str(wheel)]
        venv = tmp_path / "pipx" / "venvs" / DISTRIBUTION
    done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return venv, bin_dir / "loopx"


@pytest.mark.slow
def test_the_wheel_is_the_published_distribution(tmp_path):
    wheel = build_wheel(tmp_path / "dist", clean_env(tmp_path))
    names = set(zipfile.ZipFile(wheel).namelist())
    for name in STYLE_FILES:
        assert f"loopx_tui/styles/{name}" in names
    assert "loopx_core/demo/agent.py" in names
    info = next(n for n in names if n.endswith(".dist-info/METADATA"))
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names)
    meta = zipfile.ZipFile(wheel).read(info).decode()
    assert (
        f"Name: {DISTRIBUTION}\n" in meta and f"Version: {__version__}\n" in meta and "License-Expression: MIT" in meta
    )
    assert "Programming Language :: Python :: 3.13" in meta
    extras = [line for line in meta.splitlines() if line.startswith("Provides-Extra:")]
    assert extras == ["Provides-Extra: postgres"], extras  # the test groups are not published


@pytest.mark.slow
@pytest.mark.parametrize("how", ["uv", "pipx"])
def test_installed_as_a_tool_it_runs_a_turn_cycle_the_board_and_init_for(tmp_path, how):
    env = clean_env(tmp_path)
    wheel = build_wheel(tmp_path / "dist", env)
    venv, loopx = install(how, wheel, tmp_path, env)
    assert (
        subprocess.run([str(loopx), "--version"], env=env, capture_output=True, text=True).stdout.strip() == __version__
    )

    # the agent guide's turn by hand, typed into a shell with the installed `loopx`
    run_quickstart(tmp_path / "quickstart", shlex.quote(str(loopx)))

    # `init --for`: the hooks and the MCP server it writes run the installed copy, never this checkout
    project = tmp_path / "project"
    project.mkdir()
    person = dict(env, XDG_CONFIG_HOME=str(tmp_path / "config"), HOME=str(tmp_path / "home"))
    for runtime in ("claude-code", "codex"):
        made = subprocess.run(
            [str(loopx), "--json", "init", "--for", runtime, "--agent", "ag1"],
            cwd=project,
            env=person,
            capture_output=True,
            text=True,
            timeout=120,
            stdin=subprocess.DEVNULL,
        )
        assert made.returncode == 0, made.stdout + made.stderr
    written = "".join(
        (project / name).read_text() for name in (".claude/settings.json", ".mcp.json", ".codex/config.toml")
    )
    assert str(REPO) not in written and (str(venv) in written or str(venv.resolve()) in written), written

    # the board's first frame, from the tool's own interpreter (the styles found in the install)
    work = tmp_path / "elsewhere"  # not the repo: only the installed wheel can be imported
    work.mkdir()
    python = venv / "bin" / "python"
    run = subprocess.run(
        [str(python), "-c", SCRIPT, str(work / ".loopx" / "board.db")],
        cwd=work,
        env=dict(env, TEXTUAL_ANIMATIONS="none"),
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert (
        run.stdout.startswith("OK") and "site-packages/loopx_tui/styles" in run.stdout and str(REPO) not in run.stdout
    )

    # completion, from the installed copy
    script = subprocess.run([str(loopx), "completion", "bash"], env=env, capture_output=True, text=True)
    assert script.returncode == 0 and "complete " in script.stdout and "loopx" in script.stdout
