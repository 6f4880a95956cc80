"""The person's boards (``B``): each board's name, kind and place, and what
needs the person there — or that it is gone or unreachable. Enter switches
this pane to the highlighted board; ``r`` reads them all again; Esc closes.

Every name, path and reason is shown as text (``rich.text.Text``, made
terminal-safe), never read as markup: a board's name is whatever its folder
is called."""

from __future__ import annotations

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from loopx_core.ops.my_boards import OK, BoardStanding
from loopx_core.rules.text import terminal_safe

from ..format import ellipsize
from ..messages import BoardsWanted, SwitchBoard
from .base import LoopxModal

KEYS = "↑↓ choose · Enter switch to it · r read again · Esc close"


def board_line(standing: BoardStanding, here: bool) -> Text:
    """One board: its name, kind and needs on the first line, where it is on the second."""
    board = standing.board
    line = Text()
    line.append("● " if here else "  ", style="bold")
    line.append(terminal_safe(board.name)[:40], style="bold")
    line.append(f"  {board.kind}", style="dim")
    if standing.state != OK:
        line.append(f"  {standing.state}", style="bold red")
    elif standing.total:
        line.append(f"  ⚑ {standing.total} need{'s' if standing.total == 1 else ''} you", style="bold yellow")
        line.append(f" ({standing.needs.words() if standing.needs else ''})", style="yellow")
    else:
        line.append("  nothing needs you", style="dim")
    if here:
        line.append("  (this pane)", style="dim")
    where = f"{board.checkout} · {board.target}" if board.kind == "team" and board.checkout else board.target
    line.append("\n    " + terminal_safe(where), style="dim")
    if standing.state != OK and standing.why:
        line.append(" — " + terminal_safe(standing.why), style="red")
    for waiting in standing.first:  # (an agent's words: text, never markup)
        line.append("\n    ⚑ " + ellipsize(terminal_safe(waiting), 76), style="yellow")
    if standing.total > len(standing.first) and standing.first:
        line.append(f"\n    … and {standing.total - len(standing.first)} more there", style="dim")
    return line


def total_line(standings: list[BoardStanding]) -> Text:
    total = sum(s.total for s in standings)
    down = sum(1 for s in standings if s.state != OK)
    text = Text()
    text.append(f"{total} need{'s' if total == 1 else ''} you across {len(standings)} board", style="bold")
    text.append("s" if len(standings) != 1 else "", style="bold")
    if down:
        text.append(f" · {down} not read (gone or unreachable)", style="red")
    return text


class BoardsModal(LoopxModal):
    """Returns the ``KnownBoard`` to switch to (None: stay)."""

    BINDINGS = [
        Binding("enter", "switch", "Switch", tooltip="switch this pane to the highlighted board (a click does too)"),
        Binding("escape,q", "cancel", "Close", tooltip="close the list; this pane stays on its board"),
        Binding("r", "again", "Read again", tooltip="read every board again"),
    ]

    def __init__(self, standings: list[BoardStanding], here: str | None, reading: bool = False):
        super().__init__()
        self.standings = list(standings)
        self.here = here
        self.reading = reading

    def compose(self) -> ComposeResult:
        with Vertical(id="boards-dialog", classes="dialog") as box:
            box.border_title = "Your boards"
            yield OptionList(*self._options(), id="boards-options")
            yield Static(self._total(), id="boards-total")
            yield Static(KEYS, classes="dialog-keys")

    def _options(self) -> list[Option]:
        if not self.standings:
            return [Option(Text("no boards yet: `loopx init` in a project makes one"), id="-", disabled=True)]
        return [Option(board_line(s, s.board.target == self.here), id=str(i)) for i, s in enumerate(self.standings)]

    def _total(self) -> Text:
        if self.reading and not self.standings:
            return Text("reading your boards…", style="dim")
        return total_line(self.standings)

    def on_mount(self) -> None:
        super().on_mount()
        options = self.query_one(OptionList)
        options.highlighted = 0 if self.standings else None
        self.set_focus(options)

    def show(self, standings: list[BoardStanding]) -> None:
        """A newer reading of the boards (the highlight stays on the same board)."""
        options = self.query_one(OptionList)
        was = options.highlighted
        target = self.standings[was].board.target if was is not None and was < len(self.standings) else None
        self.standings, self.reading = list(standings), False
        options.clear_options()
        options.add_options(self._options())
        again = next((i for i, s in enumerate(self.standings) if s.board.target == target), 0)
        options.highlighted = again if self.standings else None
        self.query_one("#boards-total", Static).update(self._total())

    @on(OptionList.OptionSelected)
    def _picked(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.pick(event.option.id)

    def action_switch(self) -> None:
        options = self.query_one(OptionList)
        if options.highlighted is not None:
            self.pick(options.get_option_at_index(options.highlighted).id)

    def pick(self, option: str | None) -> None:
        if option in (None, "-"):
            return
        standing = self.standings[int(option)]
        if standing.board.target == self.here:
            self.dismiss(None)
            return
        self.dismiss(standing.board)
        self.app.post_message(SwitchBoard(standing.board))

    def action_again(self) -> None:
        self.query_one("#boards-total", Static).update(Text("reading your boards…", style="dim"))
        self.app.post_message(BoardsWanted())

    def action_cancel(self) -> None:
        self.dismiss(None)
