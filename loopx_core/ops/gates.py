"""Human gates: an agent asks, only a human answers (DESIGN §5)."""

from __future__ import annotations

from ..rules import clock, ids
from ..rules.decisions import signed_answer
from ..shapes.errors import Conflict, Forbidden, InvalidInput
from ..shapes.values import CardView, GateView
from ..store import events, records
from ..store.records import Card, Event, Gate, Grant
from ..store.rows import agent_row, card_row, card_view, gate_view, touch
from . import leases, quota, reaper
from .gate_rows import RUNTIME, authority_of, checked_view, forged, gate_row, open_gate
from .lifecycle import block_on_gate, move
from .reaper import reap_card

TYPE_CHECKING = False  # (annotations only: typing is not imported on the cold path; checkers read this as typing's)
if TYPE_CHECKING:
    from collections.abc import Iterable

    from ..authority import keys
    from ..store.base import Store

SESSION = (
    "session"  # remember a runtime gate's approval for its runner's session: that exact call, that card, that agent
)


def _session_of(gate: Gate, key: str, decision: str) -> dict:
    """What an "allow for this session" approval of ``gate`` allows, signed
    with the answer: the exact call (tool and input, hashed) its runtime
    asked, on its card, by its agent, in the runner session it was asked in."""
    if decision != "approve":
        raise InvalidInput(f"only an approval of {key} is remembered for the session", "reject without --remember")
    asked = None
    if gate.kind == RUNTIME:
        for row in Event.where("""WHERE "card" = ? AND "kind" = 'gate_asked' ORDER BY "seq" DESC""", (gate.card_id,)):
            if isinstance(row.data, dict) and row.data.get("gate") == key:
                asked = row.data
                break
    if not asked or not asked.get("session") or not asked.get("call"):
        raise InvalidInput(
            f"{key} cannot be allowed for a session: only a runtime's permission question asked in a runner's session, shown whole (nothing cut or hidden), can",
            "approve it once (y / without --remember), or remember a scope's answer with --remember card|agent|board",
            code="not_a_session_question",
        )
    return {"runner": asked["session"], "tool": asked.get("tool"), "call": asked["call"]}


def session_allows(store: Store, card_id: int, agent: str, session: str, tool: str, call: str) -> str | None:
    """Who allowed this exact call for this runner session on this card (None:
    nobody): a runtime gate approved with ``remember=session`` whose answer a
    person signed — the signed event (not the row) naming the same session,
    tool and call. An edited row or event counts for nothing."""
    wanted = {"runner": session, "tool": tool, "call": call}
    with store.read():
        rules = authority_of(store)
        for gate in Gate.where(
            """WHERE "card_id" = ? AND "agent" = ? AND "kind" = ? AND "status" = 'approved' ORDER BY "id" DESC""",
            (card_id, agent, RUNTIME),
        ):
            if forged(store, gate) is not None:
                continue
            signed = rules.people.decision_row(store.query, gate.answer_seq, ("gate_answered",))
            data = signed.payload() if signed is not None else {}
            if signed is not None and data.get("remember") == SESSION and data.get("session") == wanted:
                return f"{signed.actor} ({ids.fmt(ids.GATE, gate.id)})"
    return None


def _auto_approve(card: Card, agent: str, question: str, scope: str, by: str, now: float) -> Gate:
    gate = Gate.create(
        card_id=card.id,
        agent=agent,
        kind="permission",
        question=question,
        scope=scope,
        options=[],
        status="approved",
        answer="approved",
        answered_by=by,
        lease_token=card.lease_token,
        created_at=now,
        answered_at=now,
    )
    events.emit(by, "gate_answered", card.id, gate=ids.fmt(ids.GATE, gate.id), answer="approved", scope=scope, by=by)
    return gate


def _ask(
    store: Store, card_id: int, agent: str, data: dict, lease_token: int | None
) -> tuple[GateView, CardView, bool]:
    now = clock.now()
    agent_row(agent)
    card = reap_card(card_row(card_id))
    leases.require_holder(card, agent, lease_token, ("active", "waiting"))
    scope = data.get("scope")
    if scope:
        by = authority_of(store).allowed(scope, agent, card.id, card.lease_token, now)
        if by is not None:
            by = f"capability:{agent}" if by == "capability" else by
            return gate_view(_auto_approve(card, agent, data["question"], scope, by, now)), card_view(card), True
    kind = "permission" if scope else "question"  # a gate with a scope asks leave to act, not a question
    extra = None
    if data.get("runtime"):  # a runtime's own question (adapters/runtime_questions): its turn waits on it
        kind, extra = (
            RUNTIME,
            {
                "runtime": data["runtime"],
                "tool": data.get("tool"),
                "call": data.get("call"),
                "session": data.get("session"),
            },
        )
    gate, created = open_gate(
        card, agent, data["question"], scope, data.get("options") or [], data.get("deadline"), kind, now, extra
    )
    return gate_view(gate), card_view(card), created


def ask(
    store: Store, card_id: int, agent: str, data: dict, lease_token: int | None = None
) -> tuple[GateView, CardView, bool]:
    """Returns (gate, card, created)."""
    return store.run(lambda: _ask(store, card_id, agent, data, lease_token))


def ask_all(store: Store, card_id: int, agent: str, asks: list[dict]) -> list[tuple[GateView, CardView, bool]]:
    """Several gates on one card in one transaction — the PreToolUse hook asks
    one per scope a call needs: all are opened, or none."""
    return store.run(lambda: [_ask(store, card_id, agent, data, None) for data in asks])


def scopes_allowed(store: Store, agent: str, scopes: Iterable[str]) -> tuple[CardView | None, dict[str, str]]:
    """The agent's card (``holding``'s rule) and which of ``scopes`` it may use
    on it now, each with what allows it (a capability, a grant, an approved gate)."""
    with store.read():
        agent_row(agent)
        rules = authority_of(store)
        now = clock.now()
        card = leases.held_card(agent, now)
        allowed = {}
        for scope in scopes:
            by = rules.allowed(scope, agent, card.id if card else None, card.lease_token if card else None, now)
            if by is not None:
                allowed[scope] = by
        return (card_view(card) if card is not None else None), allowed


def status(store: Store, gate_id: int) -> GateView:
    def body() -> GateView:
        gate = gate_row(gate_id)
        reaper.reap_card(card_row(gate.card_id))  # fail an overdue gate closed before reporting it
        return checked_view(store, gate_row(gate_id))  # (read again: the reap may have answered it)

    if reaper.has_due():
        return store.run(body)
    with store.read():
        return checked_view(store, gate_row(gate_id))


def _gates_matching(pending: bool, card_id: int | None, after: int = 0, limit: int | None = None) -> list:
    conditions: list[tuple[str, tuple]] = [("\"status\" IN ('pending', 'approved')", ())] if pending else []
    if card_id is not None:
        conditions.append(('"card_id" = ?', (card_id,)))
    return Gate.page(after, conditions, limit)


def list_gates(store: Store, pending: bool = False, card_id: int | None = None) -> list[GateView]:
    if reaper.has_due():
        store.run(reaper.reap_due)
    with store.read():
        views = [checked_view(store, g) for g in _gates_matching(pending, card_id)]
        return [v for v in views if v.status == "pending"] if pending else views


def gate_page(
    store: Store, pending: bool = False, card_id: int | None = None, *, limit: int, after: int = 0
) -> tuple[list[GateView], int | None]:
    """Up to ``limit`` gates with ids above ``after`` and the id to pass as
    ``after`` next (None: the last page). With ``pending`` a page may hold fewer
    than ``limit`` (an approved gate whose signature fails is checked out here)."""
    if reaper.has_due():
        store.run(reaper.reap_due)
    with store.read():
        rows = _gates_matching(pending, card_id, after, limit + 1)
        more = len(rows) > limit
        rows = rows[:limit]
        views = [checked_view(store, g) for g in rows]
        return ([v for v in views if v.status == "pending"] if pending else views), (rows[-1].id if more else None)


def _said(gate: Gate, decision: str, choice: str | None, text: str | None) -> dict:
    """What the person said beyond yes or no, as the signed event's fields."""
    if choice is None and text is None:
        return {}
    key = ids.fmt(ids.GATE, gate.id)
    if decision != "approve":
        raise InvalidInput(
            f"choosing an option or writing an answer says yes to {key}", "to say no, reject it with --note saying why"
        )
    if choice is not None and text is not None:
        raise InvalidInput(f"{key}: one answer, an option or your own words", "give --choose or --text, not both")
    if text is not None and not text.strip():
        raise InvalidInput(f"{key}: the answer's text is empty", "write the answer, or approve without --text")
    return {"choice": chosen_option(gate, choice)} if choice is not None else {"text": text}


def chosen_option(gate: Gate, choice: str) -> str:
    """The option ``choice`` names on ``gate``: its exact text, else its number (1 = the first)."""
    options = list(gate.options or ())
    key = ids.fmt(ids.GATE, gate.id)
    if not options:
        raise InvalidInput(f"{key} offers no options to choose from", "answer it with approve, reject or --text")
    if choice in options:
        return choice
    if choice.isdigit() and 1 <= int(choice) <= len(options):
        return options[int(choice) - 1]
    listed = ", ".join(f"{i}. {o}" for i, o in enumerate(options, 1))
    raise InvalidInput(f"{key} has no option {choice!r}", f"choose one of its options by text or number: {listed}")


def answer(
    store: Store,
    gate_id: int,
    decision: str,
    person: keys.Answers,
    note: str | None = None,
    remember: str | None = None,
    for_seconds: float | None = None,
    choice: str | None = None,
    text: str | None = None,
    second_key: bool = False,
) -> tuple[GateView, CardView]:
    """Record a person's answer, signed with their key (``person``: a
    ``keys.Person``). Anything else is refused here as well as in the CLI.
    ``choice`` (one of the gate's options) or ``text`` (the person's words)
    answers yes with something more; the gate's answer is then that option or
    text, and the signed event carries it (DESIGN §5)."""
    if not hasattr(person, "sign"):
        raise Forbidden(
            "only a person can answer a gate",
            "answer it in the board (y/n) or with `loopx gate answer` in your own terminal",
        )
    actor = person.actor

    def body() -> tuple[GateView, CardView] | Conflict:
        now = clock.now()
        gate = gate_row(gate_id)
        card = reaper.reap_card(card_row(gate.card_id))
        gate = gate_row(gate_id)  # (read again: the reap may have answered it)
        key = ids.fmt(ids.GATE, gate_id)
        if gate.status != "pending" and forged(store, gate) is None:
            raise Conflict(
                f"{key} is already {gate.status}" + (f" (by {gate.answered_by})" if gate.answered_by else ""),
                "nothing to do; `loopx gate list --pending` shows what is open",
                code="already_answered",
                data={"gate": gate_view(gate).to_json()},
            )
        session = None
        if remember == SESSION:
            session = _session_of(gate, key or "", decision)
        elif remember and not gate.scope:
            raise InvalidInput(
                f"{key} has no scope to remember", "answer without --remember, or ask gates with --scope"
            )
        said = _said(gate, decision, choice, text)
        merge = None
        pinned: dict = {}
        if gate.kind == "merge" and decision == "approve":
            from ..workspace.merge import Moved
            from . import merges

            try:
                merge = merges.check(store, gate, remember, second_key)  # refused here leaves the gate pending
            except Moved as moved:  # what the person was shown is not what would merge: asked again
                return merges.rearm(store, person, card, gate, moved, now)
            pinned = merges.answered_pin(merge)
        gate.status = "approved" if decision == "approve" else "rejected"
        gate.answer = signed_answer({"answer": gate.status, **said})  # what the agent reads is what was signed
        gate.note = note
        gate.answered_by = actor
        gate.answered_at = now
        grant_id = None
        if decision == "approve" and remember and session is None:
            grant = Grant.create(
                scope=gate.scope,
                agent=gate.agent if remember == "agent" else None,
                card=card.id if remember == "card" else None,
                expires_at=(now + for_seconds) if for_seconds else None,
                created_by=actor,
                gate=gate.id,
                created_at=now,
            )
            grant_id = grant.id
            grant.decided_seq = events.emit(
                person,
                "grant_created",
                card.id,
                grant=grant.id,
                scope=grant.scope,
                agent=grant.agent,
                card=grant.card,
                expires_at=grant.expires_at,
                remember=remember,
                gate=key,
            )
            grant.save()
        # What the person signs: this gate, its card (the event's), agent, scope and lease.
        gate.answer_seq = events.emit(
            person,
            "gate_answered",
            card.id,
            gate=key,
            answer=gate.status,
            note=note,
            scope=gate.scope,
            agent=gate.agent,
            lease_token=gate.lease_token,
            grant=grant_id,
            **said,
            **pinned,
            **({"remember": SESSION, "session": session} if session is not None else {}),
        )
        gate.save()
        if decision == "reject":
            block_on_gate(card, gate, now)  # whatever the card's status: one rule
        elif card.status == "waiting" and not records.exists(
            """SELECT 1 FROM "gate" WHERE "card_id" = ? AND "status" = 'pending'""", (card.id,)
        ):
            move(card, "active", "gate_answered")
            leases.renew(card, now)
            quota.hold(card)  # an exhausted card is not put back to work
            touch(card, now)
        if merge is not None:
            merges.bring_in(store, person, card, gate, merge, now)
        return gate_view(gate), card_view(card)

    answered = store.run(body)
    if isinstance(answered, Conflict):  # (the re-ask is committed; the answer is refused)
        raise answered
    return answered
