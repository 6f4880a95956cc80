"""Giving a card back: its lease cleared, its pending gates withdrawn, the
card ``ready`` again (an exhausted one paused): the agent's own ``loopx
release``, and the step ``writeback --release``, a runner that stops
(``release_on_stop``) and a claim whose workspace could not be made
(``workspace_open.name_in``) share. It imports no verb."""

from __future__ import annotations

from ..rules import clock
from ..shapes.values import CardView
from ..store import events
from ..store.records import Card, Gate
from ..store.rows import agent_row, card_row, card_view, touch
from . import leases, quota
from .gate_rows import RUNTIME
from .lifecycle import clear_lease, move, withdraw_pending
from .reaper import reap_card

TYPE_CHECKING = False  # (annotations only: typing is not imported on the cold path; checkers read this as typing's)
if TYPE_CHECKING:
    from ..store.base import Store


def release_card(card: Card, actor: str, now: float) -> None:
    withdraw_pending(card, now, f"released by {actor}")
    token = card.lease_token
    clear_lease(card)
    move(card, "ready", "released")
    card.monitor_due = None
    events.emit(actor, "released", card.id, token=token)
    quota.hold(card)
    touch(card, now)


def release_on_stop(store: Store, card_id: int, agent: str, why: str) -> CardView | None:
    """A stopping runner gives back ``card_id``: the questions its runtime
    asked there are withdrawn (no turn waits on them any more: answering one
    later would answer nobody), and the card goes back to ready unless it
    still waits on a question the agent asked itself (then it keeps its
    holder, as a gate waiting on a person should). None: not the agent's, or
    kept."""

    def body() -> CardView | None:
        now = clock.now()
        agent_row(agent)
        card = reap_card(card_row(card_id))
        if card.lease_holder != agent or card.status not in ("active", "waiting"):
            return None
        if (
            Gate.first("""WHERE "card_id" = ? AND "status" = 'pending' AND "kind" != ?""", (card.id, RUNTIME))
            is not None
        ):
            return None
        withdraw_pending(card, now, why)  # (only the runtime's questions are pending)
        release_card(card, f"agent:{agent}", now)
        return card_view(card)

    return store.run(body, card=card_id)


def release(store: Store, card_id: int, agent: str, lease_token: int | None = None) -> CardView:
    def body() -> CardView:
        now = clock.now()
        agent_row(agent)
        card = reap_card(card_row(card_id))
        leases.require_holder(card, agent, lease_token, ("active", "waiting", "monitoring"))
        release_card(card, f"agent:{agent}", now)
        return card_view(card)

    return store.run(body, card=card_id)
