"""A long loop at a glance: when each turn happened, how long each gate waited
for a person, when budgets paused the work, when cards changed hands, and what
it cost per hour — for one card or the whole board.

``read_trajectory`` is one read transaction that returns plain values;
``figures`` and ``buckets`` are pure functions over them (the board's timeline
screen plots them; nothing here knows about terminals)."""

from __future__ import annotations

import json
import statistics
from typing import NamedTuple

import peewee as pw

from ..store.models import Card, Event, Evidence, Gate
from .merges import SCOPE as MERGE_SCOPE

TYPE_CHECKING = False  # (annotations only: typing is not imported on the cold path; checkers read this as typing's)
if TYPE_CHECKING:
    from collections.abc import Iterable

    from ..store.base import Store

HOUR = 3600.0
DAY = 24 * HOUR

# Events that start or end an agent's working time on a card. A card whose
# branch a person merged finishes with `merged`, not `done` (#26); a conflict
# sends it back to ready.
_WORK_STARTS = frozenset({"claimed", "handoff_accepted", "monitor_due"})
_WORK_ENDS = frozenset(
    {
        "gate_asked",
        "paused",
        "released",
        "lease_expired",
        "done",
        "merged",
        "merge_conflict",
        "handoff_created",
        "card_moved",
        "card_unassigned",
        "monitoring",
        "gate_expired",
    }
)
_PAUSE_ENDS = frozenset(
    {"budget_raised", "card_moved", "card_unassigned", "done", "merged", "merge_conflict", "released", "lease_expired"}
)
_DATA_KINDS = frozenset({"gate_answered", "budget_raised", "paused", "handoff_created"})  # whose data the spans read
SPAN_KINDS = _WORK_STARTS | _WORK_ENDS | _PAUSE_ENDS | {"gate_answered", "card_added"}


class Turn(NamedTuple):
    at: float
    card: int
    agent: str
    tokens: int
    usd: float
    usage_only: bool  # a usage charge measured by a hook, not a turn the agent reported
    turns: int = 1  # turns in this entry: a whole board's are read summed per slice of time (``at`` its first)


class Span(NamedTuple):
    start: float
    end: float | None  # None: still open ("now")
    card: int
    label: str  # the gate's key and status, the pause's reason, the agent working


class Mark(NamedTuple):
    at: float
    card: int
    label: str


class Trajectory(NamedTuple):
    card: int | None  # None: the whole board
    start: float
    now: float
    end: float | None  # when the card was done (None: still going; always None for the board)
    turns: tuple[Turn, ...]
    gates: tuple[Span, ...]  # asked → answered (or now)
    pauses: tuple[Span, ...]  # paused → resumed (or now)
    work: tuple[Span, ...]  # an agent held the card and was not waiting
    handoffs: tuple[Mark, ...]
    human_answers: tuple[float, ...]  # seconds from ask to a person's answer, per answered gate


class Figures(NamedTuple):
    lifecycle_hours: float
    agent_hours: float
    gate_wait_hours: float
    paused_hours: float
    median_answer_seconds: float | None
    gates_answered: int
    turns: int
    turns_per_day: float | None  # None until the loop is a day old
    tokens: int
    usd: float


# A whole board with more evidence entries than this is read as sums per slice
# of time (a slice is 1/SLICES of the board's span): a plot is never wider.
SUM_OVER = 5000
SLICES = 2000


def _rows(store: Store, query: pw.Query) -> list[tuple]:
    """The rows as the driver returns them (no per-row field conversion)."""
    return list(store.db.execute(query).fetchall())


def read_trajectory(store: Store, card_id: int | None, now: float) -> Trajectory:
    """One read transaction: the rows a timeline needs (``card_id=None``: the board)."""
    with store.read():
        evidence = Evidence.select(
            Evidence.created_at, Evidence.card, Evidence.agent, Evidence.tokens, Evidence.usd, Evidence.source
        )
        gates = Gate.select(Gate.id, Gate.card, Gate.status, Gate.created_at, Gate.answered_at, Gate.answered_by)
        if card_id is not None:
            card_rows = _rows(
                store, Card.select(Card.id, Card.created_at, Card.done_at, Card.status).where(Card.id == card_id)
            )
            turn_rows = _rows(
                store, evidence.where(Evidence.card == card_id).order_by(Evidence.created_at, Evidence.id)
            )
            gates = gates.where(Gate.card == card_id)
            events = Event.select(Event.at, Event.card, Event.kind, Event.actor, Event.data).where(
                Event.card == card_id, Event.kind.in_(sorted(SPAN_KINDS))
            )
        else:
            # The board: when it began (not every card), its turns summed per
            # slice of time when there are many, and no "card_added" events
            # (the cards' first time says when the board began).
            card_rows = [(None, *_rows(store, Card.select(pw.fn.MIN(Card.created_at)))[0], None, None)]
            count, first, last = _rows(
                store,
                Evidence.select(
                    pw.fn.COUNT(Evidence.id), pw.fn.MIN(Evidence.created_at), pw.fn.MAX(Evidence.created_at)
                ),
            )[0]
            if count > SUM_OVER:
                width = max(1.0, (last - first) / SLICES)
                hook = Evidence.source == "hook"
                key = pw.Cast((Evidence.created_at - first) / width, "INTEGER")
                # (grouped by position: PostgreSQL will not match expressions with parameters)
                summed = (
                    Evidence.select(
                        pw.fn.MIN(Evidence.created_at),
                        pw.fn.SUM(Evidence.tokens),
                        pw.fn.SUM(Evidence.usd),
                        hook,
                        pw.fn.COUNT(Evidence.id),
                        key,
                    )
                    .group_by(pw.SQL("4"), pw.SQL("6"))
                    .order_by(pw.SQL("1"))
                )
                turn_rows = [
                    (at, None, "", tokens, usd, "hook" if by_hook else "", n)
                    for at, tokens, usd, by_hook, n, _ in _rows(store, summed)
                ]
            else:
                turn_rows = _rows(store, evidence.order_by(Evidence.created_at, Evidence.id))
            events = Event.select(Event.at, Event.card, Event.kind, Event.actor, Event.data).where(
                Event.kind.in_(sorted(SPAN_KINDS - {"card_added"}))
            )
        gate_rows = _rows(store, gates.order_by(Gate.id))
        event_rows = _rows(store, events.order_by(Event.seq))
    return build(card_id, now, card_rows, turn_rows, gate_rows, event_rows)


def _data(data: str | dict | None) -> dict:
    """An event's data: a dict, or JSON text as SQLite returns it."""
    if isinstance(data, str):
        return json.loads(data) if data else {}
    return data or {}


def build(
    card_id: int | None,
    now: float,
    card_rows: list[tuple],
    turn_rows: list[tuple],
    gate_rows: list[tuple],
    event_rows: list[tuple],
) -> Trajectory:
    """The trajectory from plain rows (tuples in the column order read above)."""
    turns = tuple(
        Turn(at, card, agent, int(tokens or 0), float(usd or 0.0), source == "hook", *n)
        for at, card, agent, tokens, usd, source, *n in turn_rows
    )
    gates, answers = [], []
    for gid, card, status, asked, answered, by in gate_rows:
        if answered is not None and answered <= asked:
            continue  # approved at once by a capability or a grant: nobody waited
        gates.append(Span(asked, answered, card, f"G-{gid} {status}"))
        if answered is not None and (by or "").startswith("human:"):
            answers.append(answered - asked)
    work, pauses, handoffs = [], [], []
    working: dict[int, tuple[float, str]] = {}
    paused: dict[int, tuple[float, str]] = {}
    for at, card, kind, actor, data in event_rows:
        data = _data(data) if kind in _DATA_KINDS else {}
        if kind in _WORK_ENDS and card in working:
            start, who = working.pop(card)
            work.append(Span(start, at, card, who))
        if kind in _PAUSE_ENDS and card in paused and (kind != "budget_raised" or data.get("resumed")):
            start, why = paused.pop(card)
            pauses.append(Span(start, at, card, why))
        approved = (
            kind == "gate_answered" and data.get("answer") == "approved" and data.get("scope") != MERGE_SCOPE
        )  # (a merge ends the work)
        if kind in _WORK_STARTS or approved or (kind == "budget_raised" and data.get("resumed") == "active"):
            working.setdefault(card, (at, actor.split(":", 1)[-1]))
        if kind == "paused":
            paused.setdefault(card, (at, str(data.get("reason") or "paused")))
        elif kind == "handoff_created":
            handoffs.append(Mark(at, card, f"→ {data.get('to', '?')}"))
    work += [Span(start, None, card, who) for card, (start, who) in working.items()]
    pauses += [Span(start, None, card, why) for card, (start, why) in paused.items()]
    starts = [row[1] for row in card_rows if row[1]] + [t.at for t in turns] + [row[0] for row in event_rows]
    start = min(starts) if starts else now
    end = None
    if card_id is not None and card_rows and card_rows[0][3] in ("done", "cancelled"):
        end = card_rows[0][2] or max([start] + [t.at for t in turns] + [row[0] for row in event_rows])
    return Trajectory(
        card_id,
        start,
        now,
        end,
        turns,
        tuple(gates),
        _in_order(pauses),
        _in_order(work),
        tuple(handoffs),
        tuple(answers),
    )


def _in_order(spans: list[Span]) -> tuple[Span, ...]:
    """By start, then end (a span still open last: None never meets a number)."""
    return tuple(sorted(spans, key=lambda s: (s.start, s.end is None, s.end or 0.0, s.card, s.label)))


def _hours(spans: Iterable[Span], until: float) -> float:
    return sum(max(0.0, min(s.end if s.end is not None else until, until) - s.start) for s in spans) / HOUR


def figures(t: Trajectory) -> Figures:
    until = t.end if t.end is not None else t.now
    lifecycle = max(0.0, until - t.start)
    reported = [x for x in t.turns if not x.usage_only]
    return Figures(
        lifecycle_hours=lifecycle / HOUR,
        agent_hours=_hours(t.work, until),
        gate_wait_hours=_hours(t.gates, until),
        paused_hours=_hours(t.pauses, until),
        median_answer_seconds=statistics.median(t.human_answers) if t.human_answers else None,
        gates_answered=len(t.human_answers),
        turns=sum(x.turns for x in reported),
        turns_per_day=sum(x.turns for x in reported) / (lifecycle / DAY) if lifecycle >= DAY else None,
        tokens=sum(x.tokens for x in t.turns),
        usd=round(sum(x.usd for x in t.turns), 6),
    )


class Buckets(NamedTuple):
    """The trajectory cut into ``n`` equal slices of time, for plotting at any size."""

    start: float
    width: float  # seconds per bucket
    turns: tuple[int, ...]
    waiting: tuple[bool, ...]  # a gate was pending during the slice
    paused: tuple[bool, ...]
    working: tuple[bool, ...]
    handoffs: tuple[int, ...]


def buckets(t: Trajectory, n: int) -> Buckets:
    n = max(1, n)
    until = t.end if t.end is not None else t.now
    width = max(1.0, (until - t.start) / n)

    def index(at: float) -> int:
        return min(n - 1, max(0, int((at - t.start) // width)))

    def covered(spans: Iterable[Span]) -> tuple[bool, ...]:
        out = [False] * n
        for s in spans:
            first, last = index(s.start), index(s.end if s.end is not None else until)
            for i in range(first, last + 1):
                out[i] = True
        return tuple(out)

    turns = [0] * n
    for x in t.turns:
        if not x.usage_only:
            turns[index(x.at)] += x.turns
    handoffs = [0] * n
    for m in t.handoffs:
        handoffs[index(m.at)] += 1
    return Buckets(t.start, width, tuple(turns), covered(t.gates), covered(t.pauses), covered(t.work), tuple(handoffs))


class Burn(NamedTuple):
    step: float  # seconds per bar: a minute for a short loop … a day for a long one
    hours: tuple[float, ...]  # each bar's start, in hours since the loop began
    tokens: tuple[int, ...]
    usd: tuple[float, ...]

    @property
    def per(self) -> str:
        for seconds, name in ((60, "minute"), (HOUR, "hour"), (DAY, "day")):
            if self.step == seconds:
                return name
        return f"{self.step / 60:g} minutes" if self.step < HOUR else f"{self.step / HOUR:g} hours"


STEPS = (60, 300, 600, 1800, HOUR, 3 * HOUR, 6 * HOUR, 12 * HOUR, DAY, 7 * DAY)


def burn(t: Trajectory, max_bars: int = 120) -> Burn:
    """Tokens and dollars per hour of the loop — per minute when it is short,
    per few hours or days when it is long: never more than ``max_bars`` bars."""
    until = t.end if t.end is not None else t.now
    span = max(1.0, until - t.start)
    step = next((s for s in STEPS if span / s <= max(1, max_bars)), STEPS[-1])
    bars = max(1, int(span // step) + 1)
    tokens, usd = [0] * bars, [0.0] * bars
    for x in t.turns:
        b = min(bars - 1, max(0, int((x.at - t.start) // step)))
        tokens[b] += x.tokens
        usd[b] += x.usd
    return Burn(
        float(step), tuple(b * step / HOUR for b in range(bars)), tuple(tokens), tuple(round(u, 6) for u in usd)
    )
