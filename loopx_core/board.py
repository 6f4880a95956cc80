"""Board-level operations: init, where, export, the whole-board read."""

from __future__ import annotations

from . import clock, events, reaper
from .discovery import BoardLocation
from .models import Agent, Card, Evidence, Gate, Handoff, Observed, Setting
from .rows import agent_view, card_views, evidence_view, gate_view, handoff_view, observed_view
from .store import Store
from .values import CardView, EventView


def init_board(location: BoardLocation, objective: str | None, actor: str) -> tuple[Store, bool]:
    """Create the board if needed. Returns (store, created)."""
    store = Store.open(location, create=True)
    created = store.created
    if objective is not None or created:

        def body():
            if objective is not None:
                store.put_setting("objective", objective)
            root = location.project_root
            if root is not None:
                store.put_setting("project_root", str(root))
            events.emit(actor, "board_created" if created else "board_updated", None, objective=objective, path=location.describe())

        store.run(body)
    return store, created


def board_cards(store: Store) -> list[CardView]:
    """Every card, for the board view (one batch of queries)."""
    if reaper.has_due():
        store.run(reaper.reap_due)
    with store.read():
        return card_views(list(Card.select().order_by(Card.priority, Card.id)))


def changed_since(store: Store, seq: int) -> tuple[list[EventView], list[CardView]]:
    """Events after ``seq`` and the current view of every card they touched."""
    with store.read():
        new = events.since(seq)
        touched = sorted({e.card for e in new if e.card is not None})
        cards = card_views(list(Card.select().where(Card.id.in_(touched)))) if touched else []
    return new, cards


def export(store: Store) -> dict:
    with store.read():
        return {
            "board": {"path": store.location.describe(), "settings": {s.key: s.value for s in Setting.select()}, "exported_at": clock.iso(clock.now())},
            "agents": [agent_view(a).to_json() for a in Agent.select().order_by(Agent.id)],
            "cards": [c.to_json() for c in card_views(list(Card.select().order_by(Card.id)))],
            "gates": [gate_view(g).to_json() for g in Gate.select().order_by(Gate.id)],
            "evidence": [evidence_view(e).to_json() for e in Evidence.select().order_by(Evidence.id)],
            "observed": [observed_view(o).to_json() for o in Observed.select().order_by(Observed.id)],
            "handoffs": [handoff_view(h).to_json() for h in Handoff.select().order_by(Handoff.id)],
            "events": [e.to_json() for e in events.since(0)],
        }
