"""``loopx verify``: is this board's history what its writers wrote?

Checks, in one read snapshot:

1. the hash chain — every event's ``prev`` is the hash of the one before (the
   first one's is the board's genesis), every ``hash`` matches the row, no seq
   is missing;
2. signatures — every event by a person (``human:…``) is signed by one of the
   board's trusted people and verifies; no other event claims a signature;
3. authority — every row a decision lives in (approved gates, grants, agents'
   scopes, card budgets, a person's settings) points at the latest signed event
   that decided it and says what that event says;
4. this machine's anchor — the newest head a witness on this machine saw (this
   verify, the board, a runner, a person's signed command; ``witness.py``) is
   still in the chain (a rewrite or a rollback of the whole file shows here).

Events written before the board was upgraded to signing (v3) are reported as
unsigned history, not as an alteration. Exit code 11 when anything fails.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, NamedTuple

from ..rules.decisions import (
    RUNNER_CONTROLS,
    WINDOW_FIELDS,
    WINDOW_KINDS,
    signed_answer,
)
from . import chain, devices, replay, trust
from .authority import Authority
from .trust import EVENT_COLUMNS, SETTING_EVENTS, EventRow

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from .chain import LogReader, Query
    from .trust import BoardReader

PERSON_KINDS = ("person_added", "person_revoked")
AGENT_KINDS = ("agent_added", "agent_updated")
BUDGET_KINDS = ("card_added", "budget_raised")
SIGNED_SETTINGS = ("prices", "test_clock", "policy", "workspace_setup")


class Problem(NamedTuple):
    seq: int | None  # the event it is about (None: a row of another table)
    where: str  # "event 12", "gate G-3", "agent claude-1", …
    what: str
    row: dict | None = None  # a row that differs from the log's replay: table, id, column, row, log

    def to_json(self) -> dict:
        out: dict = {"seq": self.seq, "where": self.where, "what": self.what}
        if self.row is not None:
            out["row"] = self.row
        return out


class Report(NamedTuple):
    events: int
    signed: int
    head: str | None
    problems: list[Problem]
    notes: list[str]  # not failures: unsigned history from before signing, …

    @property
    def ok(self) -> bool:
        return not self.problems

    @property
    def first(self) -> Problem | None:
        with_seq = [(p.seq, n, p) for n, p in enumerate(self.problems) if p.seq is not None]
        return min(with_seq)[2] if with_seq else (self.problems[0] if self.problems else None)

    def to_json(self) -> dict:
        first = self.first
        return {
            "ok": self.ok,
            "events": self.events,
            "signed": self.signed,
            "head": self.head,
            "first_bad": first.to_json() if first else None,
            "problems": [p.to_json() for p in self.problems],
            "notes": self.notes,
        }


# The raw columns an export carries so a copy can be verified anywhere.
RAW = {
    "event": EVENT_COLUMNS,
    "person": "fingerprint, name, public_key, added_seq, revoked_seq",
    "setting": "key, value, decided_seq",
    "agent": "id, capabilities, watch, token_limit, window_seconds, decided_seq, window_usd, window_turns",
    "gate": "id, card_id, agent, status, answered_by, answer_seq, scope, lease_token, answer",
    "grant": "id, scope, agent, card, expires_at, decided_seq",
    "card": "id, max_turns, max_tokens, max_usd, budget_seq, window_seconds, window_tokens, window_usd, window_turns, window_seq, status, assignee, lease_holder, lease_token, used_turns, used_tokens, used_usd",
    "runner": "agent, control, control_seq",
    "workspace": "card_id, state, branch, head, checkout",
}


def verify_store(store: BoardReader, *, anchor: bool = True) -> Report:
    people = store.trust()
    with store.read():
        if people.changed:  # this machine trusts nothing on it: say why, then check the board on its own terms
            report = verify_rows(
                store.query, store.board_uid(), trust.load(store.query, store.board_uid(), machine=False)
            )
        else:
            report = verify_rows(store.query, store.board_uid(), people)
        report.problems.extend(_evidence(store.query))
        folder = _repository_of(store)
        report = _commits(store.query, str(folder) if folder else None, report, store.checkout_id())
    if anchor:
        report = _check_anchor(store, report)
    if people.changed and not any(p.where.startswith("event ") and "saw" in p.what for p in report.problems):
        report = report._replace(problems=[Problem(None, "board", people.changed)] + report.problems)
    return report


def _repository_of(store: BoardReader) -> str | Path | None:
    """The project whose repository holds the recorded commits: the folder the
    board's ``.loopx/`` sits in (wherever the project was moved or restored
    to), else the ``project_root`` recorded at init (a board named by --db
    outside any project), else a team board's checkout."""
    import os

    beside = getattr(store.location, "project_root", None)
    if beside is not None and os.path.exists(os.path.join(beside, ".git")):
        return beside
    return store.project_folder()


def export_chain(store: LogReader) -> dict[str, object]:
    """What ``export`` adds so ``loopx verify --file`` can check a copy elsewhere."""
    tables: dict[str, dict[str, list[Any]]] = {}
    for table, columns in RAW.items():
        name = '"grant"' if table == "grant" else table
        tables[table] = {
            "columns": [c.strip() for c in columns.split(",")],
            "rows": [list(r) for r in store.query(f"SELECT {columns} FROM {name}")],
        }
    return {"board_uid": store.board_uid(), "tables": tables}


def verify_export(doc: dict, root: str | None = None) -> Report:
    """Verify an exported board: its chain, signatures and decisions, against
    ``root`` (the fingerprint you expect) or this machine's pin for that board."""
    import sqlite3

    part = doc["chain"]
    con = sqlite3.connect(":memory:")
    for table, spec in part["tables"].items():
        name = '"grant"' if table == "grant" else table
        cols = ", ".join(f'"{c}"' for c in spec["columns"])
        con.execute(f"CREATE TABLE {name} ({cols})")
        marks = ", ".join("?" * len(spec["columns"]))
        con.executemany(f"INSERT INTO {name} ({cols}) VALUES ({marks})", [tuple(r) for r in spec["rows"]])
    for table, columns in RAW.items():
        if table not in part["tables"]:  # an export by an older LoopX: the table it did not have is empty
            con.execute(f'CREATE TABLE IF NOT EXISTS "{table}" ({columns})')
    if "checkout" not in part["tables"].get("workspace", {}).get("columns", ["checkout"]):
        con.execute('ALTER TABLE workspace ADD COLUMN "checkout"')  # an export from before v8: no workspace named one
    if "answer" not in part["tables"].get("gate", {}).get("columns", ["answer"]):
        # An export from before #29 carries no answer: every answer then was its status (an expiry: rejected).
        con.execute('ALTER TABLE gate ADD COLUMN "answer"')
        con.execute(
            "UPDATE gate SET answer = CASE status WHEN 'expired' THEN 'rejected' WHEN 'pending' THEN NULL WHEN 'withdrawn' THEN NULL ELSE status END"
        )

    def query(sql: str, params: tuple[Any, ...] = ()) -> list[Any]:
        return con.execute(sql, params).fetchall()

    people = trust.load(query, part["board_uid"])
    projected = "used_usd" in part["tables"].get("card", {}).get(
        "columns", ()
    )  # an export by an older LoopX has no projected columns
    report = verify_rows(query, part["board_uid"], people, project=projected)
    if root is not None and (people.root is None or people.root.fingerprint != root):
        found = people.root.fingerprint if people.root else "none"
        return report._replace(
            problems=[Problem(None, "people", f"the export's root key is {found}, not the {root} you expect")]
            + report.problems
        )
    if root is None and not people.pinned:
        report.notes.append(
            "this machine has not pinned this board's root: pass --root FINGERPRINT to check it is the one you expect"
        )
    return report


def verify_rows(query: Query, board_uid: str, people: trust.Trust | None = None, *, project: bool = True) -> Report:
    people = people or trust.load(query, board_uid)
    problems: list[Problem] = [Problem(None, "people", p) for p in people.problems]
    notes: list[str] = []
    settings = dict(query("SELECT key, value FROM setting", ()))
    signed_from = _number(settings.get("signed_from"))
    first_signed = None  # a setting cannot unsign history: none after the first signed event is "before signing"
    expected_prev = chain.genesis(board_uid)
    expected_seq = 1
    count = signed = 0
    head = None
    legacy_unsigned = 0
    last_seq = 0
    batch = 5000
    fold = replay.Replay()
    counters = devices.Counters()
    while True:
        rows = query(f"SELECT {EVENT_COLUMNS} FROM event WHERE seq > ? ORDER BY seq LIMIT {batch}", (last_seq,))
        if not rows:
            break
        for raw in rows:
            row = EventRow(*raw)
            last_seq = row.seq
            count += 1
            where = f"event {row.seq}"
            if row.seq != expected_seq:
                problems.append(Problem(row.seq, where, f"events {expected_seq}…{row.seq - 1} are missing"))
            if row.prev != expected_prev:
                problems.append(
                    Problem(
                        row.seq,
                        where,
                        "does not follow the event before it (its prev hash differs: a row before it was changed, removed or inserted)",
                    )
                )
            if row.hash != row.computed_hash():
                problems.append(
                    Problem(row.seq, where, f"was altered after it was written ({row.kind} by {row.actor})")
                )
            if row.key or row.sig:
                signed += 1
                first_signed = first_signed or row.seq
                why = people.check(row)
                if why:
                    problems.append(Problem(row.seq, where, why))
                elif row.key and row.key.startswith(devices.PREFIX):
                    why = counters.see(row)
                    if why:
                        problems.append(Problem(row.seq, where, why))
            elif row.actor.startswith("human:"):
                if signed_from and row.seq < signed_from and first_signed is None:
                    legacy_unsigned += 1
                else:
                    problems.append(
                        Problem(
                            row.seq,
                            where,
                            f"claims to be a person's decision ({row.kind} by {row.actor}) but is not signed",
                        )
                    )
            expected_prev = row.hash or ""
            expected_seq = row.seq + 1
            head = row.hash
            if project:
                fold.add(row.seq, row.actor, row.card, row.kind, row.data)
    if signed_from and first_signed is not None and signed_from > first_signed:
        problems.append(
            Problem(
                None,
                "setting signed_from",
                f"says history is unsigned up to event {signed_from}, but event {first_signed} is already signed: the setting was changed outside LoopX",
            )
        )
        signed_from = 0
    if legacy_unsigned:
        notes.append(
            f"{legacy_unsigned} event(s) by people before seq {signed_from} predate signing (this board was made by an older LoopX); they are chained but not signed"
        )
    for problem in _authority(query, people, settings):
        if signed_from and problem.seq is None and "no signed decision" in problem.what:
            notes.append(f"{problem.where} is from before signing and is not honoured until a person confirms it")
        else:
            problems.append(problem)
    if project:
        problems.extend(_projection(query, fold.result(since=signed_from)))
    return Report(count, signed, head, problems, notes)


# -- the facts a person chooses between (#38) -------------------------------------------

EVIDENCE_FACTS = ("done_reported", "evidence_added", "usage_charged")


def _verify_fact(result: object) -> dict[str, object] | None:
    if not isinstance(result, dict):
        return None
    return {k: result.get(k) for k in ("command", "passed", "exit_code", "timed_out")}


def _evidence(query: Query) -> list[Problem]:
    """Every evidence row a chained event describes says what the event says:
    a ``done``'s summary and verify result (``done_reported``: what ``card
    tries`` and the merge gate show), a turn's summary, tokens and dollars
    (``evidence_added``, ``usage_charged``: what the windows sum)."""
    marks = ",".join("?" * len(EVIDENCE_FACTS))
    logged: dict[int, tuple[int, str, dict, int | None]] = {}
    for seq, card, kind, text in query(
        f"SELECT seq, card, kind, data FROM event WHERE kind IN ({marks}) ORDER BY seq", EVIDENCE_FACTS
    ):
        data = json.loads(text) if isinstance(text, str) else (text or {})
        number = str(data.get("evidence") or "")[2:]
        if number.isdigit():
            logged[int(number)] = (seq, kind, data, card)
    if not logged:
        return []
    out = []
    seen = set()
    for eid, card_id, summary, tokens, usd, extra in query(
        "SELECT id, card_id, summary, tokens, usd, extra FROM evidence ORDER BY id", ()
    ):
        found = logged.get(eid)
        if found is None:
            continue
        seen.add(eid)
        seq, kind, data, card = found
        extra = json.loads(extra) if isinstance(extra, str) else (extra or {})
        said: list[tuple[str, object, object]] = [("card_id", card_id, card)]
        if kind == "done_reported":
            said += [
                ("summary", summary, data.get("summary")),
                ("verify", _verify_fact((extra or {}).get("verify")), _verify_fact(data.get("verify"))),
            ]
        else:
            said += [
                ("tokens", tokens or 0, data.get("tokens") or 0),
                ("usd", round(usd or 0.0, 6), round(float(data.get("usd") or 0.0), 6)),
            ]
            if kind == "evidence_added":
                said.append(("summary", (summary or "")[:200], data.get("summary")))
        for column, row, log in said:
            if row != log:
                detail = {"table": "evidence", "id": eid, "column": column, "row": row, "log": log}
                out.append(
                    Problem(
                        seq,
                        f"evidence E-{eid}",
                        f"evidence.{column} is {row!r} in the row, but event {seq} ({kind}) says {log!r} (the row was changed outside LoopX)",
                        detail,
                    )
                )
    for eid in sorted(set(logged) - seen):
        seq, kind, _, _ = logged[eid]
        out.append(
            Problem(
                seq,
                f"evidence E-{eid}",
                f"event {seq} ({kind}) records it, but the row is gone (removed outside LoopX)",
            )
        )
    return out


def _number(text: str | int | None) -> int:
    try:
        return max(0, int(text or 0))
    except (TypeError, ValueError):
        return 0


def _projection(query: Query, projection: replay.Projection) -> list[Problem]:
    """Every row the replay of the log does not support (card, gate, grant, runner)."""
    out = []
    for d in replay.differences(query, projection):
        detail = {"table": d.table, "id": d.id, "column": d.column, "row": d.row, "log": d.log}
        if d.table == "event":
            out.append(Problem(d.seq, f"event {d.seq}", f"a charge that {d.log}", detail))
        else:
            out.append(Problem(d.seq, d.where, f"{d.describe()} (the row was changed outside LoopX)", detail))
    return out


def _latest(
    query: Query, kinds: tuple[str, ...], match: Callable[[dict[str, Any]], bool], card: int | None = None
) -> int | None:
    """The seq of the newest event by a person of ``kinds`` (on ``card``) whose data satisfies ``match``."""
    marks = ",".join("?" * len(kinds))
    sql = f"SELECT seq, data FROM event WHERE kind IN ({marks}) AND actor LIKE 'human:%'"
    params: tuple = kinds
    if card is not None:
        sql, params = sql + " AND card = ?", kinds + (card,)
    for seq, data in query(sql + " ORDER BY seq DESC", params):
        if match(json.loads(data)):
            return seq
    return None


def _authority(query: Query, people: trust.Trust, settings: dict) -> list[Problem]:
    out: list[Problem] = []

    def decided(seq: int | None, kinds: tuple[str, ...]) -> dict[str, Any] | None:
        return people.decision(query, seq, kinds)

    for gid, status, answered_by, answer_seq, scope, card, answer in query(
        "SELECT id, status, answered_by, answer_seq, scope, card_id, answer FROM gate WHERE answered_by LIKE ?",
        ("human:%",),
    ):
        data = decided(answer_seq, ("gate_answered",))
        if (
            data is None
            or data.get("gate") != f"G-{gid}"
            or data.get("answer") != status
            or data.get("scope") != scope
            or signed_answer(data) != answer
        ):
            out.append(
                Problem(answer_seq, f"gate G-{gid}", f"says {status} by {answered_by}, but no signed answer says so")
            )
    rules = Authority(query, people)
    for gid, card, agent, scope, by, seq, token in query(
        "SELECT id, card_id, agent, scope, answered_by, answer_seq, lease_token FROM gate WHERE status = 'approved' AND (answered_by IS NULL OR answered_by NOT LIKE ?)",
        ("human:%",),
    ):
        if not rules.approval_holds(gid, card, agent, scope, by, seq, token, 0.0):
            out.append(
                Problem(
                    None, f"gate G-{gid}", f"says approved by {by or 'nobody'}, which no signed scope or grant backs"
                )
            )
    for row in query('SELECT id, scope, agent, card, expires_at, decided_seq FROM "grant"', ()):
        gid, scope, agent, card, expires, seq = row
        data = decided(seq, ("grant_created",))
        if data is None or [
            data.get("grant"),
            data.get("scope"),
            data.get("agent"),
            data.get("card"),
            data.get("expires_at"),
        ] != [gid, scope, agent, card, expires]:
            out.append(Problem(seq, f"grant {gid}", f"({scope}) has no signed decision that matches it"))
    for agent, caps, watch, limit, window, seq, usd, turns in query(
        "SELECT id, capabilities, watch, token_limit, window_seconds, decided_seq, window_usd, window_turns FROM agent",
        (),
    ):
        data = decided(seq, AGENT_KINDS)
        if (
            data is None
            or data.get("agent") != agent
            or data.get("capabilities") != json.loads(caps)
            or data.get("watch") != json.loads(watch)
            or [data.get("token_limit"), data.get("window_seconds"), data.get("window_usd"), data.get("window_turns")]
            != [limit, window, usd, turns]
        ):
            out.append(
                Problem(seq, f"agent {agent}", "its registration or scopes have no signed decision that matches them")
            )
        elif _latest(query, AGENT_KINDS, lambda d: d.get("agent") == agent) != seq:
            out.append(Problem(seq, f"agent {agent}", "points at an older decision than the latest one (rolled back)"))
    for card, mt, mtok, musd, seq in query("SELECT id, max_turns, max_tokens, max_usd, budget_seq FROM card", ()):
        newest = _latest(query, BUDGET_KINDS, lambda d: "max_turns" in d, card=card)
        if seq is None and newest is None:
            continue  # an agent's own card: its limits are its own
        data = decided(seq, BUDGET_KINDS)
        if data is None or [data.get("max_turns"), data.get("max_tokens"), data.get("max_usd")] != [mt, mtok, musd]:
            out.append(Problem(seq, f"card LX-{card}", "its budget has no signed decision that matches it"))
        elif newest != seq:
            out.append(
                Problem(
                    seq, f"card LX-{card}", "its budget points at an older decision than the latest one (rolled back)"
                )
            )
    for card, *window, seq in query(
        "SELECT id, window_seconds, window_tokens, window_usd, window_turns, window_seq FROM card", ()
    ):
        newest = _latest(query, WINDOW_KINDS, lambda d: True, card=card)
        if seq is None and newest is None:
            continue  # no person ever gave it a window
        data = decided(seq, WINDOW_KINDS)
        if data is None or [data.get(f) for f in WINDOW_FIELDS] != window:
            out.append(Problem(seq, f"card LX-{card}", "its window has no signed decision that matches it"))
        elif newest != seq:
            out.append(
                Problem(
                    seq, f"card LX-{card}", "its window points at an older decision than the latest one (rolled back)"
                )
            )
    for agent, control, seq in query("SELECT agent, control, control_seq FROM runner", ()):

        def about_agent(d: dict[str, Any], agent: str = agent) -> bool:
            return d.get("agent") == agent

        newest = _latest(query, RUNNER_CONTROLS, about_agent)
        if seq is None and newest is None and control is None:
            continue  # no person ever controlled this agent's runner
        data = decided(seq, RUNNER_CONTROLS)
        if data is None or data.get("agent") != agent or data.get("control") != (control or "resume"):
            out.append(Problem(seq, f"runner {agent}", "its control has no signed decision that matches it"))
        elif newest != seq:
            out.append(
                Problem(
                    seq, f"runner {agent}", "its control points at an older decision than the latest one (rolled back)"
                )
            )
    for key, value, seq in query("SELECT key, value, decided_seq FROM setting", ()):
        if key not in SIGNED_SETTINGS:
            continue
        data = decided(seq, SETTING_EVENTS)
        if data is None or data.get("key") != key or data.get("value") != value:
            out.append(Problem(seq, f"setting {key}", "has no signed decision that matches it"))
    return out


# -- the commits workspaces recorded (issue #26) ----------------------------------------

CODE_KINDS = ("workspace_opened", "code_state", "workspace_archived")


def recorded_commits(query: Query, checkout: str | None = None) -> tuple[dict[str, tuple[int, int | None, str]], int]:
    """Every commit the log says a workspace of ``checkout`` had (a team board's
    checkout; None: the board's one project folder): commit -> (seq, card,
    what); and how many events named commits of other checkouts' workspaces."""
    out: dict[str, tuple[int, int | None, str]] = {}
    held: dict[int | None, str | None] = {}  # card -> the checkout its workspace is in (a workspace never moves)
    others = 0
    marks = ",".join("?" * len(CODE_KINDS))
    for seq, card, kind, text in query(
        f"SELECT seq, card, kind, data FROM event WHERE kind IN ({marks}) ORDER BY seq", CODE_KINDS
    ):
        data = json.loads(text) if text else {}
        if kind == "workspace_opened" and card not in held:
            held[card] = data.get("checkout")
        if held.get(card) != checkout:
            others += 1
            continue
        turn = f"turn {data['turn_id']}" if data.get("turn_id") else kind
        named = [
            ("base", data.get("base_commit")),
            ("HEAD", data.get("head")),
            ("saved uncommitted work", data.get("wip")),
            ("archive", data.get("commit")),
        ]
        named += [("commit", c) for c in data.get("commits") or []]
        for what, commit in named:
            if isinstance(commit, str) and commit and commit not in out:
                out[commit] = (seq, card, f"{what} of {turn}")
    return out, others


def _commits(query: Query, project_root: str | None, report: Report, checkout: str | None = None) -> Report:
    """Every recorded commit must still be in the project's repository: a
    commit that vanished (a rewritten branch, a deleted ref and a gc) is
    history altered, named with its card and turn. On a team board, this
    checkout's workspaces' commits (the others' are in their repositories)."""
    if not query("SELECT 1 FROM event WHERE kind = 'workspace_opened' LIMIT 1", ()):
        return report  # (the cheap answer for a board without workspaces: no git at all)
    import os

    recorded, others = recorded_commits(query, checkout)
    if others:
        report.notes.append(
            f"{others} code record(s) of workspaces in other checkouts of this team board not checked here: run `loopx verify` in those checkouts"
        )
    if not project_root or not os.path.exists(os.path.join(project_root, ".git")):
        report.notes.append(
            f"{len(recorded)} recorded commit(s) not checked: the project's repository is not on this machine"
        )
        return report
    from ..workspace import git, quarantine

    try:
        quarantine.admitted(project_root)  # a commit a turn made is in its quarantine until checked
        gone = git.missing(project_root, list(recorded))
    except git.GitError as exc:
        return report._replace(
            problems=report.problems
            + [Problem(None, "repository", f"could not check the recorded commits: {exc.message}")]
        )
    problems = list(report.problems)
    for commit in gone:
        seq, card, what = recorded[commit]
        where = f"card LX-{card}" if card is not None else f"event {seq}"
        problems.append(
            Problem(seq, where, f"recorded commit {commit[:12]} ({what}, event {seq}) is no longer in the repository")
        )
    report.notes.append(f"{len(recorded)} recorded commit(s) checked in the repository at {project_root}")
    try:
        problems += _left_behind(query, project_root, checkout, report.notes)
    except git.GitError as exc:
        problems.append(Problem(None, "repository", f"could not check the cards' recorded work: {exc.message}"))
    problems += _merges_as_approved(query, project_root)
    return report._replace(problems=problems)


def _left_behind(query: Query, repo: str, checkout: str | None, notes: list[str]) -> list[Problem]:
    """Each card's recorded commits that are on no base or branch of a card
    and that no person let go (``work.py``): a done card's are history
    altered (it finished without them); an open card's are named in a note
    (its ``done`` will ask the person). One ``rev-list`` for the whole board
    (``done`` holds each card to its own base and branch)."""
    from ..workspace import git
    from . import work

    mine = "w.checkout = ?" if checkout else "w.checkout IS NULL"
    rows = query(
        f"SELECT w.card_id, w.base, w.branch, c.status FROM workspace AS w JOIN card AS c ON c.id = w.card_id WHERE {mine} ORDER BY w.card_id",
        (checkout,) if checkout else (),
    )
    wanted: dict[str, tuple[int, str, str]] = {}  # commit -> (card, what, status)
    refs: set[str] = set()
    own: dict[int, tuple[str, str]] = {}
    for card, base, branch, status in rows:
        if not base or status == "cancelled":
            continue  # (a cancelled card's work was given up by a person; its archive keeps it)
        refs.update((f"refs/heads/{base}", f"refs/heads/{branch}"))
        own[card] = (f"refs/heads/{base}", f"refs/heads/{branch}")
        recorded = work.recorded(query, card)
        gone_ok = work.let_go(query, card) if recorded else set()
        for commit, what in recorded.items():
            if commit not in gone_ok:
                wanted.setdefault(commit, (card, what, status))
    if not wanted:
        return []
    tips = git.tips(repo, sorted(refs))
    unreached, _ = git.unreached(repo, list(wanted), tips.values())  # (the ones gone are named above)
    left: dict[int, list[tuple[str, str]]] = {}
    for commit in unreached:
        if git.same_change_in(repo, commit, [tips.get(ref) for ref in own[wanted[commit][0]]]):
            continue  # a rebase copied it onto the card's branch or base: the work is there
        left.setdefault(wanted[commit][0], []).append((commit, wanted[commit][1]))
    out = []
    for card, commits in sorted(left.items()):
        status = wanted[commits[0][0]][2]
        said = f"recorded commit(s) {work.describe(commits)} are on no branch of a card nor its base"
        if status == "done":
            out.append(Problem(None, f"card LX-{card}", f"is done, but its {said}, and no person let them go"))
        else:
            notes.append(f"card LX-{card}: its {said}; `loopx done` will ask a person before it finishes")
    return out


def _merges_as_approved(query: Query, project_root: str) -> list[Problem]:
    """Each merge commit LoopX made is of the very commits the person's signed
    answer approved (#38): its parents are the pinned base and branch head.
    Read with replace refs off (``workspace/git``), so a ``refs/replace/``
    entry cannot make a different merge look right."""
    from ..workspace import git
    from ..workspace.merge import parents

    approved: dict[tuple[int | None, str], dict] = {}
    problems = []
    rows = query(
        "SELECT seq, card, kind, actor, data FROM event WHERE kind IN ('gate_answered', 'merged') ORDER BY seq", ()
    )
    for seq, card, kind, actor, text in rows:
        data = json.loads(text) if text else {}
        if kind == "gate_answered":
            if str(actor).startswith("human:") and data.get("head"):
                approved[(card, str(data.get("gate")))] = data
            continue
        pin = approved.get((card, str(data.get("gate"))))
        if pin is None or data.get("already") or not data.get("commit"):
            continue  # (a merge approved before the pin: nothing signed to compare)
        where = f"card LX-{card}" if card is not None else f"event {seq}"
        want = [pin.get("base_commit"), pin.get("head")]
        try:
            found = parents(project_root, str(data["commit"]))
        except git.GitError as exc:
            problems.append(
                Problem(seq, where, f"could not read merge commit {str(data['commit'])[:12]}: {exc.message}")
            )
            continue
        if found is None:
            continue  # (a vanished commit: named as a recorded commit when it is one)
        if found != want:
            said = ", ".join(p[:12] for p in found) or "none"
            problems.append(
                Problem(
                    seq,
                    where,
                    f"merge commit {str(data['commit'])[:12]} (event {seq}) merged {said}, not what the person approved in {data.get('gate')} ({str(want[0])[:12]}, {str(want[1])[:12]})",
                )
            )
    return problems


# -- this machine's anchor (authority/witness.py) ---------------------------------------


def _check_anchor(store: LogReader, report: Report) -> Report:
    from . import witness

    with store.read():
        why = witness.check(store.query, witness.store_key(store))
    if why is None:
        return report
    return report._replace(problems=[Problem(why.seq, f"event {why.seq}", why.what)] + report.problems)


def save_anchor(store: LogReader, report: Report) -> None:
    """Remember the verified head on this machine (the person's config folder)."""
    if not report.ok or report.head is None:
        return
    from . import witness

    with store.read():
        now = witness.head(store.query)
    if now is not None:
        witness.advance(witness.store_key(store), now)
