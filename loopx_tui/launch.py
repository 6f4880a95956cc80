"""Entry points the CLI calls: ``loopx`` / ``loopx board`` and ``loopx demo``.

Both return an exit code (DESIGN §6): 0, or 4 when there is no board."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from loopx_core.store.discovery import BoardLocation


def run_board(location: BoardLocation) -> int:
    """The live board on ``location`` until the person quits. No board (or
    one that cannot be opened): the "No LoopX board here" screen says how to
    create one, and the exit code is 4. The board is read in a worker, so
    the screen is up at once."""
    from loopx_core.shapes.errors import BoardBusy, LoopxError
    from loopx_core.store.backends import Store

    from .app import LoopxApp

    try:
        store = Store.open(location)  # never creates one: `loopx init` does
    except BoardBusy:  # another process holds it: the board says who and opens once it is let go
        app = LoopxApp(
            location, read_only="the board was held by another process when it opened: restart it to unlock your key"
        )
    except LoopxError:
        app = LoopxApp(location)  # it says why, on its "No LoopX board here" screen
    else:
        app = board_app(location, store)
    if location.exists:
        from loopx_core.store.known_boards import remember

        remember(location)  # one of the person's boards (`B` on the board, `loopx boards`)
    code = app.run()
    _close(app)
    return int(code if isinstance(code, int) else app.exit_code)


def board_app(location: BoardLocation, store, ask=None):
    """The board as the person running it: their key unlocked once (asked here,
    before the screen opens), or read-only, saying why (SECURITY.md)."""
    from loopx_core.authority.people import session_person

    from .app import LoopxApp

    person, read_only, hint = session_person(store, ask=ask or _ask_once)
    return LoopxApp(location, store=store, person=person, read_only=read_only, read_only_hint=hint)


def _ask_once(prompt: str) -> str:
    """The board's unlock: asked before it opens (again after a wrong one,
    three times in all); Enter opens it read-only."""
    from loopx_core.authority.keys import ask_terminal
    from loopx_core.shapes.errors import Forbidden

    answer = ask_terminal(prompt.rstrip(": ") + " (Enter: open read-only): ")
    if not answer:
        raise Forbidden("not unlocked (you pressed Enter)", "", code="not_unlocked")
    return answer


DEMO_INTRO = (
    "Real runners (loopx run) drive simulated agents on this throwaway board. Gates pop up as they ask: "
    "y approve · n reject · A remember · Esc later. v shows each runner; p/u/s pause, resume, stop one; ? for every key."
)


def run_demo(keep: str | None = None) -> int:
    """A throwaway board with real runners driving simulated agents (separate
    processes, through the real operators), and the live board on it. The
    demo keeps its own config folder (its anchors, pins) inside its folder:
    the person's own LoopX folder is never written. On quit it says where the
    board was, and how to open it again."""
    import os

    from loopx_core.demo import DemoAgents, build_demo_board

    from .app import LoopxApp

    folder = Path(keep).expanduser().resolve() if keep else Path(tempfile.mkdtemp(prefix="loopx-demo-"))
    saved = os.environ.get("XDG_CONFIG_HOME")
    os.environ["XDG_CONFIG_HOME"] = str(folder / ".config")  # read on each call, here and by the runners it starts
    try:
        location, person = build_demo_board(folder)
        agents = DemoAgents(location, folder)
        agents.start()
        app = LoopxApp(location, demo=True, intro=DEMO_INTRO, person=person)
        try:
            code = app.run()
        finally:
            agents.stop()
            _close(app)
    finally:
        if saved is None:
            os.environ.pop("XDG_CONFIG_HOME", None)
        else:
            os.environ["XDG_CONFIG_HOME"] = saved
    print(demo_farewell(folder, location.path, kept=bool(keep)))
    if not keep:
        shutil.rmtree(folder, ignore_errors=True)
    return int(code if isinstance(code, int) else 0)


def demo_farewell(folder: Path, board: Path, *, kept: bool) -> str:
    if kept:
        return f"The demo board is kept in {folder}\nOpen it again with:  loopx --db {board}"
    return (
        f"The demo's throwaway board was in {folder} (deleted now; your own LoopX folder was not touched).\n"
        "To keep one to open again:  loopx demo --keep DIR, then  loopx --db DIR/.loopx/board.db"
    )


def _close(app) -> None:
    store = getattr(app, "store", None)
    if store is not None:
        try:
            store.close()
        except Exception:
            pass
