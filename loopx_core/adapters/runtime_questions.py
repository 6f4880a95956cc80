"""A runtime's own question to the person, as gates on the agent's card (DESIGN
§8): "may this tool run?" (Claude Code's and Codex's ``PermissionRequest``,
Claude Code's ``--permission-prompt-tool``) and Claude Code's question tool
(``AskUserQuestion``). One rule for every route: a gate per question, reused
while the same question is pending; the answer read as ``gate status`` reads
it (an approval no person's signature backs reads as pending); waited for up
to ``WAIT`` seconds.

The question tool's input and answer are its runtime's (``runtimes/claude_code.questions``
and ``answered``): each question becomes a gate offering its labels; the
person picks one (``gate answer --choose``) or writes their own words
(``--text``).
"""

from __future__ import annotations

import json
import time

from .. import runtimes
from ..rules import ids, limits
from ..rules.text import terminal_safe
from ..rules.tool_text import shown

TYPE_CHECKING = False  # (annotations only: typing is not imported on the cold path; checkers read this as typing's)
if TYPE_CHECKING:
    from typing import Any

    from ..store.backends import Store

WAIT = 540.0  # seconds a hook waits for the person (under the runtime's 600 s)
POLL = 0.5


def call_digest(tool: str, tool_input: object) -> str:
    """The exact call, as one hash: what an "allow for this session" answer allows (nothing else)."""
    import hashlib

    canonical = json.dumps(
        {"tool": tool, "input": tool_input}, sort_keys=True, ensure_ascii=False, separators=(",", ":")
    )
    return hashlib.sha256(canonical.encode("utf-8", "surrogatepass")).hexdigest()


def _session(store: Store, agent: str) -> str | None:
    """The agent's runner session (its ``runner_id``) while it runs, as the board says (never the environment)."""
    from ..ops.runners import get_runner

    found = get_runner(store, agent)
    return found.runner_id if found is not None and found.state != "stopped" else None


def decide(
    store: Store, agent: str, runtime: str, tool: str, tool_input: object, wait: float | None = None
) -> dict[str, Any] | None:
    """The person's decision on a runtime's own question, for the runtime:
    ``{"behavior": "allow"}`` (with ``updatedInput`` for the question tool)
    or ``{"behavior": "deny", "message": …}``. None: the agent holds no card
    (nobody to ask on: the runtime decides as it would without LoopX)."""
    from ..ops import gates
    from ..ops.leases import held_card
    from ..rules.clock import now
    from ..rules.holding import HELD

    with store.read():
        card = held_card(agent, now(), HELD)
    if card is None:
        return None
    key = ids.fmt(ids.CARD, card.id)
    asker = runtimes.module(runtime)
    who = f"{asker.TITLE} ({agent})"
    whole = True  # the person sees the whole call (only a permission question can be cut)
    questions = asker.questions(tool_input) if tool == asker.QUESTION_TOOL else None
    if questions:
        asks = []
        for q in questions:
            text = f"{who} asks on {key}: " + (f"[{q['header']}] " if q["header"] else "") + q["question"]
            if q["multi"]:
                text += " (several may apply: answer in your own words, e.g. 'A, B')"
            asks.append({"question": text[: limits.QUESTION_MAX - 100], "options": q["options"]})
    else:
        text, whole = shown(tool, tool_input)
        question = f"{who} asks to use {tool} on {key}: {text}"
        asks = [{"question": question[: limits.QUESTION_MAX - 100]}]
        # Allowed for a session only when the person sees exactly the call that runs:
        # nothing cut, nothing a terminal would drop (a bidi override, a zero-width space).
        whole = whole and len(question) <= limits.QUESTION_MAX - 100 and terminal_safe(question) == question
    session = _session(store, agent) if whole else None
    call = call_digest(tool, tool_input)
    if not questions and session is not None:
        allowed = gates.session_allows(store, card.id, agent, session, tool, call)
        if allowed is not None:  # the person allowed this exact call for the runner's session (signed)
            return {"behavior": "allow", "message": f"allowed for this runner's session by {allowed}"}
    for ask in asks:  # (a gate of the runtime's: withdrawn when its runner stops, ops/release.release_on_stop)
        ask.update(runtime=runtime, tool=tool, call=call, session=session)
    opened = [gate for gate, _, _ in gates.ask_all(store, card.id, agent, asks)]
    deadline = time.monotonic() + (WAIT if wait is None else wait)
    while any(g.status == "pending" for g in opened) and time.monotonic() < deadline:
        time.sleep(POLL)
        opened = [
            gates.status(store, g.id) if g.status == "pending" else g for g in opened
        ]  # a forged approval reads as pending
    refused = [g for g in opened if g.status not in ("approved", "pending")]
    if refused:
        g = refused[0]
        return {
            "behavior": "deny",
            "message": f"the person said no ({g.key} {g.status}{': ' + g.note if g.note else ''})",
        }
    waiting = [g for g in opened if g.status == "pending"]
    if waiting:
        names = ", ".join(g.key for g in waiting)
        return {
            "behavior": "deny",
            "message": f"no answer from the person yet; {names} waits for them (`loopx gate status {waiting[0].key}`)",
        }
    if not questions:
        return {"behavior": "allow"}
    return {"behavior": "allow", "updatedInput": asker.answered(tool_input, [g.choice or g.text for g in opened])}
