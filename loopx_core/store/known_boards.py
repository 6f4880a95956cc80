"""The person's boards: every board ``loopx init`` made or the board opened on
this machine, remembered without configuration so that one pane can show them
all (``loopx boards``, ``B`` on the board; issue #42).

The list is ``boards.json`` in the person's LoopX folder
(``rules/person_folder``: platformdirs' config folder, the one the PreToolUse
hook keeps from every agent, so no agent can plant a board in it). A local
board is remembered by its file; a team board by its URL with any password
left out (libpq finds it in ``~/.pgpass`` or ``PGPASSWORD``) and this
machine's checkout of it. Each write replaces the file whole (``keys.write``)
under an advisory lock (``rules/file_lock``); a damaged file reads as empty and
is rewritten on the next remember. At most ``MAX`` boards, the least recently
opened forgotten first."""

from __future__ import annotations

import json
import os
import re
import time
from pathlib import Path
from typing import NamedTuple

from ..rules.file_lock import locked
from ..rules.person_folder import person_folder
from .discovery import BoardLocation, parse_target

FILE = "boards.json"
MAX = 100  # boards remembered
MAX_BYTES = 256 * 1024  # a list larger than this is not read (damaged, or not ours)


class KnownBoard(NamedTuple):
    target: str  # the SQLite file, or the PostgreSQL URL without its password
    kind: str  # "local" | "team"
    name: str  # for people: the project folder's name, or the team board's database
    checkout: str | None  # a team board: this machine's checkout of it (its .loopx/team.json)
    seen: float  # when it was last opened or made (seconds since the epoch)

    def location(self) -> BoardLocation:
        base = Path(self.checkout) if self.checkout else None
        return parse_target(self.target, "known", base)

    def to_json(self) -> dict:
        return {"target": self.target, "kind": self.kind, "name": self.name, "checkout": self.checkout}


def list_path() -> Path:
    return Path(person_folder()) / FILE


def without_password(url: str) -> str:
    """``url`` with the password left out (of the user part and of a ``password=`` parameter)."""
    scheme, sep, rest = url.partition("://")
    if not sep:
        return url
    rest, mark, query = rest.partition("?")
    creds, at, host = rest.rpartition("@")
    if at and ":" in creds:
        rest = creds.split(":", 1)[0] + "@" + host
    if query:
        query = "&".join(p for p in query.split("&") if not p.startswith("password="))
    return f"{scheme}://{rest}{mark if query else ''}{query}"


def entry_for(location: BoardLocation, now: float | None = None) -> KnownBoard:
    seen = time.time() if now is None else now
    if location.backend == "sqlite" and location.path is not None:
        path = Path(os.path.abspath(location.path))
        project = path.parent.parent if path.parent.name == ".loopx" else path.parent
        return KnownBoard(str(path), "local", project.name or str(project), None, seen)
    url = without_password(location.url)
    database = re.sub(r"[?#].*$", "", url).rstrip("/").rsplit("/", 1)[-1] or url
    checkout = str(location.checkout) if location.checkout is not None else None
    name = Path(checkout).name if checkout else database
    return KnownBoard(url, "team", name, checkout, seen)


def known() -> list[KnownBoard]:
    """The remembered boards, the most recently opened first (a damaged list: none)."""
    path = list_path()
    try:
        if path.stat().st_size > MAX_BYTES:
            return []
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    found = []
    for item in doc.get("boards", []) if isinstance(doc, dict) else []:
        try:
            target, kind = str(item["target"]), str(item["kind"])
            if kind not in ("local", "team") or not target:
                continue
            checkout = item.get("checkout")
            found.append(
                KnownBoard(
                    target,
                    kind,
                    str(item.get("name") or target)[:200],
                    str(checkout) if checkout else None,
                    float(item.get("seen") or 0.0),
                )
            )
        except (KeyError, TypeError, ValueError):
            continue
    found.sort(key=lambda b: -b.seen)
    return found[:MAX]


def remember(location: BoardLocation, now: float | None = None) -> KnownBoard | None:
    """Add ``location`` to the list (or mark it opened now). Never fails the
    caller: a list that cannot be written is a list that misses a board."""
    if location.backend == "sqlite" and location.path is None:
        return None
    entry = entry_for(location, now)
    try:
        with _locked():
            boards = [b for b in known() if b.target != entry.target]
            _write([entry, *boards][:MAX])
    except OSError:
        return None
    return entry


def forget(text: str) -> KnownBoard | None:
    """Remove the board ``text`` names (its file, its project folder, its URL or
    its name); the board itself is not touched. None: no such board in the list."""
    with _locked():
        boards = known()
        gone = match(boards, text)
        if gone is not None:
            _write([b for b in boards if b.target != gone.target])
    return gone


def match(boards: list[KnownBoard], text: str) -> KnownBoard | None:
    """The board ``text`` names: its target, its project folder (``.loopx/board.db``
    under it), a team board's checkout or URL (a password in it ignored), or its name when one board has it."""
    wanted = {text, without_password(text)}
    if "://" not in text:
        path = os.path.abspath(os.path.expanduser(text))
        wanted |= {path, os.path.join(path, ".loopx", "board.db")}
    for board in boards:
        if board.target in wanted or (board.checkout is not None and board.checkout in wanted):
            return board
    named = [b for b in boards if b.name == text]
    return named[0] if len(named) == 1 else None


def _write(boards: list[KnownBoard]) -> None:
    from ..authority.keys import write  # (replaced whole, readable by its owner only)

    write(list_path(), {"boards": [dict(b.to_json(), seen=b.seen) for b in boards]})


def _locked() -> locked:
    """One writer at a time (two boards opening at once both stay in the list)."""
    folder = list_path().parent
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    return locked(str(folder / ".boards.lock"))
