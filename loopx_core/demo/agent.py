"""The demo's stand-in for an agent runtime: one turn of a simulated agent,
through the real operators. Real runners drive it (``loopx run --runtime
shell -- python -m loopx_core.demo.agent``): it gets the continuation packet
and LOOPX_AGENT / LOOPX_CARD / LOOPX_DB like any shell runtime, takes a moment
(``LOOPX_DEMO_PACE`` seconds, jittered) as a real turn would, then does the
next step of the card's plan (scenario.py) and writes back.

Which step: the plan's step after the ones this agent already wrote back on
this card — the board is the only memory, as for a real agent across turns.
A refusal (a paused card, a revoked lease) ends the turn without evidence: the
runner records it as a failed turn."""

from __future__ import annotations

import os
import random
import sys
import time
from pathlib import Path

from ..ops import done as done_ops
from ..ops import gates, handoffs
from ..ops.writeback import writeback
from ..shapes.errors import LoopxError
from ..shapes.inputs import validate
from ..shapes.values import CardView
from ..store.backends import Store
from ..store.discovery import parse_target
from ..store.models import Evidence
from .scenario import Step, plan_for

TYPE_CHECKING = False  # (annotations only; checkers read this as typing's)
if TYPE_CHECKING:
    from collections.abc import Callable


class SimulatedAgent:
    def __init__(self, store: Store, agent: str, root: Path, log: Callable[[str], object] = print):
        self.store = store
        self.agent = agent
        self.root = root
        self.log = log

    def turn(self) -> str:
        """A whole turn as a loop without a runner runs it: ``next --claim``, then
        one step (the demo's story test drives the agents this way, in-process)."""
        from ..ops import claims

        res = claims.next_turn(self.store, self.agent, claim=True)
        if res.action == "work" and res.card is not None:
            self.work(res.card)
        elif res.action == "accept" and res.card is not None:
            handoff, card = handoffs.accept(self.store, res.card.id, self.agent)
            self.log(f"accepted {handoff.key} for {card.key} (digest {handoff.digest[:12]})")
        return res.action

    def step_of(self, card: CardView) -> Step:
        plan = plan_for(card.title, self.agent)
        with self.store.read():
            written = (
                Evidence.select()
                .where((Evidence.card == card.id) & (Evidence.agent == self.agent) & (Evidence.source == "cli"))
                .count()
            )
        return plan[min(written, len(plan) - 1)]

    def work(self, card: CardView) -> None:
        self.run_step(card, self.step_of(card))  # a refusal raises: the step is tried again next turn

    def _files(self, card: CardView, step: Step) -> list[str]:
        paths = []
        for raw, content in step.files:
            rel = raw.format(key=card.key, title=card.title)
            path = self.root / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_name(path.name + ".tmp")
            tmp.write_text(content.replace("{key}", card.key).replace("{title}", card.title))
            os.replace(tmp, path)  # atomic, as agents should write
            paths.append(rel)
        return paths

    def _writeback(self, card: CardView, step: Step, summary: str, turn_id: str | None) -> None:
        todo_ids = [t.id for t in card.open_todos][: step.done_todos]
        data = validate(
            "evidence",
            {
                "summary": summary,
                "artifacts": self._files(card, step),
                "next": step.next,
                "todos_added": list(step.todos_added),
                "todos_done": todo_ids,
                "tokens": step.tokens,
                "usd": step.usd,
                "turn_id": turn_id or f"{self.agent}-{card.key}-{card.quota.turns.used + 1}",
            },
        )
        _, after, _ = writeback(self.store, card.id, self.agent, data, base=self.root)
        self.log(
            f"writeback {card.key}: {summary} -> {after.status}{' (' + after.paused_reason + ')' if after.paused_reason else ''}"
        )

    def run_step(self, card: CardView, step: Step, turn_id: str | None = None) -> None:
        if step.kind in ("write", "stall"):
            self._writeback(card, step, step.summary, turn_id)
        elif step.kind == "ask":
            data = validate("gate_ask", {"question": step.question, "options": list(step.options)})
            gate, after, _ = gates.ask(self.store, card.id, self.agent, data)
            self.log(f"asked {gate.key} on {card.key}: {step.question}")
            self._writeback(card, step, f"Asked the person ({gate.key}): {step.question}", turn_id)
        elif step.kind == "handoff":
            done = [t.text for t in card.todos if t.done]
            pending = [t.text for t in card.todos if not t.done]
            view, after = handoffs.handoff(
                self.store,
                card.id,
                self.agent,
                {"to": step.to, "summary": step.summary, "done": done, "pending": pending},
            )
            self.log(f"handed {card.key} to {step.to} ({view.key})")
        elif step.kind == "done":
            after, _ = done_ops.done(self.store, card.id, self.agent, step.summary)
            self.log(f"done {card.key}")


def main() -> int:
    """One turn, as the `shell` runtime of ``loopx run`` (environment from the runner)."""
    sys.stdin.read()  # the continuation packet: the plan and the board say the rest
    agent, key = os.environ["LOOPX_AGENT"], os.environ["LOOPX_CARD"]
    pace = float(os.environ.get("LOOPX_DEMO_PACE", "2.5"))
    time.sleep(pace * random.uniform(0.6, 1.4))  # a turn takes a while: watch it run on the board
    store = Store.open(parse_target(os.environ["LOOPX_DB"], "env"))
    try:
        from ..ops.cards import show_card
        from ..rules import ids

        card = show_card(store, ids.parse(ids.CARD, key))
        simulated = SimulatedAgent(
            store, agent, store.project_root(), log=lambda text: print(f"{agent}: {text}", flush=True)
        )
        simulated.run_step(card, simulated.step_of(card), os.environ.get("LOOPX_TURN_ID"))
    except LoopxError as err:
        print(f"{agent}: refused: {err.message}", flush=True)
        return 1
    finally:
        store.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
