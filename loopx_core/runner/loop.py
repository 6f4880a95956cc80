"""The runner: ``next`` before every turn, one bounded turn when it says
*work*, sleep until the board changes otherwise — for as long as it lives.

What it guarantees (DESIGN §10 "Runners"):

- it never starts a turn that ``next`` refused, nor on a card whose budget or
  window does not verify by signature (``turns.check_signed``, the strict
  check of a person's process), nor after a person's pause or stop is
  recorded: ``runners.start_turn`` reads the control (only a signed one
  counts) in the transaction that records ``turn_started``, and a refused
  start is obeyed at once;
- it reads every event after the last one it read (``_news``, before each
  decision and whenever the board changes, a turn in flight included), never
  skipping one: a person's control among them is acted on at once — a pause
  before the next turn, a stop ends the runner after the turn in flight (or
  abandons it past the grace time);
- a turn is bounded: its time limit, the card's budget and windows (from the
  runtime's live usage), a lease it lost, a rejected gate — each stops the
  whole process group; the lease is renewed while it runs;
- after a turn: a turn that wrote no evidence is recorded as a failed turn
  (a writeback with source ``runner`` and the sanitised tail of its output,
  which counts towards the no-progress pause); the usage measured from the
  transcript is charged exactly once (``charge.charge_transcript``, shared
  with the Stop hook);
- SIGTERM (or a person's stop) lets the turn in flight finish within the
  grace time, else abandons it (the event says which), releases the agent's
  active card and records that the runner stopped. A SIGKILLed runner's turn
  dies with it (``process``); its card's lease runs out and another runner
  takes it; a restarted runner resumes from the card's continuation.
"""

from __future__ import annotations

import os
import signal
import time
import uuid
from logging import DEBUG, ERROR, INFO, WARNING
from typing import TYPE_CHECKING, NamedTuple

from ..adapters import charge
from ..authority.witness import Witness, refused
from ..ops import (
    claims,
    context,
    handoffs,
    notify_send,
    reaper,
    release,
    runners,
    turns,
    workspace_open,
    workspaces,
)
from ..ops.charge import charge_usage
from ..ops.writeback import writeback
from ..rules import clock, ids
from ..rules.decisions import RUNNER_CONTROLS
from ..rules.liveness import host_name
from ..rules.text import terminal_safe
from ..runtimes import base as runtime_base
from ..runtimes import make as make_runtime
from ..shapes.errors import ALTERED, Altered, Conflict, LoopxError, Paused
from .process import TurnProcess
from .waker import Interrupt, Waker

if TYPE_CHECKING:
    from collections.abc import Callable
    from types import FrameType
    from typing import TypedDict, Unpack

    from ..authority.witness import Gone
    from ..ops.turns import Marks
    from ..rules.workspace_bounds import Bounds
    from ..runtimes import Usage
    from ..shapes.values import CardView, EventView
    from ..store.base import Store
    from .log import Log

    class StateFields(TypedDict, total=False):
        """What ``_state`` passes on to ``runners.set_state``."""

        card: int | None
        turn_id: str | None
        gate: int | None
        wake_at: float | None
        detail: str | None


MAX_IDLE = 300.0  # an idle runner looks at the board at least this often, change or not
TAIL_KEPT = 2000  # characters of a failed turn's output kept in its record
# Events that never change what `next` answers another agent (a wake on them is ignored).
NOISE = frozenset(
    {
        "heartbeat",
        "evidence_added",
        "usage_charged",
        "turn_ended",
        "session_started",
        "artifact_observed",
        "ingest_error",
        "verify_failed",
        "runner_state",
        "turn_started",
        "turn_finished",
        "runner_started",
        "runner_exited",
    }
)
# What may let a refused workspace open now: a folder archived or removed, a person's setting (the cap).
WORKSPACE_NEWS = frozenset({"workspace_archived", "workspace_removed", "setting_changed"})
WORKSPACE_RETRY = 30.0  # seconds before the first retry of a refused workspace; doubles, up to MAX_IDLE


class Options(NamedTuple):
    agent: str
    runtime: str
    command: list[str]  # shell: the command; claude-code/codex: extra arguments
    lease: float | None = None  # lease length for the claims it makes (default: the board's)
    turn_limit: float = 1800.0
    grace: float = 30.0  # on SIGTERM or a person's stop: how long the turn in flight may take to finish
    turns: int = 0  # stop after this many turns (0: run until stopped)
    binary: str | None = None  # the runtime's executable (default: claude / codex on PATH)
    cwd: str | None = None


def clean(text: str, limit: int = TAIL_KEPT) -> str:
    """An agent's output made safe to store and show (``text.terminal_safe``:
    escape sequences and control characters removed, newlines kept), its end kept."""
    return terminal_safe(text[-4 * limit :], multiline=True)[-limit:].strip()


class Runner:
    def __init__(self, store: Store, options: Options, log: Log = lambda text, level=INFO: print(text)) -> None:
        self.store = store
        self.opts = options
        self.agent = options.agent
        self.log_line = log
        self.runner_id = uuid.uuid4().hex[:12]
        self.runtime = make_runtime(options.runtime, options.command, options.binary, options.agent)
        self.runtime.project = str(store.project_root())  # (Codex runs in a workspace only under its sandbox profile)
        self.interrupted = Interrupt()  # not a threading.Event: see waker.Interrupt
        self.stopping: str | None = None  # why the runner is stopping (a signal)
        self.urgent = False  # a second signal: abandon the turn in flight now
        self.control = runners.Control("run")
        self.view: runners.RunnerView | None = None  # the runner's row as last written (``run`` writes it first)
        self.seq = 0
        self.turns_run = 0
        self.turn_head: str | None = None  # HEAD of the card's workspace as the current turn began
        self.turn_workspace: str | None = None  # the workspace the current turn runs in
        self.workspace_refusals = 0  # workspaces refused in a row (the retry's backoff)
        self.last_beat = 0.0
        self.waker: Waker | None = None
        self.witness = Witness()  # what this runner saw of the log (authority/witness.py)
        self.altered: Altered | None = None

    @property
    def waking(self) -> Waker:
        """What wakes the runner (``run`` makes it before the loop)."""
        assert self.waker is not None
        return self.waker

    @property
    def current(self) -> runners.RunnerView:
        """The runner's row as last written: every turn runs after ``run`` wrote it."""
        assert self.view is not None
        return self.view

    # -- logging ---------------------------------------------------------------------------
    def log(self, text: str, level: int = INFO) -> None:
        """One line of the runner's log (``runner/log.py``: dated, levelled, the agent named)."""
        self.log_line(text, level)

    # -- signals -------------------------------------------------------------------------
    def _on_signal(self, signum: int, frame: FrameType | None) -> None:
        name = signal.Signals(signum).name
        if self.stopping is not None:
            self.urgent = True
        self.stopping = self.stopping or name
        self.interrupted.set()

    def _install_signals(self) -> None:
        for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            try:
                signal.signal(sig, self._on_signal)
            except (ValueError, OSError):  # not the main thread (an in-process test)
                pass

    # -- the loop -------------------------------------------------------------------------
    def run(self) -> int:
        """Drive the agent until stopped; returns the exit code."""
        self._install_signals()
        self.view = runners.start(self.store, self.agent, self.runner_id, self.runtime.name, os.getpid(), host_name())
        self.control = self.view.control
        assert self.view.seen_seq is not None  # start() sets it to its runner_started event
        self.seq = self.view.seen_seq  # its own runner_started: the control up to it is read
        self.waker = Waker(self.store, self.interrupted)
        self.log(f"runner {self.runner_id} started ({self.runtime.name}, pid {os.getpid()})")
        deliverer = notify_send.Deliverer(self.store, runners.actor(self.agent), lambda text: self.log(text))
        deliverer.start()  # the person's notification command: any runner delivers it (ops/notify.py)
        why: str | None = "stopped"
        turn: str | None = None
        try:
            why, turn = self._loop_through_restarts()
        except Conflict as err:
            if err.code != "runner_replaced":
                why = f"internal error: {err.message}"
                raise
            gone = self._gone()  # (an older copy of the board has no row of this runner either)
            if gone is not None:
                why = self._altered(refused(gone))
                return ALTERED
            self.log(err.message, WARNING)  # another runner drives the agent now: its cards are its own
            why = None
            return 5
        except Altered as err:  # the log went backwards under it: no more turns
            why = self._altered(err)
            return ALTERED
        except BaseException as exc:
            gone = self._gone() if isinstance(exc, Exception) else None
            if gone is not None:  # what broke was the board going backwards under it (rows it held vanished)
                why = self._altered(refused(gone))
                return ALTERED
            why = f"internal error: {type(exc).__name__}: {exc}"
            raise
        finally:
            deliverer.stop()
            try:
                if why is not None:
                    self._finish(why, turn)
            finally:
                self.interrupted.close()
                self.waker.close()
        return 0

    def _gone(self) -> Gone | None:
        """What vanished of the log this runner saw, asked after an error (None: nothing, or cannot tell)."""
        try:
            return self.witness.observe(self.store, acted_on=self.control.seq)
        except Exception:
            return None

    def _altered(self, err: Altered) -> str:
        self.altered = err
        self.log(f"{err.message}\n  → {err.hint}", ERROR)
        return err.message

    def _finish(self, why: str, turn: str | None) -> None:
        released = self._release_active(why)
        try:
            runners.exited(self.store, self.agent, self.runner_id, why, turn=turn, released=released)
        except LoopxError as err:
            self.log(f"could not record the stop: {err.message}", WARNING)
        self.log(f"stopped ({why})" + (f"; released {', '.join(released)}" if released else ""))

    def _obeying(self) -> str:
        """The person's control the runner obeys, in words."""
        if self.control.problem:
            return self.control.problem
        return f"{'paused' if self.control.control == 'pause' else 'stopped'} by {self.control.by}"

    def _why_stop(self) -> str | None:
        if self.stopping:
            return f"{self.stopping} received"
        if self.control.control == "stop":
            return f"stopped by {self.control.by}"
        return None

    def _loop_through_restarts(self) -> tuple[str, str | None]:
        """``_loop``, begun again when the board's server went away under one of
        the runner's own reads or writes (a PostgreSQL restart cut it off, or
        its COMMIT): the store reconnects at the next BEGIN, and the loop
        starts from what the board says — ``next`` resumes a card the runner
        still holds. Once the board stays away past ``LOOPX_RECONNECT_WAIT``,
        the store says so and the runner stops (#42)."""
        from ..store.failures import board_lost, first_line

        while True:
            try:
                return self._loop()
            except Exception as exc:
                if not board_lost(exc) or getattr(exc, "code", None) == "board_unreachable":
                    raise
                self.log(f"the board went away under the runner ({first_line(exc)}); going on once it is back", WARNING)
                self.interrupted.wait(0.5)

    def _loop(self) -> tuple[str, str | None]:
        """Returns why the runner stops, and how the turn in flight then ended (if one was)."""
        from ..store.failures import board_lost

        while True:
            self._news()  # what happened since the last look, a person's control among it
            why = self._why_stop()
            if why:
                return why, None
            if self.opts.turns and self.turns_run >= self.opts.turns:
                return f"ran {self.turns_run} turn(s) as asked", None
            self._witnessed()  # the log still holds what this runner saw (authority/witness.py)
            if self.control.control == "pause":
                self._state("paused", detail=self._obeying())
                self._sleep(None)
                continue
            try:
                res = claims.next_turn(self.store, self.agent, claim=True, lease_seconds=self.opts.lease)
            except LoopxError as err:
                self._state("asleep", detail=f"next refused: {err.message}"[:500])
                self._sleep(clock.now() + 30)
                continue
            if res.action == "work":
                assert res.card is not None  # `next` names the card it claimed
                card = turns.check_signed(self.store, res.card.id)  # the strict check: signatures, not just hashes
                if card.status != "active":
                    self.log(f"{card.key} held back before its turn: {card.paused_reason or card.status}")
                    continue  # `next` now says why
                try:
                    space = self._workspace(card)
                except LoopxError as err:  # no turn outside the card's workspace: its isolation
                    if board_lost(err):
                        raise  # the board's server went away, not the workspace: begin again once it is back
                    self._no_workspace(card, err)
                    continue
                outcome = self._turn(card, space)
                if outcome is None:
                    continue  # a person's pause or stop refused the turn's start: obeyed at the top
                self._news()  # a control that came as the turn ended
                why = self._why_stop()
                if why:  # it came during the turn: the event says whether the turn finished or was abandoned
                    return why, "abandoned" if outcome == "abandoned" else "finished"
            elif res.action == "accept":
                assert res.card is not None  # `next` names the card handed to the agent
                try:
                    handoff, card = handoffs.accept(self.store, res.card.id, self.agent)
                    self.log(f"accepted {handoff.key} for {card.key}")
                except LoopxError as err:
                    self._state("asleep", card=res.card.id, detail=f"cannot accept: {err.message}"[:500])
                    self._sleep(clock.now() + 30)
            elif res.action == "wait":
                gate = res.gate.id if res.gate else None
                self._state(
                    "waiting",
                    card=res.card.id if res.card else None,
                    gate=gate,
                    detail=f"waiting for a person on {ids.fmt(ids.GATE, gate)}",
                )
                self._sleep(res.wake_at)  # (a card that waits on its merge: a monitored card may be due first)
            elif res.action == "paused":
                if res.card is not None:
                    what = f"{res.card.key} paused ({res.reason})" + (", resumes by itself" if res.wake_at else "")
                else:
                    what = "the agent's window is spent"
                self._state("asleep", card=res.card.id if res.card else None, wake_at=res.wake_at, detail=what)
                self._sleep(res.wake_at)
            else:
                self._state("asleep", wake_at=res.wake_at, detail=res.reason)
                self._sleep(res.wake_at)

    # -- bookkeeping on the board ------------------------------------------------------------
    def _state(self, state: str, **fields: Unpack[StateFields]) -> None:
        before = self.view
        self.view = runners.set_state(self.store, self.agent, self.runner_id, state, **fields)
        if before is None or (before.state, before.detail, before.card) != (
            state,
            fields.get("detail"),
            fields.get("card"),
        ):
            self.log(f"{state}" + (f": {fields['detail']}" if fields.get("detail") else ""))

    def _beat(self, seen: int | None = None) -> None:
        if not runners.beat(self.store, self.agent, self.runner_id, seen if seen is not None else self.seq):
            raise Conflict(
                f"{self.agent}'s runner {self.runner_id} was replaced by another runner", "", code="runner_replaced"
            )
        self.last_beat = time.monotonic()

    def _news(self) -> list:
        """Events after the last one read — none is skipped — and the control,
        when a person's decision is among them."""
        new = turns.events_after(self.store, self.seq)
        if new:
            self.seq = new[-1].seq
            self.log(
                f"read {len(new)} new event(s) up to {self.seq}: {', '.join(sorted({e.kind for e in new}))}", DEBUG
            )
        if any(e.kind in RUNNER_CONTROLS for e in new):
            self.control = runners.control_of(self.store, self.agent)
        return new

    def _witnessed(self) -> None:
        """The log still holds what this runner (and this machine) saw of it,
        and this machine's anchor moves on; else the runner stops (exit 11)."""
        gone = self.witness.observe(self.store, acted_on=self.control.seq)
        if gone is not None:
            raise refused(gone)

    def _relevant(self, new: list[EventView]) -> bool:
        me = runners.actor(self.agent)
        return any(e.actor != me and e.kind not in NOISE for e in new)

    def _sleep(self, until: float | None, wake_on: frozenset | None = None) -> None:
        """Until the board changes in a way that may change ``next``'s answer
        (``wake_on``: only events of those kinds, or a person's control), or
        ``until``, or the clock alone changes the board (a lease or a window)."""
        self._beat()  # "read the board up to self.seq, and decided"
        with self.store.read():
            due = reaper.next_due()
        now = clock.now()
        wake = now + MAX_IDLE
        for t in (until, due):
            if t is not None:
                wake = min(wake, max(t, now + 0.2))
        control = self.control
        while not self.stopping:
            left = wake - clock.now()
            if left <= 0:
                return
            changed = self.waking.wait(min(left, runners.HEARTBEAT))
            if time.monotonic() - self.last_beat >= runners.HEARTBEAT:
                self._beat()
            if changed:
                new = self._news()
                self._witnessed()
                woken = self._relevant(new) if wake_on is None else any(e.kind in wake_on for e in new)
                if self.control != control or woken:
                    return

    # -- one turn ------------------------------------------------------------------------------
    def _workspace(self, card: CardView) -> tuple[str, str | None] | None:
        """The card's workspace for this turn (issue #26): made on first use,
        leftovers of a killed turn saved, lost uncommitted work put back. None
        when the project has none (no repository, or no commit yet): the turn
        runs in the project folder. A workspace git or the person's cap refuses
        raises (LoopxError): the turn must not run in the project folder instead."""
        if not self.runtime.in_workspace:
            return None  # (runtimes/base.Runtime.in_workspace: not before its hooks and sandbox are there)
        try:
            space = workspace_open.begin_turn(self.store, card.id, f"agent:{self.agent}")
        except LoopxError as err:
            if err.code == "no_base":
                return None  # a repository without a commit yet has no workspaces
            raise
        self.workspace_refusals = 0
        return space

    def _no_workspace(self, card: CardView, err: LoopxError) -> None:
        """The card's workspace was refused: no turn. The card goes back to
        ready (another runner, or this one later, takes it when it can have
        one), the runner's state says why on the board, and it retries when a
        workspace was archived or removed or a person changed a setting, or
        after a backoff (30 s, doubling, at most ``MAX_IDLE``) — never at once."""
        self.workspace_refusals += 1
        delay = min(MAX_IDLE, WORKSPACE_RETRY * 2 ** (self.workspace_refusals - 1))
        why = f"no workspace for {card.key}: {err.message}; no turn runs outside it ({err.hint})"
        self.log(why, WARNING)
        try:
            release.release(self.store, card.id, self.agent, card.lease.token if card.lease else None)
        except LoopxError as released:
            self.log(f"could not release {card.key}: {released.message}", WARNING)
        wake = clock.now() + delay
        self._state("asleep", card=card.id, wake_at=wake, detail=why[:500])
        self._sleep(wake, wake_on=WORKSPACE_NEWS)

    def _env(self, card: CardView, turn_id: str, packet: str) -> dict:
        env = {
            k: v for k, v in os.environ.items() if k not in ("LOOPX_KEY", "LOOPX_HUMAN")
        }  # the person's key is not the agent's
        location = self.store.location
        env.update(
            LOOPX_AGENT=self.agent,
            LOOPX_DB=str(location.path) if location.path is not None else location.url,
            LOOPX_CARD=card.key,
            LOOPX_TURN_ID=turn_id,
            LOOPX_TURN=str(self.current.turn),
            LOOPX_LEASE_TOKEN=str(card.lease.token if card.lease else ""),
            LOOPX_RUNNER=self.runner_id,
        )
        if not self.runtime.uses_tools:  # (a shell command reads its packet there too)
            env["LOOPX_CONTEXT"] = packet
        return env

    def _turn(self, card: CardView, space: tuple[str, str | None] | None) -> str | None:
        """One bounded turn on ``card`` (active, leased to the agent) in ``space``
        (its workspace and HEAD; None: the project folder). Returns its
        outcome; None when a person's control refused its start (``self.control``
        says which)."""
        token = card.lease.token if card.lease else None
        turn_id = f"{self.agent}.t{self.current.turn + 1}.{uuid.uuid4().hex[:8]}"
        # Claude Code and Codex record their turn with the loopx MCP tools (their sandboxed shell cannot write the board)
        packet = context.to_markdown(
            context.build(self.store, card.id), context.TOOLS if self.runtime.uses_tools else context.CLI
        )
        since = turns.marks(self.store)
        started, self.control = runners.start_turn(
            self.store, self.agent, self.runner_id, card.id, turn_id, f"turn {self.current.turn + 1} on {card.key}"
        )
        if started is None:
            self.log(f"turn on {card.key} not started: {self._obeying()}")
            return None
        self.view = started
        self.log(f"running: {started.detail}")
        self.turns_run += 1
        env = self._env(card, turn_id, packet)
        cwd = space[0] if space else self.opts.cwd or str(self.store.project_root())
        if space:
            env["LOOPX_WORKSPACE"] = space[0]
        self.turn_workspace, self.turn_head = space if space else (None, None)
        argv = self.runtime.argv(
            runtime_base.prompt(packet, self.agent, card.key, turn_id), cwd
        )  # the runtime's sandbox bounded to the workspace
        usage = self.runtime.live()
        try:
            env.update(self.runtime.environ(cwd))  # (Codex in a workspace: LoopX's Codex home)
        except (OSError, runtime_base.SettingsConflict) as exc:
            return self._after(
                card,
                token,
                turn_id,
                since,
                None,
                usage,
                "failed",
                f"cannot prepare the turn's {self.runtime.name} settings: {getattr(exc, 'strerror', None) or exc}",
                "",
                0.0,
            )
        bounds = self._swept_from(space[0]) if space else None  # what the shared git folder holds, recorded (#38)
        try:
            proc = TurnProcess(argv, env, cwd, self.runtime.stdin(packet))
        except OSError as exc:
            return self._after(
                card,
                token,
                turn_id,
                since,
                None,
                usage,
                "failed",
                f"cannot start {argv[0] if argv else 'the command'}: {exc.strerror or exc}",
                "",
                0.0,
            )
        try:
            outcome, reason = self._watch(proc, card, token, usage, env)
        except BaseException:
            proc.stop()  # never a turn left running by a runner that raised (nor beside the one it starts next)
            raise
        code = proc.finish()
        if space:
            self._admit(space[0])
        if bounds is not None:
            self._sweep(card, bounds, turn_id)
        for line in proc.next_lines(0):
            usage.feed(line)
        usage.poll(env)
        return self._after(card, token, turn_id, since, code, usage, outcome, reason, proc.tail(), proc.seconds, env)

    def _admit(self, workspace: str) -> None:
        """The objects the turn wrote (its quarantine, issue #38) checked and moved
        into the repository's store; what fails the check stays out, and is said."""
        from ..workspace import git, quarantine

        try:
            common = git.common_dir(workspace)
            got = quarantine.admit_all(str(common)) if common is not None else None
        except (git.GitError, OSError) as exc:
            self.log(f"could not check the objects the turn wrote: {getattr(exc, 'message', None) or exc}", WARNING)
            return
        if got is not None and got.refused:
            self.log(
                f"{len(got.refused)} object file(s) the turn wrote failed git's hash check and were kept out of the repository: {got.refused[0]}",
                WARNING,
            )

    def _swept_from(self, workspace: str) -> Bounds | None:
        """Before the turn: what the repository's shared git folder holds,
        recorded (``workspace/sweep.py``); its Bounds, None outside a worktree."""
        from ..rules import workspace_bounds
        from ..workspace import sweep

        bounds = workspace_bounds.find(workspace)
        if bounds is not None and bounds.main is not None:
            sweep.begin(bounds)
            return bounds
        return None

    def _sweep(self, card: CardView, bounds: Bounds, turn_id: str) -> None:
        """After the turn: what it created in the shared git folder that is not
        its own (a program's ``MERGE_HEAD``, ``refs/stash``, a branch) moved out
        of the repository, recorded on the card and said."""
        from ..workspace import sweep

        try:
            got = sweep.end(bounds)
        except OSError as exc:
            self.log(f"could not check what the turn wrote into the repository's git folder: {exc}", WARNING)
            return
        if not got.moved and not got.changed:
            return
        if got.moved:
            self.log(
                f"the turn created {len(got.moved)} path(s) in the repository's git folder that are not its own; moved out to {got.where}: {', '.join(got.moved[:5])}",
                WARNING,
            )
        if got.changed:
            self.log(
                f"refs changed in the repository's git folder while the turn ran: {', '.join(got.changed[:5])}", WARNING
            )
        try:
            workspaces.note_refused(
                self.store, card.id, f"runner:{self.agent}", got.moved, got.changed, got.where, turn_id
            )
        except LoopxError as err:
            self.log(f"could not record it on {card.key}: {err.message}", WARNING)

    def _watch(
        self, proc: TurnProcess, card: CardView, token: int | None, usage: Usage, env: dict[str, str]
    ) -> tuple[str, str | None]:
        """Follow the running turn until it ends or must be stopped: (outcome, reason)."""
        lease = card.lease.expires_at - clock.now() if card.lease and card.lease.expires_at else 1800.0
        renew_every = max(0.5, min(lease / 3, 60.0))
        next_renew = time.monotonic() + renew_every
        deadline = time.monotonic() + self.opts.turn_limit
        room = self._room(card.id)
        grace_until = None
        renewing = True
        while proc.running:
            for line in proc.next_lines(0.2):
                usage.feed(line)
            usage.poll(env)
            now = time.monotonic()
            if now - self.last_beat >= runners.HEARTBEAT:
                self._beat()
            if self.waking.wait(0):  # a probe (PITFALLS "Change detection across processes"), then a read
                before = self.control
                self._news()
                if self.control != before and self.control.control != "stop":  # (a stop: the grace time, below)
                    doing = f"turn {self.current.turn} on {card.key}"
                    said = (
                        doing
                        if self.control.control == "run"
                        else f"{doing}; {self._obeying()}: no turn after this one"
                    )
                    self._state("running", card=card.id, turn_id=self.current.turn_id, detail=said)
            stopping = self.stopping or (f"stopped by {self.control.by}" if self.control.control == "stop" else None)
            if stopping:
                if grace_until is None:
                    grace_until = now + (0 if self.urgent else self.opts.grace)
                    # On the board at once: a person sees the runner is stopping, and when.
                    self._state(
                        "running",
                        card=card.id,
                        turn_id=self.current.turn_id,
                        detail=f"{stopping}: the turn may finish within {self.opts.grace:g} s",
                    )
                if self.urgent or now >= grace_until:
                    proc.stop()
                    return "abandoned", f"{stopping}; the turn did not finish within {self.opts.grace:g} s"
            if now >= deadline:
                proc.stop()
                return "stopped", f"turn time limit ({clock.human_delta(self.opts.turn_limit)}) reached"
            over = self._over(room, usage)
            if over:
                proc.stop()
                return "stopped", over
            if renewing and now >= next_renew:
                next_renew = now + renew_every
                if self.turn_workspace is not None:
                    self._save_code(
                        card, workspaces.checkpoint, self.current.turn_id
                    )  # a runner killed mid-turn loses no edit
                verdict = self._renew(card, token)
                if verdict == "keep":
                    renewing = False
                elif verdict:
                    proc.stop()
                    return "stopped", verdict
        return "finished", None

    def _room(self, card_id: int) -> tuple[float | None, float | None]:
        """Tokens and dollars the card may still spend (its budget, its window,
        the agent's window): None where nothing limits it."""
        return turns.room(self.store, card_id, self.agent)

    def _over(self, room: tuple[float | None, float | None], usage: Usage) -> str | None:
        tokens_left, usd_left = room
        if tokens_left is not None and usage.tokens >= tokens_left:
            return (
                f"the card's tokens would be spent mid-turn ({usage.tokens:,} used, {max(0, tokens_left):,} were left)"
            )
        if usd_left is not None and usage.calls:
            usd, _ = charge.price_calls(self.store, usage.calls)
            if usd >= usd_left - 1e-9:
                return (
                    f"the card's dollars would be spent mid-turn (${usd:.4f} used, ${max(0.0, usd_left):.4f} were left)"
                )
        return None

    def _renew(self, card: CardView, token: int | None) -> str | None:
        """Renew the lease; "keep" to stop renewing and let the turn end (the agent
        finished or handed off its card), a reason to stop the turn, None when renewed."""
        try:
            claims.heartbeat(self.store, card.id, self.agent, token)
            return None
        except Paused as err:
            return f"the card was paused mid-turn: {err.message}"
        except LoopxError as err:
            status, holder = turns.card_state(self.store, card.id)
            if status in ("done", "handoff", "monitoring") or (
                status == "ready" and holder is None and err.code != "gate_blocked"
            ):
                return "keep"
            return f"the turn lost its card: {err.message}"

    def _save_code(self, card: CardView, how: Callable[..., dict | None], *args: str | None) -> dict | None:
        """Record the card's code state (a git or board failure is logged: the turn goes on)."""
        try:
            return how(self.store, card.id, f"agent:{self.agent}", *args)
        except LoopxError as err:
            self.log(f"could not record {card.key}'s code state: {err.message}", WARNING)
            return None

    def _after(
        self,
        card: CardView,
        token: int | None,
        turn_id: str,
        since: Marks,
        code: int | None,
        usage: Usage,
        outcome: str,
        reason: str | None,
        tail: str,
        seconds: float,
        env: dict[str, str] | None = None,
    ) -> str:
        if self.turn_workspace is not None:
            self._save_code(card, workspaces.record, self.turn_head, turn_id)  # whatever the turn did
        wrote = turns.wrote_since(self.store, self.agent, since)
        if usage.error and not reason:
            reason = usage.error
        recorded = None
        if not wrote:
            recorded = self._record_failed(card, token, turn_id, code, outcome, reason, tail, usage)
            if outcome == "finished":
                outcome = "failed"
        charged = None
        if self.runtime.measured:
            charged = self._charge(card, usage, env or {}, turn_id)
        runners.turn_finished(
            self.store,
            self.agent,
            self.runner_id,
            card.id,
            outcome=outcome,
            reason=reason,
            exit_code=code,
            evidence=wrote,
            recorded=recorded,
            seconds=round(seconds, 1),
            tokens=usage.tokens,
            charged=charged,
        )
        self.log(
            f"turn on {card.key} {outcome}"
            + (f": {reason}" if reason else "")
            + ("" if wrote else " (no evidence: recorded as a failed turn)")
        )
        return outcome

    def _record_failed(
        self,
        card: CardView,
        token: int | None,
        turn_id: str,
        code: int | None,
        outcome: str,
        reason: str | None,
        tail: str,
        usage: Usage,
    ) -> str | None:
        """A turn that wrote no evidence: a writeback of its own (source
        ``runner``), so the card says what happened and the no-progress count
        goes up. Refused when the card is no longer the agent's to write to."""
        from ..shapes.inputs import validate

        text = clean(tail)
        why = reason or (f"the runtime exited {code}" if code else "the runtime ended")
        last = ("said: " + usage.said) if usage.said else self.runtime.last_step(tail)  # (never a raw stream-json line)
        last = clean(last or "", 300)
        summary = f"Turn wrote no evidence ({why})." + (
            f" Last {last}"
            if last.startswith(("said:", "called ", "ran:", "error:"))
            else f" Last output: {last}"
            if last
            else ""
        )
        data = validate("evidence", {"summary": summary[:3900], "turn_id": f"{turn_id}.failed"})
        extra = {
            "failed_turn": True,
            "turn_id": turn_id,
            "outcome": outcome,
            "reason": reason,
            "exit_code": code,
            "runtime": self.runtime.name,
            "tail": text,
        }
        raw = self._keep_output(card, turn_id, tail)
        if raw is not None:
            extra["output"] = raw
        try:
            evidence, _, _ = writeback(
                self.store, card.id, self.agent, data, source="runner", lease_token=token, extra=extra
            )
            return ids.fmt(ids.EVIDENCE, evidence.id)
        except LoopxError as err:
            self.log(f"could not record the failed turn on {card.key}: {err.message}", WARNING)
            return None

    def _keep_output(self, card: CardView, turn_id: str, output: str) -> dict | None:
        """A failed turn's raw output as the runner kept it (its last 16 KiB:
        the stream-json as the runtime printed it), in the board's folder
        (``.loopx/turns/<card>-<turn id>.out``) and named with its hash on the
        record (a later change to the file shows) — the summary says what
        happened, the file is what it was read from. None when the project has no
        ``.loopx/`` (a team board's checkout) or it cannot be written."""
        from ..rules.artifacts import sha256_file

        root = str(self.store.project_root())
        folder = os.path.join(root, ".loopx")
        if not output or not os.path.isdir(folder):
            return None
        path = os.path.join(folder, "turns", f"{card.key}-{turn_id}.out".replace(os.sep, "_"))
        try:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w", encoding="utf-8", errors="surrogateescape") as fh:
                fh.write(output)
            size, sha = sha256_file(path)
        except OSError as err:
            self.log(f"could not keep the failed turn's output: {err}", WARNING)
            return None
        return {"path": os.path.relpath(path, root), "size": size, "sha256": sha}

    def _charge(self, card: CardView, usage: Usage, env: dict[str, str], turn_id: str) -> str | None:
        """The turn's measured usage, charged exactly once: from the transcript
        through the Stop hook's code (calls it charged already are skipped), or —
        without a transcript — from the runtime's own totals."""
        from ..runtimes import transcript

        path = usage.transcript_path(env)
        try:
            if path is not None:
                turn = transcript.read(self.runtime.name, path)
                by = f"loopx run ({self.runtime.name})"
                evidence = charge.charge_transcript(
                    self.store,
                    self.agent,
                    self.runtime.name,
                    usage.session or "unknown",
                    path,
                    turn,
                    card.id,
                    self.log,
                    by=by,
                )
                # its subagents' calls too (the Stop hook charges them; whatever it could not see yet is charged here)
                charge.charge_subagents(
                    self.store,
                    self.agent,
                    self.runtime.name,
                    usage.session or "unknown",
                    path,
                    card.id,
                    self.log,
                    by=by,
                )
                return ids.fmt(ids.EVIDENCE, evidence.id) if evidence else None
            if usage.calls or usage.final:
                self.log(f"no transcript found for session {usage.session}: charging the runtime's own totals")
                tokens_in = sum(c.tokens_in for c in usage.calls)
                tokens_out = sum(c.tokens_out for c in usage.calls)
                usd, _ = charge.price_calls(self.store, usage.calls)
                extra = {
                    "session": usage.session,
                    "runtime": self.runtime.name,
                    "from": "stream",
                    "calls": len(usage.calls),
                }
                evidence, _, created = charge_usage(
                    self.store,
                    card.id,
                    self.agent,
                    f"run:{turn_id}",
                    tokens_in,
                    tokens_out,
                    usd,
                    extra,
                    f"usage: {tokens_in + tokens_out:,} tokens over {len(usage.calls)} model call(s), from the {self.runtime.name} stream (no transcript found)",
                )
                return ids.fmt(ids.EVIDENCE, evidence.id) if created else None
        except (LoopxError, OSError, ValueError) as err:
            self.log(f"usage not charged: {getattr(err, 'message', err)}", WARNING)
        return None

    # -- stopping ----------------------------------------------------------------------------
    def _release_active(self, why: str) -> list[str]:
        """Give back the agent's active cards, and those waiting only on its
        runtime's questions — withdrawn: the turn that asked is over, and no
        answer reaches it (a card waiting on the agent's own question, sleeping
        or paused keeps its holder: a person's answer is still awaited)."""
        released = []
        try:
            for card_id in turns.held_cards(self.store, self.agent):
                try:
                    if (
                        release.release_on_stop(
                            self.store, card_id, self.agent, f"the runner stopped ({why}): the turn that asked is over"
                        )
                        is not None
                    ):
                        released.append(ids.key(ids.CARD, card_id))
                except LoopxError as err:
                    self.log(f"could not release {ids.fmt(ids.CARD, card_id)}: {err.message}", WARNING)
        except Exception as exc:  # stopping anyway: say so, never hang
            self.log(f"could not release the agent's cards: {type(exc).__name__}: {exc}", ERROR)
        return released
