"""A process of the writers' race (tests/pg/test_pg_writers.py), on the board
``LOOPX_DB``, until the file ``stop`` exists (bounded by ``rounds``):

- ``turns CARD AGENT ROUNDS``: the agent's per-turn writes on its own card, a
  writeback and a heartbeat per round (card-local writes);
- ``cards ROUNDS``: an agent adds cards (writes that have the board alone);
- ``read OUT``: follows the log as a runner does, "events since the last seq
  seen", writing each seq it saw, in the order it saw them, to OUT.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path


def main(argv: list[str]) -> None:
    from loopx_core.ops import cards, claims
    from loopx_core.ops.writeback import writeback
    from loopx_core.store import events
    from loopx_core.store.backends import Store
    from loopx_core.store.discovery import parse_target

    stop = Path(os.environ["WRITERS_STOP"])
    store = Store.open(parse_target(os.environ["LOOPX_DB"], "flag", Path.cwd()))
    what = argv[0]
    if what == "turns":
        card, agent, rounds = int(argv[1]), argv[2], int(argv[3])
        for n in range(rounds):
            writeback(
                store,
                card,
                agent,
                {"summary": f"turn {n}", "turn_id": f"{agent}-{n}", "next": f"step {n + 1}"},
                code=None,
            )
            claims.heartbeat(store, card, agent)
    elif what == "cards":
        for n in range(int(argv[1])):
            cards.add_card(store, {"title": f"added {n}"}, "agent:a3")
    elif what == "read":
        seen: list[int] = []
        last, done = 0, False
        while not done:
            done = stop.exists()  # (read once more after the writers stopped)
            with store.read():
                batch = events.since(last)
            for event in batch:
                seen.append(event.seq)
                last = event.seq
            if not batch:
                time.sleep(0.01)  # (a poll, as a runner's waker backs off: not spinning beside the writers)
        Path(argv[1]).write_text(" ".join(map(str, seen)))
    store.close()


if __name__ == "__main__":
    main(sys.argv[1:])
