"""Where the TCSS files are: ``loopx_tui/styles`` in an installed wheel (the
build force-includes the top-level ``styles/`` there), ``styles/`` beside the
package in a source checkout."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path, PurePath

# One file per component, in cascade order (later files may refine earlier ones).
STYLE_FILES = (
    "app.tcss",
    "board.tcss",
    "column.tcss",
    "card.tcss",
    "gate_modal.tcss",
    "forms.tcss",
    "card_screen.tcss",
    "evidence_log.tcss",
    "artifact.tcss",
    "help.tcss",
    "no_board.tcss",
    "confirm.tcss",
    "timeline.tcss",
    "boards.tcss",
)


@lru_cache(maxsize=1)
def styles_dir() -> Path:
    here = Path(__file__).resolve().parent
    for candidate in (here / "styles", here.parent / "styles"):
        if (candidate / STYLE_FILES[0]).is_file():
            return candidate
    raise FileNotFoundError(
        f"LoopX styles not found next to {here} (looked in {here / 'styles'} and {here.parent / 'styles'})"
    )


def css_paths() -> list[str | PurePath]:
    folder = styles_dir()
    return [folder / name for name in STYLE_FILES]
