"""A gate's rows as its people decided them — the steps every operator
that opens a gate or waits on one shares (``gates``, ``claims``, ``done``,
``merges``): open a gate (the card waits), read one, and tell an approval a
person signed from a row edited to say "approved" (``forged``: it reads as
pending, ``holding_gate`` still holds the card on it). It imports no verb."""

from __future__ import annotations

from ..rules import clock, ids
from ..shapes.errors import NotFound
from ..shapes.values import GateView
from ..store import events
from ..store.records import Card, Gate
from ..store.rows import gate_view, touch
from .lifecycle import move

TYPE_CHECKING = False  # (annotations only: typing is not imported on the cold path; checkers read this as typing's)
if TYPE_CHECKING:
    from ..authority.authority import Authority
    from ..store.base import Store

RUNTIME = "runtime"  # the kind of a gate a runtime asked for its turn: no one waits on it once its runner stopped


def authority_of(store: Store) -> Authority:
    """Who may do what on this board (imported when a verb needs it: not every per-turn call does)."""
    from ..authority.authority import Authority

    return Authority.of(store)


def open_gate(
    card: Card,
    agent: str,
    question: str,
    scope: str | None,
    options: list[str],
    deadline: float | None,
    kind: str,
    now: float,
    extra: dict | None = None,
) -> tuple[Gate, bool]:
    """The pending gate for this question (reused on a retry) or a new one.
    Returns (gate, created). The card goes ``waiting`` while any gate is pending.
    ``extra``: more the ``gate_asked`` event records (a merge gate: branch, base, head)."""
    pending = """WHERE "card_id" = ? AND "status" = 'pending' AND """
    if scope:
        existing = Gate.first(pending + '"scope" = ? ORDER BY "id"', (card.id, scope))
    else:
        existing = Gate.first(pending + '"scope" IS NULL AND "question" = ? ORDER BY "id"', (card.id, question))
    if existing is not None:
        return existing, False
    gate = Gate.create(
        card_id=card.id,
        agent=agent,
        kind=kind,
        question=question,
        scope=scope,
        options=options,
        status="pending",
        deadline=(now + deadline) if deadline else None,
        lease_token=card.lease_token,
        created_at=now,
    )
    move(card, "waiting", "gate_asked")
    card.lease_expires = None  # a lease does not run out while a human decides
    card.progress_mark = True
    touch(card, now)
    events.emit(
        f"agent:{agent}",
        "gate_asked",
        card.id,
        gate=ids.fmt(ids.GATE, gate.id),
        question=question,
        scope=scope,
        kind=kind,
        **(extra or {}),
    )
    return gate, True


def gate_row(gate_id: int) -> Gate:
    row = Gate.get(gate_id, lock=True)
    if row is None:
        raise NotFound(
            f"no gate {ids.fmt(ids.GATE, gate_id)}",
            "`loopx gate list --pending` shows the open gates",
            code="unknown_gate",
        )
    return row


def forged(store: Store, gate: Gate) -> str | None:
    """Why ``gate``'s recorded approval is not real (None: it is, or it is not approved)."""
    if gate.status != "approved":
        return None
    from ..authority.authority import forged_approval

    return forged_approval(authority_of(store), gate, clock.now())


def holding_gate(store: Store, card: Card) -> tuple[Gate | None, str | None]:
    """The gate ``card`` waits on, as its people decided it: a pending one, or
    an approval of this lease that no signature backs (a row edited to
    "approved" reads as pending: ``next``, ``claim`` and ``done`` never honour
    it). Returns (gate, why it is forged or None)."""
    pending = Gate.first("""WHERE "card_id" = ? AND "status" = 'pending' ORDER BY "id" """, (card.id,))
    if pending is not None:
        return pending, None
    if card.lease_token is None:
        return None, None
    for gate in Gate.where(
        """WHERE "card_id" = ? AND "status" = 'approved' AND "lease_token" = ? ORDER BY "id" """,
        (card.id, card.lease_token),
    ):
        why = forged(store, gate)
        if why is not None:
            return gate, why
    return None, None


def checked_view(store: Store, gate: Gate) -> GateView:
    """The gate as its people decided it: an approval no signature backs reads as pending."""
    why = forged(store, gate)
    view = gate_view(gate)
    return view if why is None else view.unbacked(why)
