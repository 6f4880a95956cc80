"""Runners on the board (DESIGN §10 "Runners"): which ``loopx run`` process
drives which agent, what it is doing, and a person's control of it.

One row per agent (``runner``). Every change of what a runner does is an
operator here and an event by ``runner:<agent>``; its heartbeat is not (it is
liveness, like a lease's expiry time, not a change anyone decides on). At most
one live runner per agent: a second one is refused; a runner whose heartbeat is
stale — or, on the same host, whose process is gone — is taken over.

A person pauses, resumes or stops an agent's runner (``control``): a signed
event, like every decision of theirs. A runner obeys only ``control_of``,
which reads the newest control event for its agent and honours it only when
the signature verifies — an altered or unsigned one pauses the runner (fail
closed); the row's ``control`` column is for display and controls nothing.
The transaction that starts a turn reads it again (``start_turn``).
"""

from __future__ import annotations

from typing import NamedTuple

from ..authority import trust
from ..rules import clock, ids
from ..rules.decisions import CONTROL_OF_KIND, KIND_OF_CONTROL, RUNNER_CONTROLS
from ..rules.liveness import STALE, gone_here, runner_alive
from ..shapes.errors import Conflict, Forbidden, InvalidInput
from ..store import events, records
from ..store.records import Runner
from ..store.rows import agent_row

TYPE_CHECKING = False  # (annotations only: typing is not imported on the cold path; checkers read this as typing's)
if TYPE_CHECKING:
    from collections.abc import Iterable

    from ..authority import keys
    from ..store.base import Store

STATES = ("running", "asleep", "waiting", "paused", "stopped")
CONTROLS = ("pause", "resume", "stop")
HEARTBEAT = 5.0  # seconds between a live runner's heartbeats


def actor(agent: str) -> str:
    return f"runner:{agent}"


class Control(NamedTuple):
    """What a person decided for an agent's runner, as far as signatures say."""

    control: str  # run | pause | stop
    by: str | None = None  # human:<name> who decided it
    seq: int | None = None  # the signed event
    problem: str | None = None  # why the newest control event is not honoured (the runner then pauses)

    def to_json(self) -> dict:
        return {"control": self.control, "by": self.by, "seq": self.seq, "problem": self.problem}


class RunnerView(NamedTuple):
    agent: str
    runner_id: str | None
    runtime: str | None
    pid: int | None
    host: str | None
    state: str
    card: int | None
    turn: int
    turn_id: str | None
    gate: int | None
    wake_at: float | None
    detail: str | None
    since: float
    heartbeat: float | None
    seen_seq: int | None
    started_at: float | None
    control: Control = Control("run")
    process_gone: bool = False  # on this machine, its process was gone when the row was read (liveness.gone_here)

    def live(self, now: float) -> bool:
        """A runner process drives this agent right now (``liveness.runner_alive``)."""
        return runner_alive(self.state, self.heartbeat, now, self.process_gone)

    def to_json(self, now: float | None = None) -> dict:
        now = clock.now() if now is None else now
        return {
            "agent": self.agent,
            "runner": self.runner_id,
            "runtime": self.runtime,
            "pid": self.pid,
            "host": self.host,
            "state": self.state if self.live(now) or self.state == "stopped" else "gone",
            "card": ids.fmt(ids.CARD, self.card),
            "turn": self.turn,
            "turn_id": self.turn_id,
            "gate": ids.fmt(ids.GATE, self.gate),
            "wake_at": clock.iso(self.wake_at),
            "detail": self.detail,
            "since": clock.iso(self.since),
            "heartbeat": clock.iso(self.heartbeat),
            "seen_seq": self.seen_seq,
            "started_at": clock.iso(self.started_at),
            "control": self.control.to_json(),
        }


def view(row: Runner, control: Control | None = None) -> RunnerView:
    return RunnerView(
        agent=row.agent,
        runner_id=row.runner_id,
        runtime=row.runtime,
        pid=row.pid,
        host=row.host,
        state=row.state,
        card=row.card,
        turn=row.turn or 0,
        turn_id=row.turn_id,
        gate=row.gate,
        wake_at=row.wake_at,
        detail=row.detail,
        since=row.since,
        heartbeat=row.heartbeat,
        seen_seq=row.seen_seq,
        started_at=row.started_at,
        control=control if control is not None else Control("run"),
        process_gone=row.state != "stopped" and gone_here(row.host, row.pid),
    )


def _live(row: Runner | None, now: float) -> bool:
    return row is not None and view(row).live(now)  # (on this machine a dead process is seen at once)


# -- a person's control ---------------------------------------------------------------


def controls(store: Store, agents: Iterable[str]) -> dict[str, Control]:
    """The control a person signed for each of ``agents``: the newest control
    event naming it. An altered or unsigned newest one pauses the runner (fail
    closed) and says why; an altered one whose agent cannot be read counts as
    the newest for every agent not decided yet."""
    out: dict[str, Control] = {}
    wanted = set(agents)
    if not wanted:
        return out  # (no runner yet: the board's snapshot skips the scan of the event log)
    marks = ",".join("?" * len(RUNNER_CONTROLS))
    for (seq,) in store.query(f"SELECT seq FROM event WHERE kind IN ({marks}) ORDER BY seq DESC", RUNNER_CONTROLS):
        if not wanted - set(out):
            break
        row = trust.event_row(store.query, seq)
        if row is None:  # (its seq was read just now, in this same read)
            continue
        try:
            data = row.payload()
        except ValueError:
            data = {}
        intact = row.computed_hash() == row.hash
        named = data.get("agent") if isinstance(data, dict) else None
        if intact and (named not in wanted or named in out):
            continue  # another agent's, or older than one already decided
        why = store.trust().check(row)
        for agent in (
            [named] if intact and named is not None else sorted(wanted - set(out))
        ):  # (intact: named is in wanted)
            if why is None and data.get("control") == CONTROL_OF_KIND.get(row.kind):
                what = data["control"]
                out[agent] = Control("run" if what == "resume" else what, row.actor, seq)
            else:
                out[agent] = Control(
                    "pause",
                    None,
                    seq,
                    f"the newest control of this runner ({row.kind}, event {seq}) is not a valid signed decision: {why or 'its data does not match its kind'}",
                )
    return {agent: out.get(agent, Control("run")) for agent in wanted}


def control_of(store: Store, agent: str) -> Control:
    """What a person decided for ``agent``'s runner (``controls``)."""
    return controls(store, [agent])[agent]


def control(store: Store, agent: str, what: str, person: keys.Person) -> RunnerView:
    """A person pauses, resumes or stops ``agent``'s runner (``person``: a
    ``keys.Person``, whose key signs it). The runner obeys within a second or so:
    pause — no new turn starts (the one in flight ends normally); resume — turns
    start again; stop — the turn in flight ends (or is abandoned after the
    runner's grace time), its lease is released and the process exits, and no
    ``loopx run`` for the agent starts until a person resumes it."""
    if not hasattr(person, "sign"):
        raise Forbidden(
            "only a person can pause, resume or stop a runner",
            "a person runs `loopx runner pause|resume|stop AGENT` with their key, or presses p/u/s on the board",
            code="person_only",
        )
    if what not in CONTROLS:
        raise InvalidInput(f"no runner control {what!r}", f"one of: {', '.join(CONTROLS)}")

    def body() -> RunnerView:
        now = clock.now()
        agent_row(agent)
        row = Runner.get(agent)
        new = row is None
        if row is None:
            row = Runner(agent=agent, state="stopped", since=now, turn=0)
        seq = events.emit(person, KIND_OF_CONTROL[what], None, agent=agent, control=what)
        row.control = None if what == "resume" else what
        row.control_seq = seq
        row.insert() if new else row.save()
        return view(row, Control("run" if what == "resume" else what, person.actor, seq))

    return store.run(body)


# -- the runner's own operators ----------------------------------------------------------


def start(store: Store, agent: str, runner_id: str, runtime: str, pid: int, host: str) -> RunnerView:
    """A runner process starts driving ``agent``: refused while another one is
    live, or while a person's stop stands; a stale one is taken over. The
    control is read in the same transaction, and the row's ``seen_seq`` is the
    ``runner_started`` event: the runner reads the board's events from there on
    (a control recorded before it is already in the view's ``control``)."""

    def body() -> RunnerView:
        now = clock.now()
        agent_row(agent)
        decided = control_of(store, agent)
        if decided.control == "stop":
            raise Conflict(
                f"{agent}'s runner was stopped by {decided.by}",
                f"a person lets it run again: `loopx runner resume {agent}` (then start `loopx run` again)",
                code="runner_stopped",
            )
        row = Runner.get(agent)
        previous = None
        if row is not None and row.runner_id != runner_id and _live(row, now):
            raise Conflict(
                f"{agent} already has a runner: pid {row.pid} on {row.host}, {row.state} since {clock.iso(row.since)}",
                f"one runner per agent; stop it first (`loopx runner stop {agent}`, or end that process), or wait {int(STALE)} s after it died",
                code="runner_running",
                data={"runner": view(row).to_json(now)},
            )
        if row is not None and row.state != "stopped":
            previous = {
                "runner": row.runner_id,
                "pid": row.pid,
                "host": row.host,
                "heartbeat": clock.iso(row.heartbeat),
            }
        if row is None:
            row = Runner(agent=agent, turn=0)
            new = True
        else:
            new = False
        row.runner_id, row.runtime, row.pid, row.host = runner_id, runtime, pid, host
        row.state, row.card, row.turn_id, row.gate, row.wake_at, row.detail = (
            "asleep",
            None,
            None,
            None,
            None,
            "starting",
        )
        row.since = row.heartbeat = row.started_at = now
        row.seen_seq = events.emit(
            actor(agent),
            "runner_started",
            None,
            agent=agent,
            runner=runner_id,
            runtime=runtime,
            pid=pid,
            host=host,
            took_over=previous,
        )
        row.insert() if new else row.save()
        return view(row, decided)

    return store.run(body)


def _mine(agent: str, runner_id: str) -> Runner:
    row = Runner.get(agent)
    if row is None or row.runner_id != runner_id:
        raise Conflict(
            f"{agent}'s runner {runner_id} was replaced by another runner",
            "this runner stops: only one runner drives an agent",
            code="runner_replaced",
        )
    return row


FIELDS = ("state", "card", "turn_id", "gate", "wake_at", "detail")


def _record(agent: str, runner_id: str, wanted: dict, new_turn: bool) -> RunnerView:
    """The row takes ``wanted`` (``FIELDS``); an event when something changed
    (``turn_started`` for a new turn, else ``runner_state``)."""
    now = clock.now()
    row = _mine(agent, runner_id)
    row.heartbeat = now
    if not new_turn and all(getattr(row, k) == v for k, v in wanted.items()):
        row.save()
        return view(row)
    for key, value in wanted.items():
        setattr(row, key, value)
    row.since = now
    if new_turn:
        row.turn = (row.turn or 0) + 1
    row.save()
    card = wanted["card"]
    data = {
        "agent": agent,
        "state": wanted["state"],
        "gate": ids.fmt(ids.GATE, wanted["gate"]),
        "wake_at": clock.iso(wanted["wake_at"]),
        "detail": wanted["detail"],
    }
    if new_turn:
        events.emit(actor(agent), "turn_started", card, turn=row.turn, turn_id=wanted["turn_id"], **data)
    else:
        events.emit(actor(agent), "runner_state", card, **data)
    return view(row)


def set_state(
    store: Store,
    agent: str,
    runner_id: str,
    state: str,
    *,
    card: int | None = None,
    turn_id: str | None = None,
    gate: int | None = None,
    wake_at: float | None = None,
    detail: str | None = None,
) -> RunnerView:
    """What the runner does now (not a new turn: ``start_turn``)."""
    if state not in STATES:
        raise InvalidInput(f"no runner state {state!r}", ", ".join(STATES))
    wanted = {"state": state, "card": card, "turn_id": turn_id, "gate": gate, "wake_at": wake_at, "detail": detail}
    return store.run(lambda: _record(agent, runner_id, wanted, False))


def start_turn(
    store: Store, agent: str, runner_id: str, card: int, turn_id: str, detail: str | None = None
) -> tuple[RunnerView | None, Control]:
    """The runner starts a turn on ``card`` — unless a person's newest control
    for the agent is a pause or a stop (or does not verify: a pause). Read in
    the transaction that records ``turn_started``, which waits for every other
    writer (``BEGIN IMMEDIATE``, PostgreSQL's write lock), a person's control
    among them: in the log, no ``turn_started`` follows a pause or stop until a
    resume. Refused: nothing is written, the view is None and the control says
    what the runner obeys now."""

    def body() -> tuple[RunnerView | None, Control]:
        decided = control_of(store, agent)
        if decided.control != "run":
            return None, decided
        wanted = {"state": "running", "card": card, "turn_id": turn_id, "gate": None, "wake_at": None, "detail": detail}
        return _record(agent, runner_id, wanted, True), decided

    return store.run(body)


def turn_finished(store: Store, agent: str, runner_id: str, card: int, **data: object) -> None:
    """How a turn ended (``outcome``: ``finished`` | ``failed`` | ``stopped`` | ``abandoned``, and why)."""

    def body() -> None:
        row = _mine(agent, runner_id)
        row.heartbeat = clock.now()
        row.save()
        events.emit(actor(agent), "turn_finished", card, agent=agent, turn=row.turn, turn_id=row.turn_id, **data)

    store.run(body)


def beat(store: Store, agent: str, runner_id: str, seen_seq: int | None = None) -> bool:
    """The runner is alive (and has looked at the board up to ``seen_seq``). No
    event. False when another runner has taken the agent over."""

    def body() -> bool:
        changed = records.execute(
            'UPDATE "runner" SET "heartbeat" = ?, "seen_seq" = ? WHERE "agent" = ? AND "runner_id" = ?',
            (clock.now(), seen_seq, agent, runner_id),
        )
        return changed.rowcount > 0

    return store.run(body)


def exited(store: Store, agent: str, runner_id: str, why: str, **data: object) -> None:
    """The runner process ends (``why``: what ended it)."""

    def body() -> None:
        row = Runner.get(agent)
        if row is None or row.runner_id != runner_id:
            return  # taken over meanwhile: the row is the new runner's
        now = clock.now()
        row.state, row.card, row.turn_id, row.gate, row.wake_at, row.detail = "stopped", None, None, None, None, why
        row.since, row.heartbeat, row.pid = now, None, None
        row.save()
        events.emit(actor(agent), "runner_exited", None, agent=agent, runner=runner_id, why=why, **data)

    store.run(body)


def list_runners(store: Store) -> list[RunnerView]:
    with store.read():
        rows = Runner.where('ORDER BY "agent"')
        decided = controls(store, [row.agent for row in rows])
        return [view(row, decided[row.agent]) for row in rows]


def get_runner(store: Store, agent: str) -> RunnerView | None:
    with store.read():
        row = Runner.get(agent)
        return view(row, control_of(store, agent)) if row is not None else None
