"""Merging is the person's (#26, DESIGN §10 "Merging is the person's").

``done`` on a card whose branch (``loopx/LX-7``) holds commits the base lacks
does not close it: it opens a ``git:merge`` gate (kind ``merge``) and the card
waits. A person's signed approval brings the branch in (``workspace.merge``)
in the same transaction: ``merged`` (signed; the card is ``done``) or, on a
conflict, ``merge_conflict`` (signed; the card goes back ``ready`` to its agent
with the conflicted files as its next action; neither branch changes). A
grant never answers a merge gate and a merge is never remembered."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, NamedTuple

from ..rules import ids
from ..shapes.errors import Conflict, InvalidInput
from ..store import events, records
from ..store.records import Card, Gate
from ..store.rows import touch
from .lifecycle import clear_lease, move

if TYPE_CHECKING:
    from ..workspace.merge import DiffSummary

SCOPE = "git:merge"
KIND = "merge"


class Plan(NamedTuple):
    base: str
    branch: str
    head: str


def _repo(store):
    from . import workspaces

    return workspaces.repository(store)


def _branch_of(store, card_id: int, *, deciding: bool = False):
    """(repository, the card's workspace) when the card has a branch to show or
    merge, else None. A team board's card whose workspace another checkout
    holds has its branch in that repository: shown as none here, and
    ``deciding`` (done, a merge) is refused (``workspace_elsewhere``) — never
    closed without its merge."""
    from . import workspaces

    found = workspaces.lookup(store, card_id)
    if found is not None and not workspaces.here(store, found):
        if deciding and found.state != "removed":
            raise workspaces.elsewhere(found, ids.fmt(ids.CARD, card_id))
        return None
    repo = _repo(store)
    if repo is None or found is None or not found.base:
        return None
    return repo, found


def pending_merge(store, card_id: int) -> Plan | None:
    """What ``done`` must ask the person to merge (None: the project is not a
    git repository, the card has no workspace, or its branch adds nothing)."""
    where = _branch_of(store, card_id, deciding=True)
    if where is None:
        return None
    repo, found = where
    from ..workspace import merge as git_merge
    from ..workspace.git import GitError

    try:
        head = git_merge.tip(repo, found.branch)
        if head is None or git_merge.ahead(repo, found.base, found.branch) == 0:
            return None
        return Plan(found.base, found.branch, head)
    except GitError as err:
        raise Conflict(f"git refused: {err.message}", "fix the repository, then run `loopx done` again", code="git_failed") from None


def ask(card: Card, agent: str, plan: Plan, now: float) -> Gate:
    """Open the card's merge gate (the caller's transaction; the card waits)."""
    from .gates import open_gate

    question = f"Merge {plan.branch} into {plan.base}?"
    gate, _ = open_gate(card, agent, question, SCOPE, [], None, KIND, now, extra=plan._asdict())
    return gate


def plan_of(gate: Gate) -> Plan:
    """What the person is asked to merge: the branch and base the gate was asked with."""
    row = records.rows(
        'SELECT "data" FROM "event" WHERE "card" = ? AND "kind" = ? ORDER BY "seq" DESC', (gate.card_id, "gate_asked")
    )
    key = ids.fmt(ids.GATE, gate.id)
    for (text,) in row:
        data = json.loads(text) if isinstance(text, str) else (text or {})
        if data.get("gate") == key and data.get("branch") and data.get("base"):
            return Plan(data["base"], data["branch"], data.get("head") or "")
    raise Conflict(f"{key} does not say what to merge", "merge the branch yourself with git", code="merge_unknown")


def refused(err) -> Conflict:
    """A merge git or this module refused: exit 5, the gate left pending."""
    return Conflict(err.message, getattr(err, "hint", "fix the repository, then answer the gate again"), code="merge_refused")


def check(store, gate: Gate, remember: str | None) -> Plan:
    """Before the person's answer is recorded: a merge is never remembered, and
    one that cannot happen now is refused with the gate left pending."""
    if remember:
        raise InvalidInput(f"{ids.fmt(ids.GATE, gate.id)} asks to merge: each merge is decided once", "answer without --remember")
    plan = plan_of(gate)
    _branch_of(store, gate.card_id, deciding=True)  # (its branch in another checkout: answer there)
    from ..workspace import merge as git_merge
    from ..workspace.git import GitError

    try:
        git_merge.preflight(_checked_repo(store), plan.base, plan.branch)
    except (git_merge.MergeRefused, GitError) as err:
        raise refused(err) from None
    return plan


def _checked_repo(store):
    from ..workspace.merge import MergeRefused

    repo = _repo(store)
    if repo is None:
        raise MergeRefused("the board's project is no longer a git repository", "merge the branch yourself with git")
    return repo


def bring_in(store, person, card: Card, gate: Gate, plan: Plan, now: float) -> None:
    """The approved merge, in the answer's transaction: ``merged`` or ``merge_conflict``."""
    from ..workspace import merge as git_merge
    from ..workspace.git import GitError
    from .done import unblock_after

    key, gkey = ids.fmt(ids.CARD, card.id), ids.fmt(ids.GATE, gate.id)
    message = f"Merge {plan.branch} into {plan.base} ({key}, {gkey})"
    try:
        result = git_merge.bring_in(_checked_repo(store), plan.base, plan.branch, message, person.actor.split(":", 1)[-1])
    except (git_merge.MergeRefused, GitError) as err:
        raise refused(err) from None
    agent = gate.agent
    clear_lease(card)
    card.assignee = agent  # back to its agent on a conflict; its finisher stays its owner when done
    card.handoff_to = card.paused_reason = card.monitor_due = None
    if result.conflicts:
        files = ", ".join(result.conflicts)
        move(card, "ready", "merge_conflict")
        card.next_action = (
            f"merge conflict bringing {plan.branch} into {plan.base} in {files}: "
            f"merge {plan.base} into {plan.branch} in your workspace, resolve, commit, write back, then `loopx done {key}` again"
        )
        card.progress_mark = True
        touch(card, now)
        events.emit(person, "merge_conflict", card.id, gate=gkey, base=plan.base, branch=plan.branch, head=plan.head, files=list(result.conflicts), agent=agent)
        return
    move(card, "done", "merged")
    card.done_at = now
    touch(card, now)
    events.emit(person, "merged", card.id, gate=gkey, base=plan.base, branch=plan.branch, commit=result.commit, already=result.already, agent=agent)
    unblock_after(card, now)


class CardDiff(NamedTuple):
    """What the card's branch changes since it left the base, for the person's eyes."""

    summary: DiffSummary | None  # None: no repository, or the card has no branch
    patch: str
    cut: bool  # the patch was longer than the board shows


def diff_summary(store, card_id: int) -> DiffSummary | None:
    """The card's branch against its base (None: no repository or no workspace). Reads git only."""
    where = _branch_of(store, card_id)
    if where is None:
        return None
    from ..workspace import merge as git_merge

    return git_merge.summary(where[0], where[1].base, where[1].branch)


def card_diff(store, card_id: int) -> CardDiff:
    summary = diff_summary(store, card_id)
    if summary is None:
        return CardDiff(None, "", False)
    from ..workspace import merge as git_merge

    where = _branch_of(store, card_id)
    text, cut = git_merge.patch(where[0], summary.base, summary.branch)
    return CardDiff(summary, text, cut)
