"""The LoopX board app.

The app holds the board as plain values (``state.BoardModel``), keeps it
current from the change poller (``workers.ChangePoller``), and turns keys and
drags into loopx_core operator calls, each in a thread worker with its own
connection. Widgets render values; they never query the store.

``background=False`` switches every background worker off (the change poller,
the lease clock tick and, later, the file watcher): tests and snapshots then
drive changes themselves and see the same pixels on every run.
"""

from __future__ import annotations

from typing import Callable, Iterable

from textual.app import App, SystemCommand
from textual.binding import Binding
from textual.screen import Screen
from textual.worker import Worker, get_current_worker

from loopx_core import cards as card_ops
from loopx_core import clock, gates as gate_ops, ids
from loopx_core.board import board_snapshot, gate_brief
from loopx_core.discovery import BoardLocation
from loopx_core.errors import LoopxError
from loopx_core.store import Store
from loopx_core.values import Artifact, CardView, GateView

from .messages import BoardChanged, OpenArtifact, OpenCard, PollFailed
from .paths import css_paths
from .state import OWNER, BoardModel
from .widgets.board import BoardView




class LoopxApp(App[int]):
    TITLE = "LoopX"
    CSS_PATH = css_paths()
    BINDINGS = [Binding("ctrl+c", "quit", "Quit", show=False, priority=True)]

    def __init__(
        self,
        location: BoardLocation | None = None,
        *,
        store: Store | None = None,
        background: bool = True,
        now: Callable[[], float] | None = None,
        person=None,
        read_only: str | None = None,
        demo: bool = False,
        poll_interval: float = 0.05,
        intro: str | None = None,
    ):
        super().__init__()
        self.location = location if location is not None else (store.location if store is not None else None)
        self.store = store
        self.background = background
        self.now: Callable[[], float] = now or clock.now
        # The person whose key signs what they decide here (a keys.Person), or
        # None with the reason the board is read-only (SECURITY.md).
        self.person = person
        self.read_only = read_only if person is None else None
        if person is None and self.read_only is None:
            self.read_only = "no unlocked key: decisions are refused"
        self.demo = demo
        self.poll_interval = poll_interval
        self.intro = intro
        self.model = BoardModel()
        self.project_root: str | None = None
        self.exit_code = 0
        self.board_error: LoopxError | None = None
        self.board_screen = None
        self.poller = None
        self._background_started = False
        # Gates: the queue of gates to pop, the ones left for later, the one on screen.
        self.gate_queue: list[int] = []
        self.deferred: set[int] = set()
        self.gate_screen = None
        # What tests (and the curious) can look at.
        self.bells = 0
        self.notices: list[tuple[str, str]] = []
        self.applied = 0  # board changes applied from the poller

    # -- start and stop ----------------------------------------------------------
    def on_mount(self) -> None:
        from .screens.board import BoardScreen
        from .screens.no_board import NoBoardScreen

        try:
            if self.store is None:
                if self.location is None:
                    raise LoopxError("no board given", "pass --db PATH or run `loopx init`")
                self.store = Store.open(self.location, create=self.location.source == "user")
            snap = board_snapshot(self.store)
        except LoopxError as err:
            self.board_error = err
            self.exit_code = err.exit_code
            self.push_screen(NoBoardScreen(err, self.location))
            return
        self.project_root = snap.project_root
        self.model.load(snap.cards, snap.agents, snap.pending_gates, snap.seq, snap.objective)
        self.model.runners = {r.agent: r for r in snap.runners}
        self.board_screen = BoardScreen()
        self.push_screen(self.board_screen)
        if self.intro:
            self.notify(self.intro, title="LoopX demo" if self.demo else "LoopX", timeout=12)
        if snap.pending_gates:
            n = len(snap.pending_gates)
            self.notify(f"{n} gate{'s' if n != 1 else ''} waiting for you — press g to answer", title="Needs you", severity="warning", timeout=8)

    def board_ready(self) -> None:
        """The board screen is on screen: start following the board."""
        if self.background and self.poller is None and not self._background_started:
            self._background_started = True
            self.start_background()

    def start_background(self) -> None:
        """The workers that follow the board. Off when ``background`` is False."""
        self.run_worker(self._poll, thread=True, group="background", name="change poller", exclusive=True, exit_on_error=False)
        self.set_interval(1.0, self._tick, name="lease clock")
        # The file watcher (DESIGN §7): the same engine as `loopx watch`, so both
        # may run at once — ingestion is idempotent.
        self.run_worker(self._watch_files, group="watcher", name="file watcher", exclusive=True, exit_on_error=False)

    async def _watch_files(self) -> None:
        from loopx_core.watch import watch_board

        await watch_board(self.store)

    def _poll(self) -> None:
        from .workers import ChangePoller

        worker = get_current_worker()
        self.poller = ChangePoller(self.store, self.model.seq, self.post_message, interval=self.poll_interval, cancelled=lambda: worker.is_cancelled or not self.is_running)
        self.poller.run()

    def _tick(self) -> None:
        if self.board_screen is not None and self.board_screen.is_attached:
            for board in self.board_screen.query(BoardView):
                board.tick()

    def action_quit(self) -> None:
        self.exit(self.exit_code)

    def on_unmount(self) -> None:
        if self.poller is not None:
            self.poller.wake.set()

    # -- following the board -------------------------------------------------------
    def on_board_changed(self, message: BoardChanged) -> None:
        if not self.is_running or not self.screen_stack:
            return  # shutting down: the board is in the store, nothing to draw
        delta = message.delta
        self.model.seq = max(self.model.seq, delta.seq)
        rebuild = False
        if delta.agents is not None and self.model.set_agents(delta.agents) and self.model.mode == OWNER:
            rebuild = True
        self.apply_cards(delta.cards, rebuild=rebuild)
        if delta.pending_gates is not None:
            new, gone = self.model.set_pending(delta.pending_gates)
            self.gates_changed(new, gone)
        if delta.runners is not None:
            self.runners_changed(delta.runners)
        for event in delta.events:
            if event.kind == "paused":
                key = ids.fmt(ids.CARD, event.card)
                why = event.data.get("reason", "")
                hint = "press + to raise its budget" if why == "budget" else "no progress for several turns; + resumes it"
                self.notice(f"{key} paused ({why}): {hint}", severity="warning")
            elif event.kind == "ingest_error":
                self.notice(f"ingest error: {event.data.get('file', '')} {event.data.get('reason', '')}", severity="error")
        touched = {e.card for e in delta.events if e.card is not None}
        for screen in self.screen_stack:
            reload = getattr(screen, "board_changed", None)
            if reload is not None:
                reload(touched)
        self.applied += 1

    def on_poll_failed(self, message: PollFailed) -> None:
        self.notice(f"cannot read the board: {message.error}", severity="error")

    def apply_cards(self, cards: Iterable[CardView], rebuild: bool = False) -> set[int]:
        cards = list(cards)
        old = {c.id: self.model.column_of(self.model.cards[c.id]) for c in cards if c.id in self.model.cards}
        changed = self.model.apply_cards(cards)
        if self.board_screen is not None and (changed or rebuild):
            self.board_screen.apply(changed, old, rebuild=rebuild)
        return changed

    def notice(self, message: str, *, title: str = "", severity: str = "information", timeout: float | None = None) -> None:
        """``notify`` that also remembers the message (tests read ``notices``)."""
        self.notices.append((severity, message))
        del self.notices[:-200]  # a day in a tmux pane must not grow without bound
        self.notify(message, title=title, severity=severity, timeout=timeout if timeout is not None else (8 if severity == "error" else 4))

    # -- gates -------------------------------------------------------------------------
    def gates_changed(self, new: list[GateView], gone: list[int]) -> None:
        for gid in gone:
            self.deferred.discard(gid)
            if gid in self.gate_queue:
                self.gate_queue.remove(gid)
            if self.gate_screen is not None and self.gate_screen.gate_id == gid:
                self.gate_screen.gone()
        fresh = [g for g in new if g.id not in self.deferred and g.id not in self.gate_queue]
        if fresh:
            self.gate_queue.extend(g.id for g in fresh)
            self.ring()
            self.maybe_show_gate()
        if (new or gone) and self.board_screen is not None:
            self.board_screen.refresh_header()

    def ring(self) -> None:
        self.bells += 1
        self.bell()

    def answer_all_gates(self) -> None:
        """``g``: walk through every pending gate, the deferred ones too."""
        self.deferred.clear()
        pending = sorted(self.model.pending)
        if not pending:
            self.notice("No gates are waiting for you")
            return
        self.gate_queue = pending
        self.maybe_show_gate()

    def maybe_show_gate(self) -> None:
        """Show the next queued gate, unless one (or another dialog) is up."""
        from textual.screen import ModalScreen

        from .modals.gate import GateModal

        if self.gate_screen is not None or self.store is None or not self.is_running or not self.screen_stack:
            return
        if isinstance(self.screen, ModalScreen):
            return  # shown when that dialog closes
        while self.gate_queue:
            gid = self.gate_queue.pop(0)
            if gid not in self.model.pending or gid in self.deferred:
                continue
            brief = gate_brief(self.store, gid)
            if brief is None or brief.gate.status != "pending":
                self.model.pending.pop(gid, None)
                continue
            self.gate_screen = GateModal(brief, self.now, blink=self.background)
            self.push_screen(self.gate_screen, callback=self._gate_answered)
            return

    def _gate_answered(self, result) -> None:
        screen, self.gate_screen = self.gate_screen, None
        gid = screen.gate_id if screen is not None else None
        if result is None or gid is None:
            return
        key = ids.fmt(ids.GATE, gid)
        if result.decision == "later":
            self.deferred.add(gid)
            self.notice(f"{key} left for later in Needs you — g answers it")
        elif result.decision == "gone":
            self.notice(f"{key} was answered elsewhere")
        else:
            self.answer_gate(gid, result.decision, result.note, result.remember)
        self.call_later(self.maybe_show_gate)

    @property
    def human(self) -> str:
        """Who decisions here are recorded as (for display)."""
        return self.person.actor if self.person is not None else "nobody (read-only)"

    def decider(self):
        """The person for a decision, or a refusal saying why this board cannot decide."""
        if self.person is None:
            from loopx_core.errors import Forbidden

            raise Forbidden(f"this board is read-only: {self.read_only}", "open the board as yourself, with your key (`loopx key init` makes one)", code="read_only")
        return self.person

    def answer_gate(self, gate_id: int, decision: str, note: str | None = None, remember: str | None = None) -> Worker:
        key = ids.fmt(ids.GATE, gate_id)

        def run():
            return gate_ops.answer(self.store, gate_id, decision, self.decider(), note=note or None, remember=remember)

        def done(result):
            gate, card = result
            self.model.pending.pop(gate.id, None)
            extra = f", remembered for this {remember}" if remember else ""
            self.notice(f"{key} {gate.status} by you{extra}; {card.key} is {card.status}")
            if self.board_screen is not None:
                self.board_screen.refresh_header()

        return self.run_op(f"answer {key}", run, done)

    def dialog_closed(self) -> None:
        """Every LoopX dialog calls this when it closes: a queued gate may pop now."""
        self.call_later(self.maybe_show_gate)

    # -- operators -----------------------------------------------------------------------
    def run_op(self, what: str, fn: Callable[[], object], done: Callable[[object], None] | None = None) -> Worker:
        """Run an operator in a thread worker with its own connection; apply the
        cards it returns at once (the poller confirms them), report refusals."""

        def job():
            try:
                with self.store.thread_connection():
                    result = fn()
            except LoopxError as err:
                self.call_from_thread(self.refuse, err.message, err.hint)
                return None
            except Exception as exc:  # an operator bug must not take the board down
                self.call_from_thread(self.refuse, f"{what} failed: {type(exc).__name__}: {exc}", "")
                return None
            self.call_from_thread(self._op_done, result, done)
            return result

        return self.run_worker(job, thread=True, group="ops", name=what, exit_on_error=False)

    def _op_done(self, result, done) -> None:
        # Operators return a value or a plain tuple of values (CardView is itself a NamedTuple).
        values = (result,) if isinstance(result, CardView) or not isinstance(result, tuple) else result
        self.apply_cards(v for v in values if isinstance(v, CardView))
        if done is not None:
            done(result)
        if self.poller is not None:
            self.poller.wake.set()

    async def ops_idle(self) -> None:
        """Wait for every operator call in flight (tests use this)."""
        while True:
            ops = [w for w in self.workers if w.group == "ops" and not w.is_finished]
            if not ops:  # (an empty list would mean "every worker", the poller too)
                return
            await self.workers.wait_for_complete(ops)

    def refuse(self, message: str, hint: str = "") -> None:
        self.notice(message + (f"\n→ {hint}" if hint else ""), title="Refused", severity="error")

    def drop_card(self, card_id: int, column: str) -> None:
        """What a drop on ``column`` (or shift+arrow) means, through the operator."""
        card = self.model.cards.get(card_id)
        if card is None:
            return
        drop = self.model.drop(card, column)
        if drop.op is None:
            if drop.reason:
                self.refuse(drop.reason)
            return
        if drop.op == "move":
            self.move_card(card_id, drop.arg)
        else:
            self.assign_card(card_id, drop.arg)

    def move_card(self, card_id: int, to: str) -> Worker:
        def done(card: CardView):
            self.notice(f"{card.key} moved to {card.status}")

        return self.run_op(f"move {ids.fmt(ids.CARD, card_id)}", lambda: card_ops.move_card(self.store, card_id, to, self.decider()), done)

    def assign_card(self, card_id: int, to: str | None) -> Worker:
        def done(card: CardView):
            if to is None:
                self.notice(f"{card.key} unassigned; it is {card.status}")
            elif card.status == "handoff":
                self.notice(f"{card.key} handed to {to} with a handoff packet; the old lease is revoked")
            else:
                self.notice(f"{card.key} assigned to {to}")

        return self.run_op(f"assign {ids.fmt(ids.CARD, card_id)}", lambda: card_ops.assign_card(self.store, card_id, to, self.decider()), done)

    def reassign(self, card_id: int) -> None:
        from .modals.pick import PickModal
        from .state import UNASSIGNED

        card = self.model.cards.get(card_id)
        if card is None:
            return
        choices = [(a, a) for a in self.model.agents] + [(UNASSIGNED, "Unassigned")]

        def picked(choice: str | None) -> None:
            if choice is not None:
                self.assign_card(card_id, None if choice == UNASSIGNED else choice)

        self.push_screen(PickModal(f"Reassign {card.key} to…", choices, current=card.owner or UNASSIGNED), picked)

    def raise_budget(self, card_id: int) -> None:
        from .modals.budget import BudgetModal

        card = self.model.cards.get(card_id)
        if card is None:
            return

        def chosen(data: dict | None) -> None:
            if data:
                def done(view: CardView):
                    self.notice(f"{view.key} budget raised; it is {view.status}")

                self.run_op(f"budget {card.key}", lambda: card_ops.budget_card(self.store, card_id, data, self.decider()), done)

        self.push_screen(BudgetModal(card, blink=self.background), chosen)

    def new_card(self) -> None:
        from .modals.add_card import AddCardModal

        def chosen(data: dict | None) -> None:
            if data:
                def done(view: CardView):
                    self.notice(f"{view.key} added ({view.status})")
                    if self.board_screen is not None:
                        self.board_screen.call_after_refresh(self.board_screen.focus_card_widget, view.id)

                self.run_op("add card", lambda: card_ops.add_card(self.store, data, self.decider()), done)

        self.push_screen(AddCardModal(self.model.agents, blink=self.background), chosen)

    # -- runners (DESIGN §10 "Runners") ------------------------------------------------------
    def runners_changed(self, runners) -> None:
        self.model.runners = {r.agent: r for r in runners}
        if self.board_screen is not None and self.board_screen.is_attached:
            for board in self.board_screen.query(BoardView):
                board.show_runners()
            self.board_screen.refresh_header()

    def control_runner(self, agent: str, what: str) -> Worker:
        """``p``/``u``/``s``: a person pauses, resumes or stops an agent's runner (signed)."""
        from loopx_core import runners

        def done(view):
            then = {"pause": "no new turn starts", "resume": "it goes on (a stopped runner: start `loopx run` again)", "stop": "it ends its turn, releases its card and exits"}[what]
            self.notice(f"{agent}'s runner: {what} — {then}")

        return self.run_op(f"{what} {agent}'s runner", lambda: runners.control(self.store, agent, what, self.decider()), done)

    # -- drilling in -----------------------------------------------------------------------
    def open_card(self, card_id: int) -> None:
        from .screens.card import CardScreen

        if card_id in self.model.cards:
            self.push_screen(CardScreen(card_id))

    def on_open_card(self, message: OpenCard) -> None:
        self.open_card(message.card_id)

    def on_open_artifact(self, message: OpenArtifact) -> None:
        self.open_artifact(message.card_id, message.artifact, pager=message.pager)

    def open_artifact(self, card_id: int, artifact: Artifact, pager: bool = False) -> None:
        from .screens.artifact import ArtifactScreen, open_in_pager

        if pager:
            open_in_pager(self, artifact, self.project_root)
        else:
            self.push_screen(ArtifactScreen(card_id, artifact, self.project_root))

    def action_help(self) -> None:
        from .screens.help import HelpScreen

        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen())

    # -- command palette -----------------------------------------------------------------------
    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        board = self.board_screen
        if board is not None and self.store is not None:
            yield SystemCommand("Board: toggle view", "Columns by status, or one column per agent", board.action_toggle_view)
            yield SystemCommand("Board: filter cards", "By words, @agent or status:…", board.action_filter)
            yield SystemCommand("Board: add a card", "A new card (validated like `loopx card add`)", self.new_card)
            yield SystemCommand("Gates: answer waiting gates", "One at a time: y approve, n reject, A remember", self.answer_all_gates)
            card = board.selected_card()
            if card is not None:
                yield SystemCommand(f"Card: open {card.key}", card.title, lambda: self.open_card(card.id))
                yield SystemCommand(f"Card: reassign {card.key}", "Hand it to another agent (a handoff packet is built)", lambda: self.reassign(card.id))
                yield SystemCommand(f"Card: raise budget of {card.key}", "Add turns, tokens or dollars", lambda: self.raise_budget(card.id))
                yield SystemCommand(f"Card: move {card.key} to ready", "A person's move (backlog / ready / cancelled)", lambda: self.move_card(card.id, "ready"))
            if self.location is not None:
                where = self.location.describe()
                yield SystemCommand("Board: where is this board?", where, lambda: self.notice(f"Board: {where}"))
        yield SystemCommand("Help: every key", "What each key does, per screen", self.action_help)
        yield from super().get_system_commands(screen)
