"""Did a turn report? The Stop hook (``ops/turns.stop_check``) and the runner
(``ops/turns.wrote_since``) ask the same rule and get the same answer on the
same boards. They differ only in how they know when the turn began: the
runner marks the board's last evidence and handoff before it starts a turn;
the Stop hook is called by a runtime it does not control and knows only
times (the turn's last prompt in the transcript). Both are taken here at the
same moment, before the turn."""

from __future__ import annotations

import time

import pytest

from loopx_core.ops import turns
from loopx_core.ops.charge import charge_usage
from loopx_core.ops.writeback import writeback
from loopx_core.rules import clock
from loopx_core.shapes.inputs import validate


def _report(store, source: str, **kw) -> None:
    writeback(store, 1, "a2", validate("evidence", {"summary": f"a {source} report"}), source=source, **kw)


TURNS = {
    # what the turn did -> did it report?
    "wrote evidence": (lambda b, s: b.ok("writeback", "LX-1", "--summary", "fixed it", agent="a2"), True),
    "wrote evidence over MCP": (lambda b, s: _report(s, "mcp"), True),
    "handed the card off": (
        lambda b, s: b.ok("handoff", "LX-1", "--to", "a1", "--summary", "yours now", agent="a2"),
        True,
    ),
    "did nothing": (lambda b, s: None, False),
    "only charged usage": (
        lambda b, s: charge_usage(s, 1, "a2", "t-1", 1200, 80, 0.0, {"session": "s"}, "usage: 1,280 tokens"),
        False,
    ),
    "asked a gate": (
        lambda b, s: b.cli("gate", "ask", "LX-1", "--question", "may I push?", "--scope", "git:push", agent="a2"),
        False,
    ),
    "was recorded as failed by the runner": (lambda b, s: _report(s, "runner"), False),
    "was only named by an inbox document": (lambda b, s: _report(s, "file", unverified=True), False),
    "reported in an earlier turn only": (None, False),
}


@pytest.mark.parametrize("what", list(TURNS))
def test_the_stop_hook_and_the_runner_agree(working, what):
    act, reported = TURNS[what]
    if act is None:  # the report was made before this turn began
        working.ok("writeback", "LX-1", "--summary", "last turn", agent="a2", env={"LOOPX_NOW": str(time.time() - 120)})
    store = working.store()
    try:
        marks, started_at = (
            turns.marks(store),
            clock.now(),
        )  # the turn begins: the runner's marks, the hook's prompt time
        if act is not None:
            act(working, store)
        runner = turns.wrote_since(store, "a2", marks)
        check = turns.stop_check(store, "a2", "session-1", started_at)
    finally:
        store.close()
    stop_lets_it_end = check is None or check.wrote  # None: it holds no card left to write back to
    assert (runner, stop_lets_it_end) == (reported, reported), what
    if what == "handed the card off":
        assert check is None  # the card is the receiver's now: nothing for the Stop hook to ask of a2
    else:
        assert check is not None and check.card == 1
