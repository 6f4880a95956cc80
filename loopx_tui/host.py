"""The app as its two services see it: what ``HumanActions`` and ``GateQueue``
may ask of it, and nothing more.

The app (``app.LoopxApp``) makes both services and hands itself to them; they
never import it (an import-linter ``layers`` contract, pyproject.toml), as the
screens never do — those post messages (messages.py). A service that needs
something new from the app says so here first, and mypy checks the app
provides it where the app hands itself over."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from textual.screen import Screen
    from textual.worker import Worker

    from loopx_core.ops.board import GateBrief

    from .alert import GateAlert
    from .messages import GateAnswer
    from .reads import BoardReader
    from .state import BoardModel
    from .toasts import Toasts


class Host(Protocol):
    """What both services need: the app's workers and its toasts."""

    @property
    def toasts(self) -> Toasts: ...

    def run_worker(
        self, work: Callable[[], Any], *, name: str, group: str, thread: bool, exit_on_error: bool
    ) -> Worker[Any]: ...

    def call_from_thread(self, callback: Callable[..., Any], *args: Any) -> Any: ...


class ActionsHost(Host, Protocol):
    """What ``actions.HumanActions`` asks of the app."""

    def action_done(self, result: Any, done: Callable[[Any], None] | None) -> None:
        """An operator the person ran returned ``result``: apply it, then ``done(result)``."""

    def watch_lock(self) -> None:
        """An action started or ended: the footers say whether one waits for the board's write lock."""


class GateDialog(Protocol):
    """A gate's dialog on screen (modals/gate.py)."""

    gate_id: int

    def gone(self) -> None:
        """The gate was answered elsewhere: the dialog closes saying so."""


class GatesHost(Host, Protocol):
    """What ``gate_queue.GateQueue`` asks of the app."""

    @property
    def model(self) -> BoardModel: ...

    @property
    def reader(self) -> BoardReader | None: ...

    @property
    def alert(self) -> GateAlert: ...

    @property
    def is_running(self) -> bool: ...

    @property
    def screen(self) -> Screen[Any]: ...

    @property
    def screen_stack(self) -> Sequence[Screen[Any]]: ...

    @property
    def ticks(self) -> Callable[[], float]: ...

    @property
    def last_input(self) -> float: ...

    @property
    def gate_idle(self) -> float: ...

    def call_later(self, callback: Callable[..., Any], *args: Any) -> bool: ...

    def show_gate(self, brief: GateBrief, answered: Callable[[GateAnswer | None], None]) -> GateDialog:
        """Put the gate's dialog up, over everything; ``answered`` gets its answer when it closes."""

    def answer_gate(self, gate_id: int, answer: GateAnswer) -> None:
        """The person answered: the answer goes to the board (``HumanActions.answer_gate``)."""

    def refresh_header(self) -> None:
        """Which gate waits changed: the board's header says it again."""
