"""The work the log recorded for a card's workspace, and what a person let go (#38).

A card's committed work is what its ``workspace_opened``, ``code_state`` and
``workspace_archived`` events name: each recorded HEAD and the commits a turn
made. That work must reach the base (a person's merge), stay on the card's
branch, or be let go by a person: ``done`` on a card whose recorded commits
are on neither its base nor its branch asks them first (a gate of kind
``vanished`` naming the commits, which ``ops/workspaces`` keeps under
``refs/loopx/LX-7/kept/<commit>``); their signed approval lets exactly those
commits go. ``loopx verify`` names a done card's commits that went without
it. Saved uncommitted work (``wip``) and archives are not here: LoopX's own
refs keep them.

Standard library only, plain SQL through ``query(sql, params)``: the
operators and ``verify`` read the same rule.
"""

from __future__ import annotations

import json

TYPE_CHECKING = False  # (annotations only: typing is not imported on the cold path; checkers read this as typing's)
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from .chain import Query

VANISHED = "vanished"  # the gate kind: the card's recorded commits are on neither its base nor its branch
SCOPE = "workspace:drop"  # its scope (never a capability's or a grant's: ``done`` opens it itself)
WORK_KINDS = ("workspace_opened", "code_state", "workspace_archived")


def _data(text: str | dict[str, object] | None) -> dict[str, Any]:  # (an event's data: any JSON values)
    if isinstance(text, dict):
        return text
    try:
        found = json.loads(text) if text else {}
    except ValueError:
        return {}
    return found if isinstance(found, dict) else {}


def recorded(query: Query, card_id: int) -> dict[str, str]:
    """Every commit the log says the card's workspace had committed, in the
    order first recorded: commit -> what it was ("HEAD of turn a1.t3")."""
    out: dict[str, str] = {}
    marks = ",".join("?" * len(WORK_KINDS))
    for seq, kind, text in query(
        f"SELECT seq, kind, data FROM event WHERE card = ? AND kind IN ({marks}) ORDER BY seq", (card_id, *WORK_KINDS)
    ):
        data = _data(text)
        if "error" in data:
            continue  # git failed to read it: it names nothing
        turn = f"turn {data['turn_id']}" if data.get("turn_id") else f"{kind} (event {seq})"
        named = [("HEAD", data.get("head"))] + [("commit", c) for c in data.get("commits") or []]
        for what, commit in named:
            if isinstance(commit, str) and commit and commit not in out:
                out[commit] = f"{what} of {turn}"
    return out


def let_go(query: Query, card_id: int, signed: Callable[[int], bool] | None = None) -> set[str]:
    """The commits a person agreed the card may finish without: those named by
    its ``vanished`` gates they approved. ``signed(seq)``: whether the answer
    event ``seq`` is a valid signed decision (``done`` checks it; ``verify``
    checks every person's signature on its own walk of the chain)."""
    asked: dict[str, list] = {}
    out: set[str] = set()
    for seq, actor, kind, text in query(
        "SELECT seq, actor, kind, data FROM event WHERE card = ? AND kind IN ('gate_asked', 'gate_answered') ORDER BY seq",
        (card_id,),
    ):
        data = _data(text)
        if kind == "gate_asked" and data.get("kind") == VANISHED:
            asked[str(data.get("gate"))] = list(data.get("commits") or [])
        elif (
            kind == "gate_answered"
            and actor.startswith("human:")
            and data.get("answer") == "approved"
            and str(data.get("gate")) in asked
        ):
            if signed is None or signed(seq):
                out.update(c for c in asked[str(data.get("gate"))] if isinstance(c, str))
    return out


def describe(commits: list[tuple[str, str]], limit: int = 5) -> str:
    """``abc123def456 (HEAD of turn a1.t1), …`` for a message."""
    shown = ", ".join(f"{c[:12]} ({what})" for c, what in commits[:limit])
    return shown + (f" and {len(commits) - limit} more" if len(commits) > limit else "")
