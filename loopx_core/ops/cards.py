"""A person's operators on cards: add, move, assign, budget — and the board reads."""

from __future__ import annotations

from ..rules import clock, holding, ids
from ..shapes.errors import Conflict, Forbidden, InvalidInput
from ..shapes.values import CardDetail, CardView
from ..store import events, records
from ..store.records import Card, Evidence, Gate, Handoff, Observed
from ..store.rows import (
    agent_row,
    card_row,
    card_view,
    card_views,
    evidence_view,
    handoff_view,
    observed_view,
    touch,
)
from . import quota, reaper
from .card_steps import apply_move, create_card, person_only, refused_move
from .dependencies import open_deps
from .gate_rows import checked_view
from .handoff_packet import open_handoff
from .lifecycle import clear_lease, move, withdraw_pending
from .reaper import reap_card

TYPE_CHECKING = False  # (annotations only: typing is not imported on the cold path; checkers read this as typing's)
if TYPE_CHECKING:
    from ..authority import keys
    from ..store.base import Store

HUMAN_MOVES = ("backlog", "ready", "cancelled")


def add_card(store: Store, data: dict, actor: str | keys.Person) -> CardView:
    """``actor``: an agent's actor string, or a person (``keys.Person``), whose
    signed ``card_added`` then also fixes the card's budget (quota.enforce_signed)."""
    return store.run(lambda: card_view(create_card(data, actor, clock.now())))


def move_card(store: Store, card_id: int, to: str, actor: str | keys.Person) -> CardView:
    """A person's move to backlog, ready or cancelled (``actor``: a ``keys.Person``,
    whose key signs it); every other status is reached only through the agents' operators."""
    person_only(actor, "move cards")
    if to not in HUMAN_MOVES:
        raise InvalidInput(f"cannot move a card to {to!r} by hand", f"use one of: {', '.join(HUMAN_MOVES)}")

    return store.run(lambda: card_view(apply_move(reap_card(card_row(card_id)), to, actor, clock.now())))


def assign_card(
    store: Store, card_id: int, to: str | None, actor: str | keys.Person, summary: str | None = None
) -> CardView:
    """A person gives a card to an agent (``actor``: a ``keys.Person``). A card
    someone holds is reassigned with a handoff packet built from its state; the
    old lease is revoked. ``to=None`` unassigns."""
    person_only(actor, "reassign cards")

    def body() -> CardView:
        now = clock.now()
        card = reap_card(card_row(card_id))
        key = ids.fmt(ids.CARD, card_id)
        if to is not None:
            agent_row(to)
        if card.status in ("done", "cancelled"):
            raise refused_move(card, to or "unassigned", f"it is {card.status}")
        holder = (
            card.lease_holder
            if card.status in holding.HELD
            else (card.handoff_to if card.status == "handoff" else None)
        )
        if holder is not None and holder == to:
            raise Conflict(
                f"{key} is already with {to}", "", code="no_change", data={"card": card_view(card).to_json()}
            )
        if holder is None and card.assignee == to:
            raise Conflict(
                f"{key} is already {'unassigned' if to is None else 'assigned to ' + to}",
                "",
                code="no_change",
                data={"card": card_view(card).to_json()},
            )
        if holder is not None and to is not None:
            text = summary or f"Reassigned by {actor} from {holder} to {to}." + (
                f" Last: {_last_summary(card.id)}" if _last_summary(card.id) else ""
            )
            open_handoff(card, holder, to, text, [], [], actor, now)
            card.assignee = to
            card.save()
        elif holder is not None:  # taken away from its holder, back to the pool
            withdraw_pending(card, now, f"unassigned by {actor}")
            clear_lease(card)
            move(card, "ready" if not open_deps(card.id) else "blocked", "card_unassigned")
            card.assignee = card.handoff_to = card.paused_reason = None
            events.emit(actor, "card_unassigned", card.id, revoked=holder)
            if card.status == "ready":
                quota.hold(card)  # an exhausted card goes back to the pool paused
            touch(card, now)
        else:
            previous = card.assignee
            card.assignee = to
            touch(card, now)
            events.emit(actor, "card_assigned", card.id, to=to, previous=previous)
        return card_view(card)

    return store.run(body)


def _last_summary(card_id: int) -> str | None:
    return records.scalar('SELECT "summary" FROM "evidence" WHERE "card_id" = ? ORDER BY "id" DESC LIMIT 1', (card_id,))


def budget_card(store: Store, card_id: int, data: dict, actor: str | keys.Person) -> CardView:
    """A person raises a card's budget (``actor``: a ``keys.Person``); the signed
    event carries the resulting limits, which the kernel holds the card to."""
    if not hasattr(actor, "sign"):
        raise Forbidden(
            "only a person can change a budget",
            "a person runs `loopx card budget` with their key, or presses + on the board",
        )
    if not any(data.get(k) for k in ("add_turns", "add_tokens", "add_usd")):
        raise InvalidInput("nothing to add", "give at least one of --add-turns N, --add-tokens N, --add-usd X")

    def body() -> CardView:
        now = clock.now()
        card = reap_card(card_row(card_id))
        if data.get("add_turns"):
            card.max_turns = (card.max_turns if card.max_turns is not None else card.used_turns) + data["add_turns"]
        if data.get("add_tokens"):
            card.max_tokens = (card.max_tokens if card.max_tokens is not None else card.used_tokens) + data[
                "add_tokens"
            ]
        if data.get("add_usd"):
            card.max_usd = round((card.max_usd if card.max_usd is not None else card.used_usd) + data["add_usd"], 6)
        resumed = quota.settle(card, now) if card.status == "paused" else None
        touch(card, now)
        card.budget_seq = events.emit(
            actor,
            "budget_raised",
            card.id,
            add_turns=data.get("add_turns"),
            add_tokens=data.get("add_tokens"),
            add_usd=data.get("add_usd"),
            resumed=resumed,
            max_turns=card.max_turns,
            max_tokens=card.max_tokens,
            max_usd=card.max_usd,
        )
        card.save()
        return card_view(card)

    return store.run(body)


EDITABLE = {"title": "title", "body": "body", "next": "next_action", "verify": "verify"}  # input → column


def edit_card(store: Store, card_id: int, data: dict, actor: str | keys.Person) -> CardView:
    """A person rewrites a card's title, objective (``body``), next action or
    verify command (an empty ``verify`` or ``next`` clears it). The signed
    ``card_edited`` event records the new values."""
    person_only(actor, "edit a card")
    changes = {k: v for k, v in data.items() if k in EDITABLE and v is not None}
    if not changes:
        raise InvalidInput("nothing to change", "give at least one of --title, --body, --next, --verify")

    def body() -> CardView:
        now = clock.now()
        card = reap_card(card_row(card_id))
        if card.status in ("done", "cancelled"):
            raise refused_move(
                card,
                card.status,
                f"{ids.fmt(ids.CARD, card.id)} is {card.status}: its record stays as it ended",
                "add a new card instead",
            )
        new = {k: (v if v != "" or k in ("title", "body") else None) for k, v in changes.items()}
        for key, value in new.items():
            setattr(card, EDITABLE[key], value)
        touch(card, now)
        events.emit(actor, "card_edited", card.id, **new)
        card.save()
        return card_view(card)

    return store.run(body)


def window_card(store: Store, card_id: int, data: dict, actor: str | keys.Person) -> CardView:
    """A person gives a card a rolling window (``data``: ``every`` seconds and at
    least one of ``tokens``, ``usd``, ``turns``; or ``clear``). The signed event
    carries the resulting window, which the kernel holds the card to
    (``quota.enforce_signed_window``). A card paused by its window is settled
    at once: resumed when the new window has room, or paused until it refills."""
    if not hasattr(actor, "sign"):
        raise Forbidden("only a person can set a card's window", "a person runs `loopx card window` with their key")
    if data.get("clear"):
        window = dict.fromkeys(quota.WINDOW_FIELDS)
    else:
        if not data.get("every") or not any(data.get(k) is not None for k in ("tokens", "usd", "turns")):
            raise InvalidInput(
                "a window is a length and at least one limit",
                "e.g. `loopx card window LX-3 --every 5h --tokens 2000000` (or --usd X, --turns N; --clear removes it)",
            )
        window = {
            "window_seconds": data["every"],
            "window_tokens": data.get("tokens"),
            "window_usd": data.get("usd"),
            "window_turns": data.get("turns"),
        }

    def body() -> CardView:
        now = clock.now()
        card = reap_card(card_row(card_id))
        for field, value in window.items():
            setattr(card, field, value)
        resumed = None
        if card.status == "paused" and card.paused_reason in ("window", "window_unverified"):
            resumed = quota.settle(card, now)
        elif card.status in quota.PAUSES_ON_CHARGE:
            quota.hold(card)  # a window already spent pauses the card now
        touch(card, now)
        card.window_seq = events.emit(actor, "window_set", card.id, resumed=resumed, **window)
        card.save()
        return card_view(card)

    return store.run(body)


def _reap_if_due(store: Store) -> None:
    if reaper.has_due():
        store.run(reaper.reap_due)


def _cards_matching(status: str | None, owner: str | None, after: int = 0, limit: int | None = None) -> list:
    conditions: list[tuple[str, tuple]] = [('"status" = ?', (status,))] if status else []
    if owner:
        conditions.append(('("lease_holder" = ? OR "assignee" = ? OR "handoff_to" = ?)', (owner, owner, owner)))
    return Card.page(after, conditions, limit)


def list_cards(store: Store, status: str | None = None, owner: str | None = None) -> list[CardView]:
    """Every matching card (the board and in-process callers; the CLI and MCP page with ``card_page``)."""
    _reap_if_due(store)
    with store.read():
        return card_views(_cards_matching(status, owner))


def card_page(
    store: Store, status: str | None = None, owner: str | None = None, *, limit: int, after: int = 0
) -> tuple[list[CardView], int | None]:
    """Up to ``limit`` matching cards with ids above ``after``, in id order, and
    the id to pass as ``after`` for the next page (None: this is the last).
    A keyset cursor: a page costs the same at 100 cards and at 50,000."""
    _reap_if_due(store)
    with store.read():
        rows = _cards_matching(status, owner, after, limit + 1)
        more = len(rows) > limit
        rows = rows[:limit]
        return card_views(rows), (rows[-1].id if more else None)


def show_card(store: Store, card_id: int) -> CardView:
    _reap_if_due(store)
    with store.read():
        return card_view(card_row(card_id))


USAGE_TURNS = 20  # the latest turns `card show` and the board list; the agents' sums cover every one
KINDS = (
    "input",
    "cache_write",
    "cache_read",
    "output",
    "unsplit",
)  # tokens by the kind a price names; "unsplit": a total reported with no split


def usage_of(store: Store, card_id: int) -> dict:
    """Where a card's token and dollar figures come from: each turn's usage as
    the runtime reported it (a charge measured by a hook or a runner, a
    writeback's own figures) and the sum per agent, tokens by kind and dollars
    at the person's prices; the sums add up to the card's quota (``used``).
    ``card show`` and the board's Usage tab both show this."""
    with store.read():
        card_row(card_id)
        return _usage(card_id)


def kinds_of(tokens: int, tokens_in: int, tokens_out: int, extra: dict) -> dict:
    """A turn's tokens by kind: a charge's ``parts`` (by price kind, as the
    transcript reported them), else its in/out split, else one unsplit total."""
    parts = extra.get("parts") if isinstance(extra, dict) else None
    if isinstance(parts, dict) and parts:
        out = {k: int(parts.get(k) or 0) for k in KINDS}
    else:
        out = dict.fromkeys(KINDS, 0)
        out["input"], out["output"] = tokens_in, tokens_out
    out["unsplit"] = max(0, tokens - sum(v for k, v in out.items() if k != "unsplit"))
    return out


def _usage(card_id: int) -> dict:
    import json

    rows = records.rows(
        'SELECT "agent", "turn_id", "source", "tokens", "tokens_in", "tokens_out", "usd", "created_at", "extra" FROM "evidence" '
        'WHERE "card_id" = ? AND ("tokens" > 0 OR "usd" > 0) ORDER BY "id"',
        (card_id,),
    )
    agents: dict[str, dict] = {}
    turns = []
    for agent, turn_id, source, tokens, tokens_in, tokens_out, usd, at, extra in rows:
        tokens, tokens_in, tokens_out = tokens or 0, tokens_in or 0, tokens_out or 0
        try:
            extra = json.loads(extra) if extra else {}
        except ValueError:
            extra = {}
        kinds = kinds_of(tokens, tokens_in, tokens_out, extra)
        mine = agents.setdefault(
            agent,
            {
                "agent": agent,
                "turns": 0,
                "tokens": 0,
                "tokens_in": 0,
                "tokens_out": 0,
                "usd": 0.0,
                "kinds": dict.fromkeys(KINDS, 0),
            },
        )
        mine["turns"] += 1
        for key, n in (("tokens", tokens), ("tokens_in", tokens_in), ("tokens_out", tokens_out)):
            mine[key] += n
        for kind, n in kinds.items():
            mine["kinds"][kind] += n
        mine["usd"] = round(mine["usd"] + (usd or 0.0), 6)
        subagent = isinstance(extra.get("session"), str) and "/subagents/" in extra["session"]
        turns.append(
            {
                "agent": agent,
                "turn_id": turn_id,
                "source": source,
                "subagent": subagent,
                "tokens": tokens,
                "tokens_in": tokens_in,
                "tokens_out": tokens_out,
                "kinds": kinds,
                "usd": usd or 0.0,
                "at": clock.iso(at),
            }
        )
    return {
        "agents": list(agents.values()),
        "turns": turns[-USAGE_TURNS:],
        "turns_left_out": max(0, len(turns) - USAGE_TURNS),
    }


def card_detail(
    store: Store, card_id: int, *, event_limit: int = 200, evidence_limit: int = 500, reap: bool = True
) -> CardDetail:
    """``reap=False``: a pure read (the board reaps in its own worker, never on a read)."""
    if reap:
        _reap_if_due(store)
    with store.read():
        card = card_row(card_id)
        evidence = Evidence.where('WHERE "card_id" = ? ORDER BY "id" DESC LIMIT ?', (card_id, evidence_limit))
        of_card = ('WHERE "card_id" = ? ORDER BY "id"', (card_id,))
        return CardDetail(
            card=card_view(card),
            evidence=tuple(reversed([evidence_view(e) for e in evidence])),
            observed=tuple(observed_view(o) for o in Observed.where(*of_card)),
            gates=tuple(
                checked_view(store, g) for g in Gate.where(*of_card)
            ),  # an answer no signature backs reads as pending
            handoffs=tuple(handoff_view(h) for h in Handoff.where(*of_card)),
            events=tuple(events.latest(card_id, event_limit)) if event_limit else (),
            usage=_usage(card_id),
        )
