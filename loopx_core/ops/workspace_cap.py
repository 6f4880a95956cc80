"""The person's cap on the total size of a board's workspaces (#26), and the
workspaces as the board shows them (size on disk, age, removable?).

The cap is a person's signed setting (``loopx workspace cap 20G``; read from
its signed event, a row edited in the database counts for nothing). Opening a
new workspace past the cap first removes the folders that lose nothing
(merged into their base, or archived as they are: ``workspaces.removable``);
still past it, the opening is refused (exit 5) with what to do."""

from __future__ import annotations

import os
import re
from typing import NamedTuple

from ..rules import clock, ids
from ..shapes.errors import Conflict, InvalidInput
from .workspaces import here as mine
from .workspaces import list_workspaces, removable, remove

TYPE_CHECKING = False  # (annotations only: typing is not imported on the cold path; checkers read this as typing's)
if TYPE_CHECKING:
    from ..authority import keys
    from ..store.base import Store

SETTING = "workspace_cap"
UNITS = {
    "": 1,
    "B": 1,
    "K": 1024,
    "KB": 1024,
    "M": 1024**2,
    "MB": 1024**2,
    "G": 1024**3,
    "GB": 1024**3,
    "T": 1024**4,
    "TB": 1024**4,
}


class WorkspaceLine(NamedTuple):
    """One workspace as the board lists it."""

    card: int
    state: str
    card_status: str | None
    branch: str
    path: str
    size: int | None  # bytes on disk (None: the folder is gone)
    age: float  # seconds since it was opened
    removable: str | None  # merged | archived | missing | None

    @property
    def key(self) -> str:
        return ids.key(ids.CARD, self.card)


def human_size(size: int | None) -> str:
    """``712 B``, ``2.1 KB``, ``10.0 GB`` (``—``: unknown) — the CLI and the board say sizes alike."""
    if size is None:
        return "—"
    shown = float(size)
    for unit in ("B", "KB", "MB", "GB"):
        if shown < 1024 or unit == "GB":
            return f"{shown:.0f} {unit}" if unit == "B" else f"{shown:.1f} {unit}"
        shown /= 1024
    return ""


def parse_size(text: str) -> int | None:
    """``20G``, ``500M``, ``1.5GB``, a number of bytes; ``none`` or ``0``: no cap."""
    found = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([KMGT]?B?)\s*", text.upper())
    if text.strip().lower() == "none":
        return None
    if not found:
        raise InvalidInput(f"{text[:40]!r} is not a size", "e.g. 20G, 500M, 1.5GB, or none to lift the cap")
    value = int(float(found.group(1)) * UNITS[found.group(2)])
    return value or None


def cap(store: Store) -> int | None:
    value = store.signed_setting(SETTING)
    return int(value) if value and value.isdigit() and int(value) > 0 else None


def set_cap(store: Store, size: int | None, person: keys.Person) -> int | None:
    store.run(lambda: store.put_signed_setting(SETTING, str(size or 0), person))
    return size


def lines(store: Store) -> list[WorkspaceLine]:
    """Every workspace not removed, with its size on disk and age (git and the
    file system: call it in a worker, or from the CLI) — of this checkout: on a
    team board, another checkout's folders are on its disk, not this one's."""
    from ..workspace import git

    now = clock.now()
    out = []
    for ws, status in list_workspaces(store):
        if ws.state == "removed" or not mine(store, ws):
            continue
        here = os.path.isdir(ws.path)
        try:
            why = removable(ws, store)
        except git.GitError:
            why = None
        out.append(
            WorkspaceLine(
                ws.card,
                ws.state,
                status,
                ws.branch,
                ws.path,
                git.size_on_disk(ws.path) if here else None,
                max(0.0, now - ws.opened_at),
                why,
            )
        )
    return out


def make_room(store: Store) -> None:
    """Before a new workspace is made: within the cap, or the removable folders
    go first (nothing lost), or the opening is refused."""
    limit = cap(store)
    if limit is None:
        return
    found = lines(store)
    total = sum(w.size or 0 for w in found)
    for w in sorted(found, key=lambda w: -w.age):
        if total < limit:
            return
        if w.removable:
            remove(store, w.card, "system")
            total -= w.size or 0
    if total >= limit:
        raise Conflict(
            f"the board's workspaces take {total} bytes, over the cap of {limit} a person set",
            "archive what you no longer need (`loopx workspace archive CARD`, then `loopx workspace gc`), or raise the cap: `loopx workspace cap SIZE`",
            code="workspace_cap",
        )
