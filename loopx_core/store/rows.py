"""Loading rows inside an operator's transaction and turning them into values.

Rows are ``records`` (the standard-library record layer); the views also take
peewee model rows, which have the same attributes (agents, the watcher)."""

from __future__ import annotations

from ..rules import ids
from ..rules.holding import HELD, owner_of
from ..shapes.errors import LoopxError, NotFound
from ..shapes.values import (
    AgentView,
    Artifact,
    CardView,
    EvidenceView,
    GateView,
    HandoffView,
    Lease,
    Limit,
    ObservedView,
    Quota,
    Todo,
    Window,
    shown_reasons,
)
from . import records
from .records import Agent, Card

TYPE_CHECKING = False  # (annotations only: typing is not imported on the cold path; checkers read this as typing's)
if TYPE_CHECKING:
    from .columns import (
        AgentColumns,
        CardColumns,
        EvidenceColumns,
        GateColumns,
        HandoffColumns,
        ObservedColumns,
    )


def card_row(card_id: int, *, lock: bool = True) -> Card:
    """The card, locked for this transaction (where the backend locks rows; ``lock``)."""
    row = Card.get(card_id, lock=lock)
    if row is None:
        raise missing_card(card_id)
    return row


def missing_card(card_id: int, shown: str = "") -> LoopxError:
    """What a card lookup that found no row means. Cards are never deleted, so
    a card the log names (its ``card_added``, its moves) that has no row is a
    damaged board, not an absent card: a page of the card table overwritten can
    read as "no row" without SQLite raising (#44). One indexed probe of the
    log, paid only when a lookup misses."""
    name = ids.fmt(ids.CARD, card_id)
    if records.exists('SELECT 1 FROM "event" WHERE "card" = ?', (card_id,)):
        from .failures import damaged

        return damaged("file", f"the log records card {name} but the card table has no row for it")
    return NotFound(
        shown or f"no card {name} on this board",
        "`loopx card list` shows the cards; `loopx card add TITLE` creates one",
        code="unknown_card",
    )


def agent_row(agent_id: str) -> Agent:
    row = Agent.get(agent_id)
    if row is None:
        raise NotFound(
            f"unknown agent {agent_id!r}",
            f"register it first: `loopx agent add {agent_id} --can SCOPE…` (or set LOOPX_AGENT to a registered id)",
            code="unknown_agent",
        )
    return row


def touch(card: Card, now: float) -> None:
    card.version += 1
    card.updated_at = now
    card.save()


def _marks(n: int) -> str:
    return ", ".join("?" * n)


def deps_of(card_ids: list[int]) -> dict[int, list[int]]:
    out: dict[int, list[int]] = {}
    if not card_ids:
        return out
    for card, after in records.rows(
        f'SELECT "card_id", "after_id" FROM "dependency" WHERE "card_id" IN ({_marks(len(card_ids))})', tuple(card_ids)
    ):
        out.setdefault(card, []).append(after)
    return out


def pending_gates_of(card_ids: list[int] | None = None) -> dict[int, int]:
    sql = """SELECT "card_id", "id" FROM "gate" WHERE "status" = 'pending'"""
    if card_ids is not None:
        if not card_ids:
            return {}
        sql += f' AND "card_id" IN ({_marks(len(card_ids))})'
    out: dict[int, int] = {}
    for card, gate in records.rows(sql + ' ORDER BY "id"', tuple(card_ids or ())):
        out.setdefault(card, gate)
    return out


def first_pending_gate(card_id: int) -> int | None:
    return records.scalar(
        """SELECT "id" FROM "gate" WHERE "card_id" = ? AND "status" = 'pending' ORDER BY "id" LIMIT 1""", (card_id,)
    )


def card_view(row: CardColumns, deps: list[int] | None = None, pending_gate: int | None | bool = False) -> CardView:
    if deps is None:
        deps = [
            after for (after,) in records.rows('SELECT "after_id" FROM "dependency" WHERE "card_id" = ?', (row.id,))
        ]
    if pending_gate is False:
        pending_gate = first_pending_gate(row.id)
    lease = None
    if row.lease_holder and row.status in HELD:
        lease = Lease(holder=row.lease_holder, token=row.lease_token, expires_at=row.lease_expires)
    owner = owner_of(row.status, row.lease_holder, row.handoff_to, row.assignee)
    paused_reason, blocked_reason = shown_reasons(row.status, row.paused_reason, row.blocked_reason)
    return CardView(
        id=row.id,
        title=row.title,
        status=row.status,
        owner=owner,
        assignee=row.assignee,
        needs=tuple(row.needs or ()),
        priority=row.priority,
        next_action=row.next_action,
        todos=tuple(Todo(id=t["id"], text=t["text"], done=bool(t["done"])) for t in (row.todos or ())),
        quota=Quota(
            turns=Limit(row.used_turns, row.max_turns),
            tokens=Limit(row.used_tokens, row.max_tokens),
            usd=Limit(round(row.used_usd, 6), row.max_usd),
        ),
        lease=lease,
        version=row.version,
        paused_reason=paused_reason,
        blocked_reason=blocked_reason,
        after=tuple(sorted(deps)),
        evidence_count=row.evidence_count,
        pending_gate=pending_gate,
        body=row.body or "",
        verify=row.verify,
        monitor_due=row.monitor_due if row.status == "monitoring" else None,
        handoff_to=row.handoff_to if row.status == "handoff" else None,
        created_at=row.created_at,
        updated_at=row.updated_at,
        done_at=row.done_at,
        unverified_evidence=row.unverified_evidence or 0,
        window=Window(row.window_seconds, row.window_tokens, row.window_usd, row.window_turns)
        if row.window_seconds
        else None,
        wake_at=row.wake_at if row.status == "paused" else None,
    )


def card_views(rows: list) -> list[CardView]:
    card_ids = [r.id for r in rows]
    deps = deps_of(card_ids)
    gates = pending_gates_of(card_ids if len(card_ids) < 500 else None)
    return [card_view(r, deps.get(r.id, []), gates.get(r.id)) for r in rows]


def gate_view(row: GateColumns) -> GateView:
    return GateView(
        id=row.id,
        card=row.card_id,
        agent=row.agent,
        kind=row.kind,
        question=row.question,
        scope=row.scope,
        options=tuple(row.options or ()),
        status=row.status,
        answer=row.answer,
        note=row.note,
        answered_by=row.answered_by,
        deadline=row.deadline,
        created_at=row.created_at,
        answered_at=row.answered_at,
    )


def artifact_values(raw: list[dict]) -> tuple[Artifact, ...]:
    return tuple(
        Artifact(
            path=a["path"],
            size=a.get("size"),
            sha256=a.get("sha256"),
            missing=bool(a.get("missing")),
            too_large=bool(a.get("too_large")),
        )
        for a in raw or ()
    )


def evidence_view(row: EvidenceColumns) -> EvidenceView:
    return EvidenceView(
        id=row.id,
        card=row.card_id,
        agent=row.agent,
        turn_id=row.turn_id,
        summary=row.summary,
        artifacts=artifact_values(row.artifacts),
        next_action=row.next_action,
        todos_added=tuple(row.todos_added or ()),
        todos_done=tuple(row.todos_done or ()),
        tokens_in=row.tokens_in,
        tokens_out=row.tokens_out,
        tokens=row.tokens,
        usd=row.usd,
        source=row.source,
        created_at=row.created_at,
        extra=row.extra,
        unverified=bool(row.unverified),
    )


def observed_view(row: ObservedColumns) -> ObservedView:
    return ObservedView(
        id=row.id,
        card=row.card_id,
        agent=row.agent,
        path=row.path,
        size=row.size,
        sha256=row.sha256,
        created_at=row.created_at,
    )


def handoff_view(row: HandoffColumns) -> HandoffView:
    import json

    return HandoffView(
        id=row.id,
        card=row.card_id,
        from_agent=row.from_agent,
        to_agent=row.to_agent,
        packet=json.loads(row.packet),
        digest=row.digest,
        created_by=row.created_by,
        created_at=row.created_at,
        accepted_at=row.accepted_at,
        accepted_digest=row.accepted_digest,
    )


def agent_view(row: AgentColumns) -> AgentView:
    return AgentView(
        id=row.id,
        runtime=row.runtime,
        capabilities=tuple(row.capabilities or ()),
        watch=tuple(row.watch or ()),
        token_limit=row.token_limit,
        window_seconds=row.window_seconds,
        created_at=row.created_at,
        window_usd=row.window_usd,
        window_turns=row.window_turns,
    )
