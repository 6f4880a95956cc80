"""Structured, verifiable handoffs: an immutable packet with a digest (DESIGN §5)."""

from __future__ import annotations

import json

from ..rules import clock, ids
from ..rules.digest import sha256_hex
from ..shapes.errors import Conflict, Forbidden, InvalidInput
from ..shapes.values import CardView, HandoffView
from ..store import events, records
from ..store.records import Card, Gate, Handoff, Workspace
from ..store.rows import agent_row, card_row, card_view, handoff_view, touch
from . import leases, quota, workspaces
from .lifecycle import clear_lease, gate_blocked, move
from .reaper import reap_card
from .try_family import first_of, other_try_of

CAPTURE = object()  # ``handoff``'s ``code`` default: read the card's workspace now


def canonical(packet: dict) -> str:
    return json.dumps(packet, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def digest_of(text: str) -> str:
    return sha256_hex(text.encode("utf-8"))


def _last_artifacts(card_id: int, limit: int = 10) -> list[dict]:
    out: list[dict] = []
    for (text,) in records.rows('SELECT "artifacts" FROM "evidence" WHERE "card_id" = ? ORDER BY "id" DESC LIMIT 20', (card_id,)):
        for art in json.loads(text) if text else []:
            if len(out) < limit and art["path"] not in {a["path"] for a in out}:
                out.append(art)
    return out


def refuse_second_try(card_id: int, agent: str, doing: str, hint: str) -> None:
    """One agent, one try of a card (#26): a handoff (or a person's reassign)
    never gives ``agent`` a try of a card it holds or worked on another try of."""
    other = other_try_of(card_id, agent)
    if other is not None:
        first = ids.fmt(ids.CARD, first_of(card_id))
        raise Conflict(
            f"cannot {doing} {ids.fmt(ids.CARD, card_id)} to {agent}: it worked on {ids.fmt(ids.CARD, other)}, another try of {first} — one agent, one try of a card",
            hint,
            code="other_try",
        )


def open_handoff(card: Card, from_agent: str | None, to_agent: str, summary: str, done: list[str], pending: list[str], actor: str, now: float) -> Handoff:
    """Build the packet from the card's own state plus what the giver says, and
    put the card in ``handoff`` to the receiver with the giver's lease revoked.
    Refused (``other_try``) when the receiver worked on another try of the card."""
    refuse_second_try(card.id, to_agent, "hand", "tries compare different agents' work: hand it to an agent that has worked on no other try of it")
    todos = card.todos or []
    gates = Gate.where("""WHERE "card_id" = ? AND "status" = 'pending' ORDER BY "id" """, (card.id,))
    packet: dict = {
        "card": ids.fmt(ids.CARD, card.id),
        "title": card.title,
        "from": from_agent,
        "to": to_agent,
        "summary": summary,
        "done": done or [t["text"] for t in todos if t["done"]],
        "pending": pending or [t["text"] for t in todos if not t["done"]],
        "needs": list(card.needs or []),
        "open_gates": [{"id": ids.fmt(ids.GATE, g.id), "question": g.question, "scope": g.scope} for g in gates],
        "last_artifacts": _last_artifacts(card.id),
        "next": card.next_action,
        "created_at": clock.iso(now),
    }
    ws = Workspace.get(card.id)
    if ws is not None and ws.state == "open":
        # The code travels with the packet (issue #26): the digest covers where it is and what it is.
        packet["code"] = {"path": ws.path, "branch": ws.branch, "base": ws.base, "head": ws.head, "wip": ws.wip}
    text = canonical(packet)
    row = Handoff.create(card_id=card.id, from_agent=from_agent, to_agent=to_agent, packet=text, digest=digest_of(text), created_by=actor, created_at=now)
    previous = card.lease_holder
    move(card, "handoff", "handoff_created")
    card.handoff_to = to_agent
    clear_lease(card)
    touch(card, now)
    events.emit(actor, "handoff_created", card.id, handoff=ids.fmt(ids.HANDOFF, row.id), to=to_agent, revoked=previous, digest=row.digest)
    return row


def handoff(store, card_id: int, agent: str, data: dict, lease_token: int | None = None, code=CAPTURE) -> tuple[HandoffView, CardView]:
    """The giver's handoff. ``code``: the card's code state read before the
    transaction (default: read here, unless already inside one), recorded with
    the packet so its branch, HEAD and saved uncommitted work are the ones handed over."""
    if code is CAPTURE:
        code = None if store.in_transaction() else workspaces.capture(store, card_id)

    def body():
        now = clock.now()
        agent_row(agent)
        agent_row(data["to"])
        card = reap_card(card_row(card_id))
        leases.require_holder(card, agent, lease_token, ("active", "waiting"))
        if data["to"] == agent:
            raise InvalidInput("cannot hand a card to yourself", "name another registered agent with --to")
        if code is not None:
            workspaces.note(card.id, code, f"agent:{agent}")
        row = open_handoff(card, agent, data["to"], data["summary"], data.get("done") or [], data.get("pending") or [], f"agent:{agent}", now)
        return handoff_view(row), card_view(card)

    return store.run(body)


def latest_handoff(card_id: int) -> Handoff | None:
    return Handoff.first('WHERE "card_id" = ? ORDER BY "id" DESC', (card_id,))


def accept(store, card_id: int, agent: str, digest: str | None = None, lease_seconds: float | None = None) -> tuple[HandoffView, CardView]:
    def body():
        now = clock.now()
        agent_obj = agent_row(agent)
        card = reap_card(card_row(card_id))
        key = ids.fmt(ids.CARD, card_id)
        if card.status != "handoff":
            blocked = gate_blocked(card)
            if blocked is not None:
                raise blocked
            raise Conflict(f"{key} has no handoff waiting (it is {card.status})", "`loopx next --agent ID` says what to do", data={"card": card_view(card).to_json()})
        if card.handoff_to != agent:
            raise Forbidden(f"the handoff of {key} is for {card.handoff_to}, not {agent}", "only the receiver can accept it")
        row = latest_handoff(card_id)
        if row is None:  # (a card is put in handoff only with its packet)
            raise Conflict(f"{key} is in handoff without a packet", "ask a human to reassign the card")
        if digest_of(row.packet) != row.digest:
            raise Conflict(f"handoff {ids.fmt(ids.HANDOFF, row.id)} does not match its digest", "the packet was altered; ask a human to reassign the card")
        if digest is not None and digest != row.digest:
            raise Conflict(f"digest mismatch for {ids.fmt(ids.HANDOFF, row.id)}", f"the packet's digest is {row.digest}; re-read it with `loopx context {key}`")
        refuse_second_try(card_id, agent, "give", f"tries compare different agents' work: leave it; a person can reassign it (`loopx card assign {key} --to AGENT`)")
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
        events.emit(f"agent:{agent}", "handoff_accepted", card.id, handoff=ids.fmt(ids.HANDOFF, row.id), digest=row.digest, token=card.lease_token)
        quota.hold(card)  # an exhausted card is accepted paused: the receiver's `next` says so
        touch(card, now)
        return handoff_view(row), card_view(card)

    result = store.run(body)
    if not store.in_transaction():
        workspaces.restore(store, card_id)  # the receiver finds the work tree as it was handed over
    return result
