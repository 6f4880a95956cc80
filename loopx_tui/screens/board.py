"""The main screen: the board, live."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import Input

from ..messages import (
    BoardShown,
    BoardsWanted,
    BudgetWanted,
    CardDropped,
    CardSelected,
    CommandWanted,
    DragHover,
    EditWanted,
    FilterChanged,
    GatesWanted,
    HelpWanted,
    MoveWanted,
    NewCardWanted,
    OpenCard,
    OpenTimeline,
    OpenTries,
    OpenWorkspaces,
    ReassignWanted,
    RunnerWanted,
    Say,
    ViewChanged,
)
from ..runners import summary
from ..state import OWNER, STATUS, BoardModel, Query, Standing
from ..widgets.board import BoardBanner, BoardHeader, BoardView
from ..widgets.card_list import CardList
from ..widgets.footer import KeyBar

DROP_HINTS = {"assign": "⤓ assign", "unassign": "⤓ unassign", "ready": "⤓ ready", "cancelled": "⤓ cancel"}


class BoardScreen(Screen):
    AUTO_FOCUS = "CardList"

    BINDINGS = [
        Binding(
            "enter", "open_card", "Open", tooltip="open the selected card: evidence, gates, handoffs, events, burn"
        ),
        Binding(
            "t",
            "timeline",
            "Timeline",
            tooltip="the whole board's trajectory: turns, gate waits, pauses, handoffs, burn per hour",
        ),
        Binding(
            "W",
            "workspaces",
            "Workspaces",
            show=False,
            tooltip="each card's git worktree: size, age, may it go; the total against your cap",
        ),
        Binding(
            "B",
            "boards",
            "Boards",
            show=False,
            tooltip="your boards (every project, local and team) and what needs you on each; Enter switches this pane",
        ),
        Binding("T", "tries", "Tries", show=False, tooltip="the selected card's tries side by side; k keeps one"),
        Binding("v", "toggle_view", "View", tooltip="columns by status ⇄ one column per agent (plus Unassigned)"),
        Binding(
            "d",
            "show_done",
            "Done",
            show=False,
            tooltip="show the done and cancelled cards (counted on open, read when asked for); ↓ past a column's last card reads on",
        ),
        Binding("slash", "filter", "Filter", tooltip="filter by words, @agent or status:… (Esc clears)"),
        Binding("g", "answer_gates", "Gates", tooltip="answer the waiting gates one by one (the deferred ones too)"),
        Binding("n", "new_card", "New", tooltip="add a card (a form, validated like `loopx card add`)"),
        Binding(
            "a", "reassign", "Assign", tooltip="reassign the selected card to an agent (handoff packet) or unassign it"
        ),
        Binding(
            "plus",
            "raise_budget",
            "+Budget",
            show=False,
            tooltip="raise the selected card's budget (resumes a paused card)",
        ),
        Binding(
            "e",
            "edit_card",
            "Edit",
            show=False,
            tooltip="edit the selected card: title, objective, next action, verify command (signed, as `loopx card edit`)",
        ),
        Binding(
            "colon",
            "command",
            "Command",
            show=False,
            tooltip="a person's command as at the terminal, under the board's unlock: notify set/test, workspace cap/setup, price set, dangerous set, agent add, card edit/window …",
        ),
        Binding("r", "move('ready')", "To ready", show=False, tooltip="move the selected card to ready"),
        Binding("b", "move('backlog')", "To backlog", show=False, tooltip="move the selected card to the backlog"),
        Binding(
            "x",
            "move('cancelled')",
            "Cancel card",
            show=False,
            tooltip="cancel the selected card (asks first: y cancels, n keeps it)",
        ),
        Binding(
            "shift+right,greater_than_sign",
            "shift(1)",
            "Move right",
            show=False,
            tooltip="move the card one column right — what a drag there does",
        ),
        Binding(
            "shift+left,less_than_sign",
            "shift(-1)",
            "Move left",
            show=False,
            tooltip="move the card one column left — what a drag there does",
        ),
        Binding("up,k", "nav(0,-1)", "Up", show=False, tooltip="select the card above"),
        Binding("down,j", "nav(0,1)", "Down", show=False, tooltip="select the card below"),
        Binding("left,h", "nav(-1,0)", "Left", show=False, tooltip="select a card in the column to the left"),
        Binding("right,l", "nav(1,0)", "Right", show=False, tooltip="select a card in the column to the right"),
        Binding(
            "pagedown",
            "page(1)",
            "Page down",
            show=False,
            tooltip="select the card a screenful below (what a click under a column's scrollbar thumb shows); at the last card, reads on",
        ),
        Binding("pageup", "page(-1)", "Page up", show=False, tooltip="select the card a screenful above"),
        Binding("home", "page(-1000000)", "First card", show=False, tooltip="select the column's first card"),
        Binding(
            "end",
            "page(1000000)",
            "Last card",
            show=False,
            tooltip="select the column's last card read so far (↓ there reads on)",
        ),
        Binding(
            "tab",
            "nav(1,0)",
            "Next column",
            show=False,
            tooltip="select a card in the next column (focus stays on the cards)",
        ),
        Binding(
            "shift+tab", "nav(-1,0)", "Previous column", show=False, tooltip="select a card in the previous column"
        ),
        Binding("escape", "escape", "Cancel", show=False, tooltip="cancel a drag, or clear the filter"),
        Binding("question_mark", "help", "Help", tooltip="this list of keys"),
        Binding("q", "app.quit", "Quit", tooltip="quit (agents keep working; the board is in the store)"),
        # In the footer only while the selected card's agent has a runner (``footer_shows``).
        Binding(
            "p",
            "runner('pause')",
            "Pause",
            tooltip="pause the runner of the selected card's agent (owner view: the column's agent): no new turn starts",
        ),
        Binding("u", "runner('resume')", "Resume", tooltip="resume that agent's runner (lifts a pause or a stop)"),
        Binding(
            "s",
            "runner('stop')",
            "Stop",
            tooltip="stop that agent's runner: it ends its turn, releases its card and exits",
        ),
    ]

    def __init__(
        self,
        model: BoardModel,
        now: Callable[[], float],
        *,
        demo: bool = False,
        blink: bool = True,
        standing: Callable[[], Standing] = Standing,
        **kw,
    ):
        super().__init__(**kw)
        self.model = model
        self.now = now
        self.demo = demo
        self.blink = blink  # the filter's cursor blinks (not in tests and snapshots)
        self.standing = standing  # the app's answer, asked each time the header is drawn
        self.focus_card: int | None = None
        self.focus_after: tuple[str, int] | None = None  # (column, row): focus it once the column's next cards are read

    def compose(self) -> ComposeResult:
        model = self.model
        # The banner and the filter bar are mounted the first time they are
        # needed: each widget mounted with the board costs its first paint ~3 ms.
        yield BoardHeader(id="board-header")
        yield BoardView(model, self.now, id="board")
        yield KeyBar()

    def on_mount(self) -> None:
        self.refresh_header()
        self.call_after_refresh(self._focus_first)
        self.app.post_message(BoardShown())

    @property
    def board(self) -> BoardView:
        return self.query_one(BoardView)

    def refresh_header(self) -> None:
        for header in self.query(BoardHeader):
            standing = self.standing()
            now = self.now()
            running = (
                (summary(self.model.runners.values(), now), summary(self.model.runners.values(), now, short=True))
                if self.model.runners
                else ("", "")
            )
            header.show(
                self.model,
                demo=self.demo,
                refusal=standing.refusal,
                person=standing.person,
                runners=running,
                waiting=standing.waiting,
                everywhere=standing.everywhere,
            )

    def show_banner(self, text: str | None) -> None:
        """A line under the header that cannot be missed (None hides it)."""
        banner = next(iter(self.query(BoardBanner)), None)
        if banner is None:
            if not text:
                return
            banner = BoardBanner(id="board-banner")
            self.mount(banner, after=self.query_one(BoardHeader))
        banner.say(text)

    def _filter_box(self) -> Input | None:
        """The filter bar (None before / was first pressed)."""
        return next(iter(self.query("#filter").results(Input)), None)

    def _filter_bar(self) -> Input:
        """The filter bar, mounted the first time / is pressed."""
        box = self._filter_box()
        if box is not None:
            return box
        box = Input(
            placeholder="filter: words, @agent, status:waiting — Enter keeps, Esc clears", id="filter", compact=True
        )
        self.mount(box)
        return box

    def tick(self) -> None:
        board = next(iter(self.query(BoardView)), None)
        if board is None:  # (not composed yet, or being taken down: the pane is opening or switching boards)
            return
        board.tick()
        if self.model.runners:
            self.refresh_header()  # (a runner's heartbeat ages: the header's count of gone ones follows the clock)

    def _focus_first(self) -> None:
        if isinstance(self.focused, CardList) and self.focused.cards:
            return  # (an empty column's focus, from a click or AUTO_FOCUS, moves on)
        for column in self.board.columns.values():
            if column.cards:
                column.body.focus(scroll_visible=False)
                return

    # -- applying changes ------------------------------------------------------
    def apply(
        self, changed: Iterable[int], old_columns: dict[int, str], rebuild: bool = False, recount: bool = False
    ) -> None:
        """Re-sync only the columns the changed cards left or entered (every
        column when the counts changed: ``recount``)."""
        if not self.is_mounted or not self.query(BoardView):
            return  # composing now (from the model as it is), or closing: nothing to catch up
        model = self.model
        chosen = self.selected_card()
        focused = chosen.id if chosen is not None else None
        moved_focus = False
        if rebuild:
            self.board.rebuild()
            moved_focus = focused is not None
        elif recount:
            moved_focus = any(
                old_columns.get(cid) not in (None, model.column_of(model.cards[cid]))
                for cid in changed
                if cid == focused
            )
            if not self.board.sync():
                self.board.rebuild()
                moved_focus = focused is not None
        else:
            affected: set[str] = set()
            for cid in changed:
                card = model.cards.get(cid)
                if card is None:
                    continue
                new = model.column_of(card)
                affected.add(new)
                old = old_columns.get(cid)
                if old is not None and old != new:
                    affected.add(old)
                    moved_focus = moved_focus or cid == focused
            if affected and not self.board.sync(affected):
                self.board.rebuild()
                moved_focus = focused is not None
        self.refresh_header()
        if moved_focus and focused is not None:
            self.call_after_refresh(self.select_card, focused)

    def pages_read(self, mode: str) -> None:
        """The first cards of ``mode``'s columns arrived (a view's first
        showing, a new filter, or read ahead for ``v``)."""
        if not self.is_mounted or not self.query(BoardView):
            return
        if mode == self.model.mode:
            if not self.board.sync():
                self.board.rebuild()
            self.refresh_header()
            if self.focused is None:
                self._focus_first()
        elif mode in self.board.views:
            self.board.stale(mode)
        else:
            self.board.prebuild(mode)  # hidden: the first `v` only shows it

    def column_read(self, mode: str, key: str) -> None:
        """More cards of one column arrived."""
        if mode != self.model.mode or not self.is_mounted or not self.query(BoardView):
            return
        column = self.board.column(key)
        if column is None:
            return
        self.board.sync([key])
        if self.focus_after is not None and self.focus_after[0] == key:
            row, self.focus_after = self.focus_after[1], None
            ids = column.card_ids()
            if ids:
                self.select_card(ids[min(row, len(ids) - 1)])

    def select_card(self, card_id: int) -> bool:
        """Select the card (and its column), scrolled into view; False when
        it is not shown (not in hand, or filtered out)."""
        column = self.board.column_of_card(card_id)
        index = column.body.index_of(card_id) if column is not None else None
        if column is None or index is None:
            return False
        column.body.focus(scroll_visible=False)
        column.body.select(index)
        self.focus_card = card_id
        return True

    def on_descendant_focus(self, event) -> None:
        if isinstance(event.widget, CardList) and event.widget.selected is not None:
            self.focus_card = event.widget.selected.id
            self.refresh_bindings()

    @on(CardSelected)
    def _card_selected(self, message: CardSelected) -> None:
        self.focus_card = message.card_id
        self.refresh_bindings()

    def footer_shows(self, binding: Binding) -> bool:
        """p/u/s are in the footer where they apply: the selected card's agent has a runner."""
        if binding.action.startswith("runner("):
            return self.focused_agent() in self.model.runners
        return True

    def selected_card(self):
        """The selected card of the focused column (None: no column has focus)."""
        if isinstance(self.focused, CardList) and self.focused.selected is not None:
            return self.model.cards.get(self.focused.selected.id)
        return None

    # -- drag and drop -------------------------------------------------------------
    @on(DragHover)
    def _drag_hover(self, message: DragHover) -> None:
        model = self.model
        card = model.cards.get(message.card_id)
        header = self.query_one(BoardHeader)
        if card is None or message.column is None:
            self.board.set_hints({})
            header.note = ""
            self.refresh_header()
            return
        drop = model.drop(card, message.column)
        title = model.column_title(message.column)
        if drop.op == "assign":
            hint = DROP_HINTS["assign" if drop.arg else "unassign"]
            header.note = f"drop {card.key} → {title}: " + (f"reassign to {drop.arg}" if drop.arg else "unassign")
        elif drop.op == "move" and drop.arg is not None:  # (a move always names its status)
            hint = DROP_HINTS[drop.arg]
            header.note = f"drop {card.key} → {title}: move to {drop.arg}"
        elif drop.reason:
            hint = "✗"
            header.note = f"✗ {drop.reason}"
        else:
            hint, header.note = "", f"{card.key} stays in {title}"
        self.board.set_hints({message.column: hint})
        self.refresh_header()

    @on(CardDropped)
    def _card_dropped(self, message: CardDropped) -> None:
        self.board.set_hints({})
        self.query_one(BoardHeader).note = ""
        self.refresh_header()
        # (and on to the app, which runs what the drop means)

    # -- actions -----------------------------------------------------------------------
    def action_open_card(self) -> None:
        card = self.selected_card()
        if card is not None:
            self.app.post_message(OpenCard(card.id))

    def action_timeline(self) -> None:
        self.app.post_message(OpenTimeline(None))

    def action_boards(self) -> None:
        self.app.post_message(BoardsWanted())

    def action_workspaces(self) -> None:
        self.app.post_message(OpenWorkspaces())

    def action_tries(self) -> None:
        card = self.selected_card()
        if card is not None:
            self.app.post_message(OpenTries(card.id))

    def action_toggle_view(self) -> None:
        model = self.model
        model.mode = OWNER if model.mode == STATUS else STATUS
        focused = self.focus_card
        self.app.post_message(
            ViewChanged(model.mode, read=model.needs_pages(model.mode))
        )  # (read ahead after the first paint, reading is rare)
        built = model.mode in self.board.views
        self.board.switch()
        self.refresh_header()
        if focused is not None:
            if built:
                self.select_card(focused)  # (kept columns: in the same frame as the switch)
            else:
                self.call_after_refresh(self.select_card, focused)

    def action_filter(self) -> None:
        # The bar takes the footer's row (its placeholder says Enter keeps, Esc
        # clears): the columns keep their height, so no card is laid out or
        # drawn again as it opens and closes (a row taken from them was ~100 ms).
        box = self._filter_bar()
        box.disabled = False
        self.query_one(KeyBar).display = False
        box.display = True
        box.cursor_blink = self.blink
        box.value = self.model.query.text
        box.focus()

    @on(Input.Changed, "#filter")
    def _filter_changed(self, event: Input.Changed) -> None:
        self.set_query(Query.parse(event.value))

    def set_query(self, query: Query) -> None:
        """Filter the cards in hand at once; the store's counts and first
        cards for the filter follow (a worker)."""
        if query.text == self.model.query.text:
            return
        self.model.query = query
        self.model.shown = None if not query.card_filter else self.model.shown
        self.board.sync()
        self.refresh_header()
        self.app.post_message(FilterChanged(query.card_filter))

    @on(Input.Submitted, "#filter")
    def _filter_done(self, event: Input.Submitted) -> None:
        self._hide_filter()
        self._focus_first()

    def _hide_filter(self) -> None:
        box = self._filter_box()
        if box is not None:
            box.display = False
            box.disabled = True  # (so focus never lands in it while hidden)
        footer = self.query_one(KeyBar)
        footer.display = True
        footer.bindings_changed(self)

    def clear_filter(self) -> None:
        box = self._filter_box()
        self._hide_filter()
        if self.model.query.active:
            if box is not None:
                box.value = ""
            self.set_query(Query())
        self._focus_first()

    def action_escape(self) -> None:
        for column in self.board.columns.values():
            if column.body.dragging:
                column.body.cancel_drag()
                return
        box = self._filter_box()
        if (box is not None and box.display) or self.model.query.active:
            self.clear_filter()

    def action_show_done(self) -> None:
        """Done and cancelled cards are counted on open and read when asked for."""
        if self.model.mode != STATUS:
            self.app.post_message(
                Say("In the owner view each agent's done cards come last in its column: ↓ past the last card reads on")
            )
            return
        column = self.board.column("done")
        if column is None:
            return
        if column.card_ids():
            self.select_card(column.card_ids()[0])
        elif column.total:
            self.focus_after = ("done", 0)
            column.show_more()

    def action_answer_gates(self) -> None:
        self.app.post_message(GatesWanted())

    def action_new_card(self) -> None:
        self.app.post_message(NewCardWanted())

    def action_reassign(self) -> None:
        card = self.selected_card()
        if card is None:
            self.app.notify("Select a card first (arrows), then press a", severity="warning")
            return
        self.app.post_message(ReassignWanted(card.id))

    def action_edit_card(self) -> None:
        card = self.selected_card()
        if card is None:
            self.app.notify("Select a card first (arrows), then press e", severity="warning")
            return
        self.app.post_message(EditWanted(card.id))

    def action_command(self) -> None:
        self.app.post_message(CommandWanted())

    def action_raise_budget(self) -> None:
        card = self.selected_card()
        if card is None:
            self.app.notify("Select a card first, then press +", severity="warning")
            return
        self.app.post_message(BudgetWanted(card.id))

    def focused_agent(self) -> str | None:
        """The agent whose runner ``p``/``u``/``s`` act on: in owner view the
        selected card's column, else the selected card's owner."""
        if self.model.mode == OWNER and isinstance(self.focused, CardList):
            column = self.board.column_of_list(self.focused)
            if column is not None and column.key in self.model.agents:
                return column.key
        card = self.selected_card()
        return card.owner if card is not None else None

    def action_runner(self, what: str) -> None:
        agent = self.focused_agent()
        if agent is None:
            self.app.notify(
                f"Select a card of the agent whose runner to {what} (arrows), then press the key again",
                severity="warning",
            )
            return
        self.app.post_message(RunnerWanted(agent, what))

    def action_move(self, to: str) -> None:
        card = self.selected_card()
        if card is not None:
            self.app.post_message(MoveWanted(card.id, to))

    def action_shift(self, step: int) -> None:
        """Move the selected card to the neighbouring column: the same operator a drag runs."""
        card = self.selected_card()
        if card is None:
            return
        target = self.model.neighbour(self.model.column_of(card), step)
        if target is not None:
            self.app.post_message(CardDropped(card.id, target))

    def action_nav(self, dx: int, dy: int) -> None:
        board = self.board
        keys = list(board.columns)
        if not keys:
            return
        current = self.focused if isinstance(self.focused, CardList) else None
        column = board.column_of_list(current) if current is not None else None
        if current is None or column is None or not column.cards:
            self._focus_first()
            return
        row = current.cursor
        if dy:
            if row + dy >= len(column.cards) and (column.show_more() or column.asked):
                self.focus_after = (column.key, row + 1)  # being read: go there when it arrives
                return
            current.select(row + dy)
            return
        index = keys.index(column.key)
        while True:
            index += dx
            if not 0 <= index < len(keys):
                return
            target = board.columns[keys[index]]
            if target.cards:
                # The same row on screen, as near as the other column allows.
                on_screen = max(0, row - current.first_in_view())
                target.body.focus(scroll_visible=False)
                target.body.select(min(len(target.cards) - 1, target.body.first_in_view() + on_screen))
                return
            if target.total and target.unread:  # (Done, before it was asked for): read it, then go there
                self.focus_after = (target.key, 0)
                target.show_more()
                return

    def action_page(self, pages: int) -> None:
        """Select the card ``pages`` screenfuls away, within the cards in hand;
        from the last one, a page down reads on as ↓ does."""
        current = self.focused if isinstance(self.focused, CardList) else None
        if current is None or not current.cards:
            self.action_nav(0, 1 if pages > 0 else -1)
            return
        row = max(0, min(len(current.cards) - 1, current.cursor + pages * current.screenful()))
        if row == current.cursor:
            self.action_nav(0, 1 if pages > 0 else -1)
        else:
            current.select(row)

    def action_help(self) -> None:
        self.app.post_message(HelpWanted())
