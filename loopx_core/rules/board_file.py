"""Which board a folder belongs to, with ``os.path`` alone: the one definition
``store/discovery.py`` and the hooks' cold path both use (issue #27).

``target(raw, cwd)``: what ``--db`` / ``LOOPX_DB`` name — ``("sqlite", path)``,
``("postgresql", url)`` or ``("other", text)`` (a scheme LoopX does not know).

``nearest(cwd)``: the board a command run in ``cwd`` talks to when nothing
names one — ``(path, "nearest")`` for the nearest ``.loopx/board.db`` upwards,
``(path, "worktree")`` when ``cwd`` is inside a linked git worktree (a card's
workspace, issue #26) whose main checkout has a board, or ``(None, None)``.

Inside a linked worktree, the main checkout's board wins over any
``.loopx/board.db`` found inside the worktree: an agent can write its
workspace, so a board file of its own making there must never become the
board its hooks check it against. A worktree counts only when git's own
back-link agrees: its ``.git`` file names a folder under the main
repository's ``.git/worktrees/`` whose ``gitdir`` file names this ``.git``
file back (a ``.git`` file an agent wrote pointing elsewhere does not).

``team_checkout(cwd)``: the project folder a PostgreSQL team board has on this
machine (issue #26) — the nearest folder upwards holding ``.loopx/team.json``
(written there by ``loopx init`` of a team board: "this checkout works on that
board"), from inside a linked worktree the main checkout's, by the same
back-link rule. A team board spans machines, so it records no project folder
of its own; each checkout that points at it is one.
"""

from __future__ import annotations

import os

BOARD_DIR = ".loopx"
BOARD_FILE = "board.db"
TEAM_FILE = "team.json"  # in .loopx/: which team board this checkout works on (board uid, checkout id)


def target(raw: str, cwd: str) -> tuple[str, str]:
    text = raw.strip()
    if text.startswith(("postgresql://", "postgres://")):
        return "postgresql", text
    if text.startswith("sqlite:///"):
        text = text[len("sqlite:///") - 1 :]  # keep the leading slash of an absolute path
        if text.startswith("//"):
            text = text[1:]
    elif "://" in text:
        return "other", text
    path = os.path.expanduser(text)
    if not os.path.isabs(path):
        path = os.path.join(cwd, path)
    if os.path.isdir(path):
        path = os.path.join(path, BOARD_FILE)
    return "sqlite", os.path.abspath(path)


def _read(path: str) -> str | None:
    from .given_paths import Refused, read_regular

    try:  # (a FIFO an agent put in its workspace never blocks: given_paths)
        raw = read_regular(path, 1 << 16, "", "", missing_ok=True, error=Refused)
        return None if raw is None else raw[:4096].decode("utf-8").strip()
    except (Refused, UnicodeDecodeError):
        return None


def main_checkout(worktree: str) -> str | None:
    """The main checkout of the linked worktree whose root is ``worktree`` (its
    ``.git`` is a file), or None when git's back-link does not agree."""
    dot_git = os.path.join(worktree, ".git")
    said = _read(dot_git)
    if not said or not said.startswith("gitdir:"):
        return None
    gitdir = os.path.normpath(os.path.join(worktree, said[len("gitdir:") :].strip()))
    common_text = _read(os.path.join(gitdir, "commondir"))
    if common_text is None:
        return None  # a submodule's .git file, or no worktree at all
    common = os.path.normpath(os.path.join(gitdir, common_text))
    if os.path.basename(common) != ".git" or os.path.dirname(gitdir) != os.path.join(common, "worktrees"):
        return None
    back = _read(os.path.join(gitdir, "gitdir"))
    if back is None or os.path.realpath(os.path.normpath(back)) != os.path.realpath(dot_git):
        return None
    return os.path.dirname(common)


def nearest(cwd: str) -> tuple[str | None, str | None]:
    here = os.path.abspath(cwd)
    found = None
    while True:
        if found is None:
            candidate = os.path.join(here, BOARD_DIR, BOARD_FILE)
            if os.path.exists(candidate):
                found = candidate
        dot_git = os.path.join(here, ".git")
        if os.path.lexists(dot_git):
            if os.path.isfile(dot_git):
                main = main_checkout(here)
                board = os.path.join(main, BOARD_DIR, BOARD_FILE) if main else None
                if board is not None and os.path.exists(board):
                    return board, "worktree"
            if found is not None:
                return found, "nearest"
            # the innermost repository has no board of its own at its root: keep looking upwards
        parent = os.path.dirname(here)
        if parent == here:
            return (found, "nearest") if found else (None, None)
        here = parent


def team_checkout(cwd: str) -> str | None:
    here = os.path.abspath(cwd)
    found = None
    while True:
        if found is None and os.path.isfile(os.path.join(here, BOARD_DIR, TEAM_FILE)):
            found = here
        dot_git = os.path.join(here, ".git")
        if os.path.lexists(dot_git):
            if os.path.isfile(dot_git):
                main = main_checkout(here)
                if main is not None and os.path.isfile(os.path.join(main, BOARD_DIR, TEAM_FILE)):
                    return main  # a workspace: its main checkout's, whatever was planted inside it
            if found is not None:
                return found
        parent = os.path.dirname(here)
        if parent == here:
            return found
        here = parent
