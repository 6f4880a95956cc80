"""A PostgreSQL team board's project folder on this machine (issue #26).

A team board spans machines and people, so it records no project folder: each
checkout of the project that works on it is one. ``loopx init`` of a team
board writes ``.loopx/team.json`` in the folder it runs in (or in the checkout
that already points at the board): the board's uid, which tells this board
from another team board, and a checkout id of its own, which tells this
checkout's workspaces from another checkout's (another clone, another
machine). The pointer lives in ``.loopx/``, LoopX's ground, which agents may
not write; from a card's workspace the main checkout's counts
(``rules/board_file.team_checkout``), never one planted inside the workspace.
"""

from __future__ import annotations

import json
import os
import secrets
from pathlib import Path

from ..rules.board_file import BOARD_DIR, TEAM_FILE

TYPE_CHECKING = False  # (annotations only; checkers read this as typing's)
if TYPE_CHECKING:
    from .discovery import BoardLocation


def read(folder: Path | str) -> dict | None:
    """The pointer in ``folder/.loopx/team.json`` when it is one (a board uid and a checkout id), else None."""
    try:
        with open(os.path.join(folder, BOARD_DIR, TEAM_FILE), encoding="utf-8") as fh:
            found = json.loads(fh.read(65536))
    except (OSError, ValueError):
        return None
    if (
        not isinstance(found, dict)
        or not isinstance(found.get("board_uid"), str)
        or not isinstance(found.get("checkout"), str)
    ):
        return None
    if not found["checkout"].isalnum() or not 8 <= len(found["checkout"]) <= 32:
        return None  # it names a folder: never a path of its own
    return found


def write(folder: Path, board_uid: str, described: str) -> dict:
    """Point ``folder`` at the team board ``board_uid`` (``described``: its URL,
    password masked, for people). The checkout id stays when the folder already
    pointed at this board: its workspaces stay its own."""
    found = read(folder)
    checkout = found["checkout"] if found and found["board_uid"] == board_uid else secrets.token_hex(8)
    pointer = {"board_uid": board_uid, "checkout": checkout, "board": described}
    where = folder / BOARD_DIR
    where.mkdir(parents=True, exist_ok=True)
    ignore = where / ".gitignore"
    if not ignore.exists():  # (.loopx/ holds LoopX's own files, never source)
        ignore.write_text("# Written by `loopx init`: LoopX's own files stay out of git.\n*\n")
    temp = where / f".{TEAM_FILE}.{os.getpid()}"
    temp.write_text(json.dumps(pointer, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    os.replace(temp, where / TEAM_FILE)
    return pointer


def of(location: BoardLocation, board_uid: str) -> tuple[Path, str] | None:
    """(the checkout's folder, its id) when the command runs in a checkout that
    points at this board; None otherwise (no project folder on this machine)."""
    if location.checkout is None or not board_uid:
        return None
    found = read(location.checkout)
    if found is None or found["board_uid"] != board_uid:
        return None  # a checkout of another team board
    return Path(location.checkout), found["checkout"]
