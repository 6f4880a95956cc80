"""The runtimes LoopX drives, by name, and which module holds each one: the
registry. A runtime's specifics live in its own module — ``claude_code``,
``codex``, ``shell`` — and nowhere else; the shared mechanics (the hooks'
decisions, the runner's loop, ``init``'s planning, the charging of a
transcript) ask it for what differs.

What a runtime module provides (the shell's leaves out what it has not):

- ``NAME``, ``TITLE`` (as a person reads it, in a gate's question);
- ``Command``: the command line of one turn and of a person's session in a
  card's workspace, its environment, what its output says of usage
  (``base.Runtime``, ``base.LiveUsage``);
- its transcript: ``read_transcript(path)`` (a ``transcript.Turn``),
  ``subagent_transcripts(path)``, ``CHARGE_PREFIX`` (a charge's turn id);
- its hook payloads and answers: ``expected_last_message``, ``approved``,
  ``continue_turn``, ``session_env``, ``unasked_permission``,
  ``ANSWERS_WITH_INPUT`` (hooked runtimes only);
- its settings: ``SETTINGS_FILE`` (where ``init --for`` writes its hooks),
  ``write_settings`` (``init --for``'s plan of its files);
- its questions: ``QUESTION_TOOL``, ``PROMPT_CLIENT`` (Claude Code's).

Adding a runtime: a module here, its name below. This module imports nothing:
the verb table (``shapes/verbs.py``) and the cold PreToolUse hook read it.
"""

from __future__ import annotations

# What `loopx run` drives (a module each); an agent's runtime may be any name.
NAMES = ("claude-code", "codex", "shell")
# The runtimes with LoopX's hooks: `loopx hook`, `init --for`, `workspace start`.
HOOKED = ("claude-code", "codex")
_MODULES = {"claude-code": "claude_code", "codex": "codex", "shell": "shell"}


def module(name: str):
    """The module of the runtime ``name`` (imported on first ask); KeyError for
    another name. (``__import__``, not importlib: the cold hook asks it, and
    importlib would load three modules more.)"""
    import sys

    path = f"{__name__}.{_MODULES[name]}"
    __import__(path)
    return sys.modules[path]


def make(name: str, extra: list[str], binary: str | None = None, agent: str = ""):
    """How to start the turns of runtime ``name`` (its module's ``Command``)."""
    return module(name).Command(extra, binary, agent)
