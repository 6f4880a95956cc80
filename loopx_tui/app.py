"""The LoopX board app: wiring.

The app opens the board in a worker, holds it as plain values
(``state.BoardModel``), keeps it current from the change poller
(``workers.ChangePoller``) and tells the open screens what changed
(``BoardUpdated``). It owns three services the screens are handed:

- ``reader`` (``reads.BoardReader``): every store read, in worker threads only;
- ``actions`` (``actions.HumanActions``): every human action, one place;
- ``gates`` (``gate_queue.GateQueue``): the gate dialogs, one at a time,
  announced by ``alert`` (``alert.GateAlert``).

No store work happens on the UI thread: a slow writer elsewhere never
freezes the screen.

``background=False`` switches every background worker off (the change
poller, the lease reaper, the file watcher, the clock tick): tests and
snapshots then drive changes themselves and see the same pixels every run.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

from rich.text import Text
from textual import events
from textual.app import App, ComposeResult, SystemCommand
from textual.binding import Binding
from textual.markup import escape
from textual.message import Message
from textual.notifications import SeverityLevel
from textual.screen import Screen
from textual.timer import Timer
from textual.widgets import Static
from textual.worker import get_current_worker

from loopx_core.rules import clock, ids
from loopx_core.rules.text import terminal_safe
from loopx_core.shapes.errors import BoardBusy, LoopxError
from loopx_core.shapes.values import Artifact, CardView
from loopx_core.store.backends import Store, lock_wait
from loopx_core.store.discovery import BoardLocation

from .actions import HumanActions
from .alert import GateAlert
from .gate_queue import ARM_DELAY, GateQueue, idle_setting
from .heap import collect_when_idle, freeze_heap, limit_arenas, thaw_heap
from .messages import (
    BoardChanged,
    BoardFailed,
    BoardLoaded,
    BoardShown,
    BoardsSurveyed,
    BoardsWanted,
    BoardUpdated,
    BoardWaiting,
    BudgetWanted,
    CardDropped,
    CardGateWanted,
    ColumnRead,
    ColumnWanted,
    CommandWanted,
    DialogClosed,
    DialogReady,
    EditWanted,
    FilterChanged,
    GateAnswer,
    GatesWanted,
    HelpWanted,
    HistoryChecked,
    KeepTryWanted,
    LogWentBack,
    MoveWanted,
    NewCardWanted,
    OpenArtifact,
    OpenCard,
    OpenTimeline,
    OpenTries,
    OpenWorkspaces,
    PageRead,
    PollFailed,
    ReassignWanted,
    Refused,
    Request,
    RunnersRead,
    RunnerWanted,
    Say,
    SwitchBoard,
    ViewChanged,
)
from .notices import follow
from .paths import css_paths
from .reads import BoardReader, open_store
from .screens.opening import OpeningScreen
from .state import ON_DEMAND, OWNER, PAGE, STATUS, UNASSIGNED, BoardModel, Standing
from .toasts import Toasts
from .widgets.card_list import CardList

if TYPE_CHECKING:
    from loopx_core.authority.verify import Report
    from loopx_core.ops.board import GateBrief
    from loopx_core.ops.my_boards import BoardStanding, Needs
    from loopx_core.store.known_boards import KnownBoard

    from .host import GateDialog
    from .screens.board import BoardScreen
    from .screens.card import CardScreen
    from .workers import ChangePoller, LeaseReaper

OPEN_RETRY = 0.5  # s: how often a board another process holds is tried again
LOCK_POLL = 0.1  # s: how often, while a person's action runs, the app looks whether it waits for the board's write lock
LOCK_SAID = (
    0.3  # s an action waits for the write lock before the footer says so (a passing writer is not worth a flicker)
)
SURVEY_EVERY = 15.0  # s: how often, while the board follows its own, the person's other boards are read again
DETAIL_WAIT = 0.05  # s: how long opening a card waits for its detail before showing the screen without it


# The palette's entries for what a person decides outside the cards: each opens
# the command line (:) with the verb typed, run as the CLI runs it.
PERSON_COMMANDS = (
    ("Person: a command", "Any of a person's verbs, as at the terminal (:)", ""),
    (
        "Notifications: the command",
        "What runs when something needs you (:notify set -- PROGRAM ARG…)",
        "notify set -- ",
    ),
    ("Notifications: test the command", "Run it once now and see what it did", "notify test"),
    ("Notifications: last outcome", "The command a person signed and what it last did", "notify show"),
    (
        "Agents: register or change one",
        "Its runtime, scopes and window (:agent add ID --can SCOPE --tokens N --window 5h)",
        "agent add ",
    ),
    ("Workspaces: cap their size", "e.g. 20G, or none (:workspace cap)", "workspace cap "),
    ("Workspaces: setup command", "Run once in every new workspace (:workspace setup 'npm ci')", "workspace setup "),
    ("Prices: price a model", "Dollars per million tokens (:price set MODEL --input $ --output $)", "price set "),
    ("Gates: dangerous scopes", "Scopes whose gates take y then Y (:dangerous set 'db:*')", "dangerous set "),
)


class LoopxApp(App[int]):
    TITLE = "LoopX"
    CSS_PATH = css_paths()
    BINDINGS = [Binding("ctrl+c", "quit", "Quit", show=False, priority=True), Binding("q", "quit", "Quit", show=False)]

    def __init__(
        self,
        location: BoardLocation | None = None,
        *,
        store: Store | None = None,
        background: bool = True,
        now: Callable[[], float] | None = None,
        person=None,
        read_only: str | None = None,
        read_only_hint: str = "",
        demo: bool = False,
        poll_interval: float = 0.05,
        intro: str | None = None,
        alert: GateAlert | None = None,
        ticks: Callable[[], float] | None = None,
        gate_idle: float | None = None,
        arm_delay: float = ARM_DELAY,
    ):
        limit_arenas()  # before the board's threads start (heap.py)
        super().__init__()
        self._loop_thread = threading.get_ident()  # the app's event loop runs here (on_mount says so again)
        self.location = location if location is not None or store is None else store.location
        self.store: Store | None = (
            store  # opened already (the launcher unlocks the key with it), or opened here in a worker
        )
        self.reader: BoardReader | None = None
        self.actions: HumanActions | None = None
        self.background = background
        self.now: Callable[[], float] = now or clock.now
        # The person whose key signs what they decide here (a keys.Person), or
        # None with the reason the board is read-only (SECURITY.md).
        self.person = person
        self.read_only = read_only if person is None else None
        if person is None and self.read_only is None:
            self.read_only = "no unlocked key: decisions are refused"
        self.read_only_hint = read_only_hint or "quit (q) and run `loopx board` again, typing your key's passphrase"
        self.demo = demo
        self.poll_interval = poll_interval
        # The clock of the person's keys (monotonic; tests step one of their
        # own): how long they have been idle, how long a gate dialog has been
        # up. Starting counts as input: the keys that started the board (the
        # command, the passphrase) may still be on their way.
        self.ticks: Callable[[], float] = ticks or time.monotonic
        self.last_input = self.ticks()  # of the last key, click or wheel
        self.gate_idle = gate_idle if gate_idle is not None else idle_setting()
        self.arm_delay = arm_delay
        self.intro = intro
        self.model = BoardModel()
        self.project_root: str | None = None
        self.exit_code = 0
        self.board_error: LoopxError | None = None
        self.board_screen: BoardScreen | None = None
        self.card_screen: CardScreen | None = None  # once a card was opened (kept for the next)
        self.poller: ChangePoller | None = None
        self.reaper: LeaseReaper | None = None
        self.gates = GateQueue(self)
        self.alert = alert or GateAlert(self)
        self.loaded = asyncio.Event()  # set once the board (or the no-board screen) is on screen
        self.painted = threading.Event()  # set after the board's first paint (work that can wait, waits for it)
        self._retry_open = threading.Event()  # set as the app stops: a board waited for is not tried again
        self.history: Report | None = (
            None  # once the board checked its history (its first problems: reads.PROBLEMS_KEPT)
        )
        # What the board says in passing, held while a gate is on screen (toasts.py);
        # ``notices`` is what it said (tests and the curious look at it).
        self.toasts = Toasts(self.notify, holding=lambda: self.gates.on_screen)
        self.notices = self.toasts.said
        self.applied = 0  # board changes applied from the poller
        self.lock_line = ""  # what every footer says while a person's action waits for the board (#30)
        self.lock_said = asyncio.Event()  # set while it says so (tests wait on it)
        self._lock_seen: float | None = None  # (ticks) when an action was first seen waiting
        self._lock_timer: Timer | None = None  # the look, every LOCK_POLL while an action runs
        self._clock_timer: Timer | None = None  # the clock tick, while the board is followed
        # The person's boards (``B``; issue #42): the last reading of each, and
        # whether one is under way. ``key`` is the person's unlocked key as it
        # was handed over: on another board they are named as that board knows them.
        self.my_boards: list[BoardStanding] = []
        self.surveying = False
        self.surveyed = asyncio.Event()  # set once the boards were read (tests wait on it)
        self.key = person
        self.first_refusal = (self.read_only, self.read_only_hint)
        self.switched = False  # this pane was switched to another board (B, Enter): the key is checked there
        self._survey_timer: Timer | None = None
        self.switches = 0  # boards opened in this pane: each board's screens are a mode of their own
        self.board_mode = "board"
        self.openings = 0  # "opening…" screens shown in this pane (each a mode until its board is on screen)

    @property
    def bells(self) -> int:
        return self.alert.bells

    @property
    def human(self) -> str:
        """Who decisions here are recorded as (for display)."""
        return self.person.actor if self.person is not None else "nobody (read-only)"

    # -- start and stop ----------------------------------------------------------
    def compose(self) -> ComposeResult:
        where = self.location.describe() if self.location is not None else "no board given"
        yield Static(Text.assemble((" LoopX ", "bold reverse"), f"  opening {where}…"), id="opening")

    def on_mount(self) -> None:
        # What is alive now (Textual, the kernel, the styles) lives as long as the
        # app: frozen at once, a full collection does not walk it while the
        # board's first screen is built (one took ~240 ms there under load).
        self._loop_thread = threading.get_ident()
        freeze_heap()
        self.set_interval(1.0, self._collect_when_idle, name="idle collector")
        self.set_interval(
            0.25, lambda: self.gates.when_idle(), name="gates when idle"
        )  # (the queue of the board on screen)
        if self.location is None and self.store is None:
            self.post_message(BoardFailed(LoopxError("no board given", "pass --db PATH or run `loopx init`")))
            return
        self.run_worker(self._open_board, thread=True, group="reads", name="open board", exit_on_error=False)

    def _open_board(self) -> None:
        while True:
            try:
                store = self.store
                if store is None:
                    if self.location is None:
                        return  # (on_mount said there is no board)
                    store = open_store(self.location)
                snapshot = BoardReader(store, self.now).snapshot(STATUS, self.first_pages(STATUS))
                if self.switched:  # another of the person's boards: their key, as that board knows them
                    self._member_here(store)
                break
            except BoardBusy as err:  # held by another process: said, and tried again until it lets go
                self.post_message(BoardWaiting(err))
                if self._retry_open.wait(OPEN_RETRY) or get_current_worker().is_cancelled:
                    return
            except LoopxError as err:
                self.post_message(BoardFailed(err))
                return
            except Exception as exc:  # not a board at all, a broken file: said on screen
                where = self.location.describe() if self.location is not None else "the board"
                self.post_message(
                    BoardFailed(
                        LoopxError(f"cannot open {where}: {type(exc).__name__}: {exc}", "check --db / LOOPX_DB")
                    )
                )
                return
        self.post_message(BoardLoaded(store, snapshot))

    def _member_here(self, store: Store) -> None:
        """(In the worker that opened another board.) Whether the person's key
        decides on it: they are one of its people, or it is read-only, saying why."""
        from loopx_core.authority.people import member
        from loopx_core.store.known_boards import remember

        remember(store.location)
        if self.key is None:  # (why the first board was read-only holds here too)
            self.read_only, self.read_only_hint = self.first_refusal
            return
        try:
            self.person, self.read_only = member(store, self.key), None
        except LoopxError as err:
            self.person, self.read_only = None, err.message
            self.read_only_hint = err.hint or self.read_only_hint

    def on_board_waiting(self, message: BoardWaiting) -> None:
        self.board_error = message.error
        text = Text.assemble(
            (" LoopX ", "bold reverse"),
            "  waiting for the board\n\n",
            message.error.message,
            "\n",
            (f"→ {message.error.hint}\n\nq quits", "dim"),
        )
        try:
            self.query_one("#opening", Static).update(text)
        except Exception:  # (the opening screen is gone: the app is closing)
            pass

    def on_board_failed(self, message: BoardFailed) -> None:
        from .screens.no_board import NoBoardScreen

        self.board_error = message.error
        self.exit_code = message.error.exit_code
        self.push_screen(NoBoardScreen(message.error, self.location))
        self.loaded.set()

    def on_board_loaded(self, message: BoardLoaded) -> None:
        from .screens.board import BoardScreen

        snap = message.snapshot
        self.store = message.store
        self.reader = BoardReader(self.store, self.now)
        self.actions = HumanActions(self, self.store, self.person, self.read_only, self.read_only_hint)
        self.project_root = snap.project_root
        self.model.start(
            snap.page,
            snap.agents,
            snap.pending_gates,
            snap.objective,
            STATUS,
            {k: n for k, n in self.first_pages(STATUS).items() if n and k is not None},
        )
        self.model.runners = {r.agent: r for r in snap.runners}
        board = self.board_screen = BoardScreen(
            self.model, self.now, demo=self.demo, blink=self.background, standing=self.standing
        )
        # The board is the base of a screen stack of its own, not pushed over
        # the "opening…" screen: Textual keeps the screen under the top one
        # "current" whatever covers it, and its repaints redrew the whole board
        # (a full update per change from an agent, ~40 ms at 160×48).
        self.switches += 1
        left, self.board_mode = self.current_mode, f"board{self.switches}"
        self.add_mode(self.board_mode, lambda: board)
        self.switch_mode(self.board_mode)
        if left.startswith("opening"):  # (the screen that said "opening…" while another board opened)
            self.call_later(self.remove_mode, left)
        if self.intro:
            self.notice(self.intro, title="LoopX demo" if self.demo else "LoopX", timeout=12)
        self.run_worker(self._check_history, thread=True, group="reads", name="verify history", exit_on_error=False)

    def _check_history(self) -> None:
        """The board checks its history as it opens (SECURITY.md): a red banner
        if altered — once the board is painted (it takes CPU that grows with
        the history: the first paint does not wait for it)."""
        reader = self.reader  # (the board this check is of: the pane may switch while it waits)
        self.painted.wait(10)
        from .modals import add_card, confirm  # noqa: F401
        from .screens import artifact, card, help  # noqa: F401  (and the screens `?` lists: the first `?`, enter or `t` does not import them)
        from .widgets import timeline  # noqa: F401  (Plotext, imported here once painted: `t` does not wait for it)

        if reader is None or reader is not self.reader:
            return
        try:
            report, problems = reader.verify()
        except Exception as exc:  # a check that cannot run is said, never silent
            if not self.is_running:
                return  # (stopped as the board closed)
            self.post_message(PollFailed(f"cannot verify the history: {type(exc).__name__}: {exc}"))
            self.call_from_thread(self.gates.opened)
            return
        self.post_message(HistoryChecked(report, problems))
        help.help_lines(self, help.WIDTH)  # (the help laid out, after the check: the first `?` only draws it)

    def on_history_checked(self, message: HistoryChecked) -> None:
        freeze_heap()  # (the board's opening reads are done)
        report = message.report
        self.history = report
        self.gates.opened()  # the gates pending when the board opened, after the history is known
        if report.ok or self.board_screen is None or not self.board_screen.is_attached or not self.is_running:
            return  # (or the board is closing)
        first = report.first
        if first is None:
            return  # (not ok: it has a first problem)
        self.board_screen.show_banner(
            f"HISTORY ALTERED: {first.where} {first.what} · decisions that do not verify count for nothing · `loopx verify` shows every problem"
        )
        self.notice(
            f"{message.problems:,} problem(s) in the board's history — see the red line",
            title="History altered",
            severity="error",
            timeout=15,
        )

    def on_board_shown(self, message: BoardShown) -> None:
        self.board_ready()

    def board_ready(self) -> None:
        """The board screen is on screen: start following the board, and read
        the other view's first cards so that ``v`` finds them in hand."""
        self.loaded.set()
        if self.background and self.poller is None:
            self.start_background()
        self.call_after_refresh(self.painted.set)
        self.call_after_refresh(freeze_heap)
        self.call_after_refresh(self.read_pages, OWNER)
        self.call_after_refresh(self.survey_boards)

    # -- reading the board a screenful at a time ------------------------------------------
    def first_pages(self, mode: str) -> dict[str | None, int]:
        """How many cards to read first, per column of ``mode``, in the kernel's
        keys (an owner view's Unassigned is None): a page, none for history
        until the person asks for it (d, or a filter searching it)."""
        if mode == STATUS:
            wanted = lambda key: key not in ON_DEMAND or key in self.model.asked or bool(self.model.query.card_filter)  # noqa: E731
            return {col.key: (PAGE if wanted(col.key) else 0) for col in self.model._columns(STATUS)}
        counts = (
            self.model.tally.by_column(OWNER)
            if not self.model.query.card_filter
            else (self.model.shown or self.model.tally).by_column(OWNER)
        )
        return {
            (None if col.key == UNASSIGNED else col.key): (
                PAGE if counts.get(None if col.key == UNASSIGNED else col.key) else 0
            )
            for col in self.model._columns(OWNER)
        }

    def read_pages(self, mode: str) -> None:
        """Read (in a worker) the counts and the first cards of ``mode``'s columns, for the filter as it is now."""
        if self.reader is None:
            return
        reader, limits, query = self.reader, self.first_pages(mode), self.model.query
        card_filter = query.card_filter

        def read() -> None:
            page = reader.page(mode, limits, card_filter)
            if reader is self.reader:  # (still this board: the pane may have switched)
                self.post_message(PageRead(mode, limits, query.text, page))

        self.run_worker(read, thread=True, group="reads", name=f"read {mode} pages", exit_on_error=False)

    def on_page_read(self, message: PageRead) -> None:
        if message.query != self.model.query.text or self.board_screen is None:
            return  # read for a filter since changed: a newer read follows
        limits = {(UNASSIGNED if key is None else key): n for key, n in message.limits.items()}
        self.model.forget_pages(message.mode)
        self.model.add_page(message.page, message.mode, {k: n for k, n in limits.items() if n or message.mode == OWNER})
        self.board_screen.pages_read(message.mode)

    def on_column_wanted(self, message: ColumnWanted) -> None:
        self.read_column(message.key)

    def on_view_changed(self, message: ViewChanged) -> None:
        if self.reader is None:
            return
        self.reader.by_owner = message.mode == OWNER  # (the status view's changes are counted by status only: cheaper)
        if message.read:
            self.read_pages(message.mode)

    def on_filter_changed(self, message: FilterChanged) -> None:
        if self.reader is None:
            return
        self.reader.card_filter = message.card_filter
        self.read_pages(self.model.mode)

    def read_column(self, key: str) -> None:
        """Read (in a worker) the next page of one column of the current view."""
        if self.reader is None:
            return
        mode, reader, query = self.model.mode, self.reader, self.model.query
        offset, card_filter = self.model.next_offset(key), query.card_filter
        kernel_key = None if mode == OWNER and key == UNASSIGNED else key

        def read() -> None:
            cards = reader.more(mode, kernel_key, offset, PAGE, card_filter)
            if reader is self.reader:  # (still this board)
                self.post_message(ColumnRead(mode, key, offset, PAGE, query.text, cards))

        self.run_worker(read, thread=True, group="reads", name=f"read {key}", exit_on_error=False)

    def on_column_read(self, message: ColumnRead) -> None:
        if message.query != self.model.query.text or self.board_screen is None:
            return
        self.model.add_more(message.mode, message.key, message.offset, message.limit, message.cards)
        self.board_screen.column_read(message.mode, message.key)

    def start_background(self) -> None:
        """The workers that follow the board. Off when ``background`` is False."""
        from .workers import ChangePoller, LeaseReaper

        if self.reader is None or self.store is None:
            return
        opened = self.switches

        def post(message: Message) -> bool:  # (a board left behind says nothing more to this pane)
            return self.switches == opened and self.post_message(message)

        poller = self.poller = ChangePoller(
            self.reader,
            self.model.seq,
            post,
            interval=self.poll_interval,
            cancelled=lambda: not self.is_running,
        )
        reaper = self.reaper = LeaseReaper(self.store, cancelled=lambda: not self.is_running, reaped=poller.wake.set)
        self.run_worker(
            self._follow(poller), thread=True, group="background", name="change poller", exit_on_error=False
        )
        self.run_worker(self._follow(reaper), thread=True, group="background", name="lease reaper", exit_on_error=False)
        self._clock_timer = self.set_interval(1.0, self.tick, name="clock")
        self._survey_timer = self._survey_timer or self.set_interval(
            SURVEY_EVERY, self.survey_boards, name="your boards"
        )
        # The file watcher (DESIGN §7): the same engine as `loopx watch`, so both
        # may run at once — ingestion is idempotent.
        self.run_worker(self._watch_files(), group="watcher", name="file watcher", exclusive=True, exit_on_error=False)

    @staticmethod
    def _follow(loop) -> Callable[[], None]:
        def run() -> None:
            worker = get_current_worker()
            cancelled = loop.cancelled
            loop.cancelled = lambda: worker.is_cancelled or cancelled()
            loop.run()

        return run

    async def _watch_files(self) -> None:
        from loopx_core.watch import watch_board

        if self.store is not None:  # (always: started only once the board is open)
            await watch_board(self.store)

    def tick(self) -> None:
        """Once a second: what depends on the clock (lease time left, "asked 2m ago")."""
        for screen in self.screen_stack:
            tick = getattr(screen, "tick", None)
            if tick is not None and screen.is_attached:
                tick()

    def _collect_when_idle(self) -> None:
        """Once a second (heap.py): the older garbage, if the person paused."""
        collect_when_idle(self.ticks() - self.last_input)

    async def action_quit(self) -> None:
        self.exit(self.exit_code)

    def on_unmount(self) -> None:
        self.painted.set()  # (a history check still waiting for it ends)
        self._retry_open.set()  # (and a board still waited for)
        thaw_heap()
        self._wake_loops()

    def _wake_loops(self) -> None:
        """The board's reads end their processes, and its loops wake to see they must stop."""
        if self.reader is not None:
            self.reader.stop()
        if self.poller is not None:
            self.poller.wake.set()
        if self.reaper is not None:
            self.reaper.stop.set()

    # -- following the board -------------------------------------------------------
    def on_board_changed(self, message: BoardChanged) -> None:
        if not self.is_running or not self.screen_stack or self.board_screen is None:
            return  # shutting down: the board is in the store, nothing to draw
        delta = message.delta
        self.model.seq = max(self.model.seq, delta.seq)
        rebuild = False
        if delta.agents is not None and self.model.set_agents(delta.agents) and self.model.mode == OWNER:
            rebuild = True
        counts = None if delta.tally is None else (delta.tally, delta.shown if self.model.query.card_filter else None)
        self.apply_cards(delta.cards, rebuild=rebuild, counts=counts)
        if delta.pending_gates is not None:
            new, gone = self.model.set_pending(delta.pending_gates)
            self.gates.changed(new, gone)
            if new or gone:
                self.board_screen.refresh_header()
        if delta.runners is not None:
            self.runners_changed(delta.runners)
        for event in delta.events:
            if event.kind == "paused":
                key = ids.fmt(ids.CARD, event.card)
                why = event.data.get("reason", "")
                hint = (
                    "press + to raise its budget" if why == "budget" else "no progress for several turns; + resumes it"
                )
                self.notice(f"{key} paused ({why}): {hint}", severity="warning")
            elif event.kind == "ingest_error":
                self.notice(
                    f"ingest error: {event.data.get('file', '')} {event.data.get('reason', '')}", severity="error"
                )
        self.runtime_notices(delta.events)
        touched = frozenset(e.card for e in delta.events if e.card is not None)
        for screen in self.screen_stack:
            if screen is not self.board_screen:
                screen.post_message(BoardUpdated(touched))
        self.applied += 1

    def runtime_notices(self, events) -> None:
        """A runtime wants its person (notices.py): the bell and desktop
        notification, a toast, and the card's corner until its next turn."""
        before = dict(self.model.notices)
        for notice in follow(self.model.notices, events):
            self.alert.runtime_wants(notice.title, notice.message)
            where = f" on {ids.fmt(ids.CARD, notice.card)}" if notice.card is not None else ""
            self.notice(escape(f"{notice.message}{where}"), title=escape(notice.title), severity="warning", timeout=10)
        if self.model.notices != before and self.board_screen is not None and self.board_screen.is_attached:
            self.board_screen.query(CardList).refresh()

    def on_runners_read(self, message: RunnersRead) -> None:
        if self.is_running and self.board_screen is not None:
            self.runners_changed(message.runners)

    def runners_changed(self, runners) -> None:
        """Each agent's runner as its row was last read: on a runner event, and
        on the poller's clock (``workers.RUNNERS_EVERY``; DESIGN §10 "Runners")."""
        self.model.runners = {r.agent: r for r in runners}
        if self.board_screen is not None and self.board_screen.is_attached:
            self.board_screen.board.show_runners()
            self.board_screen.refresh_header()
            self.board_screen.refresh_bindings()  # p/u/s in the footer follow the runners

    def on_log_went_back(self, message: LogWentBack) -> None:
        """A witness (SECURITY.md "Witnesses"): a head the board saw vanished.
        Red, and read-only from now on: nothing on this board is decided here."""
        from loopx_core.authority import witness

        alarm = witness.alarm(message.gone)
        self.read_only = alarm
        if self.actions is not None:
            self.actions.refusal = alarm
        if self.board_screen is not None and self.board_screen.is_attached:
            self.board_screen.show_banner(
                f"{alarm} · the board is read-only and follows it no further · `loopx verify` names what changed"
            )
            self.board_screen.refresh_header()
        self.notice(f"{alarm} — nothing more is decided here", title="Log went backwards", severity="error", timeout=30)

    def on_poll_failed(self, message: PollFailed) -> None:
        self.notice(f"cannot read the board: {message.error}", severity="error")

    def apply_cards(self, cards: Iterable[CardView], rebuild: bool = False, counts=None) -> set[int]:
        """Newer views of cards; ``counts``: the store's (tally, shown) read with them."""
        cards = list(cards)
        old = {c.id: self.model.column_of(self.model.cards[c.id]) for c in cards if c.id in self.model.cards}
        changed = self.model.apply_cards(cards)
        recount = counts is not None and self.model.set_tally(*counts)
        if self.board_screen is not None and (changed or rebuild or recount):
            self.board_screen.apply(changed, old, rebuild=rebuild, recount=recount)
        return changed

    # -- telling the person -----------------------------------------------------------
    def notice(
        self, message: str, *, title: str = "", severity: SeverityLevel = "information", timeout: float | None = None
    ) -> None:
        """A toast, remembered, held while a gate is on screen (toasts.py)."""
        self.toasts.say(message, title=title, severity=severity, timeout=timeout)

    def refuse(self, message: str, hint: str = "") -> None:
        self.toasts.refuse(message, hint)

    def on_say(self, message: Say) -> None:
        self.notice(message.text, severity=message.severity)

    def on_refused(self, message: Refused) -> None:
        self.refuse(message.text, message.hint)

    def standing(self) -> Standing:
        """What the board's header says of the person and the gates (asked each time it is drawn)."""
        actions = self.actions
        person = actions.person.name if actions is not None and actions.person is not None else None
        return Standing(
            actions.refusal if actions is not None else None, person, tuple(self.gates.waiting), self.everywhere()
        )

    # -- the person's other boards (B; issue #42) -------------------------------------------
    def here(self) -> str | None:
        """This pane's board as the person's list names it."""
        from loopx_core.store.known_boards import entry_for

        return entry_for(self.location).target if self.location is not None else None

    def needs_here(self) -> Needs:
        """What needs the person on this board as it is on screen now (live):
        its pending gates by kind and its paused cards (``ops/my_boards.needs_of``)."""
        from loopx_core.ops.my_boards import needs_of

        paused = sum(n for status, _, n in self.model.tally.rows if status == "paused")
        return needs_of((g.kind for g in self.model.pending.values()), paused)

    def boards_shown(self) -> list[BoardStanding]:
        """The person's boards as ``B`` lists them: this one live, the others as last read."""
        here = self.here()
        if self.store is None:
            return list(self.my_boards)
        live = self.needs_here()
        return [s._replace(state="ok", needs=live, why="") if s.board.target == here else s for s in self.my_boards]

    def everywhere(self) -> tuple[int, int] | None:
        """(what needs the person on all their boards, how many boards): this
        board live, the others as last read (``B`` lists the same figures);
        None while they have this one board only."""
        here = self.here()
        others = [s for s in self.my_boards if s.board.target != here]
        if not others:
            return None
        return self.needs_here().total + sum(s.total for s in others), len(others) + 1

    def survey_boards(self) -> None:
        """Read every board of the person's list, in a worker (``reads.survey_boards``:
        bounded, a board that does not answer is unreachable); one reading at a time."""
        if self.surveying or not self.is_running:
            return
        self.surveying = True

        def read() -> None:
            from .reads import survey_boards

            try:
                found = survey_boards()
            except Exception as exc:  # (the list itself cannot be read): said, the last reading kept
                self.post_message(PollFailed(f"cannot read your boards: {type(exc).__name__}: {exc}"))
                found = None
            self.post_message(BoardsSurveyed(found if found is not None else list(self.my_boards)))

        self.run_worker(read, thread=True, group="reads", name="your boards", exit_on_error=False)

    def on_boards_surveyed(self, message: BoardsSurveyed) -> None:
        from .modals.boards import BoardsModal

        self.surveying = False
        self.my_boards = list(message.standings)
        self.surveyed.set()
        if not self.is_running or not self.screen_stack:
            return  # (the pane is closing)
        self.refresh_header()
        if isinstance(self.screen, BoardsModal):
            self.screen.show(self.boards_shown())

    def on_boards_wanted(self, message: BoardsWanted) -> None:
        from .modals.boards import BoardsModal

        if not isinstance(self.screen, BoardsModal):
            self.push_screen(BoardsModal(self.boards_shown(), self.here(), reading=True))
        self.surveyed.clear()
        self.survey_boards()

    def on_switch_board(self, message: SwitchBoard) -> None:
        self.switch_board(message.board)

    def switch_board(self, board: KnownBoard) -> None:
        """This pane shows ``board`` now: the current board's workers stop, its
        screens close, and the other board is opened and followed as the
        first one was (in workers), the person's key checked against it."""
        if board.target == self.here():
            return
        try:
            location = board.location()
        except ValueError as exc:
            self.refuse(escape(f"cannot open {board.name}: {exc}"), "`loopx boards forget` removes it from your list")
            return
        if not location.exists:
            self.refuse(
                escape(terminal_safe(f"{board.name} is gone ({location.describe()})")),
                escape(terminal_safe(f"`loopx boards forget {board.target}` forgets it")),
            )
            return
        if self.actions is not None and self.actions.in_flight:
            self.refuse("an action of yours is still running on this board", "switch once it is done")
            return
        standing = next((s for s in self.my_boards if s.board.target == board.target), None)
        if standing is not None and standing.state != "ok":
            self.refuse(
                escape(terminal_safe(f"{board.name} is {standing.state}: {standing.why}")),
                "B, then r, reads your boards again",
            )
            return
        self.leave_board(location.describe())
        self.location, self.switched = location, True
        self.exit_code, self.board_error = 0, None
        self.read_only = None
        self.person = None
        self.loaded.clear()
        self.run_worker(self._open_board, thread=True, group="reads", name="open board", exit_on_error=False)

    def leave_board(self, where: str) -> None:
        """Stop following this board: its workers cancelled, its screens gone, its store closed once they stopped."""
        old_workers = [w for w in self.workers if w.group in ("background", "watcher", "reads", "open card")]
        for worker in old_workers:
            if worker.name != "your boards":
                worker.cancel()
        self._wake_loops()
        if self._clock_timer is not None:
            self._clock_timer.stop()
            self._clock_timer = None
        store = self.store
        self.poller = self.reaper = None
        self.store, self.reader, self.actions = None, None, None
        self.board_screen, self.history = None, None
        self.model = BoardModel()
        self.gates.closed = True
        self.gates = GateQueue(self)
        self.painted.clear()
        opening = OpeningScreen(where)
        self.openings += 1
        mode = f"opening{self.openings}"
        self.add_mode(mode, lambda: opening)
        self.switch_mode(mode)
        card, self.card_screen, left = self.card_screen, None, self.board_mode

        async def prune() -> None:  # the board's screens (its dialogs, its card screen) go with its mode
            for gone in [left] + [m for m in self._modes if m.startswith("opening") and m != mode]:
                if gone in self._modes and gone != self.current_mode:
                    await self.remove_mode(gone)
            if card is not None:
                self.uninstall_screen(card)

        self.call_later(prune)
        if store is not None:

            def close() -> None:
                deadline = time.monotonic() + 10
                while time.monotonic() < deadline and any(not w.is_finished for w in old_workers):
                    time.sleep(0.05)
                try:
                    store.close()
                except Exception:  # (a store already gone has nothing to close)
                    pass

            threading.Thread(target=close, name="close the board left", daemon=True).start()

    def action_done(self, result, done) -> None:
        """An operator the person ran returned: apply the cards it returned at
        once (the poller confirms them), then say what happened."""
        values = (result,) if isinstance(result, CardView) or not isinstance(result, tuple) else result
        self.apply_cards(v for v in values if isinstance(v, CardView))
        for gate in (v for v in values if type(v).__name__ == "GateView"):
            self.model.pending.pop(gate.id, None)
        if done is not None:
            done(result)
        if self.board_screen is not None:
            self.board_screen.refresh_header()
        if self.poller is not None:
            self.poller.wake.set()

    def watch_lock(self) -> None:
        """While a person's action runs (every ``LOCK_POLL``): once it has
        waited ``LOCK_SAID`` for the board's write lock, which another process
        holds, every screen's footer says "waiting for the board" until it
        goes through or gives up (``LOOPX_LOCK_WAIT``, then refused as any
        action is). The actions run in workers: the board never freezes, and
        now it does not look as if nothing happened either (#30)."""
        from .format import lock_wait_line
        from .widgets.footer import KeyBar

        actions = self.actions
        waiting = actions.waiting(LOCK_SAID) if actions is not None else []
        if waiting:
            if self._lock_seen is None:
                self._lock_seen = self.ticks()
            self.lock_line = lock_wait_line(waiting, self.ticks() - self._lock_seen, lock_wait())
            self.lock_said.set()
        else:
            self._lock_seen, self.lock_line = None, ""
            self.lock_said.clear()
        for screen in self.screen_stack:  # (a screen opened meanwhile says it too)
            for bar in screen.query(KeyBar):
                bar.say(self.lock_line)
        running = actions is not None and actions.in_flight > 0
        if running and self._lock_timer is None:
            self._lock_timer = self.set_interval(LOCK_POLL, self.watch_lock, name="lock watch")
        elif not running and self._lock_timer is not None:
            self._lock_timer.stop()
            self._lock_timer = None

    async def ops_idle(self) -> None:
        """Wait for every operator call in flight (tests use this)."""
        while True:
            ops = [w for w in self.workers if w.group == "ops" and not w.is_finished]
            if not ops:  # (an empty list would mean "every worker", the poller too)
                return
            await self.workers.wait_for_complete(ops)

    async def reads_idle(self) -> None:
        """Wait for every read in flight, and a card being opened (tests use this)."""
        while True:
            reads = [w for w in self.workers if w.group in ("reads", "open card") and not w.is_finished]
            if not reads:
                return
            await self.workers.wait_for_complete(reads)

    # -- dialogs that lead to a human action ------------------------------------------
    async def on_event(self, event: events.Event) -> None:
        """Keys typed before a dialog has a focused field wait for it, or are
        dropped, and so are a gate dialog's before it is armed (see modals/base.py)."""
        from .modals.base import LoopxModal

        if isinstance(event, (events.Key, events.MouseDown, events.MouseScrollDown, events.MouseScrollUp)):
            self.last_input = (
                self.ticks()
            )  # (the older garbage and unasked gates wait for a pause: heap.py, gate_queue.py)
        if isinstance(event, events.Key) and self.screen_stack:
            screen = self.screen
            if isinstance(screen, LoopxModal) and not screen.ready:
                if screen.TYPE_AHEAD:
                    screen.early_keys.append(event)
                return
            if isinstance(screen, LoopxModal) and screen.drops(event.key):
                return
        await super().on_event(event)

    async def on_dialog_ready(self, message: DialogReady) -> None:
        from textual.widgets import Input

        from .modals.base import LoopxModal

        dialog = message.dialog
        if not isinstance(dialog, LoopxModal):
            return
        dialog.ready = True
        early, dialog.early_keys = dialog.early_keys, []
        # Typing and moving between fields are applied here and now, in order
        # (forwarded as events, a Tab would move focus only after the letters
        # behind it had already gone to the old field). Any other key goes
        # through the normal path, and so does everything after it.
        while early:
            key, field = early[0], dialog.focused
            if self.screen is not dialog:
                return  # it closed: the rest was typed for what came next
            if key.key in ("tab", "shift+tab"):
                dialog.focus_next() if key.key == "tab" else dialog.focus_previous()
            elif isinstance(field, Input) and key.is_printable and key.character:
                field.insert_text_at_cursor(key.character)
            elif isinstance(field, Input) and key.key == "backspace":
                field.action_delete_left()
            else:
                break
            early.pop(0)
        for key in early:
            await super().on_event(events.Key(key.key, key.character))

    def on_dialog_closed(self, message: DialogClosed) -> None:
        self.call_later(self.gates.show_next)

    # -- what the gate queue asks of the app (host.GatesHost) ------------------------------
    def show_gate(self, brief: GateBrief, answered: Callable[[GateAnswer | None], None]) -> GateDialog:
        from .modals.gate import GateModal

        self.clear_notifications()  # nothing may cover the question
        modal = GateModal(
            brief, self.now, blink=self.background, ticks=self.ticks, arm_delay=self.arm_delay, reader=self.reader
        )
        self.push_screen(modal, callback=answered)
        return modal

    def answer_gate(self, gate_id: int, answer: GateAnswer) -> None:
        if self.actions is not None:
            self.actions.answer_gate(
                gate_id,
                answer.decision,
                answer.note,
                answer.remember,
                answer.choice,
                answer.text,
                second_key=answer.second_key,
            )

    def refresh_header(self) -> None:
        board = self.board_screen
        if board is not None and board.is_attached:
            board.refresh_header()

    # -- what the screens ask for (messages: no screen calls the app) ---------------------
    def post_message(self, message: Message) -> bool:
        """A screen's ``Request`` posted on the app's own thread is handled
        right after the event that made it, before the next one in the queue:
        queued behind them, the keys typed after ``n`` would reach the board,
        not the form ``n`` opens. Anything else (and anything from a worker's
        thread) is queued as usual."""
        if isinstance(message, Request) and threading.get_ident() == self._loop_thread:
            if not self.is_running:
                return False
            self.call_next(self._handle_request, message)
            return True
        return super().post_message(message)

    def _handle_request(self, message: Request) -> None:
        handler = getattr(self, message.handler_name, None)
        if handler is not None:
            handler(message)

    def on_card_dropped(self, message: CardDropped) -> None:
        self.drop_card(message.card_id, message.column)

    def on_move_wanted(self, message: MoveWanted) -> None:
        self.move_card(message.card_id, message.to)

    def on_reassign_wanted(self, message: ReassignWanted) -> None:
        self.reassign(message.card_id)

    def on_budget_wanted(self, message: BudgetWanted) -> None:
        self.raise_budget(message.card_id)

    def on_command_wanted(self, message: CommandWanted) -> None:
        from .modals.command import CommandModal

        def chosen(argv: list[str] | None) -> None:
            if argv and self.actions is not None:
                self.actions.run_verb(argv)

        self.push_screen(CommandModal(message.line, blink=self.background), chosen)

    def on_edit_wanted(self, message: EditWanted) -> None:
        """The card is read again first (in a worker): the form shows its objective and verify as they are."""
        from .modals.command import EditCardModal

        if self.reader is None:
            return
        reader = self.reader

        def chosen(argv: list[str] | None) -> None:
            if argv and self.actions is not None:
                self.actions.run_verb(argv)

        def read() -> None:
            try:
                card = reader.card(message.card_id)
            except LoopxError as err:
                self.call_from_thread(self.refuse, err.message, err.hint)
                return
            if reader is self.reader:  # (still this board)
                self.call_from_thread(self.push_screen, EditCardModal(card, blink=self.background), chosen)

        self.run_worker(read, thread=True, group="reads", name="read a card to edit", exit_on_error=False)

    def on_new_card_wanted(self, message: NewCardWanted) -> None:
        self.new_card()

    def on_gates_wanted(self, message: GatesWanted) -> None:
        self.gates.show_all()

    def on_card_gate_wanted(self, message: CardGateWanted) -> None:
        card = self.model.cards.get(message.card_id)
        gate = card.pending_gate if card is not None else message.pending_gate
        if gate is None:
            self.notice(f"{ids.fmt(ids.CARD, message.card_id)} has no gate waiting")
            return
        self.gates.show_first(gate)

    def on_runner_wanted(self, message: RunnerWanted) -> None:
        if self.actions is not None:
            self.actions.control_runner(message.agent, message.what)

    def on_keep_try_wanted(self, message: KeepTryWanted) -> None:
        if self.actions is not None:
            self.actions.keep_try(message.card_id, message.head)

    def on_open_timeline(self, message: OpenTimeline) -> None:
        self.open_timeline(message.card_id)

    def on_open_tries(self, message: OpenTries) -> None:
        self.open_tries(message.card_id)

    def on_open_workspaces(self, message: OpenWorkspaces) -> None:
        self.open_workspaces()

    def on_help_wanted(self, message: HelpWanted) -> None:
        self.action_help()

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
            if drop.arg is not None:  # (a move always names its status)
                self.move_card(card_id, drop.arg)
        elif self.actions is not None:
            self.actions.assign(card_id, drop.arg)

    def move_card(self, card_id: int, to: str) -> None:
        """A person's move; cancelling asks first (it cannot be undone)."""
        card, actions = self.model.cards.get(card_id), self.actions
        if card is None or actions is None:
            return
        if to != "cancelled":
            actions.move(card_id, to)
            return
        from .modals.confirm import ConfirmModal

        def answered(yes: bool | None) -> None:
            if yes:
                actions.move(card_id, "cancelled")

        self.push_screen(ConfirmModal(f"Cancel {card.key}?", card.title, "y cancel it", "n keep it"), answered)

    def reassign(self, card_id: int) -> None:
        from .modals.pick import PickModal
        from .state import UNASSIGNED

        card = self.model.cards.get(card_id)
        if card is None:
            return
        choices = [(a, a) for a in self.model.agents] + [(UNASSIGNED, "Unassigned")]

        def picked(choice: str | None) -> None:
            if choice is not None and self.actions is not None:
                self.actions.assign(card_id, None if choice == UNASSIGNED else choice)

        self.push_screen(PickModal(f"Reassign {card.key} to…", choices, current=card.owner or UNASSIGNED), picked)

    def raise_budget(self, card_id: int) -> None:
        from .modals.budget import BudgetModal

        card = self.model.cards.get(card_id)
        if card is None:
            return

        def chosen(data: dict | None) -> None:
            if data and self.actions is not None:
                self.actions.raise_budget(card_id, data)

        self.push_screen(BudgetModal(card, blink=self.background), chosen)

    def new_card(self) -> None:
        from .modals.add_card import AddCardModal

        def chosen(data: dict | None) -> None:
            if data and self.actions is not None:

                def focus(view: CardView) -> None:
                    if self.board_screen is not None:
                        self.board_screen.call_after_refresh(self.board_screen.select_card, view.id)

                self.actions.add_card(data, then=focus)

        self.push_screen(AddCardModal(self.model.agents, blink=self.background), chosen)

    # -- drilling in -----------------------------------------------------------------------
    def open_card(self, card_id: int) -> None:
        """The card's screen (a card not in hand is read first, in a worker)."""
        if self.reader is None:
            return
        if card_id in self.model.cards:
            self.show_card(self.model.cards[card_id])
            return
        reader = self.reader

        def read() -> None:
            try:
                card = reader.card(card_id)
            except LoopxError as err:
                self.call_from_thread(self.refuse, err.message, err.hint)
                return
            if reader is self.reader:  # (still this board)
                self.call_from_thread(self.show_card, card)

        self.run_worker(read, thread=True, group="reads", name="read a card", exit_on_error=False)

    def show_card(self, card: CardView) -> None:
        """The card screen, built once and kept (installed): the next card is shown in it.

        Its detail is read first, and the screen drawn once with it when the
        read is back within ``DETAIL_WAIT`` (a few ms on a quiet board): drawn
        before, the drawing held the interpreter's lock while the read waited
        for it between SQLite steps (~50 ms), and the screen was drawn twice.
        A slower read (a writer holds the lock) does not hold the screen back:
        it opens and fills in when the read lands."""
        if self.reader is None:
            return
        ahead = self.reader.card_detail_ahead(card.id)
        self.run_worker(
            self._show_card(card, ahead),
            group="open card",
            name=f"open {card.key}",
            exclusive=True,
            exit_on_error=False,
        )

    async def _show_card(self, card: CardView, ahead) -> None:
        from .screens.card import CardScreen

        try:
            await asyncio.wait_for(asyncio.shield(asyncio.wrap_future(ahead)), DETAIL_WAIT)
        except Exception:  # (slow, or failed: the screen says so as it would have)
            pass
        screen = self.card_screen
        if screen is None:
            self.card_screen = CardScreen(card, self.reader, self.now, ahead)
            self.install_screen(self.card_screen, name="card")
            self.push_screen("card")
        elif screen not in self.screen_stack:
            screen.show(card, ahead)
            self.push_screen("card")
        else:
            self.push_screen(
                CardScreen(card, self.reader, self.now, ahead)
            )  # (opened from within a card's own screens)

    def on_open_card(self, message: OpenCard) -> None:
        message.stop()
        self.open_card(message.card_id)

    def on_open_artifact(self, message: OpenArtifact) -> None:
        self.open_artifact(message.card_id, message.artifact, pager=message.pager)

    def open_artifact(self, card_id: int, artifact: Artifact, pager: bool = False) -> None:
        from .screens.artifact import ArtifactScreen, open_in_pager

        if pager:
            open_in_pager(self, artifact, self.project_root)
        else:
            self.push_screen(ArtifactScreen(card_id, artifact, self.project_root))

    def open_workspaces(self) -> None:
        from .screens.workspaces import WorkspacesScreen

        if self.reader is not None:
            self.push_screen(WorkspacesScreen(self.reader))

    def open_tries(self, card_id: int) -> None:
        from .screens.tries import TriesScreen

        if self.reader is not None:
            self.push_screen(TriesScreen(self.reader, card_id))

    def open_timeline(self, card_id: int | None = None) -> None:
        from .screens.timeline import TimelineScreen

        if self.reader is not None:
            title = self.model.cards[card_id].title if card_id in self.model.cards else self.model.objective
            self.push_screen(TimelineScreen(self.reader, card_id, title))

    def action_help(self) -> None:
        from .screens.help import HelpScreen

        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen())

    # -- command palette -----------------------------------------------------------------------
    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        board = self.board_screen
        if board is not None and self.store is not None:
            yield SystemCommand(
                "Board: toggle view", "Columns by status, or one column per agent", board.action_toggle_view
            )
            yield SystemCommand("Board: filter cards", "By words, @agent or status:…", board.action_filter)
            yield SystemCommand("Board: add a card", "A new card (validated like `loopx card add`)", self.new_card)
            yield SystemCommand(
                "Board: timeline", "Turns, gate waits, pauses and burn of the whole board", self.open_timeline
            )
            yield SystemCommand(
                "Boards: every board you have",
                "What needs you on each; Enter switches this pane to one (B)",
                lambda: self.post_message(BoardsWanted()),
            )
            yield SystemCommand(
                "Gates: answer waiting gates", "One at a time: y approve, n reject, A remember", self.gates.show_all
            )
            card = board.selected_card()
            if card is not None:
                yield SystemCommand(f"Card: open {card.key}", card.title, lambda: self.open_card(card.id))
                yield SystemCommand(
                    f"Card: timeline of {card.key}",
                    "Its turns, gate waits, pauses and burn",
                    lambda: self.open_timeline(card.id),
                )
                yield SystemCommand(
                    f"Card: reassign {card.key}",
                    "Hand it to another agent (a handoff packet is built)",
                    lambda: self.reassign(card.id),
                )
                yield SystemCommand(
                    f"Card: raise budget of {card.key}",
                    "Add turns, tokens or dollars",
                    lambda: self.raise_budget(card.id),
                )
                yield SystemCommand(
                    f"Card: move {card.key} to ready",
                    "A person's move (backlog / ready / cancelled)",
                    lambda: self.move_card(card.id, "ready"),
                )
                yield SystemCommand(
                    f"Card: edit {card.key}",
                    "Title, objective, next action, verify command (e)",
                    lambda: self.post_message(EditWanted(card.id)),
                )
                yield SystemCommand(
                    f"Card: window of {card.key}",
                    "So much per so long (:card window)",
                    lambda: self.post_message(CommandWanted(f"card window {card.key} --every ")),
                )
            for title, help_text, line in PERSON_COMMANDS:
                yield SystemCommand(title, help_text, lambda line=line: self.post_message(CommandWanted(line)))
            focused, actions = board.focused_agent(), self.actions
            if actions is not None:
                for agent in sorted(
                    self.model.runners, key=lambda a: (a != focused, a)
                ):  # the selected card's agent first
                    for what, title, then in (
                        ("pause", "Pause runner", "no new turn starts (p)"),
                        ("resume", "Resume runner", "it goes on (u)"),
                        ("stop", "Stop runner", "it ends its turn, releases its card and exits (s)"),
                    ):
                        yield SystemCommand(
                            f"{title} of {agent}",
                            then,
                            lambda agent=agent, what=what: actions.control_runner(agent, what),
                        )
            if self.location is not None:
                where = self.location.describe()
                yield SystemCommand("Board: where is this board?", where, lambda: self.notice(f"Board: {where}"))
        alert = self.alert
        yield SystemCommand(
            f"Notifications: bell {'off' if alert.bell else 'on'}",
            "Ring the terminal bell when a gate arrives",
            self._toggle_bell,
        )
        if alert.desktop_available:
            yield SystemCommand(
                f"Notifications: desktop {'off' if alert.desktop else 'on'}",
                "A desktop notification for a gate while you look elsewhere",
                self._toggle_desktop,
            )
        yield SystemCommand("Help: every key", "What each key does, per screen", self.action_help)
        yield from super().get_system_commands(screen)

    def _toggle_bell(self) -> None:
        self.alert.bell = not self.alert.bell
        self.notice(f"Bell for new gates {'on' if self.alert.bell else 'off'}")

    def _toggle_desktop(self) -> None:
        self.alert.desktop = not self.alert.desktop
        self.notice(f"Desktop notifications for new gates {'on' if self.alert.desktop else 'off'}")
