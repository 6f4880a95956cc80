"""What the watcher looks at: which files are evidence documents, which are
JSONL streams, which may become observed artifacts, and which are noise."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import NamedTuple

DOC_SUFFIX = ".loopx.json"
STREAM_SUFFIX = ".loopx.jsonl"

# Folder names never looked into (anywhere below a watched root).
IGNORED_DIRS = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        ".jj",
        ".bzr",
        ".loopx",
        "__pycache__",
        "node_modules",
        ".venv",
        "venv",
        ".tox",
        ".nox",
        ".eggs",
        ".pytest_cache",
        ".mypy_cache",
        ".ruff_cache",
        ".hypothesis",
        ".cache",
        ".pytype",
        ".pyre",
        ".ipynb_checkpoints",
        ".gradle",
        ".next",
        ".turbo",
        ".parcel-cache",
        ".sass-cache",
        ".direnv",
        ".idea",
    }
)

# Editor swap/backup/lock files and in-flight temp files (atomic writes,
# downloads). Matched against the file's own name.
_IGNORED_NAME = re.compile(
    r"""(
        \.sw[a-p]$ | \.swpx$ |          # vim swap files
        ~$ | ^\.\# | ^\#.*\#$ |         # emacs/vim backups, emacs lock and autosave files
        ^4913$ |                        # vim's write-permission probe
        \.py[cod]$ | ^\.DS_Store$ | ^Thumbs\.db$ |
        \.___jb_...___$ | ^flycheck_ |   # JetBrains safe-write, flycheck
        \.tmp$ | \.temp$ | \.part$ | \.partial$ | \.crdownload$ | \.download$ |
        ^\.goutputstream- | ^\.~lock\. | \.kate-swp$
    )""",
    re.VERBOSE,
)


def ignored_name(name: str) -> bool:
    return bool(_IGNORED_NAME.search(name))


def ignored_rel(parts: tuple[str, ...]) -> bool:
    """``parts`` is a path relative to a watched root, split into names."""
    if not parts:
        return False
    if any(p in IGNORED_DIRS or p.endswith(".egg-info") for p in parts[:-1]):
        return True
    last = parts[-1]
    return last in IGNORED_DIRS or ignored_name(last)


def kind_of(name: str) -> str:
    """``doc`` (one evidence document), ``stream`` (JSONL) or ``other``."""
    if name.endswith(DOC_SUFFIX) and len(name) > len(DOC_SUFFIX):
        return "doc"
    if name.endswith(STREAM_SUFFIX) and len(name) > len(STREAM_SUFFIX):
        return "stream"
    return "other"


class Root(NamedTuple):
    """A folder the watcher follows: an agent's ``--watch`` folder, or the inbox
    (``agent`` None: documents only, never observed artifacts)."""

    path: str  # absolute, normalised
    agent: str | None

    def rel(self, path: str) -> tuple[str, ...] | None:
        """``path`` split relative to this root, or None when it is not below it."""
        if path == self.path:
            return ()
        prefix = self.path if self.path.endswith(os.sep) else self.path + os.sep
        if not path.startswith(prefix):
            return None
        return tuple(p for p in path[len(prefix) :].split(os.sep) if p)


class Origin(NamedTuple):
    """Where a file was found: who could have written it (DESIGN §7)."""

    agents: tuple[str, ...]  # the agents whose watch folders hold it
    inbox: bool  # the board's inbox holds it (anyone may write there)
    folders: tuple[str, ...]  # those folders, as followed


class Rules:
    """Decides, for an absolute path, what it is to the watcher."""

    def __init__(self, roots: list[Root], board_files: tuple[str, ...] = ()):
        self.roots = list(roots)
        # The board itself (and its -wal/-shm/-journal) when it sits in a watched folder.
        self.board_files = tuple(board_files)

    def is_board_file(self, path: str) -> bool:
        return any(path == b or path.startswith(b + "-") for b in self.board_files)

    def owners(self, path: str) -> list[Root]:
        """The roots that accept ``path`` (not ignored below them)."""
        out = []
        for root in self.roots:
            parts = root.rel(path)
            if parts is not None and not ignored_rel(parts):
                out.append(root)
        return out

    def origin(self, path: str) -> Origin:
        owners = self.owners(path)
        agents = tuple(sorted({r.agent for r in owners if r.agent is not None}))
        return Origin(agents, any(r.agent is None for r in owners), tuple(r.path for r in owners))

    def wanted(self, path: str) -> bool:
        """Cheap filter for raw change hints (files and folders alike)."""
        if self.is_board_file(path):
            return False
        return bool(self.owners(path))

    def classify(self, path: str) -> tuple[str, list[str]] | None:
        """``(kind, agents)`` for a file path, or None when nobody cares.
        ``agents`` are the agents whose watch folder holds a non-document file
        (candidates for observed artifacts)."""
        if self.is_board_file(path):
            return None
        owners = self.owners(path)
        if not owners:
            return None
        kind = kind_of(os.path.basename(path))
        if kind != "other":
            return kind, []
        agents = sorted({r.agent for r in owners if r.agent is not None})
        return ("other", agents) if agents else None


def norm(path: str | os.PathLike) -> str:
    return os.path.normpath(os.path.abspath(os.fspath(path)))


def display(path: str, project_root: Path | None) -> str:
    """A path as people see it: relative to the project when inside it."""
    if project_root is not None:
        root = norm(project_root)
        prefix = root if root.endswith(os.sep) else root + os.sep
        if path.startswith(prefix):
            return Path(path[len(prefix) :]).as_posix()
    return path
