"""The notification command (DESIGN §10 "The notification command"): what runs when something needs
the person — a gate asked, a card paused on its budget or window, a verify
that failed, a runner gone silent, a runtime saying it needs its person
(Claude Code's Notification hook) — with no board open.

The command is a person's signed setting (``loopx notify set``): the newest
signed ``setting_changed`` event for it counts, never the setting row; an
unsigned or altered one runs nothing. Any long-running LoopX process (each
``loopx run``, ``loopx watch``) delivers: ``claim`` picks, in one write
transaction, the needs-you events after the last claim and records them in a
``notify_claimed`` event, so of several processes exactly one delivers each;
``send.py`` then marks each started (``start``), runs the command outside
the transaction and ``record`` logs its outcome (``notified``: ok, or the
error); a deliverer that dies before starting a notice gives it back (below). A key (a gate, a card's pause, a
runner's silence) claimed within the person's ``every`` is skipped: one
message per gate, however often the agent asks again. Everything here is
derived from events: the cursor is the newest claim's ``upto``."""

from __future__ import annotations

import json
import os
from typing import NamedTuple

from ..authority import trust
from ..rules import clock, ids
from ..rules.liveness import STALE, gone_here, host_name
from ..rules.text import terminal_safe
from ..shapes.errors import InvalidInput
from ..store import events, records

TYPE_CHECKING = False  # (annotations only: typing is not imported on the cold path; checkers read this as typing's)
if TYPE_CHECKING:
    from collections.abc import Iterable

    from ..authority import keys
    from ..store.base import Store

SETTING = "notify_command"
ACTOR = "system:notify"
KINDS = (
    "gate_asked",
    "paused",
    "verify_failed",
    "runtime_notice",
)  # the events that need a person (runners are read from their rows)
TIMEOUT, TIMEOUT_MAX = 10.0, 120.0  # seconds the command may take
EVERY = 300.0  # seconds: one message per key in this long
BATCH = 20  # events claimed at once
SILENT = STALE  # a runner without a heartbeat this long is gone (rules.liveness)


class Command(NamedTuple):
    argv: tuple[str, ...]  # the person's command (argv[0] an absolute path); the message follows as two arguments
    timeout: float
    every: float
    seq: int  # the signed event that set it: nothing before it is delivered
    at: float

    def to_json(self) -> dict:
        return {"argv": list(self.argv), "timeout": self.timeout, "every": self.every, "set_at": clock.iso(self.at)}


class Notice(NamedTuple):
    key: str  # what it is about, for de-duplication: gate:G-3, paused:LX-4, verify:LX-4, runner:AGENT:BEAT, runtime:AGENT:TYPE
    kind: str  # gate_asked | paused | verify_failed | runtime_notice | runner_silent
    about: int | None  # the event's seq (None: a runner's row)
    card: int | None
    title: str  # terminal-safe, one line
    body: str

    def to_json(self) -> dict:
        return {
            "key": self.key,
            "kind": self.kind,
            "event": self.about,
            "card": ids.fmt(ids.CARD, self.card) if self.card else None,
            "title": self.title,
            "body": self.body,
        }


def check_argv(argv: list[str]) -> list[str]:
    if not argv:
        raise InvalidInput(
            "no command to run",
            "e.g. `loopx notify set -- /usr/bin/notify-send LoopX` or `--shell 'curl -d @- https://…'`",
        )
    if not argv[0].startswith("/"):
        raise InvalidInput(
            f"{argv[0][:80]!r} is not an absolute path",
            f"name the program by its full path (`command -v {argv[0][:40]}` prints it): a PATH search could find one an agent put there",
        )
    for arg in argv:
        if "\x00" in arg or len(arg) > 4000:
            raise InvalidInput("an argument is too long or holds a NUL", "keep each argument under 4000 characters")
    from ..rules.given_paths import check_program

    check_program(argv[0], "the program", "name an executable file by its full path (`command -v NAME` prints it)")
    return argv


def set_command(
    store: Store, argv: list[str] | None, person: keys.Person, timeout: float = TIMEOUT, every: float = EVERY
) -> Command | None:
    """Set (or with ``argv`` None, clear) the command: a person's signed setting."""
    if argv is not None:
        check_argv(argv)
        if not 0 < timeout <= TIMEOUT_MAX:
            raise InvalidInput(f"--timeout must be between 1 s and {TIMEOUT_MAX:.0f} s", "e.g. --timeout 10s")
        if not 0 <= every <= 86400:
            raise InvalidInput(
                "--every must be between 0 and a day", "e.g. --every 5m (one message per gate in five minutes)"
            )
    value = json.dumps({"argv": argv, "timeout": timeout, "every": every} if argv is not None else None)
    store.run(lambda: store.put_signed_setting(SETTING, value, person))
    with store.read():
        return command(store)


def command(store: Store) -> Command | None:
    """The command the person signed last (None: none, or its event does not verify)."""
    found = trust.latest_setting(store.query, store.trust(), SETTING)
    if found is None or not found[3]:
        return None  # never set, or an unsigned or altered setting: runs nothing
    seq, at, value, _ = found
    try:
        chosen = json.loads(value or "null")
        return (
            None
            if chosen is None
            else Command(
                tuple(check_argv(list(chosen["argv"]))), float(chosen["timeout"]), float(chosen["every"]), seq, at
            )
        )
    except (ValueError, KeyError, TypeError, InvalidInput):
        return None


# -- claiming: one transaction, so of several processes one delivers ----------------------------
# A claim says who took its notices and until when (``pid``, ``host``,
# ``until``), and a deliverer marks each notice ``notify_sending`` (one write
# transaction) just before it runs the command. A claim whose deliverer is gone
# — its process dead on this machine, or its time past — gives the notices it
# never started back: the next claim, by any deliverer, takes them again. A
# notice started is never taken again (it may have run: at most once), and a
# deliverer never starts one a later claim took from it (exactly once among
# the living). Both checks are write transactions, so they cannot cross.
RECLAIM_WITHIN = 3600.0  # seconds: a dead deliverer's notices older than this are not told late
GRACE = 30.0  # seconds beyond its commands' own time a live deliverer may take (a busy board)


class Claim(NamedTuple):
    seq: int  # its notify_claimed event
    notices: list[Notice]


def _claims_since(at: float) -> list[tuple[int, float, dict]]:
    """(seq, at, data) of the claims since ``at``, oldest first."""
    rows = records.rows(
        """SELECT "seq", "at", "data" FROM "event" WHERE "kind" = 'notify_claimed' AND "at" >= ? ORDER BY "seq" """,
        (at,),
    )
    return [(seq, when, json.loads(data)) for seq, when, data in rows if data]


def _started_since(at: float) -> set[tuple[int, str]]:
    """(claim seq, key) of every notice a deliverer started since ``at``."""
    rows = records.rows("""SELECT "data" FROM "event" WHERE "kind" = 'notify_sending' AND "at" >= ?""", (at,))
    return {(d.get("claim"), d.get("key")) for d in (json.loads(r[0]) for r in rows if r[0])}


def _gone(claim: dict, now: float) -> bool:
    """The claim's deliverer is gone: its time is past, or its process is dead
    on this machine. A claim that says neither (older LoopX) is never given back."""
    until = claim.get("until")
    return until is not None and (now > until or gone_here(claim.get("host"), claim.get("pid")))


def _given_back(
    claims: Iterable[tuple[int, object, dict]], started: set, now: float
) -> dict[str, tuple[int, int | None]]:
    """key -> (the claim that abandoned it, the event it is about): keys whose
    newest claim's deliverer is gone and never started them."""
    newest: dict[str, tuple[int, dict, int | None]] = {}
    for seq, _, data in claims:
        about = data.get("about") or [None] * len(data.get("keys", []))
        for key, event in zip(data.get("keys", []), about, strict=False):
            newest[key] = (seq, data, event)
    return {
        key: (seq, event)
        for key, (seq, data, event) in newest.items()
        if (seq, key) not in started and _gone(data, now)
    }


def _cursor(cmd: Command) -> int:
    row = records.rows("""SELECT "data" FROM "event" WHERE "kind" = 'notify_claimed' ORDER BY "seq" DESC LIMIT 1""")
    upto = json.loads(row[0][0]).get("upto") if row and row[0][0] else None
    return max(upto or 0, cmd.seq)


def _notice(seq: int, card: int | None, kind: str, data: dict) -> Notice | None:
    key = ids.key(ids.CARD, card) if card else "the board"
    if kind == "gate_asked":
        gate = data.get("gate")
        pending = records.scalar(
            """SELECT "status" FROM "gate" WHERE "id" = ?""", (ids.parse(ids.GATE, gate) if gate else -1,)
        )
        if pending != "pending":
            return None  # answered already (or approved at once): nothing needs the person
        return Notice(
            f"gate:{gate}",
            kind,
            seq,
            card,
            f"{gate} on {key} needs you",
            terminal_safe(str(data.get("question") or "")),
        )
    if kind == "paused":
        reason = str(data.get("reason") or "paused")
        return Notice(
            f"paused:{key}",
            kind,
            seq,
            card,
            f"{key} paused ({terminal_safe(reason)})",
            "raise its budget or wait for its window: `loopx card show " + key + "`",
        )
    if kind == "runtime_notice":  # the runtime's own "needs you" (Claude Code's Notification hook)
        agent, what = terminal_safe(str(data.get("agent_id") or "?")), terminal_safe(str(data.get("type") or "notice"))
        title = f"{terminal_safe(str(data.get('title') or 'the runtime'))} ({agent}) needs you"
        return Notice(
            f"runtime:{agent}:{what}",
            kind,
            seq,
            card,
            title,
            terminal_safe(str(data.get("message") or "")) + (f" ({key})" if card else ""),
        )
    if kind == "verify_failed":
        return Notice(
            f"verify:{key}",
            kind,
            seq,
            card,
            f"{key}: its verify failed",
            terminal_safe(
                f"`{data.get('command')}` exited {data.get('exit_code')}"
                + (" (timed out)" if data.get("timed_out") else "")
            ),
        )
    return None


def _notice_of_event(seq: int) -> Notice | None:
    """The notice for event ``seq`` as it stands now (a gate answered meanwhile: none)."""
    rows = records.rows("""SELECT "card", "kind", "data" FROM "event" WHERE "seq" = ?""", (seq,))
    return _notice(seq, rows[0][0], rows[0][1], json.loads(rows[0][2]) if rows[0][2] else {}) if rows else None


def _silent_runners(cmd: Command, now: float) -> list[Notice]:
    out = []
    rows = records.rows(
        """SELECT "agent", "heartbeat", "card" FROM "runner" WHERE "state" != 'stopped' AND "heartbeat" IS NOT NULL AND "heartbeat" < ? AND "heartbeat" >= ?""",
        (now - SILENT, cmd.at),
    )
    for agent, beat, card in rows:
        out.append(
            Notice(
                f"runner:{agent}:{beat:.3f}",
                "runner_silent",
                None,
                card,
                f"{terminal_safe(agent)}'s runner went silent",
                f"no heartbeat since {clock.iso(beat)}: `loopx runner list`",
            )
        )
    return out


def claim(store: Store, cmd: Command, by: str) -> Claim:
    """The notices this process delivers now (claimed in one write transaction;
    another process never gets the same one unless this one is gone before
    starting it), in the claim it then starts each under (``start``)."""

    def body() -> Claim:
        now = clock.now()
        last = _cursor(cmd)
        found = records.rows(
            f"""SELECT "seq", "card", "kind", "data" FROM "event" WHERE "kind" IN ({", ".join("?" * len(KINDS))}) AND "seq" > ? ORDER BY "seq" LIMIT {BATCH}""",
            (*KINDS, last),
        )
        candidates = [
            n
            for seq, card, kind, data in found
            if (n := _notice(seq, card, kind, json.loads(data) if data else {})) is not None
        ]
        silent = _silent_runners(cmd, now)
        since = now - max(cmd.every, RECLAIM_WITHIN, *(now - float(n.key.rsplit(":", 1)[1]) for n in silent))
        claims = _claims_since(since)
        given_back = _given_back(claims, _started_since(since), now)
        # A key claimed within the person's `every` is not told again (a runner's
        # silence: not for as long as it lasts) — unless its claim gave it back.
        window = now - max(cmd.every, 0.0)
        seen = {k for seq, at, data in claims for k in data.get("keys", []) if at >= window and k not in given_back}
        if silent:
            oldest = min(float(n.key.rsplit(":", 1)[1]) for n in silent)
            seen |= {
                k for seq, at, data in claims for k in data.get("keys", []) if at >= oldest and k not in given_back
            }
        chosen: list[Notice] = []
        for key, (_, event) in sorted(given_back.items(), key=lambda item: item[1][0]):
            again = _notice_of_event(event) if event is not None else next((n for n in silent if n.key == key), None)
            if again is not None and again.key not in seen:
                seen.add(again.key)
                chosen.append(again)
        taken_back = len(chosen)
        for n in candidates + silent:
            if n.key not in seen:
                seen.add(n.key)
                chosen.append(n)
        upto = found[-1][0] if found else last
        if upto == last and not chosen:
            return Claim(0, [])
        seq = events.emit(
            ACTOR,
            "notify_claimed",
            None,
            upto=upto,
            by=by,
            keys=[n.key for n in chosen],
            about=[n.about for n in chosen],
            skipped=len(candidates) + len(silent) - (len(chosen) - taken_back),
            taken_back=taken_back,
            pid=os.getpid(),
            host=host_name(),
            until=now + len(chosen) * (cmd.timeout + 5.0) + GRACE,
        )
        return Claim(seq, chosen)

    return store.run(body)


def start(store: Store, claimed: Claim, notice: Notice) -> bool:
    """Just before running the command for ``notice``: mark it started under
    ``claimed`` (one write transaction). False: a later claim took it back
    (this deliverer was thought gone), so it is not run here."""

    def body() -> bool:
        later = records.rows(
            """SELECT "data" FROM "event" WHERE "kind" = 'notify_claimed' AND "seq" > ?""", (claimed.seq,)
        )
        if any(notice.key in json.loads(r[0]).get("keys", []) for r in later if r[0]):
            return False
        events.emit(ACTOR, "notify_sending", notice.card, claim=claimed.seq, key=notice.key)
        return True

    return store.run(body)


def record(store: Store, notice: Notice, ok: bool, error: str | None, seconds: float) -> int:
    """The command's outcome for ``notice``, as an event on its card (the board shows it)."""
    return store.run(
        lambda: events.emit(
            ACTOR,
            "notified",
            notice.card,
            key=notice.key,
            kind=notice.kind,
            event=notice.about,
            ok=ok,
            error=error,
            seconds=round(seconds, 3),
        )
    )


def last_outcome(store: Store, card: int, key: str) -> tuple[float, bool, str | None] | None:
    """When the person was last told about ``key`` on ``card``, and whether it worked."""
    rows = store.query(
        """SELECT "at", "data" FROM "event" WHERE "kind" = 'notified' AND "card" = ? ORDER BY "seq" DESC LIMIT 20""",
        (card,),
    )
    for at, data in rows:
        d = json.loads(data) if data else {}
        if d.get("key") == key:
            return at, bool(d.get("ok")), d.get("error")
    return None
