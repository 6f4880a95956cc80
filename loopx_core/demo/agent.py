"""One simulated agent: the turn loop a runtime runs, through the real
operators. ``python -m loopx_core.demo.agent --db PATH --agent ID --root DIR``.

Each turn: ``next --claim``; then, by what it says, work one step of the
card's plan (scenario.py), accept a handoff, or wait. Refusals (a paused
card, a revoked lease, a rejected gate) are logged and the loop goes on."""

from __future__ import annotations

import argparse
import os
import random
import signal
import sys
import time
from pathlib import Path

from .. import claims, done as done_ops, gates, handoffs
from ..discovery import parse_target
from ..errors import LoopxError
from ..inputs import validate
from ..store import Store
from ..values import CardView
from ..writeback import writeback
from .scenario import Step, plan_for


class SimulatedAgent:
    def __init__(self, store: Store, agent: str, root: Path, log=print):
        self.store = store
        self.agent = agent
        self.root = root
        self.log = log
        self.pointers: dict[int, int] = {}  # card -> the next step of its plan

    def turn(self) -> str:
        """One turn; returns what ``next`` answered."""
        res = claims.next_turn(self.store, self.agent, claim=True)
        if res.action == "work" and res.card is not None:
            self.work(res.card)
        elif res.action == "accept" and res.card is not None:
            handoff, card = handoffs.accept(self.store, res.card.id, self.agent)
            self.log(f"accepted {handoff.key} for {card.key} (digest {handoff.digest[:12]})")
        return res.action

    def work(self, card: CardView) -> None:
        plan = plan_for(card.title, self.agent)
        index = self.pointers.get(card.id, 0)
        step = plan[min(index, len(plan) - 1)]
        self.run_step(card, step)  # a refusal raises: the step is tried again next turn
        self.pointers[card.id] = index + 1

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

    def run_step(self, card: CardView, step: Step) -> None:
        if step.kind in ("write", "stall"):
            todo_ids = [t.id for t in card.open_todos][: step.done_todos]
            data = validate(
                "evidence",
                {
                    "summary": step.summary,
                    "artifacts": self._files(card, step),
                    "next": step.next,
                    "todos_added": list(step.todos_added),
                    "todos_done": todo_ids,
                    "tokens": step.tokens,
                    "usd": step.usd,
                    "turn_id": f"{self.agent}-{card.key}-{card.quota.turns.used + 1}",
                },
            )
            ev, after, _ = writeback(self.store, card.id, self.agent, data, base=self.root)
            self.log(f"writeback {card.key}: {step.summary} -> {after.status}{' (' + after.paused_reason + ')' if after.paused_reason else ''}")
        elif step.kind == "ask":
            data = validate("gate_ask", {"question": step.question, "options": list(step.options)})
            gate, after, _ = gates.ask(self.store, card.id, self.agent, data)
            self.log(f"asked {gate.key} on {card.key}: {step.question}")
        elif step.kind == "handoff":
            done = [t.text for t in card.todos if t.done]
            pending = [t.text for t in card.todos if not t.done]
            view, after = handoffs.handoff(self.store, card.id, self.agent, {"to": step.to, "summary": step.summary, "done": done, "pending": pending})
            self.log(f"handed {card.key} to {step.to} ({view.key})")
        elif step.kind == "done":
            after, _ = done_ops.done(self.store, card.id, self.agent, step.summary)
            self.log(f"done {card.key}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="loopx-demo-agent")
    parser.add_argument("--db", required=True)
    parser.add_argument("--agent", required=True)
    parser.add_argument("--root", required=True)
    parser.add_argument("--pace", type=float, default=2.5, help="seconds between turns (jittered)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--delay", type=float, default=0.0, help="seconds before the first turn")
    parser.add_argument("--turns", type=int, default=0, help="stop after this many turns (0: run until stopped)")
    args = parser.parse_args(argv)

    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    parent = os.getppid()
    rnd = random.Random(args.seed)

    def log(msg: str) -> None:
        print(f"{time.strftime('%H:%M:%S')} {args.agent}: {msg}", flush=True)

    store = Store.open(parse_target(args.db, "flag"))
    agent = SimulatedAgent(store, args.agent, Path(args.root), log)
    time.sleep(args.delay)
    turns = 0
    try:
        while args.turns == 0 or turns < args.turns:
            if os.getppid() != parent:
                break  # the board closed without stopping us
            try:
                action = agent.turn()
            except LoopxError as err:
                log(f"refused: {err.message}")
                action = "refused"
            turns += 1
            wait = args.pace * rnd.uniform(0.7, 1.3)
            if action in ("idle", "paused", "wait"):
                wait = min(wait, 1.5)  # check back soon: a human may have answered
            time.sleep(wait)
    finally:
        store.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
