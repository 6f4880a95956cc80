"""Done: evidence required, no pending gate, and the card's verify command passes."""

from __future__ import annotations

from ..rules import clock, ids
from ..rules.digest import payload_hash
from ..shapes.errors import Conflict, Forbidden
from ..shapes.values import CardView, EvidenceView
from ..store import events, records
from ..store.records import Card, Evidence
from ..store.rows import agent_row, card_row, card_view, evidence_view, touch
from . import idempotence, leases, merges, workspaces
from .dependencies import unblock_after
from .evidence import NOT_REPORTS
from .gate_rows import holding_gate, open_gate
from .lifecycle import clear_lease, move
from .reaper import reap_card
from .verify_command import run_verify

TYPE_CHECKING = False  # (annotations only: typing is not imported on the cold path; checkers read this as typing's)
if TYPE_CHECKING:
    from collections.abc import Callable

    from ..store.base import Store


def _precheck(store: Store, card: Card, agent: str, lease_token: int | None) -> None:
    key = ids.fmt(ids.CARD, card.id)
    leases.require_holder(card, agent, lease_token, ("active", "waiting"))
    # Usage the Stop hook measured (source "hook") and a failed turn the runner recorded are not a writeback.
    marks = ", ".join("?" * len(NOT_REPORTS))
    if not records.exists(
        f'SELECT 1 FROM "evidence" WHERE "card_id" = ? AND "source" NOT IN ({marks})', (card.id, *NOT_REPORTS)
    ):
        raise Conflict(
            f"{key} has no evidence yet",
            f"write what this turn did first: `loopx writeback {key} --summary …`",
            code="no_evidence",
        )
    gate, why = holding_gate(store, card)  # an approval no signature backs is still pending
    if gate is not None:
        raise Conflict(
            f"{key} has a pending gate {ids.fmt(ids.GATE, gate.id)}" + (f" ({why})" if why else ""),
            "wait for the human's answer: `loopx gate status G-…`",
            code="gate_pending",
        )


def _settled(card: Card, row: Evidence) -> tuple[CardView, EvidenceView, bool]:
    """The finished answer, its --op-id recorded in this same transaction (a kill after
    the commit finds it on the retry)."""
    view, evidence = card_view(card), evidence_view(row)
    idempotence.settle({"card": view.to_json(), "evidence": evidence.to_json()}, 0)
    return view, evidence, True


def set_by_a_person(store: Store, card_id: int, command: str) -> bool:
    """Is ``command`` the verify command a person set on the card — the one
    their signed ``card_added`` names? (Else an agent set it, or the card row
    was edited: DESIGN §5 "A card's verify command".)"""
    rows = store.query(
        "SELECT seq FROM event WHERE card = ? AND kind = ? ORDER BY seq LIMIT 1", (card_id, "card_added")
    )
    decided = store.trust().decision(store.query, rows[0][0], ("card_added",)) if rows else None
    return decided is not None and decided.get("verify") == command


REPORTED = "done_reported"  # the facts of a done a person chooses between, in the log (#38)


def report(
    agent: str, card_id: int, row: Evidence, summary: str, result: dict | None, code: dict | None, outcome: str
) -> None:
    """The done's facts as a chained event beside its evidence row — its
    summary, the verify command's result, the branch's diff, what followed
    (``done``, ``merge``: waits on its merge gate, ``vanished``: on the
    person, ``merge_would_conflict``: back to its agent, ``verify_failed``) — so an edit of the row is seen by ``loopx
    verify`` and ``card tries`` reads them from here, not from the row."""
    verified = None if result is None else {k: result[k] for k in ("command", "passed", "exit_code", "timed_out")}
    diff = code.get("diff") if code and "error" not in code else None
    events.emit(
        f"agent:{agent}",
        REPORTED,
        card_id,
        evidence=ids.fmt(ids.EVIDENCE, row.id),
        summary=summary,
        verify=verified,
        diff=diff,
        outcome=outcome,
    )


def ask_vanished(card: Card, agent: str, lost: list[tuple[str, str]], kept: list[str], now: float) -> None:
    """Open the card's ``vanished`` gate (the caller's transaction; the card
    waits): the person approves finishing without those commits — kept under
    LoopX's refs for the card — or rejects, and the card goes back."""
    from ..authority import work

    key = ids.fmt(ids.CARD, card.id)
    question = (
        f"{key}'s recorded work is on neither its base nor its branch: {work.describe(lost)}. "
        f"Finish {key} without it? (kept under refs/loopx/{key}/kept/)"
    )
    open_gate(
        card,
        agent,
        question,
        work.SCOPE,
        [],
        None,
        work.VANISHED,
        now,
        extra={"commits": [c for c, _ in lost], "kept": kept},
    )


UNCOMMITTED_NAMED = 10  # paths named in the message (all of them, up to 200, in its data)


def refuse_uncommitted(store: Store, card_id: int) -> None:
    """A card whose workspace holds uncommitted work is not finished: the
    person merges commits, so a done would leave that work behind unseen —
    on a card with no commit it would even finish as if nothing were made.
    Refused (exit 5, ``uncommitted_work``) naming the paths, the store unchanged;
    the agent commits them on the card's branch or removes them."""
    found = workspaces.uncommitted(store, card_id)
    if found is None:
        return
    path, left = found
    key = ids.fmt(ids.CARD, card_id)
    named = ", ".join(left[:UNCOMMITTED_NAMED]) + (
        f" and {len(left) - UNCOMMITTED_NAMED} more" if len(left) > UNCOMMITTED_NAMED else ""
    )
    raise Conflict(
        f"{key}'s workspace holds uncommitted work: {named}; {key} stays as it is (the person merges commits: this work would be left behind)",
        f"commit it on the card's branch (`git add -A && git commit -m …` in {path}) or remove what is not part of the work, then run `loopx done {key}` again",
        code="uncommitted_work",
        data={"workspace": path, "paths": left},
    )


def done(
    store: Store,
    card_id: int,
    agent: str,
    summary: str,
    lease_token: int | None = None,
    verify_timeout: float | None = None,
    vet: Callable[[str], None] | None = None,
    confine: Callable[[str], list[str]] | None = None,
) -> tuple[CardView, EvidenceView]:
    """``vet(command)``: checks a verify command no person set as the agent's
    own shell command (the hook's policy, its scopes and gates); it raises
    when the command may not run yet. Without it, such a command never runs.
    ``confine(folder)``: the argv prefix that runs the verify command confined
    in ``folder`` (the MCP tool's: its server runs outside the agent's sandbox,
    as the person — issue #39); it raises when it cannot, before anything runs."""

    def precheck() -> tuple[int | None, str | None]:
        agent_row(agent)
        card = reap_card(card_row(card_id))
        _precheck(store, card, agent, lease_token)
        return card.lease_token, card.verify

    token, command = store.run(precheck)
    refuse_uncommitted(store, card_id)
    merge = merges.pending_merge(
        store, card_id
    )  # a branch with new commits: the person merges it (git, outside the transaction)
    lost = workspaces.vanished(
        store, card_id
    )  # recorded commits on neither the base nor the branch: the person lets them go
    kept = (
        workspaces.keep(store, card_id, [c for c, _ in lost]) if lost else []
    )  # (before asking: no git gc loses them meanwhile)
    result = None
    if command and not set_by_a_person(store, card_id, command):
        if vet is None:
            raise Forbidden(
                f"{ids.fmt(ids.CARD, card_id)}'s verify command was not set by a person, and nothing here can check it",
                "run `loopx done` from the CLI, which checks it as your own shell command",
                code="verify_unchecked",
            )
        vet(command)
    workspace = workspaces.open_path(store, card_id)
    if command:
        # Outside any transaction: a slow test suite must not hold the board's write lock.
        # In the card's workspace when it has one: that is where its code is (issue #26).
        timeout = verify_timeout or float(store.setting("verify_timeout", "600"))
        folder = workspace or str(store.project_root())
        prefix = confine(folder) if confine is not None else None
        result = run_verify(
            command, folder, timeout, {"LOOPX_CARD": ids.fmt(ids.CARD, card_id), "LOOPX_AGENT": agent}, prefix
        )
    code = (
        workspaces.capture(store, card_id) if workspace and not store.in_transaction() else None
    )  # the final code state

    def finish() -> tuple[CardView, EvidenceView, bool | merges.Unmergeable]:
        now = clock.now()
        card = reap_card(card_row(card_id))
        _precheck(store, card, agent, token)
        failed = result if result is not None and not result["passed"] else None
        extra: dict = {"verify": result} if result else {"done": True}
        if code is not None:
            extra["code"] = code
            workspaces.note(card.id, code, f"agent:{agent}")
        row = Evidence.create(
            card_id=card.id,
            agent=agent,
            summary=summary,
            artifacts=[],
            source="verify" if result else "cli",
            extra=extra,
            payload_hash=payload_hash({"done": summary}),
            created_at=now,
        )
        card.evidence_count += 1
        outcome = (
            "verify_failed"
            if failed is not None
            else "vanished"
            if lost
            else "merge_would_conflict"
            if isinstance(merge, merges.Unmergeable)
            else "merge"
            if merge is not None
            else "done"
        )
        report(agent, card.id, row, summary, result, code, outcome)
        if failed is not None:
            touch(card, now)
            events.emit(
                f"agent:{agent}",
                "verify_failed",
                card.id,
                command=failed["command"],
                exit_code=failed["exit_code"],
                timed_out=failed["timed_out"],
            )
            return card_view(card), evidence_view(row), False
        if lost:
            ask_vanished(card, agent, lost, kept, now)  # the person lets them go, or sends the card back
            return _settled(card, row)
        if isinstance(
            merge, merges.Unmergeable
        ):  # no gate on a branch that would conflict: the agent brings the base in
            card.next_action = merge.hint(ids.fmt(ids.CARD, card.id))
            touch(card, now)
            events.emit(
                f"agent:{agent}",
                "merge_would_conflict",
                card.id,
                base=merge.base,
                branch=merge.branch,
                head=merge.head,
                base_commit=merge.base_commit,
                files=list(merge.files),
            )
            return card_view(card), evidence_view(row), merge
        if merge is not None:
            merges.ask(card, agent, merge, now)  # the branch is the person's to bring in: the card waits
            return _settled(card, row)
        move(card, "done", "done")
        card.done_at = now
        card.assignee = agent  # a done card keeps who finished it as its owner
        clear_lease(card)
        touch(card, now)
        events.emit(f"agent:{agent}", "done", card.id, summary=summary[:200], verify=bool(result))
        unblock_after(card, now)
        return _settled(card, row)

    card, evidence, passed = store.run(finish)
    if isinstance(passed, merges.Unmergeable):
        raise Conflict(
            f"{passed.branch} conflicts with {passed.base} in {', '.join(passed.files[:10])}: no merge gate opened; {ids.fmt(ids.CARD, card_id)} stays active",
            passed.hint(ids.fmt(ids.CARD, card_id)),
            code="merge_would_conflict",
            data={"card": card.to_json(), "evidence": evidence.to_json(), "files": list(passed.files)},
        )
    if not passed:
        assert result is not None  # (only a verify command that ran fails)
        what = "timed out" if result["timed_out"] else f"exited {result['exit_code']}"
        tail = result["output"].strip().splitlines()[-5:]
        lacking = merges.behind(store, card_id)
        bring = (
            (
                f"{lacking[0]} has {lacking[1]} commit(s) your branch lacks (merged since it was cut): bring them in first — "
                f"`git merge {lacking[0]}` in your workspace — then verify again. "
            )
            if lacking
            else ""
        )
        raise Conflict(
            f"verify `{result['command']}` {what}; {ids.fmt(ids.CARD, card_id)} stays active",
            bring + "fix it and run `loopx done` again. Last output:\n" + "\n".join(tail),
            code="verify_failed",
            data={"card": card.to_json(), "evidence": evidence.to_json()},
        )
    return card, evidence
