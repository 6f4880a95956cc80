"""Messages between the workers, the widgets and the app: small dataclasses
carrying loopx_core's plain values (never ORM rows)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from textual.message import Message

from loopx_core.ops.board import BoardDelta, BoardSnapshot
from loopx_core.ops.board_pages import CardFilter
from loopx_core.shapes.errors import LoopxError
from loopx_core.shapes.values import Artifact, CardDetail

if TYPE_CHECKING:
    from textual.notifications import SeverityLevel

    from loopx_core.authority.verify import Report
    from loopx_core.authority.witness import Gone
    from loopx_core.ops.board_pages import Page
    from loopx_core.ops.my_boards import BoardStanding
    from loopx_core.store.backends import Store
    from loopx_core.store.known_boards import KnownBoard


class Request(Message):
    """Something a screen asks the app to do. The app handles it right after
    the event that made it, before the next key (``LoopxApp.post_message``):
    the keys typed after ``n`` land in the form ``n`` opens, not on the board."""


@dataclass
class BoardChanged(Message):
    """The change poller saw commits: what changed since the last seen seq."""

    delta: BoardDelta


@dataclass
class RunnersRead(Message):
    """The change poller re-read every runner's row on its clock: heartbeats
    are no events, so only this says a waiting runner is alive or a killed
    one gone (``rules.liveness.runner_alive``)."""

    runners: tuple  # loopx_core.ops.runners.RunnerView


@dataclass
class PollFailed(Message):
    """The change poller could not read the board (shown, then retried)."""

    error: str


@dataclass
class CardDropped(Request):
    """A card was dragged onto another column."""

    card_id: int
    column: str


@dataclass
class DragHover(Message):
    """A drag is over ``column`` (None: over no column, or the drag ended)."""

    card_id: int
    column: str | None


@dataclass
class OpenCard(Request):
    card_id: int


@dataclass
class CardSelected(Message):
    """A column's selection moved to this card (while the column has focus)."""

    card_id: int


@dataclass
class OpenArtifact(Request):
    card_id: int
    artifact: Artifact
    pager: bool = False


@dataclass
class LogWentBack(Message):
    """The board's witness saw the log go backwards (a ``witness.Gone``): the
    board stops following it and decides nothing more."""

    gone: Gone


@dataclass
class HistoryChecked(Message):
    """``loopx verify`` ran on the board as it opened (``loopx_core.authority.verify.Report``,
    its first problems only) and found ``problems`` problems in all."""

    report: Report
    problems: int = 0


@dataclass
class BoardLoaded(Message):
    """The board was opened and read (in a worker): the first picture."""

    store: Store
    snapshot: BoardSnapshot


@dataclass
class PageRead(Message):
    """Counts and the first cards of some columns of a view (``limits``: column -> how many asked)."""

    mode: str
    limits: dict
    query: str  # the filter it was read for (a newer filter drops it)
    page: Page


@dataclass
class ColumnRead(Message):
    """The next cards of one column."""

    mode: str
    key: str
    offset: int
    limit: int
    query: str
    cards: tuple


@dataclass
class ColumnWanted(Message):
    """A column was scrolled or stepped past its last card in hand: read on."""

    key: str


@dataclass
class BoardFailed(Message):
    """The board could not be opened."""

    error: LoopxError


@dataclass
class BoardWaiting(Message):
    """Another process holds the board so that it cannot be read: the board
    says who, keeps answering keys and tries again (``OPEN_RETRY``)."""

    error: LoopxError


@dataclass
class BoardUpdated(Message):
    """Sent to every open screen after the app applied a board change: the
    cards the change touched (a screen showing one of them reloads it)."""

    touched: frozenset[int]


@dataclass
class CardLoaded(Message):
    """A card's detail, read in a worker for the card screen."""

    detail: CardDetail


@dataclass
class DialogClosed(Message):
    """A LoopX dialog closed: a queued gate may pop now."""


@dataclass
class DialogReady(Message):
    """A dialog's first field has focus: keys typed ahead can be delivered."""

    dialog: object


# -- what the screens and dialogs ask of the app ---------------------------------
# A screen never calls the app: it posts a ``Request`` to it (``self.app.post_message``)
# and the app does it. No screen, dialog or widget imports the app module
# (pyproject's import contract "tui-screens-post-messages").


@dataclass
class BoardShown(Request):
    """The board screen is on screen: the app starts following the board."""


@dataclass
class OpenTimeline(Request):
    """``t``: the trajectory of one card, or of the whole board (None)."""

    card_id: int | None = None


@dataclass
class BoardsWanted(Request):
    """``B``: the person's boards, each with what needs them there."""


@dataclass
class BoardsSurveyed(Message):
    """Every board of the person's list was read (in a worker): what needs them on each."""

    standings: list[BoardStanding]


@dataclass
class SwitchBoard(Request):
    """Enter in the boards list: this pane shows that board now."""

    board: KnownBoard


@dataclass
class OpenWorkspaces(Request):
    """``W``: each card's git worktree."""


@dataclass
class OpenTries(Request):
    """``T``: a card's tries side by side."""

    card_id: int


@dataclass
class HelpWanted(Request):
    """``?``: every key."""


@dataclass
class MoveWanted(Request):
    """A person's move of a card (``r``, ``b``, ``x``: cancelling asks first)."""

    card_id: int
    to: str


@dataclass
class ReassignWanted(Request):
    """``a``: pick the agent to hand the card to."""

    card_id: int


@dataclass
class BudgetWanted(Request):
    """``+``: the budget form of a card."""

    card_id: int


@dataclass
class CommandWanted(Request):
    """``:``: a person's command line (``line``: what it starts with)."""

    line: str = ""


@dataclass
class EditWanted(Request):
    """``e``: the edit form of a card (title, objective, next, verify)."""

    card_id: int


@dataclass
class NewCardWanted(Request):
    """``n``: the add-card form."""


@dataclass
class GatesWanted(Request):
    """``g`` on the board: every pending gate, one at a time."""


@dataclass
class CardGateWanted(Request):
    """``g`` on a card's screen: its pending gate first (``pending_gate``: the
    one the screen knows, should the board not have the card in hand)."""

    card_id: int
    pending_gate: int | None


@dataclass
class RunnerWanted(Request):
    """``p``/``u``/``s``: pause, resume or stop an agent's runner."""

    agent: str
    what: str


@dataclass
class KeepTryWanted(Request):
    """``k`` on the tries, confirmed: keep this try."""

    card_id: int
    head: str | None = None  # its branch's commit the person compared (refused if it moved since)


@dataclass
class ViewChanged(Request):
    """``v``: the board shows ``mode`` now (``read``: its first cards are not in hand yet)."""

    mode: str
    read: bool


@dataclass
class FilterChanged(Request):
    """The filter changed: the store's counts and first cards for it are read."""

    card_filter: CardFilter


@dataclass
class Say(Request):
    """A notice for the person (held while a gate is on screen, as every notice)."""

    text: str
    severity: SeverityLevel = "information"


@dataclass
class Refused(Request):
    """Something the person asked for was refused (or could not be read): why, and what to do."""

    text: str
    hint: str = ""


@dataclass(frozen=True)
class GateAnswer:
    """What a gate's dialog closes with (modals/gate.py), for the gate queue (gate_queue.py)."""

    decision: str  # approve | reject | later | gone
    note: str | None = None
    remember: str | None = None  # card | agent | board | session (a runtime's question: that exact call)
    choice: str | None = None  # the option chosen (approves)
    text: str | None = None  # the person's own words (approves)
    second_key: bool = False  # confirmed with Y (a dangerous scope, a merge that changes the ground)
