"""Which board a command talks to (DESIGN §3): ``--db``, then ``LOOPX_DB``, then
the nearest ``.loopx/board.db`` upwards from the current folder (from inside
one of the project's git worktrees: the main checkout's, ``rules/board_file.py``), then the user's
board in the platform data dir if one was made there. Commands never create a
board by finding none: only ``loopx init`` creates one, so a command run in
the wrong folder says so instead of quietly using a hidden board."""

from __future__ import annotations

import os
from collections import namedtuple
from pathlib import Path

from ..rules import board_file

TYPE_CHECKING = False  # (typing is not imported on the cold path; checkers read this as typing's)
if TYPE_CHECKING:
    from collections.abc import Mapping

BOARD_DIR = board_file.BOARD_DIR
BOARD_FILE = board_file.BOARD_FILE


class BoardLocation(namedtuple("BoardLocation", "url backend source path checkout", defaults=(None, None))):
    """``url``: sqlite:///abs/path or postgresql://…; ``backend``: "sqlite" |
    "postgresql"; ``source``: "flag" | "env" | "nearest" | "user" | "init" |
    "none" (nothing found: where init would create one); ``path``: the SQLite
    file (a ``Path``), when there is one; ``checkout``: for a PostgreSQL board,
    the folder of this machine's checkout that points at it (its
    ``.loopx/team.json``, ``rules/board_file.team_checkout``), when the command
    runs inside one. (collections' namedtuple, not typing's: the cold path does
    not import typing.)"""

    __slots__ = ()

    @property
    def exists(self) -> bool:
        return self.backend != "sqlite" or (self.path is not None and self.path.exists())

    @property
    def project_root(self) -> Path | None:
        """The folder a discovered ``.loopx/`` board belongs to."""
        if self.path is not None and self.path.parent.name == BOARD_DIR:
            return self.path.parent.parent
        return None

    def describe(self) -> str:
        """For people: the file, or the URL with any password masked."""
        if self.path is not None:
            return str(self.path)
        scheme, rest = self.url.split("://", 1)
        rest, query_mark, query = rest.partition("?")
        creds, at, host = rest.rpartition("@")
        if at and ":" in creds:
            rest = creds.split(":", 1)[0] + ":***@" + host
        if "password=" in query:  # (libpq takes it as a parameter too)
            import re

            query = re.sub(r"(^|&)(password=)[^&]*", r"\1\2***", query)
        return f"{scheme}://{rest}{query_mark}{query}"


# A PostgreSQL board was named in this process: peewee, when it loads, must find
# its driver (store/orm.py hides the drivers from it otherwise).
postgres_named = False


def parse_target(raw: str, source: str, base: Path | None = None) -> BoardLocation:
    global postgres_named
    kind, text = board_file.target(raw, str(base or Path.cwd()))
    if kind == "postgresql":
        postgres_named = True
        checkout = board_file.team_checkout(str(base or Path.cwd()))
        return BoardLocation(
            url=text, backend="postgresql", source=source, checkout=Path(checkout) if checkout else None
        )
    if kind == "other":
        scheme = text.split("://", 1)[0]
        raise ValueError(
            f"unsupported board URL scheme {scheme!r}; use a path, sqlite:///path or postgresql://user@host/db"
        )
    path = Path(text)
    return BoardLocation(url=f"sqlite:///{path}", backend="sqlite", source=source, path=path)


def find_nearest(start: Path | None = None) -> Path | None:
    found, _ = board_file.nearest(str(start or Path.cwd()))
    return Path(found) if found else None


def user_board() -> Path:
    # platformdirs only on this fallback path: most agent calls never need it.
    from platformdirs import user_data_dir

    return Path(user_data_dir("loopx")) / BOARD_FILE


def discover(flag: str | None = None, env: Mapping[str, str] | None = None, cwd: Path | None = None) -> BoardLocation:
    environ = os.environ if env is None else env
    if flag:
        return parse_target(flag, "flag", cwd)
    if environ.get("LOOPX_DB"):
        return parse_target(environ["LOOPX_DB"], "env", cwd)
    nearest, how = board_file.nearest(str(cwd or Path.cwd()))
    if nearest is not None and how is not None:  # (found together)
        return parse_target(nearest, how)  # "nearest", or "worktree": the project's board from one of its worktrees
    user = user_board()
    if user.exists():
        return parse_target(str(user), "user")
    return parse_target(str((cwd or Path.cwd()) / BOARD_DIR / BOARD_FILE), "none")


NO_BOARD = "no LoopX board here (none in this folder or its parents, and no --db or LOOPX_DB)"
NO_BOARD_HINT = "create one in your project folder with `loopx init`, or point at one with --db PATH / LOOPX_DB"


def init_target(flag: str | None, env: Mapping[str, str] | None = None, cwd: Path | None = None) -> BoardLocation:
    """Where ``loopx init`` creates a board: the flag/env target, else ``./.loopx/board.db``."""
    environ = os.environ if env is None else env
    if flag:
        return parse_target(flag, "flag", cwd)
    if environ.get("LOOPX_DB"):
        return parse_target(environ["LOOPX_DB"], "env", cwd)
    return parse_target(str((cwd or Path.cwd()) / BOARD_DIR / BOARD_FILE), "init")
