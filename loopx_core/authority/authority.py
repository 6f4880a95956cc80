"""Scopes, capabilities, grants and approved gates (DESIGN §5 "Authority").

Each is honoured only when a person's signed decision says so (SECURITY.md):
an agent's scopes come from the signed event that registered it, a grant from
the signed event that created it, a gate's approval from the person's signed
answer (or, for an approval a capability or grant gave at once, from that
capability or grant, checked again). A row edited in SQL approves nothing.

Plain SQL through a ``query(sql, params)`` function and the standard library
(plus ``cryptography`` when a signature is checked), so the PreToolUse hook
runs the very same rules over ``sqlite3`` without the ORM.
"""

from __future__ import annotations

from ..rules.decisions import signed_answer
from ..rules.scopes import covers
from . import trust

TYPE_CHECKING = False  # (annotations only: the hook imports this cold; checkers read this as typing's)
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable
    from typing import Protocol

    from .chain import Query
    from .trust import BoardReader, EventRow, Trust

    class ApprovedGate(Protocol):
        """What the approval check reads of a gate row (the kernel's or the plain reader's)."""

        @property
        def id(self) -> int: ...
        @property
        def card_id(self) -> int: ...
        @property
        def agent(self) -> str: ...
        @property
        def scope(self) -> str | None: ...
        @property
        def status(self) -> str: ...
        @property
        def answer(self) -> str | None: ...
        @property
        def answered_by(self) -> str | None: ...
        @property
        def answer_seq(self) -> int | None: ...
        @property
        def lease_token(self) -> int | None: ...


AGENT_DECISIONS = ("agent_added", "agent_updated")


def has_capability(capabilities: Iterable[str] | None, scope: str) -> bool:
    return any(covers(c, scope) for c in capabilities or ())


class Authority:
    """Who may do what on one board, as its people signed it."""

    def __init__(self, query: Query, people: Trust | Callable[[], Trust]):
        self.query = query
        self._people = people  # a trust.Trust, or a function that loads one

    @classmethod
    def of(cls, store: BoardReader) -> Authority:
        return cls(store.query, store.trust)

    @property
    def people(self) -> Trust:
        if callable(self._people):
            self._people = self._people()
        return self._people

    def _claimed(self, agent: str, scope: str | None) -> EventRow | None:
        """The event that registered ``agent`` if it claims ``scope`` (any scope
        when None), unverified: a signature is checked only when it would grant."""
        rows = self.query("SELECT decided_seq FROM agent WHERE id = ?", (agent,))
        if not rows or rows[0][0] is None:
            return None
        row = trust.event_row(self.query, rows[0][0])
        if row is None or row.kind not in AGENT_DECISIONS:
            return None
        data = row.payload()
        if data.get("agent") != agent or (scope is not None and not has_capability(data.get("capabilities"), scope)):
            return None
        return row

    def capabilities(self, agent: str) -> list[str]:
        """The scopes a person signed for ``agent`` ([] when unsigned or altered)."""
        row = self._claimed(agent, None)
        if row is None or self.people.check(row) is not None:
            return []
        return list(row.payload().get("capabilities") or [])

    def holds(self, agent: str, scope: str) -> bool:
        """``agent`` holds ``scope`` as a capability a person signed."""
        row = self._claimed(agent, scope)
        return row is not None and self.people.check(row) is None

    def grant_for(self, scope: str, agent: str, card: int | None, now: float) -> int | None:
        """A signed standing grant covering ``scope`` for this agent and card."""
        rows = self.query(
            'SELECT id, scope, agent, card, expires_at, decided_seq FROM "grant" WHERE (agent IS NULL OR agent = ?) AND (card IS NULL OR card = ?) ORDER BY id',
            (agent, card if card is not None else -1),
        )
        for gid, granted, g_agent, g_card, expires, seq in rows:
            if not covers(granted, scope):
                continue
            data = self.people.decision(self.query, seq, ("grant_created",))
            if data is None or [
                data.get("grant"),
                data.get("scope"),
                data.get("agent"),
                data.get("card"),
                data.get("expires_at"),
            ] != [gid, granted, g_agent, g_card, expires]:
                continue
            if expires is None or expires > now:
                return gid
        return None

    def approval_holds(
        self,
        gate_id: int,
        card: int,
        agent: str,
        scope: str | None,
        answered_by: str | None,
        answer_seq: int | None,
        lease_token: int | None,
        now: float,
        answer: str | None = "approved",
    ) -> bool:
        """Is this gate's "approved" a real approval? (a person's signed answer,
        or a capability/grant that still covers its scope). A person's answer
        holds only with the option or words they signed (``answer``: the row's)."""
        by = answered_by or ""
        if by.startswith("human:"):
            row = self.people.decision_row(self.query, answer_seq, ("gate_answered",))
            if row is None or row.card != card:
                return False
            data = row.payload()
            return (
                data.get("gate") == f"G-{gate_id}"
                and data.get("answer") == "approved"
                and data.get("scope") == scope
                and data.get("agent") == agent
                and data.get("lease_token") == lease_token
                and signed_answer(data) == answer
            )
        if by.startswith("capability:") and scope:
            return by == f"capability:{agent}" and self.holds(agent, scope)
        if by.startswith("grant:") and scope and by[6:].isdigit():
            return self.grant_for(scope, agent, card, now) is not None
        return False

    def gate_in_lease(self, scope: str, card: int, lease_token: int | None, now: float) -> int | None:
        """An approved gate covers its scope on that card for the rest of the lease."""
        if lease_token is None:
            return None
        rows = self.query(
            "SELECT id, agent, answered_by, answer_seq, answer FROM gate WHERE card_id = ? AND scope = ? AND status = 'approved' AND lease_token = ? ORDER BY id",
            (card, scope, lease_token),
        )
        for gid, agent, by, seq, answer in rows:
            if self.approval_holds(gid, card, agent, scope, by, seq, lease_token, now, answer):
                return gid
        return None

    def allowed(self, scope: str, agent: str, card: int | None, lease_token: int | None, now: float) -> str | None:
        """Who allows ``scope`` right now (``capability``, ``grant:N``, ``gate:G-N``) or None."""
        if self.holds(agent, scope):
            return "capability"
        grant = self.grant_for(scope, agent, card, now)
        if grant is not None:
            return f"grant:{grant}"
        if card is not None:
            gate = self.gate_in_lease(scope, card, lease_token, now)
            if gate is not None:
                return f"gate:G-{gate}"
        return None


def forged_approval(rules: Authority, gate: ApprovedGate, now: float) -> str | None:
    """Why ``gate``'s recorded approval is not real (None: it is, or it is not
    approved). ``gate``: a row with the gate table's columns (the kernel's model
    or the plain reader's tuple)."""
    if gate.status != "approved":
        return None
    if rules.approval_holds(
        gate.id,
        gate.card_id,
        gate.agent,
        gate.scope,
        gate.answered_by,
        gate.answer_seq,
        gate.lease_token,
        now,
        gate.answer,
    ):
        return None
    return f"recorded as approved by {gate.answered_by or 'nobody'}, but no valid signed decision of a person says so"
