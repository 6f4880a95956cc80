"""``loopx hook RUNTIME session-start|pre-tool-use|stop|permission-request``
(every runtime of ``runtimes.HOOKED``) and ``session-end|pre-skill-shell-command|question|notification``
(the events Claude Code has).

Each reads the runtime's own hook JSON on stdin and answers in that runtime's
documented format on stdout, always with exit code 0 (a hook never crashes the
runtime: its own failures are explained on stderr, DESIGN §8). It fails
closed: a tool call it cannot read (not JSON, nested too deeply, larger than
``MAX_PAYLOAD``, no ``tool_name``), cannot check in time (``DEADLINES``) or
hits an internal error on is denied with the reason; a Stop or SessionStart
that fails lets the session go on (blocking could loop).

Each runtime's hook input and answers — their formats, with their sources —
are its module's (``runtimes/claude_code.py``, ``runtimes/codex.py``): this
module asks it (``runtime_of(hook)``) where they differ.

The PreToolUse path imports only the standard library (``policy``,
``fastcheck``) unless a call needs a new gate; safe calls never open the board.
LoopX's own ground (``ground``) is refused before any board access, with no
gate: no scope can allow it.
"""

from __future__ import annotations

import json
import os
import sys
import time

from ..rules import board_file, turn_env
from ..rules.clock import now as _now

TYPE_CHECKING = False  # (annotations only: the cold hook imports no typing; checkers read this as typing's)
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from types import ModuleType
    from typing import Any, Protocol, TextIO

    from ..rules.workspace_bounds import Bounds
    from ..runtimes.transcript import Turn
    from ..shapes.values import CardView, NextResult
    from ..shell.vocabulary import Need
    from ..store.backends import Store

    Answer = dict[str, Any]  # the hook's JSON answer to the runtime (its own format: runtimes/)

    class Held(Protocol):
        """The agent's card as ``ops.leases.held_card`` gives it (a record of the store)."""

        @property
        def id(self) -> int: ...


EVENTS = (
    "session-start",
    "pre-tool-use",
    "stop",
    "session-end",
    "permission-request",
    "pre-skill-shell-command",
    "question",
    "notification",
)
MAX_PAYLOAD = 8 * 1024 * 1024  # bytes of hook input read; a larger tool call is refused
# Seconds each event may take before it answers anyway (the runtime's own
# timeout, set by `loopx init`, is 30 s for the first two and 60 s for Stop).
DEADLINES = {
    "pre-tool-use": 20.0,
    "pre-skill-shell-command": 20.0,
    "session-start": 20.0,
    "stop": 45.0,
    "session-end": 25.0,
    "permission-request": 570.0,
    "question": 570.0,
    "notification": 20.0,
}


class Hook:
    def __init__(
        self, runtime: str, event: str, payload: dict[str, Any] | None, raw: str, db_flag: str | None, err: TextIO
    ) -> None:
        self.runtime, self.event, self.payload, self.raw, self.db_flag, self.err = (
            runtime,
            event,
            payload,
            raw,
            db_flag,
            err,
        )
        cwd = payload.get("cwd") if isinstance(payload, dict) else None
        self.cwd = cwd if isinstance(cwd, str) and os.path.isdir(cwd) else os.getcwd()
        self.agent = turn_env.agent()
        self.problem: str | None = None  # why the payload could not be read

    def note(self, message: str) -> None:
        try:
            self.err.write(f"loopx hook {self.runtime} {self.event}: {_printable(message)}\n")
        except Exception:  # pragma: no cover - stderr gone
            pass

    def get(self, key: str, default: object = None) -> Any:
        return self.payload.get(key, default) if isinstance(self.payload, dict) else default


def runtime_of(hook: Hook) -> ModuleType:
    """The module of the runtime calling (``runtimes/``): its payloads' and answers' shapes."""
    from .. import runtimes

    return runtimes.module(hook.runtime)


class DeadlinePassed(BaseException):
    """The hook ran out of time. A BaseException, so that no ``except
    Exception`` on the way swallows it and keeps going."""


def _printable(text: str) -> str:
    """Agent text goes to a terminal (the runtime's log) only without control
    characters."""
    return "".join(c if c.isprintable() or c == " " else repr(c)[1:-1] for c in text)


def run_hook(
    runtime: str,
    event: str,
    db_flag: str | None = None,
    *,
    stdin: TextIO | None = None,
    stdout: TextIO | None = None,
    stderr: TextIO | None = None,
) -> int:
    """Read the runtime's hook JSON, answer in its format; always exit 0 with a
    decision. Fail closed: a tool call that cannot be read or checked in time
    is denied; a Stop or SessionStart that fails lets the session go on."""
    if os.environ.get("LOOPX_FAULT"):  # (unset, no fault point is armed: nothing to disarm, and nothing to import)
        from ..rules import faults

        faults.disarm()  # a hook that died reads as "no objection" to the runtime: never a test's fault point here
    stdin = sys.stdin if stdin is None else stdin
    stdout = sys.stdout if stdout is None else stdout
    err = sys.stderr if stderr is None else stderr
    disarm = _arm_deadline(DEADLINES.get(event, 20.0))
    hook = None
    try:
        raw, problem = _read(stdin)
        payload = None
        if problem is None and raw.strip():
            try:
                payload = json.loads(raw)
            except ValueError:
                problem = "stdin is not a JSON object"
            except RecursionError:
                problem = "stdin is JSON nested too deeply to read"
            else:
                if not isinstance(payload, dict):
                    payload, problem = None, "stdin is not a JSON object"
        elif problem is None:
            problem = "stdin is empty"
        hook = Hook(runtime, event, payload, raw, db_flag, err)
        hook.problem = problem
        if problem:
            hook.note(problem)
        out = HANDLERS[event](hook)
    except DeadlinePassed:
        hook = hook or Hook(runtime, event, None, "", db_flag, err)
        hook.note(f"gave up after {DEADLINES.get(event, 20.0):.0f} s")
        out = _fallback(hook, "LoopX could not check this call in time")
    except BaseException as exc:  # the last line of defence: never a traceback into the runtime
        if isinstance(exc, KeyboardInterrupt):
            raise
        hook = hook or Hook(runtime, event, None, "", db_flag, err)
        hook.note(f"internal error: {type(exc).__name__}: {exc}")
        out = _fallback(hook, f"LoopX could not check this call (internal error: {type(exc).__name__})")
    finally:
        disarm()
    if out is not None:
        try:
            stdout.write(json.dumps(out, ensure_ascii=True) + "\n")
            stdout.flush()
        except Exception:  # pragma: no cover - stdout gone
            pass
    return 0


def _read(stdin: TextIO) -> tuple[str, str | None]:
    """The hook input (at most MAX_PAYLOAD bytes) and why it is unusable, if it is."""
    try:
        buffer = getattr(stdin, "buffer", None)
        if buffer is not None:
            data = buffer.read(MAX_PAYLOAD + 1)
            if len(data) > MAX_PAYLOAD:
                return "", f"the hook input is larger than {MAX_PAYLOAD // (1024 * 1024)} MB"
            return data.decode("utf-8", "replace"), None
        text = stdin.read(MAX_PAYLOAD + 1)
        if len(text) > MAX_PAYLOAD:
            return "", f"the hook input is larger than {MAX_PAYLOAD // (1024 * 1024)} MB"
        return text, None
    except Exception as exc:
        return "", f"cannot read stdin ({type(exc).__name__})"


def _arm_deadline(seconds: float) -> Callable[[], None]:
    """Raise DeadlinePassed in the main thread after ``seconds`` (POSIX); returns the disarm."""
    try:
        import _signal as signal  # type: ignore[import-not-found]  # what ``signal`` wraps in enums, which cost the hook ~0.5 ms (a C module typeshed has no stubs for)
    except ImportError:  # pragma: no cover - another Python
        import signal

    if not hasattr(signal, "setitimer"):
        return lambda: None
    armed = [True]

    def ring(signum: int, frame: object) -> None:
        if armed[0]:  # not once the answer is decided
            raise DeadlinePassed()

    try:
        previous = signal.signal(signal.SIGALRM, ring)
        signal.setitimer(signal.ITIMER_REAL, seconds)
    except ValueError:  # not the main thread (an in-process test runner): no deadline
        return lambda: None

    def disarm() -> None:
        armed[0] = False
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)

    return disarm


def _fallback(hook: Hook, what: str) -> Answer | None:
    """After an internal error or the deadline: deny the tool call (fail
    closed); let a session start or stop go on."""
    if hook.event in ("pre-tool-use", "pre-skill-shell-command", "question"):
        return _deny(
            f"{what}, so it is denied; the hook's stderr says why. Try a simpler call, or tell the person if this repeats.",
            event=_EVENT_NAMES[hook.event],
        )
    if hook.event == "permission-request":
        return _permission("deny", f"{what}; the runtime's own question was not answered")
    return None


# -- locating the board without importing the kernel --------------------------------


def board_target(db_flag: str | None, cwd: str) -> tuple[str, str | None]:
    """("sqlite", path) | ("postgresql", url) | ("user", None): discovery.discover's
    order (flag, LOOPX_DB, nearest .loopx/board.db or the main checkout's from a
    worktree, user board), by the same rule (``rules/board_file``), os.path only."""
    raw = db_flag or os.environ.get("LOOPX_DB")
    if raw:
        kind, text = board_file.target(raw, cwd)
        return (
            "postgresql" if kind == "other" else kind
        ), text  # (an unknown scheme: the kernel refuses it with its own message)
    found, _ = board_file.nearest(cwd)
    return ("sqlite", found) if found else ("user", None)


def project_root(target: tuple[str, str | None], cwd: str) -> str:
    kind, path = target
    if kind == "sqlite" and path and os.path.basename(os.path.dirname(path)) == ".loopx":
        return os.path.realpath(os.path.dirname(os.path.dirname(path)))
    if (
        kind == "postgresql"
    ):  # a team board: this machine's checkout of it, the kernel's rule (from a workspace: the main checkout)
        checkout = board_file.team_checkout(cwd)
        if checkout is not None:
            return os.path.realpath(checkout)
    here = os.path.abspath(cwd)
    while True:
        if os.path.isdir(os.path.join(here, ".loopx")):
            return os.path.realpath(here)
        parent = os.path.dirname(here)
        if parent == here:
            break
        here = parent
    return os.path.realpath(os.environ.get("CLAUDE_PROJECT_DIR") or cwd)


def open_store(hook: Hook) -> Store:
    from pathlib import Path

    from ..store.backends import Store
    from ..store.discovery import discover

    location = discover(hook.db_flag, cwd=Path(hook.cwd))
    return Store.open(location)


# -- PreToolUse ------------------------------------------------------------------------

_EVENT_NAMES = {
    "pre-tool-use": "PreToolUse",
    "pre-skill-shell-command": "PreSkillShellCommand",
    "question": "PreToolUse",
}


def _deny(reason: str, message: str | None = None, event: str = "PreToolUse") -> Answer:
    out: dict[str, object] = {
        "hookSpecificOutput": {"hookEventName": event, "permissionDecision": "deny", "permissionDecisionReason": reason}
    }
    if message:
        out["systemMessage"] = message
    return out


def pre_tool_use(hook: Hook) -> Answer | None:
    """Check a tool call: LoopX's own ground is refused outright; a scope the
    agent lacks is asked of a human through a gate."""
    from . import policy

    event = _EVENT_NAMES[hook.event]
    if hook.payload is None:
        return _deny(
            f"LoopX could not read this tool call ({hook.problem}), so it is denied to be safe. "
            "If every call is denied this way, the runtime's hook input changed: tell the person.",
            event=event,
        )
    tool = hook.get("tool_name")
    if not isinstance(tool, str) or not tool:
        return _deny(
            "LoopX could not tell which tool this call uses (no tool_name), so it is denied to be safe.", event=event
        )
    target = board_target(hook.db_flag, hook.cwd)
    root = project_root(target, hook.cwd)
    rules = policy.load(root)
    for problem in rules.problems:
        hook.note(problem)
    from .ground import Ground

    ground = Ground(
        root,
        board_file=target[1] if target[0] == "sqlite" else None,
        board_url=target[1] if target[0] == "postgresql" else None,
    )
    needs = policy.classify(tool, hook.get("tool_input"), hook.cwd, root, rules, ground=ground, agent=hook.agent)
    refused = [n for n in needs if n.scope is None]
    if refused:
        reasons = "; ".join(f"`{n.what}`: {n.why}" for n in refused[:3])
        return _deny(
            f"LoopX never lets an agent do this, whatever it is granted — {reasons}. Do not try another way: do the work without it, or ask the person.",
            event=event,
        )
    if not needs:
        return None
    what = "; ".join(f"`{n.what}`" for n in needs)
    if not hook.agent:
        return _deny(
            f"LoopX: {what} needs {_scopes(needs)}, and this hook has no agent identity (LOOPX_AGENT is not set in the hook command), "
            "so LoopX cannot check its authority. Denied. Re-run `loopx init --for "
            + hook.runtime
            + " --agent ID` to set it.",
            event=event,
        )
    try:
        out = authorize(hook, target, needs)
    except DeadlinePassed:
        raise
    except Exception as exc:
        hook.note(f"cannot check the board: {type(exc).__name__}: {exc}")
        return _deny(
            f"LoopX could not read the board ({type(exc).__name__}: {exc}). {what} needs {_scopes(needs)}, so it is denied until "
            "the board can be checked (`loopx where` shows which board this project uses).",
            event=event,
        )
    if out is not None and event != "PreToolUse":
        out["hookSpecificOutput"]["hookEventName"] = event
    return out


def pre_skill_shell_command(hook: Hook) -> Answer | None:
    """Claude Code's ``PreSkillShellCommand``: a skill's shell command, with
    ``tool_name`` Bash or PowerShell and ``tool_input.command`` (the SDK's
    ``sdk.d.ts``, PreSkillShellCommandHookInput). The same check as a tool
    call; the answer names this event (a deny keeps the command from running)."""
    return pre_tool_use(hook)


def _scopes(needs: Sequence[Need]) -> str:
    return ", ".join(f"`{n.scope}`" for n in needs)


def _why(needs: Sequence[Need]) -> str:
    """What LoopX could not see, for the opaque scopes (said once)."""
    whys = [n.why for n in needs if n.why]
    return (" (" + "; ".join(dict.fromkeys(whys)) + ")") if whys else ""


def authorize(hook: Hook, target: tuple[str, str | None], needs: Sequence[Need]) -> Answer | None:
    agent = hook.agent
    assert agent  # pre_tool_use denies a call without an agent before it asks
    scopes = [n.scope for n in needs]
    verdict = None
    if target[0] == "sqlite" and target[1]:
        from . import fastcheck

        try:
            verdict = fastcheck.check(target[1], agent, scopes, _now())
        except fastcheck.NotSure:
            verdict = None
        if verdict is not None:
            if not verdict.known_agent:
                return _deny(
                    f"LoopX: unknown agent {agent!r}, so {_scopes(needs)} cannot be checked. Denied. Register it: `loopx agent add {agent} --can SCOPE…`."
                )
            if not verdict.open:
                return _answer(
                    hook, needs, verdict.card.id if verdict.card else None, verdict.allowed, verdict.pending, {}
                )
            if verdict.card is None:
                return _no_card(hook, needs, verdict.allowed)
    return _through_kernel(hook, needs)


def _through_kernel(hook: Hook, needs: Sequence[Need]) -> Answer | None:
    """Open (or reuse) the gates through the kernel's operators."""
    from ..rules import ids
    from ..shapes.errors import LoopxError

    agent = hook.agent
    assert agent  # pre_tool_use denies a call without an agent before it asks
    store = open_store(hook)
    try:
        try:
            card, allowed, pending, questions = open_gates(store, agent, needs)
        except LoopxError as err:
            refused_on = getattr(err, "card", None)  # set by open_gates
            on = f" on {ids.fmt(ids.CARD, refused_on.id)}" if refused_on is not None else ""
            return _deny(
                f"LoopX: {'; '.join(f'`{n.what}`' for n in needs)} needs {_scopes(needs)}{on}, and LoopX refused: {err.message}"
                + (f" → {err.hint}" if err.hint else "")
            )
        if card is None:
            if any(n.scope not in allowed for n in needs):
                return _no_card(hook, needs, allowed)
            return _answer(hook, needs, None, allowed, {}, {})
        return _answer(hook, needs, card.id, allowed, pending, questions)
    finally:
        store.close()


def open_gates(
    store: Store, agent: str, needs: Sequence[Need]
) -> tuple[CardView | None, dict[str, str], dict[str, int], dict[str, str]]:
    """(card, allowed, pending, questions) for the scopes ``needs`` asks of
    ``agent``: what allows each (a capability, a grant, an approved gate),
    and for the rest a gate on the agent's card — reused when one is already
    open, all opened in one transaction. ``card`` None: it holds no card (and
    nothing was asked)."""
    from ..ops import gates
    from ..rules import ids
    from ..shapes.errors import LoopxError

    card, allowed = gates.scopes_allowed(store, agent, [n.scope for n in needs])
    pending: dict[str, int] = {}
    questions: dict[str, str] = {}
    if card is None:
        return None, allowed, pending, questions
    key = ids.fmt(ids.CARD, card.id)
    asked: dict[str, str] = {}  # scope -> question: one gate per scope, all in one transaction
    for need in needs:
        if need.scope in allowed or need.scope in asked:
            continue
        question = f"{agent} wants to run `{need.what}` on {key} ({card.title[:80]}): it needs `{need.scope}`"
        if need.why:
            question += f" because {need.why}"
        asked[need.scope] = question
    try:
        opened = gates.ask_all(
            store, card.id, agent, [{"question": q[:1900], "scope": scope} for scope, q in asked.items()]
        )
    except LoopxError as err:
        err.card = card  # type: ignore[attr-defined]  # the card it could not ask on, for the hook's refusal text: LoopxError (shapes/) has no field for it, and its JSON must not grow one
        raise
    for (scope, question), (gate, _, created) in zip(asked.items(), opened):
        if gate.status == "approved":
            allowed[scope] = f"gate:{gate.key}"
        else:
            pending[scope] = gate.id
            if created:
                questions[scope] = question
    return card, allowed, pending, questions


def vet_verify(store: Store, agent: str, command: str) -> None:
    """A card's verify command no person set runs only as the agent's own
    shell command would (DESIGN §5 "A card's verify command"): the hook's
    policy over it, from the project folder, with the agent's scopes, grants
    and gates. Raises Forbidden for LoopX's ground, Conflict with the gate it
    opened (or found pending) for a scope the agent lacks."""
    from ..rules import ids
    from ..shapes.errors import Conflict, Forbidden
    from . import policy
    from .ground import Ground

    root = str(store.project_root())
    target = board_target(None, root)
    ground = Ground(
        root,
        board_file=target[1] if target[0] == "sqlite" else None,
        board_url=target[1] if target[0] == "postgresql" else None,
    )
    needs = policy.classify("Bash", {"command": command}, root, root, policy.load(root), ground=ground, agent=agent)
    refused = [n for n in needs if n.scope is None]
    if refused:
        raise Forbidden(
            f"the card's verify command `{command[:200]}` does what LoopX never lets an agent do: "
            + "; ".join(f"`{n.what}`: {n.why}" for n in refused[:3]),
            "a person sets a verify command that must do this (`loopx card add --verify` run by a person)",
            code="verify_forbidden",
        )
    if not needs:
        return
    card, allowed, pending, _ = open_gates(store, agent, needs)
    missing = [n for n in needs if n.scope not in allowed]
    if missing:
        gates = ", ".join(f"{ids.fmt(ids.GATE, pending[n.scope])} (`{n.scope}`)" for n in missing if n.scope in pending)
        raise Conflict(
            f"the card's verify command `{command[:200]}` needs {_scopes(missing)}, which {agent} does not hold"
            + (f": gate {gates} asks a human" if gates else ""),
            "wait for the answer (`loopx gate status G-…`), then run `loopx done` again"
            if gates
            else "take the card first",
            code="verify_gated",
        )


def _take_work(agent: str) -> str:
    from ..rules.hints import take_work

    return take_work(agent)


def _no_card(hook: Hook, needs: Sequence[Need], allowed: dict[str, str]) -> Answer:
    assert hook.agent  # asked only after pre_tool_use checked there is one
    missing = [n for n in needs if n.scope not in allowed]
    return _deny(
        f"LoopX: {'; '.join(f'`{n.what}`' for n in missing)} needs {_scopes(missing)}, which agent {hook.agent} does not hold, "
        f"and it holds no card to ask a human on. Denied. Take your card first: {_take_work(hook.agent)}."
    )


def _answer(
    hook: Hook,
    needs: Sequence[Need],
    card_id: int | None,
    allowed: dict[str, str],
    pending: dict[str, int],
    new: dict[str, str],
) -> Answer | None:
    if pending:
        key = f"LX-{card_id}"
        parts = []
        for need in needs:
            if need.scope in pending:
                gate = f"G-{pending[need.scope]}"
                state = "opened" if need.scope in new else "still pending"
                because = f" ({need.why})" if need.why else ""
                parts.append(f"`{need.what}` needs `{need.scope}`{because}: gate {gate} is {state}")
        first = f"G-{next(iter(pending.values()))}"
        reason = (
            f"LoopX denied this call: agent {hook.agent} may not use {', '.join(f'`{s}`' for s in pending)} on {key} without a human's approval. "
            + "; ".join(parts)
            + f". Wait for the answer: `loopx gate status {first}` (exit 6 while pending, 0 once approved). "
            "Once it is approved, run the same call again and it will be allowed; if it is rejected, do not try another way. "
            "Do not retry in a loop meanwhile: do other work on the card or stop the turn."
        )
        message = None
        if new:
            message = f"LoopX: {hook.agent} asks for {', '.join(f'`{s}`' for s in new)} on {key} — answer {first} on the board (`loopx`)."
        return _deny(reason, message)
    approvers = {by for by in allowed.values() if not by.startswith("capability")}
    if (
        approvers
    ):  # a human already approved this (a gate in this lease, or a remembered grant): the runtime may be told so
        return runtime_of(hook).approved(
            "LoopX: "
            + ", ".join(f"`{s}` approved ({by})" for s, by in allowed.items() if not by.startswith("capability"))
        )
    return None


# -- SessionStart ------------------------------------------------------------------------


def session_start(hook: Hook) -> Answer:
    text = _session_context(hook)
    out: Answer = {"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": text}}
    if hook.agent:
        runtime_of(hook).session_env(
            hook.agent, hook.note
        )  # the agent's id for the session's later shell commands, where the runtime offers a way
    return out


def _session_context(hook: Hook) -> str:
    agent = hook.agent
    if not agent:
        return (
            "LoopX: this session has no agent identity (LOOPX_AGENT is not set in the hook command), so LoopX cannot tell which card is yours. Ask the human to run `loopx init --for "
            + hook.runtime
            + " --agent ID`."
        )
    from ..shapes.errors import LoopxError

    try:
        store = open_store(hook)
    except LoopxError as err:
        return f"LoopX: {err.message}" + (f"\n→ {err.hint}" if err.hint else "")
    except Exception as exc:
        hook.note(f"cannot open the board: {type(exc).__name__}: {exc}")
        return f"LoopX could not open its board ({type(exc).__name__}). Run `loopx next --agent {agent}` yourself before starting work."
    try:
        from ..ops.claims import next_turn

        try:
            result = next_turn(store, agent, claim=False)
        except LoopxError as err:
            return f"LoopX: {err.message}" + (f"\n→ {err.hint}" if err.hint else "")
        _emit(
            store,
            agent,
            "session_started",
            result.card.id if result.card else None,
            session=hook.get("session_id"),
            runtime=hook.runtime,
            source=hook.get("source"),
        )
        return _describe_next(store, agent, result)
    finally:
        store.close()


HEAD = (
    "# LoopX — you are agent `{agent}`\n"
    "LoopX is this project's board. Your card below is the continuation of earlier turns: resume from it. "
    "Every LoopX command needs `--agent {agent}` (or LOOPX_AGENT={agent}). "
    "Dangerous commands (git push, deploys, publishing, deleting or writing outside the project) are checked against your card's authority; "
    "a denial names the gate a human must answer. Before you end a turn, record it with the loopx MCP tool `writeback` "
    "(or `loopx writeback` where your shell may write the board); finish a card with the tool `done`."
)


def _describe_next(store: Store, agent: str, result: NextResult) -> str:
    head = HEAD.format(agent=agent)
    if result.card is not None and result.action in ("work", "wait", "accept", "paused"):
        from ..ops.context import build, to_markdown

        md = to_markdown(build(store, result.card.id))
        key = result.card.key
        if result.action == "accept":
            lead = f"{key} was handed to you: read it, then `loopx accept {key} --agent {agent}`."
        elif result.action == "wait":
            gate = result.gate.key if result.gate else "G-…"
            lead = f"{key} waits for a human to answer {gate}: check it with `loopx gate status {gate}`; do not work around it."
        elif result.action == "paused" and result.wake_at is not None:
            from ..rules.clock import iso

            lead = f"{key} is paused ({result.reason}): its window is spent; it resumes by itself at {iso(result.wake_at)}. Stop here."
        elif result.action == "paused":
            lead = f"{key} is paused ({result.reason}): a human must raise its budget. Stop here."
        else:
            lead = f'Work on {key}. When the turn is done: `loopx writeback {key} --agent {agent} --summary "…"`.'
        return f"{head}\n\n{lead}\n\n{md}"
    if result.action == "paused":
        from ..rules.clock import iso

        return f"{head}\n\nYour window is spent; it reopens at {iso(result.wake_at)}. Do not start new work."
    if result.wake_at is not None:
        from ..rules.clock import iso

        return f"{head}\n\nYour monitored card is not due until {iso(result.wake_at)}; `loopx next --agent {agent}` returns it then. Until then, {_take_work(agent)} takes other ready work."
    return f"{head}\n\nYou hold no card. Take the best ready one with {_take_work(agent)} (exit 9: nothing to do)."


def _emit(store: Store, agent: str, kind: str, card_id: int | None, **data: object) -> None:
    from ..ops.turns import note

    try:
        note(store, agent, kind, card_id, **data)
    except Exception:  # bookkeeping only: never worth failing the hook
        pass


# -- Stop ------------------------------------------------------------------------------


def stop(hook: Hook) -> Answer | None:
    _admit_objects(hook)
    _sweep_git(hook)
    agent = hook.agent
    if not agent:
        hook.note("LOOPX_AGENT is not set; not checking evidence")
        return None
    if hook.payload is None:
        # Without the payload there is no stop_hook_active to respect: blocking could loop.
        hook.note("the turn may end unchecked")
        return None
    try:
        store = open_store(hook)
    except Exception as exc:
        hook.note(f"cannot open the board ({type(exc).__name__}: {exc}); the turn may end")
        return None
    try:
        turn = _read_transcript(hook)
        _charge_noted(hook, store, turn)
        if hook.get("stop_hook_active") is True:
            return None  # already continuing because of a stop hook: never block twice
        return _evidence_gate(hook, store, turn)
    finally:
        store.close()


def _admit_objects(hook: Hook) -> None:
    """At a turn's end in a card's workspace (a runner's, or a session a person
    started there with ``workspace start``): the objects the turn's git wrote into
    the workspace's quarantine checked and moved into the repository's store
    (issue #38; ``workspace/quarantine.py``), so that the person's own git sees
    the agent's commits — and never an object that fails the check."""
    from ..rules import workspace_bounds
    from ..workspace import quarantine

    bounds = workspace_bounds.find(hook.cwd)
    if bounds is None or bounds.main is None or not os.path.isdir(quarantine.folder(bounds.admin)):
        return
    try:
        got = quarantine.admit(bounds.common, quarantine.folder(bounds.admin))
    except OSError as exc:
        hook.note(f"could not check the objects the turn wrote: {exc}")
        return
    if got.refused:
        hook.note(
            f"{len(got.refused)} object file(s) the turn wrote failed git's hash check and were kept out of the repository"
        )


def _sweep_git(hook: Hook) -> None:
    """At a turn's end in a card's workspace: what the turn created in the
    repository's shared git folder that is not its own moved out
    (``workspace/sweep.py``, #38), recorded on the card, and what exists now
    recorded for the next turn of the session. Nothing without a record
    (``workspace start`` and the runner make it before the session)."""
    from ..rules import workspace_bounds
    from ..workspace import sweep

    bounds = workspace_bounds.find(hook.cwd)
    if bounds is None or bounds.main is None or not os.access(os.path.join(bounds.common, "objects"), os.W_OK):
        return
    owner = sweep.owner(bounds)
    if owner is None:
        return
    try:
        got = sweep.end(bounds)
    except OSError as exc:
        hook.note(f"could not check what the turn wrote into the repository's git folder: {exc}")
        return
    sweep.begin(bounds, owner)  # the session goes on: its next turn is compared to what is there now
    if not got.moved and not got.changed:
        return
    hook.note(f"{len(got.moved)} path(s) the turn created in the repository's git folder were moved out to {got.where}")
    card = _card_of(bounds)
    if card is None:
        return
    try:
        from ..ops.workspaces import note_refused

        store = open_store(hook)
        try:
            note_refused(store, card, "system", got.moved, got.changed, got.where)
        finally:
            store.close()
    except Exception as exc:  # bookkeeping only: the files are out already
        hook.note(f"could not record it on the board: {type(exc).__name__}")


def _card_of(bounds: Bounds) -> int | None:
    """The card whose workspace ``bounds`` is (its branch ``loopx/LX-7``)."""
    from ..rules import ids

    name = bounds.branch or ""
    if not name.startswith("loopx/"):
        return None
    try:
        return ids.parse(ids.CARD, name[len("loopx/") :])
    except ValueError:
        return None


MAX_TRANSCRIPT = 512 * 1024 * 1024  # a transcript file larger than this is not read
TRANSCRIPT_WAIT = 3.0  # seconds a Stop hook waits for the turn's last message to reach the transcript


def _read_transcript(hook: Hook) -> Turn | None:
    """The runtime's transcript, when it is a regular file of a sane size
    (``/dev/zero``, a FIFO or a device would never end), once it holds the turn's
    last message. Claude Code writes it asynchronously: at Stop the final model
    call is often not there yet (2.1.197), and a one-shot ``claude -p`` has no
    later Stop to charge it. The payload's ``last_assistant_message`` says what
    to wait for; after TRANSCRIPT_WAIT the hook charges what is there (a later
    Stop of the session charges the rest)."""
    import stat

    from ..runtimes import transcript

    path = hook.get("transcript_path")
    if not isinstance(path, str) or not path:
        return None
    path = os.path.expanduser(path)
    try:
        st = os.stat(path)
    except OSError as exc:
        hook.note(f"cannot read the transcript {path}: {exc.strerror}")
        return None
    if not stat.S_ISREG(st.st_mode):
        hook.note(f"the transcript {path} is not a regular file; usage not charged")
        return None
    if st.st_size > MAX_TRANSCRIPT:
        hook.note(f"the transcript {path} is larger than {MAX_TRANSCRIPT >> 20} MB; usage not charged")
        return None
    expected = runtime_of(hook).expected_last_message(hook.payload)
    try:
        turn = transcript.read(hook.runtime, path)
        if _lagging(hook):
            return transcript.before_last_call(turn)  # the lag outlasts the wait: a later charge must add it
        deadline = time.monotonic() + TRANSCRIPT_WAIT
        while expected and turn.last_text != expected and time.monotonic() < deadline:
            time.sleep(0.05)
            turn = transcript.read(hook.runtime, path)
        return turn
    except OSError as exc:
        hook.note(f"cannot read the transcript {path}: {exc.strerror}")
    except Exception as exc:
        hook.note(f"cannot read the transcript {path}: {type(exc).__name__}: {exc}")
    return None


def _lagging(hook: Hook) -> bool:
    """A test's ``LOOPX_FAULT=transcript-lag``: this Stop reads each transcript
    as if its last model call were not written yet (``rules/faults.py``)."""
    from ..rules import faults

    return hook.event == "stop" and faults.lagging("transcript-lag")


def _held(agent: str, statuses: tuple[str, ...] | None = None) -> Held | None:
    """The agent's card (``holding``'s rule), among those in ``statuses`` (the held ones)."""
    from ..ops.leases import held_card
    from ..rules.clock import now
    from ..rules.holding import HELD

    return held_card(agent, now(), HELD if statuses is None else statuses)


def _charge(hook: Hook, store: Store, turn: Turn | None) -> None:
    """Charge the model calls since the previous charge of this session (or since
    the turn's prompt) to the agent's card: ``charge.charge_transcript``, the
    code ``loopx run`` charges a turn's transcript with too, so the two never
    charge a call twice."""
    if turn is None or not turn.calls:
        return
    from ..ops.turns import charged_card
    from . import charge

    agent = hook.agent
    assert agent  # stop and session_end return before charging without an agent
    card_id = charged_card(store, agent, turn.started_at)
    session = str(hook.get("session_id") or "unknown")
    path = os.path.expanduser(hook.get("transcript_path"))
    by = f"the {hook.runtime} {hook.event} hook"
    charge.charge_transcript(store, agent, hook.runtime, session, path, turn, card_id, hook.note, by=by)
    charge.charge_subagents(
        store, agent, hook.runtime, session, path, card_id, hook.note, by=by, lagging=_lagging(hook)
    )


def session_end(hook: Hook) -> None:
    """Claude Code's ``SessionEnd``: charge what the session used that no Stop
    charged — the last model call whose usage reached the transcript after the
    last Stop read it (2.1.197 writes it asynchronously), its subagents' calls.
    Idempotent by call id (``adapters/charge.py``); says nothing to the runtime."""
    if not hook.agent or hook.payload is None:
        return None
    try:
        store = open_store(hook)
    except Exception as exc:
        hook.note(f"cannot open the board ({type(exc).__name__}: {exc}); usage not charged")
        return None
    try:
        _charge_noted(hook, store, _read_transcript(hook))
    finally:
        store.close()
    return None


def _permission(behavior: str, message: str | None = None, updated: dict[str, Any] | None = None) -> Answer:
    decision: dict[str, Any] = {"behavior": behavior}
    if message:
        decision["message"] = message
    if updated is not None:
        decision["updatedInput"] = updated
    return {"hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": decision}}


def _in_a_runners_turn(hook: Hook) -> bool:
    """A runner started this turn (``LOOPX_TURN_ID``): nobody sits at that
    terminal, so the runtime's own questions go to the person's queue. A person
    working with the runtime at their own terminal gets its own dialog."""
    return bool(hook.agent and hook.payload is not None and os.environ.get("LOOPX_TURN_ID"))


def _ask_the_person(hook: Hook, tool: str, tool_input: object) -> dict[str, Any] | None:
    """``runtime_questions.decide`` on the board this hook uses: the decision,
    None (no card), or a deny when the board cannot be opened."""
    from . import runtime_questions

    agent = hook.agent
    if not agent:
        return None
    try:
        store = open_store(hook)
    except Exception as exc:
        hook.note(f"cannot open the board ({type(exc).__name__}: {exc})")
        return {"behavior": "deny", "message": "LoopX could not open the board to ask the person"}
    try:
        return runtime_questions.decide(store, agent, hook.runtime, tool, tool_input, wait=PERMISSION_WAIT)
    finally:
        store.close()


PERMISSION_WAIT = 540.0  # seconds a hook waits for the person (under its deadline)


def permission_request(hook: Hook) -> Answer | None:
    """The runtime's own question ("may I run this?", ``PermissionRequest`` of
    Claude Code 2.1.335 and Codex 0.171) joins the person's queue: a gate on
    the agent's card, answered on the board or with ``loopx gate answer``; the
    hook waits for the answer and gives it to the runtime — allow only on an
    approval a person's signature backs, deny on a rejection or an expired
    gate. Unanswered within ``PERMISSION_WAIT``: deny (the gate stays pending;
    the card waits). An agent holding no card: the runtime decides as it would
    without the hook. Only in a runner's turn. Codex refuses ``updatedInput``
    in this answer, so only Claude Code's question tool gets one."""
    tool = hook.get("tool_name")
    if not _in_a_runners_turn(hook) or not isinstance(tool, str):
        return None
    decision = _ask_the_person(hook, tool, hook.get("tool_input"))
    if decision is None:  # nobody to ask on: as the runtime says
        assert hook.agent  # (_in_a_runners_turn)
        decision = runtime_of(hook).unasked_permission(hook.agent)
    if decision is None:
        return None
    updated = decision.get("updatedInput") if runtime_of(hook).ANSWERS_WITH_INPUT else None
    return _permission(decision["behavior"], decision.get("message"), updated)


def question(hook: Hook) -> Answer | None:
    """Claude Code's question tool (``AskUserQuestion``), at its ``PreToolUse``
    (a hook entry of its own, matcher ``AskUserQuestion``, timeout 600 s): in a
    runner's turn each question becomes a gate offering its options; the
    person's choice or words reach the model as the tool's answers (``allow``
    with ``updatedInput.answers``: the tool then tells the model "Your
    questions have been answered: …"); a rejection or no answer yet is a deny
    whose reason the model reads. 2.1.197 and 2.1.335 alike."""
    from ..runtimes.claude_code import QUESTION_TOOL

    if not _in_a_runners_turn(hook) or hook.get("tool_name") != QUESTION_TOOL:
        return None
    decision = _ask_the_person(hook, QUESTION_TOOL, hook.get("tool_input"))
    if decision is None:
        return None
    if decision["behavior"] == "allow":
        out = {
            "hookEventName": "PreToolUse",
            "permissionDecision": "allow",
            "permissionDecisionReason": "LoopX: the person answered on the board",
        }
        if "updatedInput" in decision:
            out["updatedInput"] = decision["updatedInput"]
        return {"hookSpecificOutput": out}
    return _deny(
        f"LoopX: {decision['message']}. Go on without the answer, or wait and check the gate with `gate_status`."
    )


def notification(hook: Hook) -> None:
    """Claude Code's ``Notification`` (``NotificationHookInput``: ``message``,
    ``title``, ``notification_type`` — permission_prompt, idle_prompt, …):
    the runtime wants its person, who may be away from that terminal. Recorded
    as a ``runtime_notice`` event on the agent's card (or the board's), which
    the person's notification command delivers (``ops/notify``, de-duplicated
    per agent and type within its ``every``). Says nothing to the runtime."""
    if not hook.agent or hook.payload is None:
        return None
    kind, message = hook.get("notification_type"), hook.get("message")
    if not isinstance(message, str) or not message.strip():
        return None
    from ..ops.turns import note
    from ..rules.text import terminal_safe

    try:
        store = open_store(hook)
    except Exception as exc:
        hook.note(f"cannot open the board ({type(exc).__name__}: {exc}); the notice is lost")
        return None
    try:
        with store.read():
            card = _held(hook.agent)
        title = hook.get("title")
        note(
            store,
            hook.agent,
            "runtime_notice",
            card.id if card else None,
            runtime=hook.runtime,
            agent_id=hook.agent,
            type=terminal_safe(str(kind or "notice"))[:40],
            message=terminal_safe(message)[:500],
            title=terminal_safe(title)[:120] if isinstance(title, str) else None,
            session=hook.get("session_id"),
        )
    finally:
        store.close()
    return None


def _charge_noted(hook: Hook, store: Store, turn: Turn | None) -> None:
    """``_charge``; what went wrong is said on stderr (a charge never ends a session)."""
    from ..shapes.errors import LoopxError

    try:
        _charge(hook, store, turn)
    except LoopxError as err:
        hook.note(f"usage not charged: {err.message}")
    except Exception as exc:
        hook.note(f"usage not charged: {type(exc).__name__}: {exc}")


def _evidence_gate(hook: Hook, store: Store, turn: Turn | None) -> Answer | None:
    from ..ops.turns import stop_check
    from ..rules import ids

    agent = hook.agent
    assert agent  # stop returns before this without an agent
    check = stop_check(store, agent, hook.get("session_id"), turn.started_at if turn is not None else None)
    if check is None:
        return None  # nothing this agent could write back to
    key, title, wrote = ids.fmt(ids.CARD, check.card), check.title, check.wrote
    if wrote:
        _emit(store, agent, "turn_ended", check.card, session=hook.get("session_id"), runtime=hook.runtime)
        return None
    reason = (
        f'LoopX: this turn wrote no evidence on {key} ("{title[:80]}"). Before you stop, record what the turn did with the '
        f"`writeback` tool of the loopx MCP server (card {key}, summary, artifacts: files you made, next) — the way that works "
        f'from the sandbox; without it, `loopx writeback {key} --agent {agent} --summary "…"` from your shell.\n'
        f"If the card is finished, write back first, then the tool `done` (card {key}, summary) — or, without the sandbox, "
        f'`loopx done {key} --agent {agent} --summary "…"`. '
        "If you are blocked, say so in the summary."
    )
    return runtime_of(hook).continue_turn(reason)


HANDLERS: dict[str, Callable[[Hook], Answer | None]] = {
    "session-start": session_start,
    "pre-tool-use": pre_tool_use,
    "stop": stop,
    "session-end": session_end,
    "permission-request": permission_request,
    "pre-skill-shell-command": pre_skill_shell_command,
    "question": question,
    "notification": notification,
}
