"""Writeback: one evidence row per turn, quota charged, continuation updated."""

from __future__ import annotations

from pathlib import Path

from ..rules import artifacts, clock, ids
from ..rules.digest import payload_hash
from ..shapes.errors import Conflict, InvalidInput
from ..shapes.values import CardView, EvidenceView
from ..store import events
from ..store.records import Evidence
from ..store.rows import agent_row, card_row, card_view, evidence_view, touch
from . import leases, quota, workspaces
from .evidence import add_evidence
from .reaper import reap_card
from .release import release_card
from .workspaces import CAPTURE, Capture

TYPE_CHECKING = False  # (annotations only: typing is not imported on the cold path; checkers read this as typing's)
if TYPE_CHECKING:
    from ..store.base import Store


def describe_artifacts(store: Store, card_id: int, paths: list[str], base: Path | None = None) -> list[dict]:
    """The artifacts as recorded, read where the card's work is: its open
    workspace when it has one (issue #39: an agent's file there, relative to
    the workspace, its hash that file's — never the main checkout's namesake;
    a path outside the workspace is refused), else the project."""
    if not paths:
        return []
    folder = workspaces.open_path(store, card_id)
    if folder is None:
        return artifacts.describe(paths, store.project_root(), base)
    root = Path(folder)
    return artifacts.describe(paths, root, artifacts.within(root, base), artifacts.WORKSPACE)


def writeback(
    store: Store,
    card_id: int,
    agent: str,
    data: dict,
    *,
    source: str = "cli",
    lease_token: int | None = None,
    base: Path | None = None,
    extra: dict | None = None,
    unverified: bool = False,
    code: dict | None | Capture = CAPTURE,
) -> tuple[EvidenceView, CardView, bool]:
    """Record a turn. Returns (evidence, card, created); a retried ``turn_id``
    with the same payload returns the first evidence with ``created=False``.
    ``unverified``: nothing proves ``agent`` wrote it (a document in the
    board's inbox). It is recorded — what it claims kept on the evidence row —
    and shown as such, but it steers nothing: the card's todos, next action,
    quota, no-progress count and lease stay as they were, so one agent cannot
    move or spend another's card by writing in its name (SECURITY.md).
    ``code``: the card's code state (``workspaces.capture``), read here
    before the transaction unless the caller read it before its own (git
    never runs while the board's write lock is held); the evidence row's
    ``extra["code"]`` names it and a ``code_state`` event records it."""
    if isinstance(code, Capture):
        code = None if unverified or store.in_transaction() else workspaces.capture(store, card_id)
    if code is not None:
        extra = {**(extra or {}), "code": code}
    fingerprint = payload_hash({k: v for k, v in data.items() if k != "release"})
    files = describe_artifacts(store, card_id, data.get("artifacts") or [], base)

    def body() -> tuple[EvidenceView, CardView, bool]:
        now = clock.now()
        agent_obj = agent_row(agent)
        turn_id = data.get("turn_id")
        if turn_id:
            first = Evidence.first('WHERE "card_id" = ? AND "turn_id" = ?', (card_id, turn_id))
            if first is not None:
                if first.payload_hash != fingerprint or first.agent != agent:
                    raise Conflict(
                        f"turn {turn_id} of {ids.fmt(ids.CARD, card_id)} was already written with a different payload",
                        "use a new --turn-id for a new turn; resend the same payload to retry",
                        code="turn_conflict",
                        data={"evidence": evidence_view(first).to_json()},
                    )
                return evidence_view(first), card_view(reap_card(card_row(card_id))), False
        card = reap_card(card_row(card_id))
        leases.require_holder(card, agent, lease_token, ("active", "waiting"))
        quota.require_window(agent_obj, now)  # a turn started past the agent's token window is not charged
        quota.enforce_signed(store, card)
        quota.enforce_signed_window(store, card)
        todos = [dict(t) for t in card.todos or []]
        known = {t["id"]: t for t in todos}
        for ref in [] if unverified else data.get("todos_done") or []:
            if ref not in known:
                open_ids = ", ".join(str(t["id"]) for t in todos if not t["done"]) or "none"
                raise InvalidInput(
                    f"{ids.fmt(ids.CARD, card_id)} has no todo {ref} (open todos: {open_ids})",
                    f"see them with `loopx context {ids.fmt(ids.CARD, card_id)}`",
                )
            known[ref]["done"] = True
        for text in [] if unverified else data.get("todos_added") or []:
            card.todo_seq += 1
            todos.append({"id": card.todo_seq, "text": text, "done": False})
        tokens_in, tokens_out = data.get("tokens_in") or 0, data.get("tokens_out") or 0
        given = data.get("tokens")
        tokens: int = given if given is not None else tokens_in + tokens_out
        usd = data.get("usd") or 0.0
        new_next = data.get("next")
        progressed = bool(
            files
            or data.get("todos_added")
            or data.get("todos_done")
            or card.progress_mark
            or (new_next and new_next != card.next_action)
        )
        row = add_evidence(
            card,
            agent,
            turn_id=turn_id,
            summary=data["summary"],
            artifacts=files,
            next_action=new_next,
            todos_added=list(data.get("todos_added") or []),
            todos_done=list(data.get("todos_done") or []),
            tokens_in=tokens_in,
            tokens_out=tokens_out,
            tokens=tokens,
            usd=usd,
            source=source,
            extra=extra,
            payload_hash=fingerprint,
            now=now,
            unverified=unverified,
        )
        card.evidence_count += 1
        if unverified:
            card.unverified_evidence += 1
            progressed = False
        else:
            card.todos = todos
            if new_next:
                card.next_action = new_next
            card.stalls = 0 if progressed else card.stalls + 1
            card.progress_mark = False
            quota.charge(card, tokens, usd)
            if card.status == "active":
                leases.renew(card, now)
        events.emit(
            f"agent:{agent}",
            "evidence_added",
            card.id,
            evidence=ids.fmt(ids.EVIDENCE, row.id),
            summary=data["summary"][:200],
            artifacts=len(files),
            tokens=tokens,
            usd=usd,
            source=source,
            progress=progressed,
            used=quota.totals(card),
            **({"unverified": True} if unverified else {}),
        )
        if code is not None and not unverified:
            workspaces.note(card.id, code, f"agent:{agent}", turn_id)
        if not unverified:
            quota.pause_if_spent(card, int(store.setting("no_progress_limit", "3")))  # whatever the status
        if data.get("release") and card.status == "active":
            release_card(card, f"agent:{agent}", now)
        touch(card, now)
        return evidence_view(row), card_view(card), True

    return store.run(body, card=card_id)
