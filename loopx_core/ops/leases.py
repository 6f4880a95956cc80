"""Leases with fencing tokens (DESIGN §4): who may write to a card right now."""

from __future__ import annotations

from ..rules import clock, holding, ids
from ..rules.hints import paused_hint
from ..shapes.errors import Conflict, Paused
from ..store import events, records
from ..store.backends import DEFAULT_SETTINGS
from ..store.records import Card
from ..store.rows import card_view
from .lifecycle import gate_blocked

TYPE_CHECKING = False  # (annotations only: typing is not imported on the cold path; checkers read this as typing's)
if TYPE_CHECKING:
    from ..store.base import Store


def default_lease_seconds(store: Store) -> float:
    return float(store.setting("default_lease", DEFAULT_SETTINGS["default_lease"]))


def held_card(agent: str, now: float, statuses: tuple[str, ...] = holding.HELD) -> Card | None:
    """The agent's card among those it holds in ``statuses`` (``holding``'s rule),
    inside the caller's transaction: what the hooks gate and charge and the
    watcher observes on."""
    marks = ", ".join("?" * len(statuses))
    held = Card.where(f'WHERE "lease_holder" = ? AND "status" IN ({marks}) ORDER BY "id"', (agent, *statuses))
    card = holding.choose(held, now, holding.merging(held, records.rows))
    return (
        card if card is None or logged_holder(card) else None
    )  # a lease row the log did not grant gates and charges nothing


def logged_holder(card: Card) -> bool:
    """Is the card's lease row the one its newest lease event left?"""
    from ..authority.replay import lease_in_log

    return tuple(lease_in_log(records.rows, card.id)) == (card.lease_holder, card.lease_token)


def grant(card: Card, agent: str, seconds: float, now: float) -> None:
    card.fence += 1
    card.lease_holder = agent
    card.lease_token = card.fence
    card.lease_seconds = seconds
    card.lease_expires = now + seconds


def renew(card: Card, now: float) -> None:
    card.lease_expires = now + (card.lease_seconds or 1800)


def describe_holder(card: Card) -> str:
    if card.lease_holder is None:
        return "no one holds it"
    if card.lease_expires is None:
        return f"held by {card.lease_holder} (lease {card.lease_token}, not expiring while {card.status})"
    return f"held by {card.lease_holder} until {clock.iso(card.lease_expires)} (lease {card.lease_token})"


def check_logged(card: Card) -> None:
    """Hold the card's lease row to the log's newest lease event (issue #24 §3):
    a holder or token edited in the database is put back to the one the log
    granted (event ``row_restored``); a lease the log already ended is refused
    outright — no operator honours a lease the events do not support."""
    from ..authority.replay import lease_in_log

    logged = lease_in_log(records.rows, card.id)
    row = (card.lease_holder, card.lease_token)
    if row == tuple(logged):
        return
    key = ids.fmt(ids.CARD, card.id)
    if logged.holder is None:
        raise Conflict(
            f"{key}'s lease row says {card.lease_holder} holds it (lease {card.lease_token}), but the log ended its last lease: the row was changed outside LoopX",
            f"`loopx verify` names the rows that differ; a person can put the card back to work: `loopx card move {key} --to ready`",
            code="row_altered",
            data={"card": card_view(card).to_json()},
        )
    card.lease_holder, card.lease_token = logged
    events.emit(
        "system",
        "row_restored",
        card.id,
        table="card",
        columns=["lease_holder", "lease_token"],
        row=list(row),
        log=list(logged),
    )


def require_holder(card: Card, agent: str, token: int | None = None, statuses: tuple[str, ...] = ("active",)) -> None:
    """Refuse a write from anyone but the live lease holder (zombies included),
    as the log granted the lease (``check_logged``)."""
    key = ids.fmt(ids.CARD, card.id)
    if card.lease_holder is not None or card.lease_token is not None:
        check_logged(card)
    if card.lease_holder == agent and (token is None or token == card.lease_token) and card.status in statuses:
        return  # the common case: no refusal, so no need to describe the card
    blocked = gate_blocked(card)
    if blocked is not None:
        raise blocked
    state = {"card": card_view(card).to_json()}
    if card.lease_holder != agent:
        if card.lease_holder is None:
            if card.status == "handoff" and card.handoff_to == agent:
                hint = f"accept the handoff first: `loopx accept {key}`"
            elif card.status == "ready":
                hint = f"claim it first: `loopx claim {key}` (or `loopx next --claim`)"
            else:
                hint = "`loopx next --claim` finds you work"
            raise Conflict(f"{key} is {card.status} and not leased to {agent}", hint, code="not_holder", data=state)
        raise Conflict(
            f"{key} is not leased to {agent}: {describe_holder(card)}",
            "your lease expired or was revoked; run `loopx next --agent ID` to see what to do",
            code="not_holder",
            data=state,
        )
    if token is not None and token != card.lease_token:
        raise Conflict(
            f"stale lease token {token} for {key}: the live lease is {card.lease_token}",
            "a newer lease replaced yours; run `loopx next` before writing again",
            code="stale_lease",
            data=state,
        )
    if card.status not in statuses:
        if card.status == "paused":
            raise Paused(f"{key} is paused ({card.paused_reason})", paused_hint(card), data=state)
        raise Conflict(
            f"{key} is {card.status}, not {' or '.join(statuses)}",
            "`loopx next` says what to do now",
            code="wrong_status",
            data=state,
        )
