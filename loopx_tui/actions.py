"""Every human action the board performs goes through ``HumanActions``.

Answering a gate (and remembering the answer), raising a budget, moving or
cancelling a card, assigning or unassigning it, adding a card, pausing,
resuming or stopping an agent's runner: each public
method names the action and hands ``_perform`` a function of the person
deciding (a ``keys.Person`` whose key signs the decision). ``_perform`` is
the one place that (a) refuses when the board is read-only (no unlocked key,
or started with ``LOOPX_AGENT``), (b) runs the operator in a thread worker
with its own connection, and (c) reports the result or the refusal.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from loopx_core.ops import cards as card_ops
from loopx_core.ops import gates as gate_ops
from loopx_core.rules import ids
from loopx_core.rules.text import terminal_safe_value
from loopx_core.shapes.errors import LoopxError
from loopx_core.shapes.values import CardView

if TYPE_CHECKING:
    from textual.worker import Worker

    from loopx_core.store.backends import Store

    from .host import ActionsHost


class HumanActions:
    def __init__(self, app: ActionsHost, store: Store, person, read_only: str | None = None, hint: str = ""):
        self.app = app  # the app, as far as the actions see it (host.py)
        self.store = store
        self.person = person  # keys.Person, or None (read-only)
        # Why human actions are refused (None: they are allowed); the header shows
        # it. The app decides it (LoopxApp.read_only), once.
        self.refusal: str | None = read_only
        self.hint = hint  # what to do about it
        self.running: dict[int, str] = {}  # the operators running now: their worker's thread → what they do
        self.in_flight = 0  # operators started and not yet reported (the app looks for lock waits meanwhile)

    # -- the one place -----------------------------------------------------------
    def _perform(
        self, what: str, operator: Callable[[Any], Any], done: Callable[[Any], None] | None = None
    ) -> Worker | None:
        if self.refusal is not None:
            self.app.toasts.refuse(f"{what}: the board is read-only ({self.refusal})", self.hint)
            return None
        actor = self.person

        def job():
            thread = threading.get_ident()
            self.running[thread] = what
            try:
                with self.store.thread_connection():
                    result = terminal_safe_value(operator(actor))
            except LoopxError as err:
                self._finished(
                    thread,
                    self.app.toasts.refuse,
                    terminal_safe_value(err.message),
                    terminal_safe_value(err.hint or ""),
                )
                return None
            except Exception as exc:  # an operator bug must not take the board down
                self._finished(thread, self.app.toasts.refuse, f"{what} failed: {type(exc).__name__}: {exc}", "")
                return None
            self._finished(thread, self.app.action_done, result, done)
            return result

        self.in_flight += 1
        worker = self.app.run_worker(job, thread=True, group="ops", name=what, exit_on_error=False)
        self.app.watch_lock()
        return worker

    def _finished(self, thread: int, report: Callable[..., None], *args: Any) -> None:
        """An operator returned or refused: said (on the UI thread), and the
        footer no longer says it waits for the board."""
        del self.running[thread]

        def said() -> None:
            self.in_flight -= 1
            report(*args)
            self.app.watch_lock()

        self.app.call_from_thread(said)

    def waiting(self, longer_than: float) -> list[str]:
        """What the running operators do that has waited ``longer_than``
        seconds for the board's write lock (another process holds it)."""
        waits, now = self.store.lock_waits(), time.monotonic()
        return [what for thread, what in list(self.running.items()) if now - waits.get(thread, now) >= longer_than]

    # -- the actions -------------------------------------------------------------
    def answer_gate(
        self,
        gate_id: int,
        decision: str,
        note: str | None = None,
        remember: str | None = None,
        choice: str | None = None,
        text: str | None = None,
        second_key: bool = False,
    ) -> Worker | None:
        key = ids.fmt(ids.GATE, gate_id)

        def done(result):
            gate, card = result
            if gate.kind == "merge" and gate.status == "approved":
                said = (
                    f"{card.key} merged"
                    if card.status == "done"
                    else f"{card.key} did not merge, back to {card.owner}: {card.next_action}"
                )
                self.app.toasts.say(f"{key} approved by you; {said}")
                return
            extra = f", remembered for this {remember}" if remember else ""
            # (an option is an agent's text: the toast names its number, never its words, which could carry markup)
            said = (
                f" with option {gate.options.index(gate.choice) + 1}"
                if gate.choice
                else (" with your answer" if gate.text else "")
            )
            self.app.toasts.say(f"{key} {gate.status}{said} by you{extra}; {card.key} is {card.status}")

        def answer(actor):
            return gate_ops.answer(
                self.store,
                gate_id,
                decision,
                actor,
                note=note or None,
                remember=remember,
                choice=choice,
                text=text,
                second_key=second_key,
            )

        return self._perform(f"answer {key}", answer, done)

    def move(self, card_id: int, to: str) -> Worker | None:
        def done(card: CardView):
            self.app.toasts.say(f"{card.key} moved to {card.status}")

        return self._perform(
            f"move {ids.fmt(ids.CARD, card_id)}", lambda actor: card_ops.move_card(self.store, card_id, to, actor), done
        )

    def assign(self, card_id: int, to: str | None) -> Worker | None:
        def done(card: CardView):
            if to is None:
                self.app.toasts.say(f"{card.key} unassigned; it is {card.status}")
            elif card.status == "handoff":
                self.app.toasts.say(f"{card.key} handed to {to} with a handoff packet; the old lease is revoked")
            else:
                self.app.toasts.say(f"{card.key} assigned to {to}")

        return self._perform(
            f"assign {ids.fmt(ids.CARD, card_id)}",
            lambda actor: card_ops.assign_card(self.store, card_id, to, actor),
            done,
        )

    def raise_budget(self, card_id: int, data: dict) -> Worker | None:
        def done(card: CardView):
            self.app.toasts.say(f"{card.key} budget raised; it is {card.status}")

        return self._perform(
            f"budget {ids.fmt(ids.CARD, card_id)}",
            lambda actor: card_ops.budget_card(self.store, card_id, data, actor),
            done,
        )

    def add_card(self, data: dict, then: Callable[[CardView], None] | None = None) -> Worker | None:
        def done(card: CardView):
            self.app.toasts.say(f"{card.key} added ({card.status})")
            if then is not None:
                then(card)

        return self._perform("add card", lambda actor: card_ops.add_card(self.store, data, actor), done)

    def run_verb(self, argv: list[str]) -> Worker | None:
        """A person's verb (``:``, the edit form), run by its own handler under
        the board's unlock (``loopx_core.cli.in_board``): the CLI's checks and
        signature, its text said back."""
        from rich.markup import escape

        from loopx_core.cli import in_board

        what = "loopx " + " ".join(argv[:2])

        def done(outcome) -> None:
            text = terminal_safe_value(outcome.text or "done")
            self.app.toasts.say(escape(f"{what}: {text}"), severity="information" if outcome.code == 0 else "warning")

        return self._perform(what, lambda actor: in_board.run(self.store, argv, actor), done)

    def keep_try(self, card_id: int, head: str | None = None) -> Worker | None:
        """``k`` on the tries: keep this one (at ``head``, the commit compared); the others are archived and cancelled (signed)."""
        from loopx_core.ops import tries

        def done(result):
            kept, cancelled = result
            gone = ", ".join(c.key for c in cancelled) or "none still open"
            self.app.toasts.say(f"kept {kept.key}; archived and cancelled: {gone}")

        return self._perform(
            f"keep {ids.fmt(ids.CARD, card_id)}", lambda actor: tries.keep(self.store, card_id, actor, head), done
        )

    def control_runner(self, agent: str, what: str) -> Worker | None:
        """``p``/``u``/``s``: pause, resume or stop ``agent``'s runner (signed, DESIGN §10 "Runners")."""
        from loopx_core.ops import runners

        then = {
            "pause": "no new turn starts",
            "resume": "it goes on (a stopped runner: start `loopx run` again)",
            "stop": "it ends its turn, releases its card and exits",
        }[what]

        def done(_view):
            self.app.toasts.say(f"{agent}'s runner: {what} — {then}")

        return self._perform(
            f"{what} {agent}'s runner", lambda actor: runners.control(self.store, agent, what, actor), done
        )
