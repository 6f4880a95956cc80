"""A card's birth and a person's move of it, inside the caller's transaction:
the steps the person's operators on cards (``cards``) and on tries
(``tries``) share, with the refusals they give. It imports no verb."""

from __future__ import annotations

from ..rules import ids
from ..shapes.errors import Conflict, Forbidden
from ..store import events
from ..store.records import Card, CardTry, Dependency
from ..store.rows import agent_row, card_row, card_view, missing_card, touch
from . import lifecycle
from .dependencies import open_deps
from .lifecycle import clear_lease, move, withdraw_pending
from .quota import over_budget

TYPE_CHECKING = False  # (annotations only: typing is not imported on the cold path; checkers read this as typing's)
if TYPE_CHECKING:
    from ..authority import keys


def person_only(actor: str | keys.Person, what: str) -> None:
    if not hasattr(actor, "sign"):
        raise Forbidden(
            f"only a person can {what}",
            "a person does this from the board or their own terminal with their key",
            code="person_only",
        )


def create_card(data: dict, actor: str | keys.Person, now: float, **marks: object) -> Card:
    """The card and its signed ``card_added`` (in the caller's transaction).
    ``marks``: more the event records (a try: ``try_of``, ``try_no``)."""
    for dep in data.get("after") or []:
        if Card.get(dep) is None:
            raise missing_card(dep, f"--after {ids.fmt(ids.CARD, dep)}: no such card")
    if data.get("owner"):
        agent_row(data["owner"])
    pending = [d for d in data.get("after") or [] if card_row(d, lock=False).status != "done"]
    card = lifecycle.create(
        backlog=bool(data.get("backlog")),
        waiting_on=pending,
        title=data["title"],
        body=data.get("body") or "",
        assignee=data.get("owner"),
        needs=sorted(set(data.get("needs") or [])),
        priority=data.get("priority", 2),
        next_action=data.get("next"),
        verify=data.get("verify"),
        max_turns=data.get("max_turns"),
        max_tokens=data.get("max_tokens"),
        max_usd=data.get("max_usd"),
        created_at=now,
        updated_at=now,
    )
    for dep in sorted(set(data.get("after") or [])):
        Dependency.create(card_id=card.id, after_id=dep)
    if marks.get("try_of"):  # the index of the link the signed event below records (ops/try_family.py)
        CardTry.create(card_id=card.id, try_of=ids.parse(ids.CARD, marks["try_of"]), try_no=marks["try_no"])
    seq = events.emit(
        actor,
        "card_added",
        card.id,
        title=card.title,
        status=card.status,
        needs=card.needs,
        after=[ids.fmt(ids.CARD, d) for d in data.get("after") or []],
        owner=card.assignee,
        max_turns=card.max_turns,
        max_tokens=card.max_tokens,
        max_usd=card.max_usd,
        verify=card.verify,
        **marks,
    )
    if hasattr(actor, "sign"):
        card.budget_seq = seq
        card.save()
    return card


def refused_move(card: Card, to: str, why: str, hint: str = "") -> Conflict:
    return Conflict(
        f"cannot move {ids.fmt(ids.CARD, card.id)} from {card.status} to {to}: {why}",
        hint,
        code="illegal_move",
        data={"card": card_view(card).to_json()},
    )


def apply_move(card: Card, to: str, actor: str | keys.Person, now: float) -> Card:
    """A person's move of ``card`` (in the caller's transaction), refused when illegal."""
    key = ids.fmt(ids.CARD, card.id)
    frm = card.status
    if frm == to:
        raise refused_move(card, to, f"it is already {to}")
    if frm == "done":
        raise refused_move(
            card, to, "it is done", f"add a new card for follow-up work: `loopx card add TITLE --after {key}`"
        )
    if to in ("ready", "backlog") and frm in ("waiting", "handoff"):
        hint = (
            "answer its gate first (`loopx gate list --pending`)"
            if frm == "waiting"
            else f"the receiver must accept it, or reassign it: `loopx card assign {key} --to AGENT`"
        )
        raise refused_move(card, to, f"it is {frm}", hint)
    if to == "backlog" and frm in ("active", "monitoring"):
        raise refused_move(
            card, to, f"{card.lease_holder} is working on it", "move it to ready to take it back, or cancel it"
        )
    if to == "ready":
        blocking = open_deps(card.id)
        if blocking:
            raise refused_move(
                card, to, "waiting on " + ", ".join(ids.key(ids.CARD, d) for d in blocking), "finish those cards first"
            )
        if over_budget(card):  # whatever it was: an exhausted card is never made claimable
            raise refused_move(
                card,
                to,
                "its budget is spent",
                f"raise it first: `loopx card budget {key} --add-turns N` (or `+` on the board)",
            )
    revoked = card.lease_holder
    withdraw_pending(card, now, f"moved to {to} by {actor}")
    clear_lease(card)
    move(card, to, "card_moved")
    card.paused_reason = card.blocked_reason = card.handoff_to = None
    card.monitor_due = None
    card.stalls = 0
    touch(card, now)
    events.emit(actor, "card_moved", card.id, **{"from": frm, "to": to, "revoked": revoked})
    return card
