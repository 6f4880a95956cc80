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

TYPE_CHECKING = False  # (annotations only: the cold hook imports this; checkers read this as typing's)
if TYPE_CHECKING:
    from pathlib import Path
    from types import ModuleType
    from typing import Protocol

    # What ``make`` gives, as its callers use it: ``base.Runtime`` (the registry
    # imports nothing of LoopX's, the `runtimes-registry` contract).
    class Call(Protocol):
        """One model call's usage (``transcript.Call``)."""

        @property
        def identity(self) -> str: ...
        @property
        def tokens_in(self) -> int: ...
        @property
        def tokens_out(self) -> int: ...
        @property
        def detail(self) -> dict: ...
        @property
        def model(self) -> str | None: ...
        @property
        def parts(self) -> dict: ...

    class Usage(Protocol):
        """What a turn has used so far (``base.LiveUsage``)."""

        session: str | None
        final: dict | None
        said: str | None
        error: str | None

        @property
        def calls(self) -> list[Call]: ...
        @property
        def tokens(self) -> int: ...
        def feed(self, line: bytes) -> None: ...
        def poll(self, env: dict) -> None: ...
        def transcript_path(self, env: dict) -> str | None: ...

    class Runtime(Protocol):
        """How to start one turn of a runtime (``base.Runtime``)."""

        name: str
        project: str | None
        measured: bool
        uses_tools: bool
        needs_command: bool

        @property
        def in_workspace(self) -> bool: ...
        def argv(self, prompt: str, cwd: str | None = None) -> list[str]: ...
        def by_hand(self, cwd: str) -> list[str]: ...
        def stdin(self, packet: str) -> str | None: ...
        def environ(self, cwd: str | None = None) -> dict[str, str]: ...
        def live(self) -> Usage: ...
        def identity_problem(self, root: Path) -> str | None: ...
        def last_step(self, output: str) -> str | None: ...


def module(name: str) -> ModuleType:
    """The module of the runtime ``name`` (imported on first ask); KeyError for
    another name. (``__import__``, not importlib: the cold hook asks it, and
    importlib would load three modules more.)"""
    import sys

    path = f"{__name__}.{_MODULES[name]}"
    __import__(path)
    return sys.modules[path]


def make(name: str, extra: list[str], binary: str | None = None, agent: str = "") -> Runtime:
    """How to start the turns of runtime ``name`` (its module's ``Command``)."""
    return module(name).Command(extra, binary, agent)
