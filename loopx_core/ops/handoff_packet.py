"""A handoff's packet (DESIGN §5): built from the card's own state plus what
the giver says, stored immutable with its digest, and the card put in
``handoff`` to its receiver. The step an agent's ``handoff`` and a person's
reassign (``cards.assign_card``) share, and what ``next`` and ``accept``
read back. It imports no verb."""

from __future__ import annotations

import json

from ..rules import clock, ids
from ..rules.digest import sha256_hex
from ..shapes.errors import Conflict
from ..store import events, records
from ..store.records import Card, Gate, Handoff, Workspace
from ..store.rows import touch
from .lifecycle import clear_lease, move
from .try_family import first_of, other_try_of

TYPE_CHECKING = False  # (annotations only: typing is not imported on the cold path; checkers read this as typing's)
if TYPE_CHECKING:
    from ..authority import keys


def canonical(packet: dict) -> str:
    return json.dumps(packet, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def digest_of(text: str) -> str:
    return sha256_hex(text.encode("utf-8"))


def _last_artifacts(card_id: int, limit: int = 10) -> list[dict]:
    out: list[dict] = []
    for (text,) in records.rows(
        'SELECT "artifacts" FROM "evidence" WHERE "card_id" = ? ORDER BY "id" DESC LIMIT 20', (card_id,)
    ):
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


def open_handoff(
    card: Card,
    from_agent: str | None,
    to_agent: str,
    summary: str,
    done: list[str],
    pending: list[str],
    actor: str | keys.Person,
    now: float,
) -> Handoff:
    """Build the packet from the card's own state plus what the giver says, and
    put the card in ``handoff`` to the receiver with the giver's lease revoked.
    Refused (``other_try``) when the receiver worked on another try of the card."""
    refuse_second_try(
        card.id,
        to_agent,
        "hand",
        "tries compare different agents' work: hand it to an agent that has worked on no other try of it",
    )
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
    row = Handoff.create(
        card_id=card.id,
        from_agent=from_agent,
        to_agent=to_agent,
        packet=text,
        digest=digest_of(text),
        created_by=actor,
        created_at=now,
    )
    previous = card.lease_holder
    move(card, "handoff", "handoff_created")
    card.handoff_to = to_agent
    clear_lease(card)
    touch(card, now)
    events.emit(
        actor,
        "handoff_created",
        card.id,
        handoff=ids.fmt(ids.HANDOFF, row.id),
        to=to_agent,
        revoked=previous,
        digest=row.digest,
    )
    return row


def latest_handoff(card_id: int) -> Handoff | None:
    return Handoff.first('WHERE "card_id" = ? ORDER BY "id" DESC', (card_id,))
