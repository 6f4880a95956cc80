"""Regenerate the SVG screenshots the README shows (``./dev shots``).

They draw the same seeded board as the snapshot tests (loopx_core.demo.seed),
with the clock frozen and every background worker off, so a rerun gives the
same files unless the screens changed."""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("TEXTUAL_ANIMATIONS", "none")
os.environ.pop("NO_COLOR", None)

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from loopx_core.demo.seed import seed_board, seed_person  # noqa: E402
from loopx_core.rules import clock  # noqa: E402
from loopx_tui.app import LoopxApp  # noqa: E402

PERSON = seed_person()  # the seeded board's person

SHOTS = (
    # (file, terminal size, keys, card to open)
    ("board.svg", (120, 36), (), None),
    ("owner.svg", (120, 36), ("v",), None),
    ("gate.svg", (120, 36), ("g",), None),
    ("card.svg", (120, 36), (), 1),
    ("small.svg", (80, 24), (), None),
    ("timeline.svg", (120, 36), ("t",), None),
)


async def shoot(location, name: str, size: tuple[int, int], keys, card) -> Path:
    # The clock of keys stands still (no gate opens by itself mid-shot), and the
    # gate dialog is shown armed, as the person sees it a second after it opens.
    app = LoopxApp(location, background=False, person=PERSON, ticks=lambda: 0.0, arm_delay=0)
    async with app.run_test(size=size) as pilot:
        await app.loaded.wait()
        await pilot.pause()
        app.clear_notifications()
        if card is not None:
            app.open_card(card)
            await app.reads_idle()
            await pilot.pause()
        if keys:
            await pilot.press(*keys)
        await app.reads_idle()
        await pilot.pause()
        app.save_screenshot(name, str(HERE))
    return HERE / name


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="loopx-shots-") as tmp:
        # The board's history check writes this machine's anchor (anchors.json)
        # into the person's LoopX folder: a throwaway board's goes in its own.
        os.environ["XDG_CONFIG_HOME"] = str(Path(tmp) / "config")
        seeded = seed_board(Path(tmp) / "project")
        clock.freeze(seeded.now)
        try:
            for name, size, keys, card in SHOTS:
                path = asyncio.run(shoot(seeded.location, name, size, keys, card))
                print(f"wrote {path.relative_to(HERE.parent)}")
        finally:
            clock.set_clock(None)
    return 0


if __name__ == "__main__":
    sys.exit(main())
