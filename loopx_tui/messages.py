"""Messages between the workers, the widgets and the app: small dataclasses
carrying loopx_core's plain values (never ORM rows)."""

from __future__ import annotations

from dataclasses import dataclass

from textual.message import Message

from loopx_core.ops.board import BoardDelta, BoardSnapshot
from loopx_core.shapes.errors import LoopxError
from loopx_core.shapes.values import Artifact, CardDetail


@dataclass
class BoardChanged(Message):
    """The change poller saw commits: what changed since the last seen seq."""

    delta: BoardDelta


@dataclass
class PollFailed(Message):
    """The change poller could not read the board (shown, then retried)."""

    error: str


@dataclass
class CardDropped(Message):
    """A card was dragged onto another column."""

    card_id: int
    column: str


@dataclass
class DragHover(Message):
    """A drag is over ``column`` (None: over no column, or the drag ended)."""

    card_id: int
    column: str | None


@dataclass
class OpenCard(Message):
    card_id: int


@dataclass
class CardSelected(Message):
    """A column's selection moved to this card (while the column has focus)."""

    card_id: int


@dataclass
class OpenArtifact(Message):
    card_id: int
    artifact: Artifact
    pager: bool = False


@dataclass
class LogWentBack(Message):
    """The board's witness saw the log go backwards (a ``witness.Gone``): the
    board stops following it and decides nothing more."""

    gone: object


@dataclass
class HistoryChecked(Message):
    """``loopx verify`` ran on the board as it opened (``loopx_core.authority.verify.Report``,
    its first problems only) and found ``problems`` problems in all."""

    report: object
    problems: int = 0


@dataclass
class BoardLoaded(Message):
    """The board was opened and read (in a worker): the first picture."""

    store: object  # loopx_core.store.backends.Store
    snapshot: BoardSnapshot


@dataclass
class PageRead(Message):
    """Counts and the first cards of some columns of a view (``limits``: column -> how many asked)."""

    mode: str
    limits: dict
    query: str  # the filter it was read for (a newer filter drops it)
    page: object  # loopx_core.ops.board_pages.Page


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
