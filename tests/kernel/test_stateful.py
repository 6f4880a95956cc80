"""The state machine as a whole, driven at random (hypothesis rule-based state
machine, derandomized): three agents — one with a token window — on three
cards with budgets and a permission need, through every operator of the CLI:
claim, next (--claim), writeback, gate ask / answer (approve, reject,
remember) / expiry as the clock moves, handoff / accept, monitor (and falling
due), release, done, budget raises, a person's moves, reassigns and unassigns,
and leases running out.

After every step, from the board and its event log:

- no card is charged a turn while it was already past its budget (the turn
  that crosses a limit is the last), and an exhausted card is never workable
  (active, waiting, monitoring or ready);
- nothing runs on a card whose latest gate was rejected or expired — no
  evidence, done, claim, accept or monitor wake-up — until a person moved it,
  and meanwhile the card is ``blocked``;
- no agent starts a turn (claim, accept, writeback) with its token window spent;
- no agent-side step produces a human decision (``human_decisions``);
- the log accounts for every charge, every command answers with a documented
  exit code, and a refusal (exit 2, 3, 4, 5, 10) writes nothing.
"""

from __future__ import annotations

import itertools

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    rule,
    run_state_machine_as_test,
)

from tests.conftest import Board, person

from .conftest import empty_schema

AGENTS = ("a1", "a2", "w")
CARDS = ("LX-1", "LX-2", "LX-3")
WINDOW = {"w": (2500, 3600.0)}  # tokens per window, window seconds
WORKABLE = ("active", "waiting", "monitoring", "ready")
REFUSALS = {2, 3, 4, 5, 10}  # a refusal must write nothing
DOCUMENTED = {0, 2, 3, 4, 5, 6, 7, 8, 9, 10}
# Examples per backend: a PostgreSQL board pays a connection per command, so
# fewer there; SQLite's 20 find both holes of issue #11 on the old code.
EXAMPLES = {"sqlite": 20, "postgresql": 6}
STEPS = settings(
    max_examples=EXAMPLES["sqlite"],
    stateful_step_count=40,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=list(HealthCheck),
)


def human_decisions(events: list[dict]) -> list[dict]:
    """The events that record a person's decision: signed by a key, or in a
    person's name. An agent-side step must produce none."""
    return [e for e in events if e["signed"] or e["actor"].startswith("human:")]


def exhausted(quota: dict) -> bool:
    def spent(name, eps=0.0):
        used, limit = quota[name]["used"], quota[name]["limit"]
        return limit is not None and used >= limit - eps

    return spent("turns") or spent("tokens") or spent("usd", 1e-9)


class Ledger:
    """What the event log says about one card, replayed event by event."""

    def __init__(self, quota: dict):
        self.quota = {k: {"used": v["used"], "limit": v["limit"]} for k, v in quota.items()}
        self.said_no: str | None = None  # the gate that said no, until a person moves the card


class Machine(RuleBasedStateMachine):
    make_board = None  # set by the test: a fresh board per example

    def __init__(self):
        super().__init__()
        self.board: Board = type(self).make_board()
        self.cards: dict[str, dict] = {}
        self.ledger: dict[str, Ledger] = {}
        self.spent: dict[str, list[tuple[float, int]]] = {a: [] for a in WINDOW}
        self.seq = 0
        self.trail: list[str] = []

    def teardown(self):
        """Whatever ran, the history is one intact chain whose every person's
        decision verifies (an agent-side step signs nothing: ``human_decisions``)."""
        report = self.board.cli("verify")
        assert report.code == 0, self.explain(f"the history does not verify: {report.data}")

    # -- driving -----------------------------------------------------------------------
    def run(self, *argv, agent=None, human=False):
        if human:
            res = person(self.board, *argv)
        else:
            res = self.board.cli(*argv, agent=agent)
        self.trail.append(f"{'person' if human else agent}: loopx {' '.join(argv)} -> {res.code}")
        assert res.code in DOCUMENTED, self.explain(f"undocumented exit {res.code}: {res}")
        assert "Traceback" not in res.err and "Traceback" not in res.out, self.explain(res.err)
        self.settle(human=human, refused=res.code in REFUSALS)
        return res

    def explain(self, what: str) -> str:
        return what + "\n  steps so far:\n    " + "\n    ".join(self.trail[-40:])

    def settle(self, *, human: bool, refused: bool = False, time_moved: bool = False) -> None:
        """Replay the new events and refresh the cards. The clock only moves in
        ``time_passes``: there the card list (a read that reaps what fell due)
        comes first; after any other step, the cards changed only if events came."""
        cards = self.board.ok("card", "list", "--full", "--limit", "1000")["cards"] if time_moved else None
        new = self.board.ok("events", "--since", str(self.seq))["events"]
        if refused:
            assert not new, self.explain(f"a refusal wrote {new}")
        if new and cards is None:
            cards = self.board.ok("card", "list", "--full", "--limit", "1000")["cards"]
        if not human:
            assert not human_decisions(new), self.explain(
                f"an agent-side step produced a human decision: {human_decisions(new)}"
            )
        for event in new:
            self.replay(event)
        if new:
            self.seq = new[-1]["seq"]
        if cards is None:
            return
        self.cards = {c["id"]: c for c in cards}
        for key, c in self.cards.items():
            ledger = self.ledger.setdefault(key, Ledger(c["quota"]))
            for name in ("turns", "tokens", "usd"):  # only a person's budget raise moves a limit
                ledger.quota[name]["limit"] = c["quota"][name]["limit"]

    def replay(self, e: dict) -> None:
        key, kind, data = e["card"], e["kind"], e["data"]
        ledger = self.ledger.get(key)
        if ledger is None:
            return
        runs = kind in ("evidence_added", "done", "claimed", "handoff_accepted", "monitor_due")
        assert not (runs and ledger.said_no), self.explain(f"{kind} on {key} after {ledger.said_no} said no: {e}")
        if kind == "evidence_added":
            assert not exhausted(ledger.quota), self.explain(
                f"{key} charged a turn while past its budget {ledger.quota}: {e}"
            )
            ledger.quota["turns"]["used"] += 1
            ledger.quota["tokens"]["used"] += data["tokens"]
            ledger.quota["usd"]["used"] = round(ledger.quota["usd"]["used"] + data["usd"], 6)
        agent = e["actor"].removeprefix("agent:")
        if agent in WINDOW and kind in ("evidence_added", "claimed", "handoff_accepted"):
            limit, seconds = WINDOW[agent]
            at = _epoch(e["at"])
            used = sum(t for when, t in self.spent[agent] if when > at - seconds)
            assert used < limit, self.explain(
                f"{agent} started a turn ({kind}) with its window spent ({used}/{limit}): {e}"
            )
            if kind == "evidence_added":
                self.spent[agent].append((at, data["tokens"]))
        if kind == "gate_expired" or (kind == "gate_answered" and data.get("answer") == "rejected"):
            ledger.said_no = data["gate"]
        if kind == "card_moved" and e["actor"].startswith("human:"):
            ledger.said_no = None

    # -- invariants ------------------------------------------------------------------------
    @invariant()
    def budgets_hold(self):
        for key, c in self.cards.items():
            ledger = self.ledger[key]
            for name in ("turns", "tokens", "usd"):
                assert abs(c["quota"][name]["used"] - ledger.quota[name]["used"]) < 1e-6, self.explain(
                    f"{key}: a charge the log does not account for: {c['quota']} vs {ledger.quota}"
                )
            if exhausted(c["quota"]):
                assert c["status"] not in WORKABLE, self.explain(f"{key} is {c['status']} past its budget {c['quota']}")

    @invariant()
    def a_gate_that_said_no_blocks(self):
        for key, c in self.cards.items():
            said_no = self.ledger[key].said_no
            if said_no:
                assert c["status"] == "blocked" and c["lease"] is None, self.explain(
                    f"{key} is {c['status']} after {said_no} said no"
                )

    # -- setup -------------------------------------------------------------------------------
    @initialize()
    def setup(self):
        b = self.board
        b.ok("agent", "add", "a1", "--can", "git:push")
        b.ok("agent", "add", "a2")
        b.ok("agent", "add", "w", "--tokens", str(WINDOW["w"][0]), "--window", "1h")
        b.ok("card", "add", "deploy", "--needs", "deploy:prod", "--max-turns", "1")
        b.ok("card", "add", "build", "--max-turns", "3", "--max-tokens", "2000")
        b.ok("card", "add", "docs", "--max-usd", "1")
        self.settle(human=True, time_moved=True)

    # -- agents: a loop that follows `next`, and wild calls on any card ----------------------------
    def act(self, data, agent: str, key: str, move: str) -> None:
        if move == "writeback":
            tokens = data.draw(st.sampled_from([400, 0, 1500]), label="tokens")
            usd = data.draw(st.sampled_from([0, 0.4]), label="usd")
            extra = ["--todo-add", "more"] if data.draw(st.booleans(), label="progress") else []
            self.run(
                "writeback", key, "--summary", "a turn", "--tokens", str(tokens), "--usd", str(usd), *extra, agent=agent
            )
        elif move == "gate":
            scope = data.draw(st.sampled_from(["deploy:prod", None, "git:push"]), label="scope")
            deadline = data.draw(st.sampled_from([None, "10m"]), label="deadline")
            extra = (["--scope", scope] if scope else []) + (["--deadline", deadline] if deadline else [])
            self.run("gate", "ask", key, "--question", "may I?", *extra, agent=agent)
        elif move == "handoff":
            to = data.draw(st.sampled_from([a for a in AGENTS if a != agent]), label="to")
            self.run("handoff", key, "--to", to, "--summary", "over to you", agent=agent)
        elif move == "monitor":
            self.run("monitor", key, "--every", data.draw(st.sampled_from(["5m", "30m"]), label="every"), agent=agent)
        elif move == "claim":
            self.run("claim", key, "--lease", "20m", agent=agent)
        elif move == "done":
            self.run("done", key, "--summary", "finished", agent=agent)
        else:  # accept, release
            self.run(move, key, agent=agent)

    @rule(
        data=st.data(),
        agent=st.sampled_from(AGENTS),
        move=st.sampled_from(["writeback", "gate", "writeback", "handoff", "done", "monitor", "release"]),
        stubborn=st.sampled_from([True, True, False]),
    )
    def agent_turn(self, data, agent, move, stubborn):
        """A scripted agent's turn: `next --claim`, then one move on the card it is given.
        A stubborn agent told to wait for a person goes on anyway (a writeback, a
        handoff, another question… are allowed while a gate is pending)."""
        res = self.run("next", "--claim", "--lease", "20m", agent=agent)
        action, card = res.data.get("action"), res.data.get("card")
        if action == "accept":
            self.run("accept", card["id"], agent=agent)
        elif action == "work" or (action == "wait" and stubborn):
            self.act(data, agent, card["id"], move)

    @rule(
        data=st.data(),
        move=st.sampled_from(["writeback", "accept", "claim", "gate", "done", "handoff", "monitor", "release"]),
    )
    def any_agent_anything(self, data, move):
        """Any agent, any card, any verb: mostly a pair for which it may be allowed."""
        if move == "accept":
            likely = [(c["handoff_to"], k) for k, c in self.cards.items() if c["handoff_to"]]
        elif move == "claim":
            likely = [
                (a, k)
                for k, c in self.cards.items()
                if c["status"] == "ready"
                for a in AGENTS
                if c["assignee"] in (None, a)
            ]
        else:
            likely = [(c["lease"]["holder"], k) for k, c in self.cards.items() if c["lease"]]
        if likely and data.draw(st.integers(0, 3), label="likely") < 3:
            agent, key = data.draw(st.sampled_from(likely), label="pair")
        else:
            agent, key = (
                data.draw(st.sampled_from(AGENTS), label="agent"),
                data.draw(st.sampled_from(CARDS), label="card"),
            )
        self.act(data, agent, key, move)

    @rule(seconds=st.sampled_from([60, 700, 1300, 4000]))
    def time_passes(self, seconds):
        self.clock.advance(seconds)
        self.trail.append(f"clock +{seconds}s")
        self.settle(human=False, time_moved=True)

    # -- the person ------------------------------------------------------------------------------
    # One rule for everything a person does, so people act less often than agents
    # (and a gate stays pending for a few agent turns, as it does in life).
    @rule(
        data=st.data(),
        key=st.sampled_from(CARDS),
        how=st.one_of(
            st.sampled_from(
                [
                    ("answer", "reject"),
                    ("answer", "approve"),
                    ("answer", "approve", "--remember", "card"),
                    ("answer", "approve", "--remember", "agent"),
                ]
            ),
            st.sampled_from(
                [
                    ("budget", "--add-turns", "1"),
                    ("budget", "--add-tokens", "1000"),
                    ("budget", "--add-usd", "0.5"),
                    ("move", "--to", "ready"),
                    ("move", "--to", "backlog"),
                    ("move", "--to", "cancelled"),
                    ("assign", "--to", "a1"),
                    ("assign", "--to", "a2"),
                    ("assign", "--to", "w"),
                    ("unassign",),
                ]
            ),
        ),
    )
    def a_person_decides(self, data, key, how):
        """A gate answer, a budget raise, a move, a reassign or an unassign."""
        if how[0] == "answer":
            pending = sorted({c["pending_gate"] for c in self.cards.values() if c["pending_gate"]})
            gate = data.draw(st.sampled_from(pending), label="gate") if pending else "G-1"
            self.run("gate", "answer", gate, *how[1:], human=True)
        else:
            self.run("card", how[0], key, *how[1:], human=True)


def _epoch(iso: str) -> float:
    from loopx_core.rules.clock import parse_iso

    return parse_iso(iso)


def forget_boards() -> None:
    """This machine's pins and anchors gone: the next board is one it never saw."""
    import os

    from loopx_core.authority import trust, witness

    for path in (trust.pin_file(), witness.anchor_file()):
        if os.path.exists(path):
            os.unlink(path)


@pytest.fixture
def fresh_board(tmp_path, monkeypatch, backend, request):
    """A factory: a new, empty board for each example (a new schema's worth on PostgreSQL)."""
    counter = itertools.count()
    pg = request.getfixturevalue("_kernel_pg") if backend == "postgresql" else None

    def make() -> Board:
        root = tmp_path / f"p{next(counter)}"
        root.mkdir()
        board = Board(root, monkeypatch, empty_schema(*pg) if pg else None)
        forget_boards()  # (a new board under the same URL would be announced as a replaced one: SECURITY.md "People and trust")
        board.ok("init", "--objective", "state machine", "--test-board")
        return board

    return make


@pytest.mark.slow
def test_no_sequence_of_operators_breaks_the_rules(fresh_board, clock, backend):
    machine = type("BoardMachine", (Machine,), {"make_board": staticmethod(fresh_board), "clock": clock})
    run_state_machine_as_test(machine, settings=settings(STEPS, max_examples=EXAMPLES[backend]))
