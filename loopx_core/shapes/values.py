"""Plain frozen values that operators return and every surface renders.

Named tuples rather than frozen dataclasses: the same immutability, a tenth of
the class-creation cost in a cold agent process. Declared like
``typing.NamedTuple`` but built by ``Value`` from ``collections.namedtuple``:
typing's builds a ``ForwardRef`` (compiling its text) for every annotated
field, which cost a cold agent process ~3 ms for these fifteen classes.

Nothing here touches the database: the TUI, the CLI and the adapters can hold
these as long as they like. ``to_json`` gives the shapes of DESIGN §6."""

from __future__ import annotations

from collections import namedtuple

from ..rules import ids
from ..rules.clock import iso

TYPE_CHECKING = False  # (annotations only: typing is not imported on the cold path; checkers read this as typing's)
if TYPE_CHECKING:
    from typing import Any


class _ValueType(type):
    """``class X(Value): field: kind = default`` makes X a subclass of
    ``namedtuple("X", fields, defaults=…)`` with the body's methods (what
    ``typing.NamedTuple`` makes, without checking the annotations)."""

    def __new__(mcls, name: str, bases: tuple[type, ...], ns: dict[str, Any]) -> type:  # (a class body: any values)
        if not bases:
            return super().__new__(mcls, name, bases, ns)
        fields = list(ns.get("__annotations__", {}))
        defaults = [ns.pop(f) for f in fields if f in ns]
        # (built from the body: checkers read the typing.NamedTuple twins below instead)
        base = namedtuple(name, fields, defaults=defaults or None, module=ns.get("__module__"))  # type: ignore[misc]
        ns.setdefault("__slots__", ())
        return type(name, (base,), ns)


class Value(metaclass=_ValueType):
    """The base of every value below (never instantiated itself)."""


if TYPE_CHECKING:  # checkers see what the classes below are: typing's named tuples
    from typing import NamedTuple
else:
    NamedTuple = Value  # (the classes below read as they always did)


class Lease(NamedTuple):
    holder: str
    token: int | None  # (set while a card is held: the lease row has it)
    expires_at: float | None  # None while the card waits on a human or a monitor

    def to_json(self) -> dict:
        return {"holder": self.holder, "token": self.token, "expires_at": iso(self.expires_at)}


class Limit(NamedTuple):
    used: float
    limit: float | None

    @property
    def fraction(self) -> float | None:
        if self.limit is None:
            return None
        return 1.0 if self.limit <= 0 else min(1.0, self.used / self.limit)

    def to_json(self) -> dict:
        return {"used": self.used, "limit": self.limit}


class Quota(NamedTuple):
    turns: Limit
    tokens: Limit
    usd: Limit

    @property
    def fraction(self) -> float | None:
        """The most-spent limit, 0..1, or None when the card has no limits."""
        parts = [p.fraction for p in (self.turns, self.tokens, self.usd) if p.fraction is not None]
        return max(parts) if parts else None

    def to_json(self) -> dict:
        return {"turns": self.turns.to_json(), "tokens": self.tokens.to_json(), "usd": self.usd.to_json()}


class Window(NamedTuple):
    """A rolling quota window (quota.py): limits (None: not limited) over the last ``seconds``."""

    seconds: float
    tokens: int | None = None
    usd: float | None = None
    turns: int | None = None

    def to_json(self) -> dict:
        return {"seconds": self.seconds, "tokens": self.tokens, "usd": self.usd, "turns": self.turns}


class Todo(NamedTuple):
    id: int
    text: str
    done: bool

    def to_json(self) -> dict:
        return {"id": self.id, "text": self.text, "done": self.done}


def shown_reasons(status: str, paused_reason: str | None, blocked_reason: str | None) -> tuple[str | None, str | None]:
    """A card's reasons as views show them: each only while the card is in that status."""
    return (paused_reason if status == "paused" else None), (blocked_reason if status == "blocked" else None)


class CardView(NamedTuple):
    id: int
    title: str
    status: str
    owner: str | None
    assignee: str | None
    needs: tuple[str, ...]
    priority: int
    next_action: str | None
    todos: tuple[Todo, ...]
    quota: Quota
    lease: Lease | None
    version: int
    paused_reason: str | None
    blocked_reason: str | None
    after: tuple[int, ...]
    evidence_count: int
    pending_gate: int | None
    body: str = ""
    verify: str | None = None
    monitor_due: float | None = None
    handoff_to: str | None = None
    created_at: float = 0.0
    updated_at: float = 0.0
    done_at: float | None = None
    unverified_evidence: int = 0  # evidence with no verifiable writer (inbox documents)
    window: Window | None = None  # a person's rolling window on this card (v4)
    wake_at: float | None = None  # paused by its window: when it resumes by itself

    @property
    def key(self) -> str:
        return ids.key(ids.CARD, self.id)

    @property
    def open_todos(self) -> tuple[Todo, ...]:
        return tuple(t for t in self.todos if not t.done)

    def to_json(self) -> dict:
        return {
            "id": self.key,
            "title": self.title,
            "status": self.status,
            "owner": self.owner,
            "assignee": self.assignee,
            "needs": list(self.needs),
            "priority": self.priority,
            "next": self.next_action,
            "todos": [t.to_json() for t in self.todos],
            "quota": self.quota.to_json(),
            "lease": self.lease.to_json() if self.lease else None,
            "version": self.version,
            "paused_reason": self.paused_reason,
            "blocked_reason": self.blocked_reason,
            "after": [ids.fmt(ids.CARD, a) for a in self.after],
            "evidence_count": self.evidence_count,
            "unverified_evidence": self.unverified_evidence,
            "pending_gate": ids.fmt(ids.GATE, self.pending_gate),
            "body": self.body,
            "verify": self.verify,
            "monitor_due": iso(self.monitor_due),
            "handoff_to": self.handoff_to,
            "created_at": iso(self.created_at),
            "updated_at": iso(self.updated_at),
            "done_at": iso(self.done_at),
            "window": self.window.to_json() if self.window else None,
            "wake_at": iso(self.wake_at),
        }

    def to_row(self) -> dict:
        """The card as one row of a list: flat, a few hundred bytes (``--full``: ``to_json``)."""
        return {
            "id": self.key,
            "title": self.title,
            "status": self.status,
            "owner": self.owner,
            "priority": self.priority,
            "pending_gate": ids.fmt(ids.GATE, self.pending_gate),
            "paused_reason": self.paused_reason,
            "blocked_reason": self.blocked_reason,
            "version": self.version,
            "updated_at": iso(self.updated_at),
        }


class GateView(NamedTuple):
    id: int
    card: int
    agent: str
    kind: str
    question: str
    scope: str | None
    options: tuple[str, ...]
    status: str
    answer: str | None
    note: str | None
    answered_by: str | None
    deadline: float | None
    created_at: float
    answered_at: float | None
    forged: str | None = None  # the row says answered, but no person's signed decision does

    @property
    def key(self) -> str:
        return ids.key(ids.GATE, self.id)

    @property
    def choice(self) -> str | None:
        """The option the person chose in approving it (None: none)."""
        return self.answer if self.status == "approved" and self.answer in self.options else None

    @property
    def text(self) -> str | None:
        """The person's own words in approving it (None: none)."""
        plain = self.answer in (None, "approved") or self.answer in self.options
        return None if self.status != "approved" or plain else self.answer

    def unbacked(self, why: str) -> GateView:
        """The gate as its people decided it when no signature backs its approval: pending."""
        return self._replace(status="pending", answer=None, answered_by=None, answered_at=None, forged=why)

    def to_json(self) -> dict:
        out = {
            "id": self.key,
            "card": ids.fmt(ids.CARD, self.card),
            "agent": self.agent,
            "kind": self.kind,
            "question": self.question,
            "scope": self.scope,
            "options": list(self.options),
            "status": self.status,
            "answer": self.answer,
            "choice": self.choice,
            "text": self.text,
            "note": self.note,
            "answered_by": self.answered_by,
            "deadline": iso(self.deadline),
            "created_at": iso(self.created_at),
            "answered_at": iso(self.answered_at),
        }
        if self.forged:
            out["forged"] = self.forged
        return out


class Artifact(NamedTuple):
    path: str
    size: int | None
    sha256: str | None
    missing: bool = False
    too_large: bool = False  # over rules.artifacts.HASH_MAX: its size only, never read

    def to_json(self) -> dict:
        out = {"path": self.path, "size": self.size, "sha256": self.sha256}
        if self.missing:
            out["missing"] = True
        if self.too_large:
            out["too_large"] = True
        return out


class EvidenceView(NamedTuple):
    id: int
    card: int
    agent: str
    turn_id: str | None
    summary: str
    artifacts: tuple[Artifact, ...]
    next_action: str | None
    todos_added: tuple[str, ...]
    todos_done: tuple[int, ...]
    tokens_in: int
    tokens_out: int
    tokens: int
    usd: float
    source: str
    created_at: float
    extra: dict | None = None
    unverified: bool = False  # no verifiable writer: ``agent`` is what the document claims

    def to_json(self) -> dict:
        out = {
            "id": ids.fmt(ids.EVIDENCE, self.id),
            "card": ids.fmt(ids.CARD, self.card),
            "agent": self.agent,
            "turn_id": self.turn_id,
            "summary": self.summary,
            "artifacts": [a.to_json() for a in self.artifacts],
            "next": self.next_action,
            "todos_added": list(self.todos_added),
            "todos_done": list(self.todos_done),
            "usage": {
                "tokens_in": self.tokens_in,
                "tokens_out": self.tokens_out,
                "tokens": self.tokens,
                "usd": self.usd,
            },
            "source": self.source,
            "unverified": self.unverified,
            "created_at": iso(self.created_at),
        }
        if self.extra:
            out["extra"] = self.extra
        return out


class ObservedView(NamedTuple):
    id: int
    card: int
    agent: str
    path: str
    size: int | None
    sha256: str | None
    created_at: float

    def to_json(self) -> dict:
        return {
            "card": ids.fmt(ids.CARD, self.card),
            "agent": self.agent,
            "path": self.path,
            "size": self.size,
            "sha256": self.sha256,
            "created_at": iso(self.created_at),
        }


class HandoffView(NamedTuple):
    id: int
    card: int
    from_agent: str | None
    to_agent: str
    packet: dict
    digest: str
    created_by: str
    created_at: float
    accepted_at: float | None
    accepted_digest: str | None

    @property
    def key(self) -> str:
        return ids.key(ids.HANDOFF, self.id)

    def to_json(self) -> dict:
        return {
            "id": self.key,
            "card": ids.fmt(ids.CARD, self.card),
            "from": self.from_agent,
            "to": self.to_agent,
            "packet": self.packet,
            "digest": self.digest,
            "created_by": self.created_by,
            "created_at": iso(self.created_at),
            "accepted_at": iso(self.accepted_at),
            "accepted_digest": self.accepted_digest,
        }


class AgentView(NamedTuple):
    id: str
    runtime: str | None
    capabilities: tuple[str, ...]
    watch: tuple[str, ...]
    token_limit: int | None
    window_seconds: float | None
    created_at: float
    window_usd: float | None = None
    window_turns: int | None = None

    @property
    def window(self) -> Window | None:
        if not self.window_seconds or (
            self.token_limit is None and self.window_usd is None and self.window_turns is None
        ):
            return None
        return Window(self.window_seconds, self.token_limit, self.window_usd, self.window_turns)

    def to_json(self) -> dict:
        window = self.window
        return {
            "id": self.id,
            "runtime": self.runtime,
            "capabilities": list(self.capabilities),
            "watch": list(self.watch),
            "token_window": None
            if self.token_limit is None
            else {"tokens": self.token_limit, "seconds": self.window_seconds},
            "window": window.to_json() if window else None,
            "created_at": iso(self.created_at),
        }


class EventView(NamedTuple):
    seq: int
    at: float
    actor: str
    card: int | None
    kind: str
    data: dict
    op_id: str | None = None
    signed: bool = False  # carries a person's signature (verified by `loopx verify`, not here)

    def to_json(self) -> dict:
        return {
            "seq": self.seq,
            "at": iso(self.at),
            "actor": self.actor,
            "card": ids.fmt(ids.CARD, self.card),
            "kind": self.kind,
            "data": self.data,
            "op_id": self.op_id,
            "signed": self.signed,
        }


class NextResult(NamedTuple):
    action: str  # work | wait | accept | paused | idle
    card: CardView | None = None
    gate: GateView | None = None
    handoff: HandoffView | None = None
    wake_at: float | None = None
    reason: str | None = None
    claimed: bool = False

    def to_json(self) -> dict:
        return {
            "action": self.action,
            "card": self.card.to_json() if self.card else None,
            "lease": self.card.lease.to_json() if self.card and self.card.lease else None,
            "gate": self.gate.to_json() if self.gate else None,
            "handoff": self.handoff.to_json() if self.handoff else None,
            "wake_at": iso(self.wake_at),
            "reason": self.reason,
            "claimed": self.claimed,
        }


class CardDetail(NamedTuple):
    """Everything the drill-down shows about one card."""

    card: CardView
    evidence: tuple[EvidenceView, ...]
    observed: tuple[ObservedView, ...]
    gates: tuple[GateView, ...]
    handoffs: tuple[HandoffView, ...]
    events: tuple[EventView, ...] = ()
    usage: dict | None = None  # ``ops.cards.usage_of``'s figures: per agent, per turn (the board's Usage tab)


class WorkspaceView(NamedTuple):
    """A card's workspace (issue #26): its git worktree, branch and last recorded code state."""

    card: int
    path: str
    branch: str
    base: str | None
    base_commit: str
    state: str  # open | archived | removed
    head: str | None
    wip: str | None
    archive_ref: str | None
    opened_at: float
    updated_at: float
    checkout: str | None = None  # the team board's checkout that holds it (None: the board's one project folder)

    def to_json(self) -> dict:
        return {
            "card": ids.fmt(ids.CARD, self.card),
            "path": self.path,
            "branch": self.branch,
            "base": self.base,
            "base_commit": self.base_commit,
            "state": self.state,
            "head": self.head,
            "wip": self.wip,
            "archive_ref": self.archive_ref,
            "opened_at": iso(self.opened_at),
            "updated_at": iso(self.updated_at),
            "checkout": self.checkout,
        }
