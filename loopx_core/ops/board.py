"""Board-level operations: init, where, export, the whole-board read.

The board's reads (``board_snapshot``, ``board_delta``, ``gate_brief``, and
``board_pages``) run plain SQL on the record layer (``store/records.py``):
opening and following the board never imports peewee nor the models
(contract ``board-reads-without-orm``)."""

from __future__ import annotations

from typing import NamedTuple

from ..authority.trust import clock_movable
from ..rules import clock, scopes
from ..shapes.values import AgentView, CardView, EventView, EvidenceView, GateView
from ..store import events, records
from ..store.backends import Store
from ..store.discovery import BoardLocation
from ..store.records import Agent, Card, Evidence, Gate, Handoff, Observed, Setting
from ..store.rows import (
    agent_view,
    card_row,
    card_views,
    evidence_view,
    gate_view,
    handoff_view,
    observed_view,
)
from . import dangerous, notify, reaper
from .board_pages import CardFilter, Page, Tally, board_page, tally

TYPE_CHECKING = False  # (annotations only: typing is not imported on the cold path; checkers read this as typing's)
if TYPE_CHECKING:
    from ..authority import keys


def init_board(
    location: BoardLocation, objective: str | None, person: keys.Person, *, test_board: bool = False, pin: bool = True
) -> tuple[Store, bool]:
    """Create the board if needed, its first person being ``person`` (a
    ``keys.Person``: they sign their own entry, and this machine pins their key
    as the board's root). On an existing board ``person`` must be one of its
    people. Returns (store, created)."""
    from ..authority.people import member, pin_root
    from .people import add_root, has_people

    store = Store.open(location, create=True, frozen_ok=test_board)
    created = store.created
    if created and location.source == "init":
        ignore_board_folder(location)
    if store.backend == "postgresql":
        point_checkout(store)
    store.run(lambda: None if has_people(store) else add_root(store, person))
    me = member(store, person)
    if objective is not None or created or (test_board and not clock_movable(store.query, store.trust())):

        def body() -> None:
            if objective is not None:
                store.put_setting("objective", objective)
            root = location.project_root
            if root is not None:
                store.put_setting("project_root", str(root))
            events.emit(
                me,
                "board_created" if created else "board_updated",
                None,
                objective=objective,
                path=location.describe(),
                test_board=test_board or None,
            )
            if test_board:
                store.put_signed_setting("test_clock", "on", me)

        store.run(body)
    if pin:  # (not for throwaway seeded and demo boards)
        pin_root(store)
    return store, created


def point_checkout(store: Store) -> None:
    """A team board's ``init`` makes the folder it runs in (or the checkout that
    already points at this board) this machine's project folder for it:
    ``.loopx/team.json`` names the board and this checkout (issue #26)."""
    from pathlib import Path

    from ..store import team_checkout

    found = team_checkout.of(store.location, store.board_uid())
    folder = found[0] if found else Path.cwd()
    try:
        team_checkout.write(folder, store.board_uid(), store.location.describe())
    except OSError:
        return  # a read-only folder: the board works, without workspaces here
    store.location = store.location._replace(checkout=folder)


def ignore_board_folder(location: BoardLocation) -> None:
    """``.loopx/`` holds the board's database and inbox, never source: a
    ``.gitignore`` inside it keeps it out of git without touching the project's own."""
    if location.path is None or location.path.parent.name != ".loopx":
        return
    ignore = location.path.parent / ".gitignore"
    if not ignore.exists():
        try:
            ignore.write_text("# Written by `loopx init`: the board's database and inbox stay out of git.\n*\n")
        except OSError:
            pass  # a read-only folder: the board still works


def board_cards(store: Store) -> list[CardView]:
    """Every card, for the board view (one batch of queries)."""
    if reaper.has_due():
        store.run(reaper.reap_due)
    with store.read():
        return card_views(Card.where('ORDER BY "priority", "id"'))


def changed_since(store: Store, seq: int) -> tuple[list[EventView], list[CardView]]:
    """Events after ``seq`` and the current view of every card they touched."""
    with store.read():
        new = events.since(seq)
        touched = sorted({e.card for e in new if e.card is not None})
        cards = _cards(touched)
    return new, cards


def _cards(card_ids: list[int]) -> list[CardView]:
    """The views of these cards (in id order), inside the caller's read."""
    if not card_ids:
        return []
    marks = ", ".join("?" * len(card_ids))
    return card_views(Card.where(f'WHERE "id" IN ({marks}) ORDER BY "id"', tuple(card_ids)))


def _agents() -> tuple[AgentView, ...]:
    return tuple(agent_view(a) for a in Agent.where('ORDER BY "id"'))


def _pending_gates() -> tuple[GateView, ...]:
    return tuple(gate_view(g) for g in Gate.where('WHERE "status" = \'pending\' ORDER BY "id"'))


def export(store: Store) -> dict:
    from ..authority.verify import export_chain

    with store.read():
        return {
            "board": {
                "path": store.location.describe(),
                "settings": {s.key: s.value for s in Setting.where()},
                "exported_at": clock.iso(clock.now()),
            },
            "agents": [a.to_json() for a in _agents()],
            "cards": [c.to_json() for c in card_views(Card.where('ORDER BY "id"'))],
            "gates": [gate_view(g).to_json() for g in Gate.where('ORDER BY "id"')],
            "evidence": [evidence_view(e).to_json() for e in Evidence.where('ORDER BY "id"')],
            "observed": [observed_view(o).to_json() for o in Observed.where('ORDER BY "id"')],
            "handoffs": [handoff_view(h).to_json() for h in Handoff.where('ORDER BY "id"')],
            "events": [e.to_json() for e in events.since(0)],
            "chain": export_chain(store),  # raw rows: `loopx verify --file` checks a copy anywhere
        }


# -- reads for the live board (the TUI) ------------------------------------


class BoardSnapshot(NamedTuple):
    """What the board screen needs on open, read in one snapshot: the counts
    of every card and the first page of the columns asked for (never the whole
    history), agents, pending gates, and the last event seq it reflects (the
    TUI follows the board from there)."""

    seq: int
    page: Page
    agents: tuple[AgentView, ...]
    pending_gates: tuple[GateView, ...]
    objective: str
    project_root: str | None
    runners: tuple = ()  # runners.RunnerView, one per agent that has had a runner (v4)


def _runners(store: Store) -> tuple:
    from .runners import list_runners

    return tuple(list_runners(store))


def board_snapshot(
    store: Store, mode: str, limits: dict, card_filter: CardFilter = CardFilter(), *, reap: bool = True
) -> BoardSnapshot:
    """The board as it opens, in one read transaction: ``board_pages.board_page``
    for the columns in ``limits``, agents, pending gates and the seq.
    ``reap=False``: a pure read (the board reaps in its own worker, never on a read)."""
    if reap and reaper.has_due():
        store.run(reaper.reap_due)
    with store.read():
        page = board_page(store, mode, limits, card_filter)
        agents = _agents()
        gates = _pending_gates()
        settings = dict(
            records.rows("""SELECT "key", "value" FROM "setting" WHERE "key" IN ('objective', 'project_root')""")
        )
        found = _runners(store)
    return BoardSnapshot(
        seq=page.seq,
        page=page,
        agents=agents,
        pending_gates=gates,
        objective=settings.get("objective", ""),
        project_root=settings.get("project_root"),
        runners=found,
    )


class BoardDelta(NamedTuple):
    """What changed after a seq: the events, the cards they touched, and — only
    when an event says they changed — the agents and the pending gates."""

    seq: int
    events: tuple[EventView, ...]
    cards: tuple[CardView, ...]
    agents: tuple[AgentView, ...] | None
    pending_gates: tuple[GateView, ...] | None
    runners: tuple | None = None  # every runner, when an event says one changed
    tally: Tally | None = None  # the counts of every card, when a card changed
    shown: Tally | None = None  # the counts passing ``card_filter`` (when one was given)


GATE_EVENTS = frozenset(
    {
        "gate_asked",
        "gate_answered",
        "gate_withdrawn",
        "gate_expired",
        "card_moved",
        "card_unassigned",
        "handoff_created",
        "released",
        "lease_expired",
    }
)
AGENT_EVENTS = frozenset({"agent_added", "agent_updated"})
# Events that never add a card nor change its status or owner: no recount.
COUNT_KEEPING_EVENTS = frozenset(
    {"evidence_added", "heartbeat", "artifact_observed", "usage_charged", "turn_started", "turn_finished"}
)
RUNNER_EVENTS = frozenset(
    {
        "runner_started",
        "runner_state",
        "turn_started",
        "turn_finished",
        "runner_exited",
        "runner_paused",
        "runner_resumed",
        "runner_stopped",
    }
)


def board_delta(store: Store, seq: int, card_filter: CardFilter = CardFilter(), by_owner: bool = True) -> BoardDelta:
    """Like ``changed_since`` (one read transaction), plus agents and pending
    gates when the new events can have changed them, and the cards' counts
    when a card changed (the board holds only the cards on screen: the counts
    of the rest come from here; ``by_owner`` False: by status only, the cheap
    count). Cheap when nothing did."""
    with store.read():
        new = events.since(seq)
        if not new:
            return BoardDelta(seq, (), (), None, None)
        touched = sorted({e.card for e in new if e.card is not None})
        cards = _cards(touched)
        kinds = {e.kind for e in new}
        agents = _agents() if kinds & AGENT_EVENTS else None
        gates = _pending_gates() if kinds & GATE_EVENTS else None
        found = _runners(store) if kinds & RUNNER_EVENTS else None
        counts = shown = None
        if touched and not kinds <= COUNT_KEEPING_EVENTS:
            counts = tally(by_owner=by_owner)
            shown = tally(card_filter, by_owner) if card_filter else None
    return BoardDelta(new[-1].seq, tuple(new), tuple(cards), agents, gates, found, counts, shown)


class GateBrief(NamedTuple):
    """A gate with what a person needs to answer it."""

    gate: GateView
    card: CardView
    evidence: EvidenceView | None  # the card's latest evidence
    dangerous: bool = False  # its scope is one the person marked dangerous (ops/dangerous)
    notified: tuple[float, bool, str | None] | None = (
        None  # when the notification command last told the person of it (ops/notify)
    )
    diff: object = None  # a merge gate: the card's branch against the base (workspace.merge.DiffSummary)


def gate_brief(store: Store, gate_id: int) -> GateBrief | None:
    """The gate, its card and the card's latest evidence (None: no such gate)."""
    with store.read():
        row = Gate.get(gate_id)
        if row is None:
            return None
        card = card_row(row.card_id)
        latest = Evidence.first('WHERE "card_id" = ? ORDER BY "id" DESC', (card.id,))
        gate = gate_view(row)
        risky = scopes.dangerous(gate.scope, dangerous.patterns(store)) if gate.scope else False
        told = notify.last_outcome(store, card.id, f"gate:{gate.key}")
        brief = GateBrief(gate, card_views([card])[0], evidence_view(latest) if latest else None, risky, told)
    if (
        gate.kind == "merge"
    ):  # what the person is asked to bring in: the commits the gate pinned (git, outside the read)
        from .merges import gate_diff

        brief = brief._replace(diff=gate_diff(store, row))
    return brief
