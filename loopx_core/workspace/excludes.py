"""What Claude Code's sandbox puts in a work tree, kept out of the agent's git (issue #39).

Claude Code (2.1.197 and 2.1.335, bubblewrap on Linux) keeps a list of files
and folders read-only in the folder a session runs in, existing or not — the
shell's start-up files, git's and editors' settings, its own ``.claude/…``
files (2.1.335), and the paths LoopX asks for (``.loopx``, ``.codex``,
``.mcp.json``). A missing one is bound over with a placeholder (a character
device, an empty folder) that the sandboxed shell sees in the work tree: `git
status` lists them and `git add -A` fails ("error: .bash_profile: can only add
regular files, symbolic links or git-directories"; seen with the real
binaries, ``tests/e2e/test_day.py``).

The cure is git's own ignore rules, given to the turn alone: its environment
sets ``core.excludesFile`` (``GIT_CONFIG_COUNT``/``KEY``/``VALUE``, which win
over every config file) to a file in the workspace's admin folder holding the
person's own global ignore rules and these placeholders, anchored at the work
tree's top. An ignored, untracked path is skipped by `git add -A`; a tracked
file is unaffected. Nothing of the person's repository changes: their main
checkout's `git status` still lists an untracked ``.mcp.json`` for them to
commit (docs/decisions/2026-12-07-sandbox-placeholders-excluded.md).
"""

from __future__ import annotations

import os
import subprocess

TYPE_CHECKING = False  # (annotations only; checkers read this as typing's)
if TYPE_CHECKING:
    from collections.abc import Mapping

    from .sweep import SweptBounds as TurnBounds

# The placeholders seen in a workspace with Claude Code's sandbox on (2.1.197; 2.1.335
# adds those under .claude/).
PLACEHOLDERS = (
    ".bash_profile",
    ".bashrc",
    ".profile",
    ".zprofile",
    ".zshrc",
    ".gitconfig",
    ".gitmodules",
    ".ripgreprc",
    ".idea",
    ".vscode",
    ".loopx",
    ".codex",
    ".mcp.json",
    ".claude/agents",
    ".claude/commands",
    ".claude/hooks",
    ".claude/launch.json",
    ".claude/loop.md",
    ".claude/output-styles",
    ".claude/routines",
    ".claude/scheduled_tasks.json",
    ".claude/settings.json",
    ".claude/settings.local.json",
    ".claude/skills",
    ".claude/workflows",
    ".claude/.cc-writes",
)
FILE = "loopx-exclude"  # in the worktree's admin folder (<common>/worktrees/<name>), which a commit there writes anyway
HEAD = "# LoopX: the person's global ignore rules, then what Claude Code's sandbox mounts in the work tree\n"


def _persons_rules(workspace: str, environ: Mapping[str, str]) -> str:
    """The text of the ignore file git reads for the person now (``core.excludesFile``,
    by default ``$XDG_CONFIG_HOME/git/ignore``), or ''."""
    try:
        named = subprocess.run(
            ["git", "config", "--path", "--get", "core.excludesFile"],
            cwd=workspace,
            env=dict(environ, GIT_OPTIONAL_LOCKS="0"),
            capture_output=True,
            text=True,
            timeout=30,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        named = ""
    if not named:
        base = environ.get("XDG_CONFIG_HOME") or os.path.join(environ.get("HOME") or os.path.expanduser("~"), ".config")
        named = os.path.join(base, "git", "ignore")
    try:
        with open(os.path.expanduser(named), encoding="utf-8", errors="replace") as fh:
            return fh.read(1 << 20)
    except OSError:
        return ""


def turn_env(bounds: TurnBounds, environ: Mapping[str, str]) -> dict[str, str]:
    """The environment a turn in the workspace ``bounds`` gets so that its git ignores
    the sandbox's placeholders (and still the person's own rules); {} when the file
    cannot be written (the agent's `git add -A` then says why)."""
    if not bounds.admin:
        return {}
    path = os.path.join(bounds.admin, FILE)
    own = _persons_rules(bounds.workspace, environ)
    text = HEAD + own + ("" if not own or own.endswith("\n") else "\n") + "".join(f"/{name}\n" for name in PLACEHOLDERS)
    try:
        tmp = path + ".tmp"
        with open(tmp, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except OSError:
        return {}
    try:
        n = int(environ.get("GIT_CONFIG_COUNT") or 0)  # the person's own GIT_CONFIG_* entries stay, ours follows them
    except ValueError:
        n = 0
    return {"GIT_CONFIG_COUNT": str(n + 1), f"GIT_CONFIG_KEY_{n}": "core.excludesFile", f"GIT_CONFIG_VALUE_{n}": path}
