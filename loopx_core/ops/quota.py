"""The budget rule, in one place (DESIGN §4 "The budget rule", §5 "Quota").

A card past one of its limits never runs another turn: the turn that crosses
a limit is the last one charged. Two kinds of caller keep that true, whatever
status the card is in:

- every path that charges a card (``writeback``, the Stop hook's usage
  charge) calls ``charge`` and then ``pause_if_spent``: a card that crossed a
  limit goes ``paused`` (reason ``budget``) — active, waiting, monitoring or
  ready alike;
- every path that makes a card workable — claim, accept, a gate's approval, a
  monitor falling due, a budget raise, an unassign, a lease running out — calls
  ``hold``: an exhausted card goes (or stays) ``paused`` instead. A person's
  move to ``ready`` is refused instead (``cards.move_card``).

Rolling windows (a person's "so much per so long") are the same rule over
time, one function for both holders (``window_state``): a card's window is
spent when the evidence charged to it in the last ``seconds`` reaches one of
its limits (tokens, dollars, turns); the card then pauses (reason
``window``) with ``wake_at`` at the refill time and resumes by itself once
the clock passes it (``settle``, run lazily by the reaper: no person
needed). An agent's window is the same sum over everything the agent was
charged (``require_window``): an agent whose window is spent starts no turn
— no claim, no accept, no writeback — until it reopens.
"""

from __future__ import annotations

import json

from ..rules import clock
from ..rules.decisions import WINDOW_FIELDS, WINDOW_KINDS
from ..shapes.errors import Paused
from ..shapes.values import Window
from ..store import events, records
from ..store.records import Agent, Card
from ..store.rows import card_view
from .leases import renew
from .lifecycle import move

TYPE_CHECKING = False  # (annotations only: typing is not imported on the cold path; checkers read this as typing's)
if TYPE_CHECKING:
    from ..store.base import Store

# A card in one of these statuses can run a turn soon: crossing a limit pauses it.
PAUSES_ON_CHARGE = ("active", "waiting", "monitoring", "ready")


def over_budget(card: Card) -> bool:
    return (
        (card.max_turns is not None and card.used_turns >= card.max_turns)
        or (card.max_tokens is not None and card.used_tokens >= card.max_tokens)
        or (card.max_usd is not None and card.used_usd >= card.max_usd - 1e-9)
    )


def totals(card: Card) -> dict:
    """What the card has used, as each charge event records it after charging:
    so the row's counters are checked against the log (``restore_used``)."""
    return {"turns": card.used_turns, "tokens": card.used_tokens, "usd": round(card.used_usd, 6)}


def restore_used(card: Card) -> bool:
    """Put the card's used counters back to what its newest charge event
    recorded, when the row says otherwise (an edit outside LoopX: a zeroed
    counter must not buy turns). Returns True when it did; the event
    ``row_restored`` says what the row said."""
    from ..authority.replay import used_in_log

    logged = used_in_log(records.rows, card.id)
    row = (card.used_turns, card.used_tokens, round(card.used_usd, 6))
    if logged is None or logged == row:
        return False
    card.used_turns, card.used_tokens, card.used_usd = logged
    events.emit(
        "system",
        "row_restored",
        card.id,
        table="card",
        columns=["used_turns", "used_tokens", "used_usd"],
        row=list(row),
        log=list(logged),
    )
    return True


def charge(card: Card, tokens: int, usd: float, *, turn: bool = True) -> None:
    restore_used(card)
    if turn:
        card.used_turns += 1
    card.used_tokens += tokens
    card.used_usd = round(card.used_usd + usd, 6)


def pause(card: Card, reason: str, wake_at: float | None = None, **data: object) -> None:
    """Pause ``card`` (the holder keeps its lease, which does not run out while
    paused). ``wake_at``: when it resumes by itself (a spent window)."""
    move(card, "paused", "paused")
    card.paused_reason = reason
    card.wake_at = wake_at
    card.lease_expires = None
    card.monitor_due = None
    if wake_at is not None:
        data["wake_at"] = clock.iso(wake_at)
    events.emit("system", "paused", card.id, reason=reason, quota=card_view(card).quota.to_json(), **data)


def spent(card: Card, now: float | None = None) -> tuple[str | None, float | None]:
    """Why ``card`` may not run a turn now: ``budget`` (a person must raise it),
    ``window`` (with its refill time), or (None, None)."""
    if over_budget(card):
        return "budget", None
    wake_at = card_window_wake(card, clock.now() if now is None else now)
    return ("window", wake_at) if wake_at is not None else (None, None)


def pause_if_spent(card: Card, stall_limit: int = 0) -> str | None:
    """After a charge: pause the card if it crossed a limit or spent its window
    (or, with ``stall_limit``, made no progress that many turns in a row).
    Returns the reason."""
    if card.status not in PAUSES_ON_CHARGE:
        return None  # done, cancelled, blocked, backlog, handoff, paused: caught where they are made workable
    reason, wake_at = spent(card)
    if reason is None and stall_limit > 0 and card.stalls >= stall_limit:
        reason = "no_progress"
    if reason is None:
        return None
    pause(card, reason, wake_at, stalls=card.stalls)
    return reason


def hold(card: Card) -> bool:
    """Call after making ``card`` workable (active, waiting, ready): an exhausted
    card goes ``paused`` (reason ``budget``, or ``window`` until it refills)
    instead. Returns True when it did."""
    restore_used(card)
    reason, wake_at = spent(card)
    if reason is None:
        return False
    pause(card, reason, wake_at)
    return True


def resume(card: Card, now: float) -> str:
    """Where a paused card goes once nothing holds it back: ``waiting`` while a
    gate is pending, ``active`` for its holder (lease renewed), else ``ready``."""
    card.paused_reason = None
    card.wake_at = None
    card.stalls = 0
    if card.lease_holder is None:
        move(card, "ready", "resumed")
    elif records.exists("""SELECT 1 FROM "gate" WHERE "card_id" = ? AND "status" = 'pending'""", (card.id,)):
        move(card, "waiting", "resumed")
        card.lease_expires = None  # a lease does not run out while a human decides
    else:
        move(card, "active", "resumed")
        renew(card, now)
    return card.status


def settle(card: Card, now: float) -> str | None:
    """A paused card whose reason may be gone (a budget raised, a window
    changed or refilled): paused again for what still holds it back, or
    resumed. Returns the status it resumed to, or None (the caller's event says why)."""
    reason, wake_at = spent(card, now)
    if reason is not None:
        if (reason, wake_at) != (card.paused_reason, card.wake_at):
            pause(card, reason, wake_at)
        return None
    return resume(card, now)


# -- rolling windows -------------------------------------------------------------------

DIMENSIONS = ("tokens", "usd", "turns")


def agent_window(agent: Agent) -> Window | None:
    if not agent.window_seconds or not (agent.token_limit or agent.window_usd or agent.window_turns):
        return None
    return Window(agent.window_seconds, agent.token_limit, agent.window_usd, agent.window_turns)


def card_window(card: Card) -> Window | None:
    if not card.window_seconds or not (card.window_tokens or card.window_usd or card.window_turns):
        return None
    return Window(card.window_seconds, card.window_tokens, card.window_usd, card.window_turns)


def charged_turn(source: str, extra: object) -> bool:
    """Did this evidence row count a turn? Writebacks do; measured usage (the
    Stop hook's, source ``hook``) and a card's closing ``done`` record do not."""
    return source not in ("hook", "verify") and not (isinstance(extra, dict) and extra.get("done"))


def _spent_in(window: Window, column: str, value: int | str, now: float) -> list[tuple[float, dict]]:
    """The charges of the last ``window.seconds`` whose ``column`` (``agent`` or ``card_id``) is ``value``."""
    rows = records.rows(
        f'SELECT "created_at", "tokens", "usd", "source", "extra" FROM "evidence" WHERE "{column}" = ? AND "created_at" > ? ORDER BY "created_at", "id"',
        (value, now - window.seconds),
    )
    return [
        (
            at,
            {
                "tokens": tokens or 0,
                "usd": usd or 0.0,
                "turns": 1 if charged_turn(source, json.loads(extra) if extra else None) else 0,
            },
        )
        for at, tokens, usd, source, extra in rows
    ]


def window_state(window: Window | None, rows: list[tuple[float, dict]], now: float) -> tuple[dict, float | None]:
    """The one window rule: what ``rows`` (``(at, spend)`` in time order, the
    last ``window.seconds`` of charges) used, and — when one limit is reached —
    the time enough of the oldest spending ages out for every spent limit to
    reopen. (used, None) while the window has room."""
    used = {d: sum(spend[d] for _, spend in rows) for d in DIMENSIONS}
    used["usd"] = round(used["usd"], 6)
    if window is None:
        return used, None
    wake_at = None
    for dim in DIMENSIONS:
        limit = getattr(window, dim)
        if limit is None or used[dim] < limit - (1e-9 if dim == "usd" else 0):
            continue
        remaining = used[dim]
        for at, spend in rows:
            remaining -= spend[dim]
            if remaining < limit - (1e-9 if dim == "usd" else 0):
                wake_at = max(wake_at or 0.0, at + window.seconds)
                break
    return used, wake_at


def agent_window_state(agent: Agent, now: float) -> tuple[dict, float | None]:
    """What the agent spent in its window (every card), and when it reopens if spent."""
    window = agent_window(agent)
    if window is None:
        return {d: 0 for d in DIMENSIONS}, None
    return window_state(window, _spent_in(window, "agent", agent.id, now), now)


def card_window_state(card: Card, now: float) -> tuple[dict, float | None]:
    window = card_window(card)
    if window is None:
        return {d: 0 for d in DIMENSIONS}, None
    return window_state(window, _spent_in(window, "card_id", card.id, now), now)


def card_window_wake(card: Card, now: float) -> float | None:
    """When ``card``'s spent window refills (None: it has room, or no window)."""
    return card_window_state(card, now)[1] if card_window(card) is not None else None


def describe(window: Window, used: dict) -> str:
    parts = []
    if window.tokens is not None:
        parts.append(f"{used['tokens']:,} of {window.tokens:,} tokens")
    if window.usd is not None:
        parts.append(f"${used['usd']:.2f} of ${window.usd:.2f}")
    if window.turns is not None:
        parts.append(f"{used['turns']} of {window.turns} turns")
    from ..rules.clock import human_delta

    return ", ".join(parts) + f" per {human_delta(window.seconds)}"


def require_window(agent: Agent, now: float | None = None) -> None:
    """Refuse to start a turn for an agent whose window is spent (exit 8; the
    code is ``token_window`` whatever the window counts, as it always was)."""
    window = agent_window(agent)
    if window is None:
        return
    used, wake_at = agent_window_state(agent, clock.now() if now is None else now)
    if wake_at is not None:
        raise Paused(
            f"{agent.id}'s window is spent ({describe(window, used)}); it reopens at {clock.iso(wake_at)}",
            "stop for now; `loopx next` says when to start again",
            code="token_window",
            data={"wake_at": clock.iso(wake_at), "reason": "token_window"},
        )


BUDGET_DECISIONS = ("card_added", "budget_raised")


def decided(store: Store, seq: int | None, kinds: tuple[str, ...], card_id: int, strict: bool) -> dict | None:
    """The data of a person's decision about ``card_id`` (event ``seq``, one of
    ``kinds``), or None when it is missing or altered. ``strict``: its signature
    is checked (the person's processes); else its content and hash only (an
    agent's per-turn path: an edit of the card row cannot fake those)."""
    if seq is None:
        return None
    if strict:
        row = store.trust().decision_row(store.query, seq, kinds)
    else:
        from ..authority.trust import event_row

        row = event_row(store.query, seq)
        if row is not None and (
            row.kind not in kinds or not row.actor.startswith("human:") or row.computed_hash() != row.hash
        ):
            row = None
    return row.payload() if row is not None and row.card == card_id else None


def enforce_signed(store: Store, card: Card, *, strict: bool = False) -> None:
    """Hold ``card`` to the budget a person decided (SECURITY.md): limits edited
    in the database are put back to the decided ones; a budget whose decision
    is missing or altered pauses the card until a person sets it again.

    On an agent's own per-turn path (``strict=False``) the decision is checked
    by its content and hash — what an edit of the card row cannot fake — not by
    its signature, so the turn pays no signature check (SECURITY.md: a decision
    rewritten together with its hash is caught by ``loopx verify``, the board's
    check on open and the person's runner, which pass ``strict=True``)."""
    if card.budget_seq is None:
        return  # an agent's own card: its limits are its own
    data = decided(store, card.budget_seq, BUDGET_DECISIONS, card.id, strict)
    if data is None or "max_turns" not in data:
        if card.paused_reason != "budget_unverified":
            pause(card, "budget_unverified")
        return
    card.max_turns, card.max_tokens, card.max_usd = data["max_turns"], data["max_tokens"], data["max_usd"]


def enforce_signed_window(store: Store, card: Card, *, strict: bool = False) -> None:
    """The same for a card's window: fields edited in the database are put back
    to the ones a person decided; a window whose decision is missing or
    altered pauses the card (``window_unverified``) until a person sets it again."""
    if card.window_seq is None:
        return  # no window was ever set by a person
    data = decided(store, card.window_seq, WINDOW_KINDS, card.id, strict)
    if data is None or any(f not in data for f in WINDOW_FIELDS):
        if card.paused_reason != "window_unverified":
            pause(card, "window_unverified")
        return
    for field in WINDOW_FIELDS:
        setattr(card, field, data[field])
