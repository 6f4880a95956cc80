"""What every runtime's command line shares (a runtime's module subclasses
it): how one bounded turn is started, its environment, what its output says
about usage (``LiveUsage``), where its transcript is; the prompt of a
headless runtime — its continuation packet (``loopx context``) with who the
agent is and the turn's id — and the instructions ``init --for`` writes for
a hooked runtime's agent. The shell's runtime is this class itself.
"""

from __future__ import annotations

import json

# Neither typing nor pathlib at import: the cold PreToolUse hook asks this
# module for its answer to an approved call (tests/adapters/test_hooks_claude.py,
# "stays lean"). mypy reads TYPE_CHECKING by its name.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path
    from typing import Protocol

    from ..rules.workspace_bounds import Bounds
    from . import transcript

    # ``init --for``'s plan of one file (``write_settings``): ``plan(path, edit)``,
    # the edit making the file's new text from its old one (None: no file).
    Edit = Callable[[str | None], str | None]

    class Planned(Protocol):
        """What the plan says of one file (adapters/setup.FileChange)."""

        before: str | None
        after: str | None
        problem: str | None  # why it cannot be written (then nothing is)

    Plan = Callable[[Path, Edit], Planned]
    HookCommand = Callable[[str, str | None], str]  # (event, agent id or None) -> the hook's command line
    Note = Callable[[str], None]  # a hook's note to the person (stderr)


class SettingsConflict(Exception):
    """A runtime's settings file says something LoopX's entries would
    contradict (exit 5): ``init --for`` writes nothing."""


class SettingsMalformed(SettingsConflict):
    """A runtime's settings file is not JSON or TOML at all (exit 3)."""


class LiveUsage:
    """What a turn has used so far, as its runtime reports it."""

    def __init__(self) -> None:
        self.best: dict[str, transcript.Call] = {}  # a model call by its identity, its largest report
        self.session: str | None = None
        self.final: dict | None = None  # the runtime's own totals at the end, when it gives them
        self.said: str | None = None  # the last thing the runtime said (for a failed turn's record)
        self.error: str | None = None

    def add(self, call: transcript.Call) -> None:
        earlier = self.best.get(call.identity)
        if earlier is None or (call.tokens_out, call.tokens_in) > (earlier.tokens_out, earlier.tokens_in):
            self.best[call.identity] = call

    @property
    def calls(self) -> list[transcript.Call]:
        return list(self.best.values())

    @property
    def tokens(self) -> int:
        live = sum(c.tokens_in + c.tokens_out for c in self.best.values())
        return max(live, self.final.get("tokens", 0)) if self.final else live

    def feed(self, line: bytes) -> None:
        """One stdout line of the runtime."""

    def poll(self, env: dict) -> None:
        """Look at what the runtime writes elsewhere (Codex's rollout)."""

    def transcript_path(self, env: dict) -> str | None:
        return None


def event(line: bytes) -> dict | None:
    """One line of a runtime's JSON output, as an object (None: not one)."""
    try:
        value = json.loads(line)
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


class Runtime:
    """How to start one turn of a runtime."""

    name = ""
    project: str | None = None  # the board's project folder (the runner sets it)
    measured = False  # its usage is measured from a transcript after the turn
    usage_class = LiveUsage
    # Its turns record themselves with the loopx MCP tools (their sandboxed shell
    # cannot write the board): their packet names the tools, not the commands.
    uses_tools = True
    needs_command = False  # `loopx run … -- CMD` must name the command it runs

    @property
    def in_workspace(self) -> bool:
        """Its turns run in the card's workspace (issue #26). Claude Code's and Codex's
        hooks, MCP server and sandbox come from settings in the checkout, which a
        worktree lacks: their `argv` carries the main checkout's, bounded to the
        workspace (rules/workspace_bounds); a runtime that could not answers
        False and runs in the project folder, never in a worktree without hooks."""
        return True

    def __init__(self, extra: list[str], binary: str | None = None, agent: str = "") -> None:
        self.extra = list(extra)
        self.binary = binary
        self.agent = agent

    def argv(self, prompt: str, cwd: str | None = None) -> list[str]:
        """The command of one turn started in ``cwd``."""
        return list(self.extra)

    def by_hand(self, cwd: str) -> list[str]:
        """The command a person runs interactively in the workspace ``cwd``
        (``loopx workspace start``), bounded as the runner's turns there."""
        raise NotImplementedError(self.name)

    def stdin(self, packet: str) -> str | None:
        return packet

    def environ(self, cwd: str | None = None) -> dict[str, str]:
        """What the turn started in ``cwd`` gets in its environment besides the
        runner's (may write files the runtime reads; raises OSError or a setup error).
        In a card's workspace, git's object quarantine: the turn's objects go to the
        workspace's own folder, the shared store is read only (issue #38)."""
        bounds = workspace(cwd)
        if bounds is None:
            return {}
        from ..workspace import quarantine

        return quarantine.turn_env(bounds.common, bounds.admin)

    def live(self) -> LiveUsage:
        return self.usage_class()

    def identity_problem(self, root: Path) -> str | None:
        """Why this runtime, started in ``root``, would not act as the runner's agent."""
        return None

    def last_step(self, output: str) -> str | None:
        """What a turn's output says it did last, as a person reads it (a failed
        turn's record): the runtime's last words, its error, or the tool it
        called last (``step``, newest first); a plain line as itself (a shell
        agent). None: nothing to say. Never a raw JSON line."""
        for line in reversed(output.splitlines()):
            line = line.strip()
            if not line:
                continue
            if not line.startswith("{"):
                return line
            found = event(line.encode("utf-8", "surrogateescape"))
            if found is None:
                continue  # (the tail's first line, cut mid-way)
            said = self.step(found)
            if said is not None:
                return said
        return None

    def step(self, event: dict) -> str | None:
        """What one event of the runtime's output says it did, or None."""
        return None


def workspace(cwd: str | None) -> Bounds | None:
    """The bounds of the card's workspace a turn starts in (a linked worktree of a
    main checkout), or None: then the runtime's settings are the checkout's own."""
    if cwd is None:
        return None
    from ..rules import workspace_bounds

    bounds = workspace_bounds.find(cwd)
    return bounds if bounds is not None and bounds.main is not None else None


def key_folder() -> str:
    """The person's LoopX folder (the human key lives there): platformdirs' user
    config dir (``rules/person_folder``), spelled with ``~`` when it is under the
    home folder — what a runtime's sandbox keeps its agent out of."""
    from pathlib import Path

    from ..rules.person_folder import person_folder

    path = Path(person_folder())
    try:
        return "~/" + str(path.relative_to(Path.home()))
    except ValueError:
        return str(path)


def json_file(path: Path) -> dict:
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return value if isinstance(value, dict) else {}


def prompt(packet: str, agent: str, card_key: str, turn_id: str) -> str:
    """What a headless runtime (Claude Code, Codex) is asked: its continuation
    packet, who it is, this turn's id — and the loopx MCP tools as the way to
    record the turn and finish the card: its shell runs in the runtime's sandbox,
    where `loopx writeback` and `loopx done` cannot write the board (#39)."""
    return (
        f"You are agent `{agent}`, working through LoopX on {card_key}. This is one bounded turn: "
        f"do the next action below (in a card's workspace, commit your work), then record what you did with the loopx MCP tool "
        f"`writeback` (card {card_key}, turn_id {turn_id}, summary, artifacts: the files you made, next) before you stop "
        f"(a turn that writes no evidence is recorded as failed). "
        f"If you need a person's approval, ask with the tool `gate_ask` and stop; "
        f"if the card is finished, write back and then call the tool `done` (card {card_key}, summary): it runs the card's "
        f"verify command, and a branch with commits then waits for a person's merge. "
        f"Your shell's `loopx` cannot write the board from the sandbox: use the tools.{_where_loopx()}"
        f"\n\n{packet}"
    )


def instructions(agent: str, sandbox: bool) -> str:
    """What ``init --for`` merges into a hooked runtime's instructions file
    (``CLAUDE.md``, ``AGENTS.md``: its ``write_settings`` says which) for the
    agent ``agent``: a turn's steps with the loopx MCP tools when the runtime
    runs in its sandbox (``sandbox``), else with the ``loopx`` commands."""
    if sandbox:
        return f"""## LoopX (agent `{agent}`)

This project's work is tracked on a LoopX board. Work in turns, and keep the board true, with the
`loopx` MCP tools (your shell runs in a sandbox that cannot write the board, `.loopx/`):

1. Start of a turn: `next` (`claim: true` takes the best ready card), then `context` for the card's
   continuation: objective, next action, todos, last evidence.
2. Do the card's next action. Before anything that needs authority (git push, deploys, publishing,
   writing or deleting outside the project) expect a check: a denial names a gate a human must
   answer — wait with `gate_status`, never work around it.
3. End of a turn: commit your work in the card's workspace, then `writeback` with a summary of what
   the turn did (and `next`, `artifacts`: files you made, named in your workspace).
4. When the card is finished: `writeback`, then `done` (it refuses while your workspace holds uncommitted
   work; it runs the card's verify command in a sandbox; a branch with commits then waits for a person's merge). Your shell's `loopx done` cannot write the board.
5. Handing over: `handoff`.

Only a person answers gates. This text is advice; the hooks and the sandbox are enforcement."""
    return f"""## LoopX (agent `{agent}`)

This project's work is tracked on a LoopX board. Work in turns, and keep the board true:

1. Start of a turn: `loopx next --agent {agent}` (add `--claim` to take the best ready card), then
   `loopx context LX-n` for the card's continuation: objective, next action, todos, last evidence.
2. Do the card's next action. Before anything that needs authority (git push, deploys, publishing,
   writing or deleting outside the project) expect a check: a denial names a gate a human must
   answer — wait with `loopx gate status G-n`, never work around it.
3. End of a turn: commit your work in the card's workspace (`done` refuses uncommitted work), then
   `loopx writeback LX-n --agent {agent} --summary "what this turn did" [--artifact PATH]… [--next "the next step"]`.
   When the card is finished: `loopx done LX-n --agent {agent} --summary "…"`.
4. Handing over: `loopx handoff LX-n --agent {agent} --to OTHER --summary "…"`.

Only a person answers gates. The `loopx` MCP server offers the same turn as tools. This text is advice; the hooks are enforcement."""


def _where_loopx() -> str:
    """Where ``loopx`` is, for a runtime whose shell resets PATH (Codex runs
    commands in a login shell: ``bash -lc``): reading the board works from there."""
    import sys
    from pathlib import Path

    script = Path(sys.executable).with_name("loopx")
    return f" (`loopx` is {script} if it is not on your PATH.)" if script.exists() else ""
