"""Claiming work: claim, next (the pre-turn check), heartbeat, monitor (giving it back: ``release``)."""

from __future__ import annotations

from ..rules import clock, holding, ids
from ..rules.hints import paused_hint, take_work
from ..rules.liveness import host_name
from ..shapes.errors import Conflict, Forbidden
from ..shapes.values import CardView, NextResult
from ..store import events, records
from ..store.records import Agent, Card, Gate
from ..store.rows import agent_row, card_row, card_view, gate_view, handoff_view, touch
from . import leases, quota, reaper
from .gate_rows import authority_of, checked_view, holding_gate, open_gate
from .handoff_packet import latest_handoff
from .lifecycle import gate_blocked, move
from .reaper import reap_card
from .try_family import first_of, other_try_of

TYPE_CHECKING = False  # (annotations only: typing is not imported on the cold path; checkers read this as typing's)
if TYPE_CHECKING:
    from ..store.base import Store


def _take(store: Store, card: Card, agent: Agent, seconds: float | None, now: float) -> Gate | None:
    """Lease ``card`` to ``agent``; open a permission gate for each needed scope it lacks."""
    leases.grant(card, agent.id, seconds or leases.default_lease_seconds(store), now)
    move(card, "active", "claimed")
    card.stalls = 0
    touch(card, now)
    events.emit(
        f"agent:{agent.id}",
        "claimed",
        card.id,
        agent=agent.id,
        host=host_name(),
        token=card.lease_token,
        expires_at=clock.iso(card.lease_expires),
    )
    first_gate = None
    needs = card.needs or []
    rules = authority_of(store) if needs else None
    for scope in needs:
        if rules is not None and rules.allowed(scope, agent.id, card.id, card.lease_token, now) is None:
            gate, _ = open_gate(
                card,
                agent.id,
                f"{agent.id} needs `{scope}` for {ids.fmt(ids.CARD, card.id)}: {card.title}",
                scope,
                [],
                None,
                "permission",
                now,
            )
            first_gate = first_gate or gate
    if quota.hold(card):  # an exhausted card is claimed paused: its holder's `next` says so
        touch(card, now)
    return first_gate


def _taken(card: Card, gate: Gate | None, reason: str | None) -> NextResult:
    view = card_view(card)
    if card.status == "paused":
        return NextResult("paused", card=view, reason=card.paused_reason, wake_at=card.wake_at, claimed=True)
    if gate is not None:
        return NextResult("wait", card=view, gate=gate_view(gate), reason="permission needed", claimed=True)
    return NextResult("work", card=view, reason=reason, claimed=True)


def claim(store: Store, card_id: int, agent: str, lease_seconds: float | None = None) -> NextResult:
    def body() -> NextResult:
        now = clock.now()
        agent_obj = agent_row(agent)
        quota.require_window(agent_obj, now)
        card = reap_card(card_row(card_id))
        key = ids.fmt(ids.CARD, card_id)
        if card.lease_holder == agent and card.status in ("active", "waiting"):
            return _resume(store, card, agent, "already yours")
        if card.status != "ready":
            blocked = gate_blocked(card)
            if blocked is not None:
                raise blocked
            if card.lease_holder:
                why = f"{key} is {card.status}, {leases.describe_holder(card)}"
            elif card.status == "blocked":
                why = f"{key} is blocked ({card.blocked_reason})"
            else:
                why = f"{key} is {card.status}"
            hint = f"pick another card: {take_work(agent)}"
            if card.status == "paused":
                why, hint = f"{key} is paused ({card.paused_reason})", f"{paused_hint(card)}; meanwhile {hint}"
            raise Conflict(why, hint, code="not_ready", data={"card": card_view(card).to_json()})
        if card.assignee and card.assignee != agent:
            raise Forbidden(
                f"{key} is assigned to {card.assignee}",
                f"a human can reassign it: `loopx card assign {key} --to {agent}`",
            )
        other = other_try_of(card_id, agent)
        if other is not None:
            first = ids.fmt(ids.CARD, first_of(card_id))
            raise Conflict(
                f"{agent} worked on {ids.fmt(ids.CARD, other)}, another try of {first}: one agent, one try of a card",
                f"tries compare different agents' work; pick another card: {take_work(agent)}",
                code="other_try",
            )
        return _taken(card, _take(store, card, agent_obj, lease_seconds, now), None)

    return store.run(body)


def _resume(store: Store, card: Card, agent: str, reason: str) -> NextResult:
    """The agent's own card: work on it, unless a gate holds it — pending, or an
    approval no signature backs (the row's "active" is not honoured then). Its
    lease is the one the log granted (``leases.require_holder``)."""
    leases.require_holder(card, agent, None, ("active", "waiting"))
    gate, why = holding_gate(store, card)
    if gate is not None:
        shown = checked_view(store, gate)
        return NextResult(
            "wait",
            card=card_view(card),
            gate=shown,
            reason="waiting for a human" if why is None else f"waiting for a human ({why})",
        )
    if card.status == "waiting":  # waiting on no gate at all: the row says so, nothing in the log does
        return NextResult(
            "wait",
            card=card_view(card),
            reason="waiting, but no gate is pending; `loopx verify` names what was changed",
        )
    return NextResult("work", card=card_view(card), reason=reason)


def next_turn(store: Store, agent: str, claim: bool = False, lease_seconds: float | None = None) -> NextResult:
    """What ``agent`` should do this turn (DESIGN §5 "next")."""

    def body() -> NextResult:
        now = clock.now()
        agent_obj = agent_row(agent)
        _, wake_at = quota.agent_window_state(agent_obj, now)
        if wake_at is not None:
            return NextResult("paused", wake_at=wake_at, reason="token_window")
        reaper.reap_due(now)  # every expired lease: a zombie's card must be claimable again
        marks = ", ".join("?" * len(holding.HELD))
        held = Card.where(
            f'WHERE "lease_holder" = ? AND "status" IN ({marks}) ORDER BY "id"', (agent, *holding.HELD), lock=True
        )
        on_merge = holding.merging(held, records.rows)
        card = holding.choose(held, now, on_merge)  # work the agent can do now comes before work that waits on someone
        rank = (
            holding.rank(card.status, card.monitor_due, now, card.id in on_merge)
            if card is not None
            else holding.NOT_HELD
        )
        if rank == holding.ACTIVE:
            held_back = quota.hold(card)  # counters put back to the log's first: an edited row buys no turn
            leases.renew(card, now)
            touch(card, now)
            if held_back:
                return NextResult("paused", card=card_view(card), reason=card.paused_reason, wake_at=card.wake_at)
            return _resume(store, card, agent, "resume")
        if rank == holding.DUE:
            move(card, "active", "monitor_due")
            card.monitor_due = None
            leases.renew(card, now)
            events.emit("system", "monitor_due", card.id, agent=agent)
            held_back = quota.hold(card)
            touch(card, now)
            if held_back:
                return NextResult("paused", card=card_view(card), reason=card.paused_reason, wake_at=card.wake_at)
            return NextResult("work", card=card_view(card), reason="monitor_due")
        if rank == holding.WAITING:
            return _resume(store, card, agent, "waiting")
        if rank == holding.PAUSED:
            return NextResult("paused", card=card_view(card), reason=card.paused_reason, wake_at=card.wake_at)
        # A monitor not due, or a card whose merge the person decides (#39): the
        # agent holds it, but nothing in it is the agent's to do now — other work is.
        offered = Card.first(
            """WHERE "status" = 'handoff' AND "handoff_to" = ? ORDER BY "priority", "id" """, (agent,), lock=True
        )
        if offered is not None:
            row = latest_handoff(offered.id)
            return NextResult(
                "accept", card=card_view(offered), handoff=handoff_view(row) if row else None, reason="handoff waiting"
            )
        if claim:
            candidate = _claimable(agent, store.checkout_id())
            if candidate is not None:
                candidate = reaper.reap_card(candidate, now)
                return _taken(candidate, _take(store, candidate, agent_obj, lease_seconds, now), "claimed")
        monitoring = [c.monitor_due for c in held if c.status == "monitoring" and c.monitor_due]
        wake_at = min(monitoring) if monitoring else None
        merging = holding.choose([c for c in held if c.id in on_merge], now, on_merge)
        if merging is not None:  # nothing else to do: the agent waits on its merge, as any gate
            return _resume(store, merging, agent, "waiting")._replace(wake_at=wake_at)
        reason = "no ready card" if claim else "nothing held; add --claim to take the best ready card"
        refused = _last_refusal(agent)
        if refused is not None:  # say why the agent holds nothing: its last ask was refused
            card, gate = refused
            return NextResult(
                "idle",
                card=card_view(card),
                gate=gate_view(gate),
                wake_at=wake_at,
                reason=f"{ids.fmt(ids.GATE, gate.id)} {gate.status}; {reason}",
            )
        return NextResult("idle", wake_at=wake_at, reason=reason)

    return store.run(body)


def _claimable(agent: str, checkout: str | None = None) -> Card | None:
    """The best ready card ``agent`` may take: open to it, and no try of a card
    it holds or worked on another try of (one agent, one try). On a team board
    (``checkout``: this checkout's id), no card whose workspace another
    checkout holds: its code is there, and here it could run no turn."""
    passed: list[int] = []
    here = ""
    if checkout is not None:
        here = """AND NOT EXISTS (SELECT 1 FROM "workspace" WHERE "workspace"."card_id" = "card"."id" AND ("workspace"."checkout" IS NULL OR "workspace"."checkout" <> ?)) """
    while True:
        skip = f'AND "id" NOT IN ({", ".join("?" * len(passed))}) ' if passed else ""
        candidate = Card.first(
            f"""WHERE "status" = 'ready' AND ("assignee" IS NULL OR "assignee" = ?) {here}{skip}ORDER BY "priority", "created_at", "id" """,
            (agent, *((checkout,) if checkout is not None else ()), *passed),
            lock=True,
        )
        if candidate is None or other_try_of(candidate.id, agent) is None:
            return candidate
        passed.append(candidate.id)


def _last_refusal(agent: str) -> tuple[Card, Gate] | None:
    """The agent's latest rejected (or expired) gate, while its card is still blocked by it."""
    gate = Gate.first(
        """WHERE "agent" = ? AND "status" IN ('rejected', 'expired') ORDER BY "answered_at" DESC, "id" DESC""", (agent,)
    )
    if gate is None:
        return None
    card = Card.get(gate.card_id)
    if card is None or card.status != "blocked" or ids.key(ids.GATE, gate.id) not in (card.blocked_reason or ""):
        return None
    return card, gate


def heartbeat(store: Store, card_id: int, agent: str, lease_token: int | None = None) -> CardView:
    def body() -> CardView:
        now = clock.now()
        agent_row(agent)
        card = reap_card(card_row(card_id))
        leases.require_holder(card, agent, lease_token, ("active", "waiting", "monitoring"))
        if card.status == "active":
            leases.renew(card, now)
        touch(card, now)
        events.emit(
            f"agent:{agent}", "heartbeat", card.id, token=card.lease_token, expires_at=clock.iso(card.lease_expires)
        )
        return card_view(card)

    return store.run(body, card=card_id)


def monitor(store: Store, card_id: int, agent: str, every: float, lease_token: int | None = None) -> CardView:
    def body() -> CardView:
        now = clock.now()
        agent_row(agent)
        card = reap_card(card_row(card_id))
        leases.require_holder(card, agent, lease_token, ("active", "monitoring"))
        move(card, "monitoring", "monitoring")
        card.monitor_every = every
        card.monitor_due = now + every
        card.lease_expires = None  # kept while it sleeps; `next` wakes it when due
        touch(card, now)
        events.emit(f"agent:{agent}", "monitoring", card.id, every=every, next_due=clock.iso(card.monitor_due))
        return card_view(card)

    return store.run(body, card=card_id)
