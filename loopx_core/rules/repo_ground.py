"""The ground of a repository: files whose change reconfigures a runtime,
LoopX, git itself or CI rather than the project's code (#38).

A merge whose branch changes one of them is listed first, marked, and takes
the person's second key (``ops/merges``; the board's ``y`` then ``Y``, the
CLI's ``--confirm-ground``): a plain ``claude`` in the person's checkout runs
the hooks ``.claude/settings.json`` names, ``.gitattributes`` picks filters
and drivers, a workflow runs in CI with the repository's secrets.

Patterns are git's glob pathspecs, compared without case (a case-insensitive
disk reads ``.Claude/`` as ``.claude/``): ``dir/**`` is everything under
``dir``, ``**/name`` is ``name`` in any folder (the top one too), anything
else one exact path. The person adds patterns in ``.loopx/policy.json``
(``"ground": ["deploy/**", "Makefile"]``); additions only mark more files, so
they apply signed or not. ``.gitignore`` is not ground: it runs nothing
(docs/decisions/2026-12-07-merge-ground.md). Standard library only.
"""

from __future__ import annotations

import json
import os

TYPE_CHECKING = False  # (annotations only: the hook imports this cold; checkers read this as typing's)
if TYPE_CHECKING:
    from collections.abc import Iterable

GROUND = (
    ".claude/**",
    ".codex/**",
    ".mcp.json",
    ".loopx/**",  # the runtimes' settings and LoopX's board
    "**/CLAUDE.md",
    "**/CLAUDE.local.md",
    "**/AGENTS.md",
    "**/AGENTS.override.md",  # what the runtimes read as instructions
    "**/.gitattributes",
    ".gitmodules",
    ".lfsconfig",  # git's filters, drivers and submodules
    ".husky/**",
    ".githooks/**",
    ".pre-commit-config.yaml",  # hooks a person's git or tooling runs
    ".github/workflows/**",
    ".github/actions/**",
    ".gitlab-ci.yml",
    ".circleci/**",  # CI
    ".envrc",  # direnv runs it on entering the folder
)
MAX_PATTERNS = 100
MAX_PATTERN = 200


def _matches(pattern: str, path: str) -> bool:
    pattern, path = pattern.lower(), path.lower()
    if pattern.startswith("**/"):
        name = pattern[3:]
        return path == name or path.endswith("/" + name)
    if pattern.endswith("/**"):
        return path.startswith(pattern[:-2])
    return path == pattern


def is_ground(path: str, extra: tuple[str, ...] = ()) -> bool:
    """Whether the repository path ``path`` (``a/b.txt``) is ground."""
    return any(_matches(p, path) for p in (*GROUND, *extra))


def pathspecs(extra: tuple[str, ...] = ()) -> list[str]:
    """The patterns as git pathspecs (a diff limited to them lists only ground files)."""
    return [f":(glob,icase){p}" for p in (*GROUND, *extra)]


def extra_patterns(project_root: str | os.PathLike[str] | None) -> tuple[str, ...]:
    """The person's additions in ``<project>/.loopx/policy.json`` (``"ground"``);
    a missing or malformed file adds none."""
    if not project_root:
        return ()
    try:
        with open(os.path.join(str(project_root), ".loopx", "policy.json"), encoding="utf-8") as fh:
            doc = json.loads(fh.read(1_000_000))
    except (OSError, ValueError, RecursionError):
        return ()
    found = doc.get("ground") if isinstance(doc, dict) else None
    if not isinstance(found, list):
        return ()
    return tuple(
        p.strip("/") if not p.endswith("/**") else p
        for p in found
        if isinstance(p, str) and 0 < len(p) <= MAX_PATTERN and "\0" not in p
    )[:MAX_PATTERNS]


def first(paths: Iterable[str], extra: tuple[str, ...] = ()) -> list[str]:
    """``paths`` with the ground ones first (each group in its order)."""
    listed = list(paths)
    return [p for p in listed if is_ground(p, extra)] + [p for p in listed if not is_ground(p, extra)]
