"""How LoopX starts LoopX on the person's side: never importing code from a
folder an agent can write.

Every process LoopX starts for the person — the board's out-of-process
``verify``, the hook and MCP commands ``init --for`` writes into the runtimes'
settings, the demo's runners and stand-in agents, ``demo --script``'s steps —
runs with the person's authority (the board holds their unlocked key; a hook
decides what a tool call may do). An agent's runtime lets it write the project,
and those processes start with the project as their working directory. Plain
``python -m loopx_core`` puts that directory first on ``sys.path``: a
``loopx_core/``, ``sitecustomize.py`` or ``usercustomize.py`` the agent
planted there would run as the person (issue #24: a planted package printed a
clean report over an altered history and typed into the board's pane). So:

- the interpreter of this installation by absolute path, never a ``python`` or
  ``loopx`` found through PATH (a shim the agent put earlier on it);
- with ``-I`` (isolated): neither the working directory nor the script's
  folder goes on ``sys.path``, no ``PYTHON*`` variable counts (``PYTHONPATH``,
  ``PYTHONSTARTUP``, ``PYTHONHOME``…), and the user's site folder (its
  ``usercustomize`` and ``.pth`` files) is skipped. A virtualenv's own
  site-packages are not the user site: the installed LoopX still imports;
- and where a child gets an environment, ``person_env`` drops every
  ``PYTHON*`` variable (for what that child starts in turn) and every PATH
  entry that is not absolute (``.``, an empty entry, ``node_modules/.bin``:
  resolved against a working directory the agent writes).

What this cannot help: a LoopX installed *inside* the project (its ``.venv``),
which an agent can rewrite. Install LoopX outside the project.

Standard library only: the per-turn CLI imports it on its cold path."""

from __future__ import annotations

import os
import sys


def interpreter() -> str:
    """This installation's Python, by absolute path (a virtualenv's own, not
    resolved through its symlink: that would lose the virtualenv)."""
    return os.path.abspath(sys.executable)


def python_argv(module: str, *args: str) -> list[str]:
    """``python -I -m MODULE ARGS…`` with this installation's interpreter."""
    return [interpreter(), "-I", "-m", module, *args]


def loopx_argv(*args: str) -> list[str]:
    """``loopx ARGS…`` run as the person: ``python -I -m loopx_core ARGS…``."""
    return python_argv("loopx_core", *args)


def safe_path(value: str) -> str:
    """A PATH with only its absolute entries (the others resolve against the
    working directory, which an agent may write)."""
    return os.pathsep.join(p for p in value.split(os.pathsep) if os.path.isabs(p))


def person_env(env: dict[str, str] | None = None, **changes: str) -> dict[str, str]:
    """``env`` (default: this process's) for a child started for the person:
    no ``PYTHON*`` variable, no relative PATH entry, ``changes`` applied."""
    base = os.environ if env is None else env
    out = {k: v for k, v in base.items() if not k.upper().startswith("PYTHON")}
    if "PATH" in out:
        out["PATH"] = safe_path(out["PATH"])
    out.update(changes)
    return out
