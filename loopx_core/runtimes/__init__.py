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
  ``write_settings`` (``init --for``'s plan of its files; the instructions it
  merges into the runtime's instructions file are every runtime's,
  ``base.instructions``);
- its questions: ``QUESTION_TOOL``; ``PROMPT_CLIENT`` and ``PERMISSION_PROMPT``
  (Claude Code's: the MCP client name it sends, and the permission prompt tool
  ``loopx mcp`` lists to that client alone);
- its processes: ``BINARY`` (its executable), ``PACKAGE`` (what its argv names
  when it runs under node), ``ENV_MARKS`` (what it sets in the environment of
  the processes it runs): ``authority/unlock`` refuses a process that has them
  (hooked runtimes only).

What the cold PreToolUse hook reads of a hooked runtime without importing its
module is here, below its name: the tools its hook input names
(``HOOK_TOOLS``, the hooks' policy reads them).

Adding a runtime: a module here, its name below (and its tools, when it has
hooks). This module imports nothing: the verb table (``shapes/verbs.py``) and
the cold PreToolUse hook read it.
"""

from __future__ import annotations

# What `loopx run` drives (a module each); an agent's runtime may be any name.
NAMES = ("claude-code", "codex", "shell")
# The runtimes with LoopX's hooks: `loopx hook`, `init --for`, `workspace start`.
HOOKED = ("claude-code", "codex")
_MODULES = {"claude-code": "claude_code", "codex": "codex", "shell": "shell"}


class HookTools:
    """The tools a hooked runtime's hook input names (``tool_name``), by what
    the hooks' policy reads in them (``adapters/policy.classify``)."""

    def __init__(
        self,
        *,
        shell: tuple[str, ...] = (),
        powershell: tuple[str, ...] = (),
        files: dict[str, str] | None = None,
        patch: tuple[str, ...] = (),
        search: dict[str, str] | None = None,
    ) -> None:
        self.shell = shell  # a shell command in ``tool_input.command`` (older Codex: ``cmd``, maybe a list)
        self.powershell = powershell  # a PowerShell command in ``tool_input.command``
        self.files = files or {}  # a tool writing one file -> its field naming it
        self.patch = patch  # a patch text (``*** Add/Update/Delete File:`` headers) in ``tool_input.command``
        self.search = search or {}  # a tool searching a folder tree -> its field holding a file pattern


HOOK_TOOLS = {
    # Claude Code 2.1 (its SDK's sdk-tools.d.ts): Bash, PowerShell and Monitor (its
    # optional `command`); skill commands arrive as PreSkillShellCommand with
    # tool_name Bash or PowerShell; FileWriteInput, FileEditInput and
    # NotebookEditInput (MultiEdit is gone from 2.1's tool list); GlobInput.pattern
    # and GrepInput.glob.
    "claude-code": HookTools(
        shell=("Bash", "Monitor"),
        powershell=("PowerShell",),
        files={"Write": "file_path", "Edit": "file_path", "NotebookEdit": "notebook_path"},
        search={"Glob": "pattern", "Grep": "glob"},
    ),
    # Codex 0.171 reports exec_command and shell_command as "Bash"
    # (codex-rs/core/src/tools/hook_names.rs), apply_patch with its patch
    # (handlers/apply_patch.rs); the other shell names are older builds' own.
    "codex": HookTools(
        shell=("Bash", "shell", "shell_command", "exec_command", "local_shell", "container.exec", "unified_exec"),
        patch=("apply_patch",),
    ),
}

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
