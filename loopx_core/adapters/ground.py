"""LoopX's own ground: what no agent may read or write, whatever scopes it holds.

- the board: the ``.loopx`` folder (``board.db`` and its WAL files, the
  ``policy.json``), wherever a path names one, except its ``inbox`` folder
  where agents may drop evidence documents (DESIGN §7); the board file itself
  when ``LOOPX_DB`` puts it elsewhere;
- the runtimes' settings, which hold LoopX's hooks and MCP entry:
  ``.claude/settings*.json``, ``~/.claude.json``, ``.codex/`` (the project's
  and ``$CODEX_HOME`` or ``~/.codex``), ``.mcp.json``;
- the person's LoopX configuration folder (``rules/person_folder``), where the human key lives;
- other terminals: ``/dev/pts/N``, ``/dev/ttyN``, ``/dev/console``,
  ``/proc/PID/fd/N``;
- for writing only, the installed LoopX (``installed``): its package and the
  folder holding it, its virtual environment, the ``loopx`` programs on PATH.

A path counts when its text names one of these (after quote removal, ``~``,
``..``, brace expansion; names compared without case; a glob counts when it
could match one) or when it — or, for a glob, what it matches now — resolves
to one through symbolic links. Values the shell only
computes when it runs (``$x``, ``$(…)``) are not known here: the runtime's
sandbox is the wall for those (``loopx init`` turns it on). Standard library
only: the PreToolUse hook imports it cold.
"""

from __future__ import annotations

import os
import re
import sys
from fnmatch import fnmatchcase

from ..rules.person_folder import person_folder
from ..shell.posix_words import Lazy

BOARD = "it reads or writes LoopX's board (the .loopx folder); only LoopX itself may touch it"
SETTINGS_CLAUDE = "it touches Claude Code's settings, which hold LoopX's hooks"
SETTINGS_CODEX = "it touches Codex's configuration, which holds LoopX's hooks"
SETTINGS_MCP = "it touches the project's MCP server list, which holds LoopX's server"
HUMAN_CONFIG = "it reaches the person's LoopX configuration folder, where the human key lives"
TERMINAL = "it reaches another terminal, where a person may be answering LoopX's gates"
INSTALLED = "it writes the installed LoopX (its package, the environment it runs in, the `loopx` program): the person's next `loopx` would run the agent's code"

# Any of these in a word's text means the word may name LoopX's ground: only
# such words are looked at closely (a cheap filter run on every word).
_NAMES = re.compile(r"\.loopx|\.claude|\.codex|\.mcp\.json|loopx|/dev/(?:pts|tty.|console|vcs)|/proc/")
_CANDIDATE = Lazy(r"[^\s'\"(),;=\[\]<>|&`]+")  # path-shaped pieces of a longer text (code, options)
_TERMINAL = Lazy(r"^/dev/(?:pts(?:/|$)|tty[^/]|console$|vcs)|^/proc/(?!self/|thread-self/)[^/]*/fd(?:/|$)")
_GLOB = Lazy(r"[*?\[]")
MAX_MATCHES = 256  # paths a pattern matches that are followed through symbolic links


class Ground:
    """The ground of one hook call: the project, the board it uses, this user."""

    TERMINAL = TERMINAL  # the shell reader refuses `tmux send-keys`, `write` … with it (shell/guarded)

    def __init__(self, root: str, board_file: str | None = None, board_url: str | None = None):
        self.root = root
        self.board_url = board_url
        home = os.path.expanduser("~")
        codex_home = os.environ.get("CODEX_HOME") or os.path.join(home, ".codex")
        # Places named by absolute path (the rest is found by name, anywhere).
        self._places: list[tuple[str, str, bool]] = [  # (path, why, a folder: everything under it too)
            (person_folder(), HUMAN_CONFIG, True),
            (codex_home, SETTINGS_CODEX, True),
        ]
        if board_file:
            for suffix in ("", "-wal", "-shm", "-journal"):
                self._places.append((board_file + suffix, BOARD, False))
        # Found by name anywhere; listed here too so that deleting a folder that
        # holds them (``rm -rf .``, ``rm -rf ~``) counts.
        self._holds = [
            (os.path.join(root, ".loopx"), BOARD),
            (os.path.join(root, ".codex"), SETTINGS_CODEX),
            (os.path.join(root, ".mcp.json"), SETTINGS_MCP),
            (os.path.join(root, ".claude", "settings.json"), SETTINGS_CLAUDE),
            (os.path.join(home, ".claude", "settings.json"), SETTINGS_CLAUDE),
            (os.path.join(home, ".claude.json"), SETTINGS_CLAUDE),
        ]
        self._places = [(os.path.normpath(p), why, folder) for p, why, folder in self._places]
        self._real_places: list[tuple[str, str, bool]] | None = None
        self._installed: list[tuple[str, bool]] | None = None
        self._real_dirs: dict[str, str] = {}
        self._cwd_inside: dict[str, bool] = {}
        # A word that matches none of this may still reach the ground through
        # a symbolic link (``resolved``), but not by its text.
        names = sorted(
            {os.path.basename(p) for p, _, _ in self._places if os.path.basename(p)}
            | {os.path.basename(os.path.dirname(p)) for p, _, folder in self._places if not folder}
        )
        self._filter = re.compile(_NAMES.pattern + "".join("|" + re.escape(n) for n in names if n), re.IGNORECASE)

    # -- by name -----------------------------------------------------------------------------
    def may_name(self, text: str) -> bool:
        """Could ``text`` name LoopX's ground by its text? (A cheap filter: a
        glob's characters stand for any name, so a pattern is looked at closely.)"""
        return self._filter.search(text) is not None or _GLOB.search(text) is not None

    def cwd_inside(self, cwd: str) -> bool:
        """Is the folder ``cwd`` itself inside LoopX's ground (every relative path is)?"""
        inside = self._cwd_inside.get(cwd)
        if inside is None:
            inside = self.path(os.path.join(cwd, "x"), None) is not None
            self._cwd_inside[cwd] = inside
        return inside

    def text(self, text: str) -> str | None:
        """Why ``text`` (a word, or code holding paths) names LoopX's ground, or None."""
        if not self.may_name(text):
            return None
        if "\n" not in text and " " not in text:
            why = self.path(text, None)
            if why:
                return why
        for m in _CANDIDATE.finditer(text):
            piece = m.group()
            if piece != text and self.may_name(piece):
                why = self.path(piece, None)
                if why:
                    return why
        return None

    def path(self, path: str, cwd: str | None) -> str | None:
        """Why ``path`` (as the shell or a tool would read it from ``cwd``) is
        LoopX's ground, by its text alone; None when it is not."""
        if not path:
            return None
        norm = os.path.normpath(os.path.join(cwd, path)) if cwd and not os.path.isabs(path) else os.path.normpath(path)
        why = _by_name(norm)
        if why:
            return why
        return self._under_place(norm)

    def _under_place(self, norm: str) -> str | None:
        for place, why, folder in self._places:
            if norm == place or (folder and norm.startswith(place.rstrip(os.sep) + os.sep)):
                return why
            if _GLOB.search(norm) and _glob_reaches(norm, place, folder):
                return why
        return None

    def holds(self, path: str, cwd: str | None) -> str | None:
        """Why deleting or moving ``path`` as a whole (``rm -r``) would take
        LoopX's ground with it: it is the ground, or a folder above it."""
        why = self.path(path, cwd)
        if why:
            return why
        if cwd is None and not os.path.isabs(path):
            return None
        norm = os.path.normpath(os.path.join(cwd, path)) if cwd and not os.path.isabs(path) else os.path.normpath(path)
        real = os.path.realpath(norm) if not _GLOB.search(norm) else norm
        for place, why in [(p, w) for p, w, _ in self._places] + self._holds:
            for candidate in {norm, real}:
                if _is_above(candidate, place):
                    return why
        return None

    def under(self, folder: str, cwd: str | None) -> list[tuple[str, bool]]:
        """The ground below ``folder`` (or that folder itself) — each place and
        whether it is a folder (everything under it counts): what a
        ``find FOLDER … -exec CMD {}`` may hand its command."""
        if cwd is None and not os.path.isabs(folder):
            return []
        norm = (
            os.path.normpath(os.path.join(cwd, folder))
            if cwd and not os.path.isabs(folder)
            else os.path.normpath(folder)
        )
        places = [(p, f) for p, _, f in self._places] + [
            (p, os.path.isdir(p) or p.endswith((".loopx", ".codex"))) for p, _ in self._holds
        ]
        return [(p, f) for p, f in dict.fromkeys(places) if _is_above(norm, p) or _is_above(os.path.realpath(norm), p)]

    def searches(self, folder: str, cwd: str | None) -> str | None:
        """Why searching every file below ``folder`` reaches LoopX's ground
        outside the project (the person's LoopX folder, Codex's, Claude Code's
        own settings, a board kept elsewhere); None when it does not. (A folder
        that is the ground: ``path``; the project's own ground below it: the
        search's pattern decides.)"""
        if cwd is None and not os.path.isabs(folder):
            return None
        norm = (
            os.path.normpath(os.path.join(cwd, folder))
            if cwd and not os.path.isabs(folder)
            else os.path.normpath(folder)
        )
        real = os.path.realpath(norm)
        home = os.path.expanduser("~")
        personal = [(p, w) for p, w, _ in self._places] + [
            (os.path.join(home, ".claude", "settings.json"), SETTINGS_CLAUDE),
            (os.path.join(home, ".claude.json"), SETTINGS_CLAUDE),
        ]
        inside = os.path.realpath(self.root).rstrip(os.sep) + os.sep
        for place, why in personal:
            if os.path.realpath(place).startswith(inside):
                continue  # the project's own board: below a search of the project, found by the pattern
            if _is_above(norm, place) or _is_above(real, os.path.realpath(place)):
                return why
        return None

    # -- the installed LoopX: no agent writes it ---------------------------------------------
    def installed(self, path: str, cwd: str | None) -> str | None:
        """Why writing ``path`` rewrites the LoopX the person runs: its package
        folder and what holds it (site-packages, or the source of an editable
        install), the virtual environment it runs in, the ``loopx`` program on
        ``PATH``. Not when these lie inside the project (LoopX worked on as a
        project: the agent's edits are the work)."""
        if not path or "\x00" in path or (cwd is None and not os.path.isabs(path)):
            return None
        norm = os.path.normpath(os.path.join(cwd, path)) if cwd and not os.path.isabs(path) else os.path.normpath(path)
        places = self._installed_places()
        if _GLOB.search(norm):
            return INSTALLED if any(_glob_reaches(norm, place, folder) for place, folder in places) else None
        head, tail = os.path.split(norm)
        real_head = self._real_dirs.get(head)
        if real_head is None:
            real_head = self._real_dirs[head] = os.path.realpath(head)
        for candidate in {norm, os.path.join(real_head, tail)}:
            for place, folder in places:
                if candidate == place or (folder and candidate.startswith(place + os.sep)):
                    return INSTALLED
        return None

    def installed_text(self, text: str, cwd: str | None) -> str | None:
        """``installed`` for the paths in a longer text (interpreter code)."""
        for m in _CANDIDATE.finditer(text):
            piece = m.group()
            if "/" in piece and self.installed(piece, cwd):
                return INSTALLED
        return None

    def _installed_places(self) -> list[tuple[str, bool]]:
        if self._installed is None:
            package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # loopx_core
            found = [(os.path.dirname(package), True)]  # site-packages, or an editable install's source
            if sys.prefix != getattr(sys, "base_prefix", sys.prefix):
                found.append((sys.prefix, True))  # the virtual environment
            programs = [
                os.path.join(os.path.dirname(sys.executable), "loopx"),
                sys.argv[0] if os.path.basename(sys.argv[0] or "") == "loopx" else "",
            ]
            programs += [
                os.path.join(d, "loopx")
                for d in os.environ.get("PATH", "").split(os.pathsep)
                if d and os.path.exists(os.path.join(d, "loopx"))
            ]
            found += [(p, False) for p in programs if p]
            root = os.path.realpath(self.root).rstrip(os.sep) + os.sep
            places: set = set()
            for place, folder in found:
                for form in (os.path.normpath(os.path.abspath(place)), os.path.realpath(place)):
                    if not (form + os.sep).startswith(root) and form != os.sep:
                        places.add((form.rstrip(os.sep) or os.sep, folder))
            self._installed = sorted(places)
        return self._installed

    # -- through symbolic links --------------------------------------------------------------
    def resolved(self, path: str, cwd: str | None) -> str | None:
        """Why ``path`` reaches LoopX's ground once symbolic links are followed
        (a pattern: through what it matches now, as the shell would expand it)."""
        if not path or "\x00" in path or len(path) > 4096:
            return None
        if _GLOB.search(path):
            return self._matched(path, cwd)
        if not os.path.isabs(path):
            if cwd is None:
                return None
            path = os.path.join(cwd, path)
        head, tail = os.path.split(os.path.normpath(path))
        real_head = self._real_dirs.get(head)
        if real_head is None:
            if len(self._real_dirs) > 4096:
                self._real_dirs.clear()
            real_head = os.path.realpath(head)
            self._real_dirs[head] = real_head
        full = os.path.join(real_head, tail) if tail else real_head
        if tail and os.path.islink(full):
            full = os.path.realpath(full)
        why = _by_name(full)
        if why:
            return why
        for place, why, folder in self._places_real():
            if full == place or (folder and full.startswith(place.rstrip(os.sep) + os.sep)):
                return why
        return None

    def _matched(self, pattern: str, cwd: str | None) -> str | None:
        """Why a path the glob ``pattern`` matches now reaches LoopX's ground
        (the first MAX_MATCHES; by its text, ``path`` judged every other name
        the pattern could match)."""
        import glob

        if os.path.isabs(pattern):
            full = pattern
        elif cwd is None:
            return None
        else:
            full = os.path.join(cwd, pattern)
        try:
            for n, match in enumerate(glob.iglob(full)):
                if n >= MAX_MATCHES:
                    break
                why = self.path(match, None) or (self.resolved(match, None) if not _GLOB.search(match) else None)
                if why:
                    return why
        except (OSError, ValueError, RecursionError):
            return None
        return None

    def _places_real(self) -> list:
        if self._real_places is None:
            self._real_places = [(os.path.realpath(p), why, folder) for p, why, folder in self._places]
        return self._real_places


def _is_above(path: str, place: str) -> bool:
    """Is ``path`` (maybe a glob) ``place`` or a folder above it?"""
    if path == place or place.startswith(path.rstrip(os.sep) + os.sep):
        return True
    if not _GLOB.search(path):
        return False
    pat, target = path.split(os.sep), place.split(os.sep)
    return len(pat) <= len(target) and all(_component_matches(p, t) for p, t in zip(pat, target))


def _by_name(norm: str) -> str | None:
    """The rules that hold for a path anywhere: its components name the ground."""
    if _TERMINAL.search(norm):
        return TERMINAL
    # Names are compared without case: a case-insensitive file system (macOS,
    # Windows) or bash's ``nocaseglob`` finds `.CLAUDE/settings.json` too.
    parts = norm.lower().split(os.sep)
    last = len(parts) - 1
    for i, part in enumerate(parts):
        if not part:
            continue
        globbed = _GLOB.search(part) is not None
        if _is(part, ".loopx", globbed):
            if part == ".loopx" and i < last and parts[i + 1] == "inbox":
                continue  # agents drop evidence documents there (DESIGN §7)
            return BOARD
        if _is(part, ".codex", globbed):
            return SETTINGS_CODEX
        if i == last:
            if _is(part, ".mcp.json", globbed):
                return SETTINGS_MCP
            if _is(part, ".claude.json", globbed):
                return SETTINGS_CLAUDE
        if i == last - 1 and _is(part, ".claude", globbed):
            name = parts[i + 1]
            if fnmatchcase(name, "settings*.json") or (
                _GLOB.search(name) and (fnmatchcase("settings.json", name) or fnmatchcase("settings.local.json", name))
            ):
                return SETTINGS_CLAUDE
        if part == ".config" and i < last and _is(parts[i + 1], "loopx", _GLOB.search(parts[i + 1]) is not None):
            return HUMAN_CONFIG
    return None


def _is(part: str, name: str, globbed: bool) -> bool:
    if part == name:
        return True
    return globbed and _component_matches(part, name)


def _glob_reaches(pattern: str, place: str, folder: bool) -> bool:
    """Could the glob ``pattern`` (a normalised absolute path) match ``place``
    or, for a folder, something under it?"""
    pat, target = pattern.split(os.sep), place.split(os.sep)
    if len(pat) < len(target) or (len(pat) > len(target) and not folder):
        return False
    return all(_component_matches(p, t) for p, t in zip(pat, target))


def _component_matches(pattern: str, name: str) -> bool:
    """Could the shell's pattern ``pattern`` match the file name ``name``? A
    pattern matches a dotfile only when its own first character is a literal
    dot (``[.]x`` and ``?x`` do not: bash without ``dotglob``, which
    ``shell/checker`` makes opaque)."""
    if pattern == name:
        return True
    if not _GLOB.search(pattern):
        return False
    return fnmatchcase(name, pattern) and (not name.startswith(".") or pattern.startswith("."))
