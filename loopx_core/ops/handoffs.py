"""Structured, verifiable handoffs: an immutable packet with a digest (DESIGN §5)."""

from __future__ import annotations

from ..rules import clock, ids
from ..shapes.errors import Conflict, Forbidden, InvalidInput
from ..shapes.values import CardView, HandoffView
from ..store import events, records
from ..store.rows import agent_row, card_row, card_view, handoff_view, touch
from . import leases, quota, workspaces
from .handoff_packet import digest_of, latest_handoff, open_handoff, refuse_second_try
from .lifecycle import gate_blocked, move
from .reaper import reap_card
from .workspaces import CAPTURE, Capture

TYPE_CHECKING = False  # (annotations only: typing is not imported on the cold path; checkers read this as typing's)
if TYPE_CHECKING:
    from ..store.base import Store


def handoff(
    store: Store,
    card_id: int,
    agent: str,
    data: dict,
    lease_token: int | None = None,
    code: dict | None | Capture = CAPTURE,
) -> tuple[HandoffView, CardView]:
    """The giver's handoff. ``code``: the card's code state read before the
    transaction (default: read here, unless already inside one), recorded with
    the packet so its branch, HEAD and saved uncommitted work are the ones handed over."""
    if isinstance(code, Capture):
        code = None if store.in_transaction() else workspaces.capture(store, card_id)

    def body() -> tuple[HandoffView, CardView]:
        now = clock.now()
        agent_row(agent)
        agent_row(data["to"])
        card = reap_card(card_row(card_id))
        leases.require_holder(card, agent, lease_token, ("active", "waiting"))
        if data["to"] == agent:
            raise InvalidInput("cannot hand a card to yourself", "name another registered agent with --to")
        if code is not None:
            workspaces.note(card.id, code, f"agent:{agent}")
        row = open_handoff(
            card,
            agent,
            data["to"],
            data["summary"],
            data.get("done") or [],
            data.get("pending") or [],
            f"agent:{agent}",
            now,
        )
        return handoff_view(row), card_view(card)

    return store.run(body)


def accept(
    store: Store, card_id: int, agent: str, digest: str | None = None, lease_seconds: float | None = None
) -> tuple[HandoffView, CardView]:
    def body() -> tuple[HandoffView, CardView]:
        now = clock.now()
        agent_obj = agent_row(agent)
        card = reap_card(card_row(card_id))
        key = ids.fmt(ids.CARD, card_id)
        if card.status != "handoff":
            blocked = gate_blocked(card)
            if blocked is not None:
                raise blocked
            raise Conflict(
                f"{key} has no handoff waiting (it is {card.status})",
                "`loopx next --agent ID` says what to do",
                data={"card": card_view(card).to_json()},
            )
        if card.handoff_to != agent:
            raise Forbidden(
                f"the handoff of {key} is for {card.handoff_to}, not {agent}", "only the receiver can accept it"
            )
        row = latest_handoff(card_id)
        if row is None:  # (a card is put in handoff only with its packet)
            raise Conflict(f"{key} is in handoff without a packet", "ask a human to reassign the card")
        if digest_of(row.packet) != row.digest:
            raise Conflict(
                f"handoff {ids.fmt(ids.HANDOFF, row.id)} does not match its digest",
                "the packet was altered; ask a human to reassign the card",
            )
        if digest is not None and digest != row.digest:
            raise Conflict(
                f"digest mismatch for {ids.fmt(ids.HANDOFF, row.id)}",
                f"the packet's digest is {row.digest}; re-read it with `loopx context {key}`",
            )
        refuse_second_try(
            card_id,
            agent,
            "give",
            f"tries compare different agents' work: leave it; a person can reassign it (`loopx card assign {key} --to AGENT`)",
        )
        quota.require_window(agent_obj, now)
        row.accepted_at, row.accepted_digest = now, row.digest
        row.save()
        leases.grant(card, agent, lease_seconds or leases.default_lease_seconds(store), now)
        card.assignee = agent
        card.handoff_to = None
        card.stalls = 0
        pending = records.exists("""SELECT 1 FROM "gate" WHERE "card_id" = ? AND "status" = 'pending'""", (card.id,))
        move(card, "waiting" if pending else "active", "handoff_accepted")
        if pending:
            card.lease_expires = None
        events.emit(
            f"agent:{agent}",
            "handoff_accepted",
            card.id,
            handoff=ids.fmt(ids.HANDOFF, row.id),
            digest=row.digest,
            token=card.lease_token,
        )
        quota.hold(card)  # an exhausted card is accepted paused: the receiver's `next` says so
        touch(card, now)
        return handoff_view(row), card_view(card)

    result = store.run(body)
    if not store.in_transaction():
        workspaces.restore(store, card_id)  # the receiver finds the work tree as it was handed over
    return result
