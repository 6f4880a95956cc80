"""What Claude Code's sandbox puts in a work tree, kept out of git (issue #39).

Claude Code (2.1.197 and 2.1.335, bubblewrap on Linux) keeps a list of files
and folders read-only in the folder a session runs in, existing or not — the
shell's start-up files, git's and editors' settings, and the paths LoopX
asks for (``setup_claude.workspace_settings``: ``.loopx``, ``.codex``,
``.mcp.json``). A missing one is bound over with a placeholder (a character
device, an empty folder) that the sandboxed shell sees in the work tree, so
`git status` lists them and `git add -A` fails: "error: .bash_profile: can
only add regular files, symbolic links or git-directories" (seen with the
real binaries: ``tests/e2e/test_day.py``).

The cure is git's own: the repository's ``info/exclude`` (shared by every
worktree of it, never committed) names them, anchored at the work tree's top,
in a block of LoopX's own. An ignored, untracked path is skipped by `git add
-A`; a tracked file is unaffected. The main checkout reads the same file: an
untracked ``.vscode/`` of the person's at its top is no longer listed by `git
status` there (docs/decisions/2026-12-07-sandbox-placeholders-excluded.md).
"""

from __future__ import annotations

import os

# The placeholders seen in a workspace with Claude Code's sandbox on (2.1.197, 2.1.335).
PLACEHOLDERS = (
    ".bash_profile", ".bashrc", ".profile", ".zprofile", ".zshrc", ".gitconfig", ".gitmodules",
    ".ripgreprc", ".idea", ".vscode", ".loopx", ".codex", ".mcp.json",
)
BEGIN = "# loopx: what Claude Code's sandbox mounts in a work tree (LoopX keeps it out of git)"
END = "# loopx: end"


def block() -> str:
    return "\n".join([BEGIN, *(f"/{name}" for name in PLACEHOLDERS), END]) + "\n"


def ensure(common: str) -> bool:
    """Add (or renew) LoopX's block in ``<common>/info/exclude``, the git folder
    shared by the main checkout and its worktrees. True when the file changed;
    a repository LoopX cannot write is left as it is (the agent's `git add -A`
    then says why)."""
    path = os.path.join(common, "info", "exclude")
    try:
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
    except FileNotFoundError:
        text = ""
    except (OSError, UnicodeDecodeError):
        return False
    ours = block()
    if ours in text:
        return False
    start, end = text.find(BEGIN), text.find(END)
    if start >= 0 and end > start:  # an older block of ours: replaced where it stands
        text = text[:start] + ours + text[end + len(END):].lstrip("\n")
    else:
        text = (text if not text or text.endswith("\n") else text + "\n") + ours
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        tmp = path + ".loopx-tmp"
        with open(tmp, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except OSError:
        return False
    return True
