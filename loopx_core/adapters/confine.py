"""A card's verify command run as confined as the agent's turns (issue #39).

A verify command runs the agent's code (its tests, its build). Run from the
agent's own shell (``loopx done`` in a turn without the sandbox, a shell
agent), it is bounded as that shell is. Run from the MCP server's ``done``
tool — the way a sandboxed Claude Code or Codex turn finishes a card, its
shell being unable to write the board — it would run in the server's
process: outside the runtime's sandbox, as the person. So the tool runs it
under bubblewrap (the OS sandbox both runtimes use on Linux), with bounds no
wider than a turn's in the card's workspace:

- the whole file system read-only (``--ro-bind / /``), a fresh ``/dev``,
  ``/proc`` and an empty ``/tmp``;
- writable: the card's workspace alone (a turn may also write the git paths
  of a commit; a test run needs none of them) — or, on a card with no
  workspace, the project folder — but never what a turn may not write there
  either: the board, the runtimes' settings and git's files (``READ_ONLY``);
- the person's LoopX folder (the human key) replaced by an empty folder, a
  key named by ``LOOPX_KEY`` by an empty file, and that variable unset;
- no network (``--unshare-net``), its own process, IPC and session
  namespaces (``--new-session``: no terminal to push keystrokes into), and
  killed with its parent (``--die-with-parent``).

Where bubblewrap is missing (macOS, a machine without it) the tool refuses
(``verify_unconfined``) rather than run the agent's code unconfined: the
decision record ``docs/decisions/2026-12-07-verify-in-the-sandbox.md``.
"""

from __future__ import annotations

import os
import shutil

BWRAP = "bwrap"
# Inside the writable folder, kept read-only (those that exist): the board,
# the runtimes' settings (runtimes/claude_code_settings.GUARDED, codex_settings.READ_ONLY)
# and git's own files (its hooks and config run as the person later).
READ_ONLY = (".loopx", ".codex", ".claude", ".mcp.json", ".git")


def bwrap() -> str | None:
    """bubblewrap's path, or None."""
    return shutil.which(BWRAP, path=os.environ.get("PATH") or os.defpath)


def verify_prefix(folder: str) -> list[str]:
    """The argv before ``/bin/sh -c COMMAND`` that runs a verify command in
    ``folder`` (the card's workspace) confined; raises Forbidden when it cannot be."""
    from ..rules.person_folder import person_folder
    from ..shapes.errors import Forbidden

    exe = bwrap()
    if exe is None:
        raise Forbidden(
            "the card's verify command runs the agent's code, and this machine has no OS sandbox (bubblewrap) to run it in outside your own",
            "install bubblewrap (`apt install bubblewrap`), or ask the person to finish the card (`loopx done` at their terminal)",
            code="verify_unconfined",
        )
    folder = os.path.realpath(folder)
    argv = [
        exe,
        "--ro-bind",
        "/",
        "/",
        "--dev",
        "/dev",
        "--proc",
        "/proc",
        "--tmpfs",
        "/tmp",
        "--bind",
        folder,
        folder,
        *(a for rel in READ_ONLY if os.path.lexists(p := os.path.join(folder, rel)) for a in ("--ro-bind", p, p)),
        "--unshare-net",
        "--unshare-pid",
        "--unshare-ipc",
        "--unshare-uts",
        "--new-session",
        "--die-with-parent",
        "--chdir",
        folder,
    ]
    key = os.path.realpath(person_folder())
    if os.path.isdir(key):
        argv += ["--tmpfs", key]  # the human key is never readable from the agent's code …
    named = os.environ.get("LOOPX_KEY")
    if named and os.path.isfile(named):
        argv += ["--ro-bind", "/dev/null", os.path.realpath(named)]  # … wherever LOOPX_KEY keeps it
    return [*argv, "--unsetenv", "LOOPX_KEY", "--unsetenv", "LOOPX_HUMAN"]
