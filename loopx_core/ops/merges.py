"""Merging is the person's (#26, DESIGN §12 "Merging is the person's").

``done`` on a card whose branch (``loopx/LX-7``) holds commits the base lacks
does not close it: it opens a ``git:merge`` gate (kind ``merge``) and the card
waits. A person's signed approval brings the branch in (``workspace.merge``)
in the same transaction: ``merged`` (signed; the card is ``done``) or, on a
conflict, ``merge_conflict`` (signed; the card goes back ``ready`` to its agent
with the conflicted files as its next action; neither branch changes). A
grant never answers a merge gate and a merge is never remembered.

What the person approves is what gets merged (#38): the gate pins the
branch's head and the base's commit (``gate_asked``: ``head``,
``base_commit``), the dialog shows the diff between those two, and the
person's signed ``gate_answered`` names them again. When either moved before
the answer, nothing is merged: the gate is withdrawn and the card asks again
with the new pin (a new gate: ``merge_moved`` then ``gate_asked``), and the
answer is refused (``merge_moved``, exit 5). A branch that would conflict with
its base never opens a gate: ``done`` sends the card back to its agent with
the paths. A merge that changes the repository's ground
(``rules/repo_ground``) lists those files first and takes the second key."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, NamedTuple

from ..rules import holding, ids
from ..shapes.errors import Conflict, InvalidInput
from ..store import events, records
from ..store.records import Card, Gate
from ..store.rows import touch
from .dependencies import unblock_after
from .gate_rows import open_gate
from .lifecycle import SYSTEM, clear_lease, move

if TYPE_CHECKING:
    from pathlib import Path

    from ..authority import keys
    from ..store.base import Store
    from ..workspace.git import GitError
    from ..workspace.merge import DiffSummary, MergeRefused, Moved, Pin

SCOPE = "git:merge"
KIND = holding.MERGE_GATE  # (rules/holding: a card waiting only on it does not hold its agent)


class Plan(NamedTuple):
    """What a merge gate asks (its ``gate_asked`` event records these)."""

    base: str
    branch: str
    head: str  # the branch's commit the person is asked about
    base_commit: str = ""  # the base's commit it would be merged into ("": an older gate, before the pin)
    ground: tuple[str, ...] = ()  # the ground files it changes (rules/repo_ground)

    def pinned(self) -> Pin | None:
        from ..workspace.merge import Pin

        return Pin(self.head, self.base_commit) if self.head and self.base_commit else None


class Unmergeable(NamedTuple):
    """A branch that conflicts with its base: no gate, back to its agent."""

    base: str
    branch: str
    head: str
    base_commit: str
    files: tuple[str, ...]

    def hint(self, key: str | None) -> str:
        files = ", ".join(self.files[:10]) + (f" and {len(self.files) - 10} more" if len(self.files) > 10 else "")
        return (
            f"{self.branch} conflicts with {self.base} in {files}: bring the base in first — "
            f"`git merge {self.base}` in your workspace, resolve, commit, write back, then `loopx done {key}` again"
        )


def _repo(store: Store) -> Path | None:
    from . import workspaces

    return workspaces.repository(store)


class Branch(NamedTuple):
    """A card's branch to show or merge: its repository, base and branch."""

    repo: Path
    base: str
    branch: str


def _branch_of(store: Store, card_id: int, *, deciding: bool = False) -> Branch | None:
    """(repository, the card's base and branch) when the card has a branch to show or
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
    return Branch(repo, found.base, found.branch)


def ground_specs(store: Store) -> tuple[tuple[str, ...], list[str]]:
    """The person's extra ground patterns and every ground pattern as git pathspecs."""
    from ..rules import repo_ground

    extra = repo_ground.extra_patterns(store.project_root())
    return extra, repo_ground.pathspecs(extra)


def _plan(store: Store, repo: Path, base: str, branch: str) -> Plan | Unmergeable | None:
    """The merge of ``branch`` into ``base`` as it stands now (None: nothing to merge). Reads git."""
    from ..workspace import merge as git_merge

    pinned = git_merge.pin(repo, base, branch)
    if pinned is None or git_merge.ahead(repo, base, branch) == 0:
        return None
    files = git_merge.conflicts(repo, pinned)
    if files:
        return Unmergeable(base, branch, pinned.head, pinned.base_commit, files)
    _, specs = ground_specs(store)
    ground = git_merge.ground_files(repo, f"{pinned.base_commit}...{pinned.head}", specs)
    return Plan(base, branch, pinned.head, pinned.base_commit, ground)


def pending_merge(store: Store, card_id: int) -> Plan | Unmergeable | None:
    """What ``done`` must ask the person to merge (None: the project is not a
    git repository, the card has no workspace, or its branch adds nothing;
    ``Unmergeable``: it would conflict — no gate, back to the agent)."""
    where = _branch_of(store, card_id, deciding=True)
    if where is None:
        return None
    repo, base, branch = where
    from ..workspace.git import GitError
    from ..workspace.merge import MergeRefused

    try:
        return _plan(store, repo, base, branch)
    except (GitError, MergeRefused) as err:
        raise Conflict(
            f"git refused: {err.message}", "fix the repository, then run `loopx done` again", code="git_failed"
        ) from None


def behind(store: Store, card_id: int) -> tuple[str, int] | None:
    """(the base, how many of its commits the card's branch lacks), when it lacks
    some: a verify that fails may fail for want of them. None otherwise. Reads git."""
    try:
        where = _branch_of(store, card_id)
        if where is None:
            return None
        from ..workspace import merge as git_merge

        repo, base, branch = where
        lacking = git_merge.ahead(repo, branch, base)
    except Exception:  # (a hint only: never in the way of the verify's own report)
        return None
    return (base, lacking) if lacking else None


def ask(card: Card, agent: str, plan: Plan, now: float) -> Gate:
    """Open the card's merge gate (the caller's transaction; the card waits)."""
    question = f"Merge {plan.branch} into {plan.base}?"
    extra = {**plan._asdict(), "ground": list(plan.ground)}
    gate, _ = open_gate(card, agent, question, SCOPE, [], None, KIND, now, extra=extra)
    return gate


def plan_of(gate: Gate) -> Plan:
    """What the person is asked to merge: the branch, base and commits the gate was asked with."""
    row = records.rows(
        'SELECT "data" FROM "event" WHERE "card" = ? AND "kind" = ? ORDER BY "seq" DESC', (gate.card_id, "gate_asked")
    )
    key = ids.fmt(ids.GATE, gate.id)
    for (text,) in row:
        data = json.loads(text) if isinstance(text, str) else (text or {})
        if data.get("gate") == key and data.get("branch") and data.get("base"):
            ground = data.get("ground")
            listed = tuple(str(p) for p in ground) if isinstance(ground, list) else ()
            return Plan(data["base"], data["branch"], data.get("head") or "", data.get("base_commit") or "", listed)
    raise Conflict(f"{key} does not say what to merge", "merge the branch yourself with git", code="merge_unknown")


def refused(err: MergeRefused | GitError) -> Conflict:
    """A merge git or this module refused: exit 5, the gate left pending."""
    return Conflict(
        err.message, getattr(err, "hint", "fix the repository, then answer the gate again"), code="merge_refused"
    )


def check(store: Store, gate: Gate, remember: str | None, second_key: bool = False) -> Plan:
    """Before the person's answer is recorded: a merge is never remembered, one
    that cannot happen now is refused with the gate left pending, and one that
    changes the ground needs the second key. A branch or base that moved since
    the gate was asked raises ``Moved`` (the caller re-asks)."""
    if remember:
        raise InvalidInput(
            f"{ids.fmt(ids.GATE, gate.id)} asks to merge: each merge is decided once", "answer without --remember"
        )
    plan = plan_of(gate)
    _branch_of(store, gate.card_id, deciding=True)  # (its branch in another checkout: answer there)
    from ..workspace import merge as git_merge
    from ..workspace.git import GitError

    try:
        repo = _checked_repo(store)
        git_merge.preflight(repo, plan.base, plan.branch)
        if not plan.base_commit:  # a gate asked before the pin: the base as it is now, the head it recorded
            plan = plan._replace(base_commit=git_merge.tip(repo, plan.base) or "")
        pinned = plan.pinned()
        moved = git_merge.moved(repo, plan.base, plan.branch, pinned) if pinned is not None else None
    except (git_merge.MergeRefused, GitError) as err:
        raise refused(err) from None
    if moved is not None:
        raise moved
    if plan.ground and not second_key:
        key = ids.fmt(ids.GATE, gate.id)
        raise Conflict(
            f"{key}'s merge changes the repository's ground: {', '.join(plan.ground[:10])}"
            + (f" and {len(plan.ground) - 10} more" if len(plan.ground) > 10 else ""),
            f"read those files first; then approve with the second key: `loopx gate answer {key} approve --confirm-ground` (in the board: y, then Y)",
            code="second_key_needed",
        )
    return plan


def _checked_repo(store: Store) -> Path:
    from ..workspace.merge import MergeRefused

    repo = _repo(store)
    if repo is None:
        raise MergeRefused("the board's project is no longer a git repository", "merge the branch yourself with git")
    return repo


def rearm(store: Store, person: keys.Answers, card: Card, gate: Gate, moved: Moved, now: float) -> Conflict:
    """The answer found the branch or base moved: nothing merged; the gate is
    withdrawn and — in the same transaction — the card asks again with the
    new pin (a new gate), or goes back to its agent when the new head would
    conflict. Returns the refusal the person reads."""
    from ..workspace.git import GitError
    from ..workspace.merge import MergeRefused

    old = plan_of(gate)
    key, ckey = ids.fmt(ids.GATE, gate.id), ids.fmt(ids.CARD, card.id)
    try:
        fresh = _plan(store, _checked_repo(store), old.base, old.branch)
    except (GitError, MergeRefused) as err:
        raise refused(err) from None
    if fresh is None:
        raise Conflict(
            moved.message.replace(": nothing merged", "")
            + f", and {old.branch} now adds nothing to {old.base}: nothing merged",
            f"reject {key} (`loopx gate answer {key} reject --note WHY`) and ask the agent what happened to its commits",
            code="merge_moved",
        )
    gate.status, gate.answered_by, gate.answered_at, gate.note = (
        "withdrawn",
        SYSTEM,
        now,
        "the branch moved before the answer",
    )
    gate.save()
    events.emit(SYSTEM, "gate_withdrawn", card.id, gate=key, reason="the branch or base moved before the answer")
    events.emit(
        person,
        "merge_moved",
        card.id,
        gate=key,
        base=old.base,
        branch=old.branch,
        head=old.head,
        base_commit=old.base_commit,
        now_head=fresh.head,
        now_base_commit=fresh.base_commit,
    )
    if isinstance(fresh, Unmergeable):
        _send_back(person, card, gate.agent, fresh, key, now)
        return Conflict(
            moved.message,
            f"{old.branch} now conflicts with {old.base}: {ckey} went back to {gate.agent} to bring the base in",
            code="merge_moved",
            data={"card": ckey, "gate": None, "files": list(fresh.files)},
        )
    new = ask(card, gate.agent, fresh, now)
    nkey = ids.fmt(ids.GATE, new.id)
    return Conflict(
        moved.message,
        f"{nkey} asks again with the new diff: read it (`loopx gate status {nkey}`), then answer {nkey}",
        code="merge_moved",
        data={"card": ckey, "gate": nkey},
    )


def _send_back(person: keys.Answers, card: Card, agent: str, found: Unmergeable, gkey: str | None, now: float) -> None:
    """A merge that would conflict: the card back ``ready`` to its agent, the paths in its next action."""
    key = ids.fmt(ids.CARD, card.id)
    clear_lease(card)
    card.assignee = agent
    card.handoff_to = card.paused_reason = card.monitor_due = None
    move(card, "ready", "merge_conflict")
    card.next_action = f"merge conflict: {found.hint(key)}"
    card.progress_mark = True
    touch(card, now)
    events.emit(
        person,
        "merge_conflict",
        card.id,
        gate=gkey,
        base=found.base,
        branch=found.branch,
        head=found.head,
        base_commit=found.base_commit,
        files=list(found.files),
        agent=agent,
    )


def answered_pin(plan: Plan) -> dict:
    """What the person's signed answer says it approves: the pinned commits and the ground files."""
    return {"head": plan.head, "base_commit": plan.base_commit, "ground": list(plan.ground)}


def bring_in(store: Store, person: keys.Answers, card: Card, gate: Gate, plan: Plan, now: float) -> None:
    """The approved merge, in the answer's transaction: ``merged`` or ``merge_conflict``."""
    from ..workspace import merge as git_merge
    from ..workspace.git import GitError

    key, gkey = ids.fmt(ids.CARD, card.id), ids.fmt(ids.GATE, gate.id)
    message = f"Merge {plan.branch} into {plan.base} ({key}, {gkey})"
    pinned = plan.pinned()
    try:
        if pinned is None:
            raise git_merge.MergeRefused(
                f"{gkey} does not say which commits to merge", "reject it; the agent's next `loopx done` asks again"
            )
        result = git_merge.bring_in(
            _checked_repo(store), plan.base, plan.branch, message, person.actor.split(":", 1)[-1], pinned
        )
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
            f"merge {plan.base} into {plan.branch} in your workspace (`git merge {plan.base}`), resolve, commit, write back, then `loopx done {key}` again"
        )
        card.progress_mark = True
        touch(card, now)
        events.emit(
            person,
            "merge_conflict",
            card.id,
            gate=gkey,
            base=plan.base,
            branch=plan.branch,
            head=plan.head,
            files=list(result.conflicts),
            agent=agent,
        )
        return
    move(card, "done", "merged")
    card.done_at = now
    touch(card, now)
    events.emit(
        person,
        "merged",
        card.id,
        gate=gkey,
        base=plan.base,
        branch=plan.branch,
        commit=result.commit,
        already=result.already,
        agent=agent,
        head=plan.head,
        base_commit=plan.base_commit,
    )
    unblock_after(card, now)


class CardDiff(NamedTuple):
    """What the card's branch changes since it left the base, for the person's eyes."""

    summary: DiffSummary | None  # None: no repository, or the card has no branch
    patch: str
    cut: bool  # the patch was longer than the board shows
    asked: str | None = (
        None  # the merge gate (G-7) whose pinned commits these are (``summary.pin``); None: the branch as it is now
    )
    moved: Pin | None = (
        None  # the branch's and base's commits now, when either moved since that gate asked (its answer asks again)
    )


def branch_pin(store: Store, card_id: int) -> Pin | None:
    """The card's branch head and its base's commit now (``workspace.merge.Pin``;
    None: no repository, workspace or branch). Reads git only."""
    where = _branch_of(store, card_id)
    if where is None:
        return None
    from ..workspace import merge as git_merge

    return git_merge.pin(where.repo, where.base, where.branch)


def diff_summary(store: Store, card_id: int) -> DiffSummary | None:
    """The card's branch against its base (None: no repository or no workspace),
    its ground files first, with the commits it compared (``pin``). Reads git only."""
    where = _branch_of(store, card_id)
    if where is None:
        return None
    from ..workspace import merge as git_merge

    _, specs = ground_specs(store)
    pinned = git_merge.pin(where.repo, where.base, where.branch)
    if pinned is None:
        return None
    return git_merge.summary(where.repo, where.base, where.branch, pinned, tuple(specs))


def gate_diff(store: Store, gate: Gate) -> DiffSummary | None:
    """A merge gate's diff: between the commits it pinned (what the person is
    asked about, whatever the branch holds now), its ground files first."""
    with store.read():
        plan = plan_of(gate)
    pinned = plan.pinned()
    where = _branch_of(store, gate.card_id)
    if where is None:
        return None
    from ..workspace import merge as git_merge

    _, specs = ground_specs(store)
    if pinned is None:  # (a gate asked before the pin)
        return git_merge.summary(where.repo, plan.base, plan.branch, ground=tuple(specs))
    return git_merge.summary(where.repo, plan.base, plan.branch, pinned, tuple(specs))


def _merge_gate(store: Store, card_id: int, gate_id: int | None) -> Gate | None:
    """The merge gate whose diff to show: ``gate_id`` (the dialog's), else the
    card's pending one (None: the card waits on no merge)."""
    with store.read():
        if gate_id is not None:
            gate = Gate.get(gate_id)
            return gate if gate is not None and gate.card_id == card_id and gate.kind == KIND else None
        return Gate.first(
            """WHERE "card_id" = ? AND "kind" = ? AND "status" = 'pending' ORDER BY "id" DESC""", (card_id, KIND)
        )


def _asked_diff(store: Store, gate: Gate) -> CardDiff:
    """Exactly the diff ``gate`` asked the person about (its pinned commits),
    and where the branch and base are now when either moved since."""
    summary = gate_diff(store, gate)
    where = _branch_of(store, gate.card_id)
    if summary is None or where is None:
        return CardDiff(None, "", False)
    from ..workspace import merge as git_merge

    text, cut = git_merge.patch(where.repo, summary.base, summary.branch, pinned=summary.pin)
    moved = git_merge.moved(where.repo, summary.base, summary.branch, summary.pin) if summary.pin is not None else None
    now = git_merge.Pin(moved.head or "", moved.base_commit or "") if moved is not None else None
    return CardDiff(summary, text, cut, ids.fmt(ids.GATE, gate.id), now)


def card_diff(store: Store, card_id: int, gate_id: int | None = None) -> CardDiff:
    """The card's diff for the person: while a merge gate asks (``gate_id``, or
    the card's pending one), exactly the diff it pinned; else the branch now."""
    gate = _merge_gate(store, card_id, gate_id)
    if gate is not None:
        return _asked_diff(store, gate)
    summary = diff_summary(store, card_id)
    if summary is None:
        return CardDiff(None, "", False)
    from ..workspace import merge as git_merge

    where = _branch_of(store, card_id)
    assert where is not None  # (diff_summary found it)
    text, cut = git_merge.patch(
        where.repo, summary.base, summary.branch, pinned=summary.pin
    )  # (the commits the summary counted)
    return CardDiff(summary, text, cut)
