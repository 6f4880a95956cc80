"""The board's rows as the event log says they must be (issue #24 §3).

The board is a projection of the chained events: replaying them in order gives
each card's status, assignee, lease (holder and fencing token) and used
turns/tokens/dollars, each gate's status, each grant and each runner's
control. ``replay(query)`` folds the whole log once; ``differences`` names
every row that says something else (``loopx verify`` reports them, exit 11).

What a row holds that no event carries is not projected: a lease's expiry
(renewed by writebacks without an event), todos, next action, counters of
evidence. Cards created before the board was chained (an older LoopX, before
``signed_from``) are not replayed: their first events may be missing.

The per-turn operators cannot replay the log on every call: they ask one card
its newest lease event and its newest charge (``lease_in_log``,
``used_in_log``), the same rules the full replay folds. Standard library only,
plain SQL through ``query(sql, params)``: the operators, ``verify`` and
whoever keeps a witness of the head call the same functions.
"""

from __future__ import annotations

import json
from collections import (
    namedtuple,  # (not typing: the PreToolUse hook imports this module)
)

from ..rules.decisions import CONTROL_OF_KIND, signed_answer
from ..rules.lifecycle import status_after

TYPE_CHECKING = False  # (annotations only: typing is not imported on the cold path; checkers read this as typing's)
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Any

    from .chain import Query

# Events that give a card's lease to an agent (with its fencing token), and
# those that end it. ``gate_answered`` ends it only when it rejects.
LEASE_GRANTS = ("claimed", "handoff_accepted")
LEASE_ENDS = (
    "released",
    "lease_expired",
    "done",
    "card_moved",
    "card_unassigned",
    "handoff_created",
    "gate_expired",
    "gate_answered",
    "merged",
    "merge_conflict",
)
# Events that charge a card's budget; each carries the totals after it (``used``).
CHARGES = ("evidence_added", "usage_charged")
GATE_KINDS = ("gate_asked", "gate_answered", "gate_withdrawn", "gate_expired")
OFF_STATUSES = ("done", "cancelled")  # a gate that says no leaves these as they are
MERGES = ("merged", "merge_conflict")  # a person's merge of a card's branch (ops/merges)


def _card_no(text: object) -> int | None:
    try:
        return int(str(text).split("-", 1)[1])
    except (IndexError, ValueError):
        return None


def _agent_of(actor: str) -> str | None:
    return actor[6:] if actor.startswith("agent:") else None


Lease = namedtuple("Lease", "holder token")


def lease_after(kind: str, actor: str, data: dict) -> Lease | None:
    """The lease an event leaves on its card, or None when it does not touch it."""
    if kind == "claimed":
        return Lease(data.get("agent") or _agent_of(actor), data.get("token"))
    if kind == "handoff_accepted":
        return Lease(_agent_of(actor), data.get("token"))
    if kind == "gate_answered" and data.get("answer") != "rejected":
        return None
    if kind in LEASE_ENDS:
        return Lease(None, None)
    return None


def used_after(data: dict) -> tuple[int, int, float] | None:
    """The totals a charge event recorded (None: an older event without them)."""
    used = data.get("used")
    if not isinstance(used, dict):
        return None
    return int(used.get("turns") or 0), int(used.get("tokens") or 0), round(float(used.get("usd") or 0.0), 6)


def charge_of(kind: str, data: dict) -> tuple[int, int, float]:
    """What a charge event adds to its card: (turns, tokens, dollars). A
    writeback counts a turn; usage the hook measured does not; evidence nobody
    can prove charges nothing."""
    if kind == "evidence_added":
        if data.get("unverified"):
            return 0, 0, 0.0
        return 1, int(data.get("tokens") or 0), float(data.get("usd") or 0.0)
    if kind == "usage_charged":
        return 0, int(data.get("tokens") or 0), float(data.get("usd") or 0.0)
    return 0, 0, 0.0


def _newest(query: Query, card_id: int, kinds: tuple[str, ...]) -> Iterator[tuple[int, str, str, str | None]]:
    """The card's events of ``kinds``, newest first, a few at a time."""
    marks = ",".join("?" * len(kinds))
    before, batch = None, 8
    while True:
        bound = "" if before is None else " AND seq < ?"
        params = (card_id, *kinds) + (() if before is None else (before,))
        rows = query(
            f"SELECT seq, actor, kind, data FROM event WHERE card = ? AND kind IN ({marks}){bound} ORDER BY seq DESC LIMIT {batch}",
            params,
        )
        yield from rows
        if len(rows) < batch:
            return
        before, batch = rows[-1][0], batch * 4


def lease_in_log(query: Query, card_id: int) -> Lease:
    """The card's lease as its newest lease event left it."""
    for _, actor, kind, data in _newest(query, card_id, LEASE_GRANTS + LEASE_ENDS):
        lease = lease_after(kind, actor, json.loads(data) if data else {})
        if lease is not None:
            return lease
    return Lease(None, None)


def used_in_log(query: Query, card_id: int) -> tuple[int, int, float] | None:
    """The card's used turns, tokens and dollars as its newest charge recorded
    them (None: nothing was charged yet that recorded its totals)."""
    for _, _, _, data in _newest(query, card_id, CHARGES):
        return used_after(json.loads(data) if data else {})
    return None


# -- the whole log ------------------------------------------------------------------------


class CardState:
    __slots__ = ("status", "assignee", "holder", "token", "turns", "tokens", "usd", "after", "seq", "odd")

    def __init__(self, status: str | None, assignee: str | None, after: list[int], seq: int):
        self.status, self.assignee, self.after, self.seq = status, assignee, after, seq
        self.holder = self.token = None
        self.turns, self.tokens, self.usd = 0, 0, 0.0
        self.odd: list[tuple[int, str]] = []  # events whose own totals disagree with the replay


# cards: id -> CardState; gates: id -> [card, status, answered_by, answer];
# grants: id -> [scope, agent, card, expires_at]; runners: agent -> control;
# workspaces: card id -> [state, branch, head, checkout] (issue #26; the checkout: a team board's, v8).
Projection = namedtuple("Projection", "cards gates grants runners workspaces", defaults=(None,))
WORKSPACE_KINDS = ("workspace_opened", "code_state", "workspace_archived", "workspace_removed")
WORKSPACE_STATE = {"workspace_opened": "open", "workspace_archived": "archived", "workspace_removed": "removed"}


class Difference(namedtuple("Difference", "table id column row log seq", defaults=(None,))):
    """A row's column that says ``row`` where the log says ``log`` (``seq``: the event it is about, if one)."""

    __slots__ = ()

    @property
    def where(self) -> str:
        name = {"card": "card LX-", "gate": "gate G-", "workspace": "the workspace of LX-"}.get(self.table)
        return f"{name}{self.id}" if name else f"{self.table} {self.id}"

    def describe(self) -> str:
        return f"{self.table}.{self.column} is {self.row!r} in the row, but the log says {self.log!r}"


def _block(p: Projection, card: CardState) -> None:
    if card.status in OFF_STATUSES:
        return
    card.status, card.holder, card.token = "blocked", None, None


def _pending_on(p: Projection, card_id: int) -> bool:
    return any(g[0] == card_id and g[1] == "pending" for g in p.gates.values())


def _apply(p: Projection, seq: int, actor: str, card_id: int | None, kind: str, data: dict[str, Any]) -> None:
    if kind in CONTROL_OF_KIND and actor.startswith("human:"):
        p.runners[data.get("agent")] = CONTROL_OF_KIND[kind]
        return
    if kind == "grant_created" and actor.startswith("human:"):
        p.grants[data.get("grant")] = [data.get("scope"), data.get("agent"), data.get("card"), data.get("expires_at")]
    if card_id is None:
        return
    if kind == "card_added":
        after = [n for n in (_card_no(a) for a in data.get("after") or []) if n is not None]
        p.cards[card_id] = CardState(data.get("status"), data.get("owner"), after, seq)
        return
    card = p.cards.get(card_id)
    if card is None:
        return  # a card from before the log was kept (an older LoopX)
    if kind in WORKSPACE_KINDS:
        _workspace(p, card_id, kind, data)
        return
    if kind in CHARGES:  # most of a long log: they change the counters and nothing else
        _charge(card, seq, kind, data)
        return
    if kind in GATE_KINDS:
        _gate(p, card, card_id, actor, kind, data)
    lease = lease_after(kind, actor, data)
    if lease is not None:
        card.holder, card.token = lease
    status = _status_after(p, card, card_id, actor, kind, data)
    if status is not None:
        card.status = status
    if kind == "handoff_accepted" or kind == "done":
        card.assignee = _agent_of(actor)
    elif kind == "card_assigned":
        card.assignee = data.get("to")
    elif kind in MERGES and actor.startswith("human:"):
        card.assignee = data.get("agent")
    elif kind == "card_unassigned":
        card.assignee = None
    elif kind == "handoff_created" and actor.startswith("human:"):
        card.assignee = data.get("to")  # a person's reassign gives the card to the receiver at once


def _workspace(p: Projection, card_id: int, kind: str, data: dict) -> None:
    """A workspace's state, branch and HEAD as its events leave them (a code
    state that git failed to read changes nothing)."""
    ws = p.workspaces.setdefault(card_id, [None, None, None, None])
    if kind in WORKSPACE_STATE:
        ws[0] = WORKSPACE_STATE[kind]
    if kind == "workspace_opened":
        ws[1], ws[3] = data.get("branch"), data.get("checkout")
    if "head" in data and "error" not in data:
        ws[2] = data.get("head")


def _charge(card: CardState, seq: int, kind: str, data: dict) -> None:
    turns, tokens, usd = charge_of(kind, data)
    card.turns, card.tokens, card.usd = card.turns + turns, card.tokens + tokens, round(card.usd + usd, 6)
    used = data.get("used")
    if used is not None:
        said = used_after(data)
        if said != (card.turns, card.tokens, card.usd):
            card.odd.append(
                (
                    seq,
                    f"records totals {said}, but the charges before it add up to {(card.turns, card.tokens, card.usd)}",
                )
            )


def _gate(p: Projection, card: CardState, card_id: int, actor: str, kind: str, data: dict) -> None:
    gid = _card_no(data.get("gate"))
    if gid is None:
        return
    if kind == "gate_asked":
        p.gates[gid] = [card_id, "pending", None, None]
    elif kind == "gate_answered":
        p.gates[gid] = [card_id, data.get("answer"), actor, signed_answer(data)]
        if not actor.startswith("human:"):
            return  # approved at once by a capability or a grant: the card is unchanged
        if data.get("answer") == "rejected":
            _block(p, card)
        elif card.status == "waiting" and not _pending_on(p, card_id):
            card.status = "active"
    elif kind == "gate_expired":
        p.gates.setdefault(gid, [card_id, None, None, None])[1:] = ["expired", "system:deadline", "rejected"]
        _block(p, card)
    elif kind == "gate_withdrawn":
        p.gates.setdefault(gid, [card_id, None, None, None])[1:3] = ["withdrawn", "system"]


def _status_after(p: Projection, card: CardState, card_id: int, actor: str, kind: str, data: dict) -> str | None:
    """The status an event (other than a gate's) leaves its card in, or None:
    the lifecycle's table (``rules/lifecycle``, the one ``ops/lifecycle.move``
    checks), and its rules over the card's gates and dependencies."""
    if kind in MERGES:  # the person's merge of the card's branch: in, or back to its agent with the conflict
        return ("done" if kind == "merged" else "ready") if actor.startswith("human:") else None
    if kind == "handoff_accepted":
        return "waiting" if _pending_on(p, card_id) else "active"
    if kind == "card_unassigned":
        return "blocked" if any(getattr(p.cards.get(a), "status", "done") != "done" for a in card.after) else "ready"
    return status_after(kind, data)


# The kinds the fold reads (others leave every projected row as it was: their data is not even parsed).
FOLDED = frozenset(
    (
        "card_added",
        "grant_created",
        "card_assigned",
        "paused",
        "resumed",
        "monitoring",
        "monitor_due",
        "unblocked",
        "budget_raised",
        "window_set",
    )
    + LEASE_GRANTS
    + LEASE_ENDS
    + CHARGES
    + GATE_KINDS
    + tuple(CONTROL_OF_KIND)
    + WORKSPACE_KINDS
)


UNSCOPED = ("card_added", "grant_created")  # folded whether or not their card is replayed


class Replay:
    """The fold, an event at a time (``loopx verify`` feeds it from its own walk of the chain)."""

    def __init__(self) -> None:
        self.projection = Projection({}, {}, {}, {}, {})

    def add(self, seq: int, actor: str, card: int | None, kind: str, data_text: str | None) -> None:
        if kind not in FOLDED or (card is not None and kind not in UNSCOPED and card not in self.projection.cards):
            return  # (a card from before the log was kept: not replayed)
        _apply(self.projection, seq, actor, card, kind, json.loads(data_text) if data_text else {})

    def result(self, since: int = 0) -> Projection:
        """``since``: cards added before this seq are left out (history from before the log was kept)."""
        p = self.projection
        if since:
            for cid in [c for c, state in p.cards.items() if state.seq < since]:
                del p.cards[cid]
        return p


def replay(query: Query, since: int = 0) -> Projection:
    """Fold every event (in seq order) into the rows it leaves."""
    fold = Replay()
    last, batch = 0, 5000
    while True:
        rows = query(
            f"SELECT seq, actor, card, kind, data FROM event WHERE seq > ? ORDER BY seq LIMIT {batch}", (last,)
        )
        if not rows:
            break
        for seq, actor, card, kind, data in rows:
            last = seq
            fold.add(seq, actor, card, kind, data)
    return fold.result(since)


def differences(query: Query, p: Projection) -> list[Difference]:
    """Every row (card, gate, grant, runner) that says something the log does not.
    A gate of a card that is not replayed is not compared; nor is a grant row
    the log never created (the authority check names it: no signed decision)."""
    out: list[Difference] = []
    replayed = set(p.cards)
    for cid, status, assignee, holder, token, turns, tokens, usd in query(
        "SELECT id, status, assignee, lease_holder, lease_token, used_turns, used_tokens, used_usd FROM card ORDER BY id",
        (),
    ):
        card = p.cards.pop(cid, None)
        if card is None:
            continue
        for seq, what in card.odd:
            out.append(Difference("event", seq, "data", "used", what, seq))
        for column, row, log in (
            ("status", status, card.status),
            ("assignee", assignee, card.assignee),
            ("lease_holder", holder, card.holder),
            ("lease_token", token, card.token),
            ("used_turns", turns, card.turns),
            ("used_tokens", tokens, card.tokens),
        ):
            if row != log:
                out.append(Difference("card", cid, column, row, log))
        if abs((usd or 0.0) - card.usd) > 1e-6:
            out.append(Difference("card", cid, "used_usd", usd, card.usd))
    for cid in p.cards:
        out.append(Difference("card", cid, "id", None, "added"))  # the log added a card the table no longer has
    known = {}
    for gid, card, status, answered_by, answer in query(
        "SELECT id, card_id, status, answered_by, answer FROM gate ORDER BY id", ()
    ):
        known[gid] = True
        logged = p.gates.get(gid)
        if card not in replayed and (logged is None or logged[0] not in replayed):
            continue
        if logged is None:
            out.append(Difference("gate", gid, "id", status, None))
            continue
        columns = (
            ("card_id", card, logged[0]),
            ("status", status, logged[1]),
            ("answered_by", answered_by, logged[2]),
            ("answer", answer, logged[3]),
        )
        for column, row, log in columns:
            if row != log:
                out.append(Difference("gate", gid, column, row, log))
    for gid, logged in p.gates.items():
        if gid not in known and logged[0] in replayed:
            out.append(Difference("gate", gid, "id", None, "asked"))
    grants = {}
    for gid, scope, agent, card, expires in query(
        'SELECT id, scope, agent, card, expires_at FROM "grant" ORDER BY id', ()
    ):
        grants[gid] = [scope, agent, card, expires]
    for gid in sorted(p.grants, key=str):
        if grants.get(gid) != p.grants[gid]:
            out.append(Difference("grant", gid, "row", grants.get(gid), p.grants.get(gid)))
    for agent, control in query("SELECT agent, control FROM runner ORDER BY agent", ()):
        logged = p.runners.get(agent)
        if (control or "resume") != (logged or "resume"):
            out.append(Difference("runner", agent, "control", control, logged))
    out += _workspace_differences(query, p, replayed)
    return out


def _workspace_differences(query: Query, p: Projection, replayed: set) -> list[Difference]:
    out = []
    logged = dict(p.workspaces or {})
    for cid, state, branch, head, checkout in query(
        "SELECT card_id, state, branch, head, checkout FROM workspace ORDER BY card_id", ()
    ):
        if cid not in replayed:
            continue
        said = logged.pop(cid, None)
        if said is None:
            out.append(Difference("workspace", cid, "card_id", cid, None))
            continue
        for column, row, log in (
            ("state", state, said[0]),
            ("branch", branch, said[1]),
            ("head", head, said[2]),
            ("checkout", checkout, said[3]),
        ):
            if row != log:
                out.append(Difference("workspace", cid, column, row, log))
    for cid in logged:
        if cid in replayed:
            out.append(Difference("workspace", cid, "card_id", None, "opened"))
    return out
