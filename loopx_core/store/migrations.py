"""Schema versions and forward migrations. An old board opens: ``Store.open``
runs every step above the board's version, in one write transaction.

Every step is frozen: it says in SQL what that version created, never "create
today's models" — so adding a column to ``models.py`` means adding a step here,
and a board made today passes through exactly the steps an old board did
(``tests/kernel/test_migrations.py`` holds the final schema equal to the models).
"""

from __future__ import annotations

import re

from ..rules.schema_version import SCHEMA_VERSION  # noqa: F401 (the version STEPS reach)

TYPE_CHECKING = False  # (annotations only; checkers read this as typing's)
if TYPE_CHECKING:
    from peewee import Database

# Column types that differ between the two backends.
TYPES = {
    "sqlite": {"SERIAL": "INTEGER", "BIGINT": "INTEGER", "REAL": "REAL", "BOOL": "INTEGER"},
    "postgresql": {"SERIAL": "SERIAL", "BIGINT": "BIGINT", "REAL": "DOUBLE PRECISION", "BOOL": "BOOLEAN"},
}

V1 = """
CREATE TABLE IF NOT EXISTS "setting" ("key" VARCHAR(64) NOT NULL PRIMARY KEY, "value" TEXT NOT NULL)
CREATE TABLE IF NOT EXISTS "agent" ("id" VARCHAR(64) NOT NULL PRIMARY KEY, "runtime" VARCHAR(32), "capabilities" TEXT NOT NULL, "watch" TEXT NOT NULL, "token_limit" {BIGINT}, "window_seconds" {REAL}, "created_at" {REAL} NOT NULL)
CREATE TABLE IF NOT EXISTS "card" ("id" {SERIAL} NOT NULL PRIMARY KEY, "title" TEXT NOT NULL, "body" TEXT NOT NULL, "status" VARCHAR(16) NOT NULL, "assignee" VARCHAR(64), "needs" TEXT NOT NULL, "priority" INTEGER NOT NULL, "next_action" TEXT, "todos" TEXT NOT NULL, "todo_seq" INTEGER NOT NULL, "verify" TEXT, "max_turns" INTEGER, "max_tokens" {BIGINT}, "max_usd" {REAL}, "used_turns" INTEGER NOT NULL, "used_tokens" {BIGINT} NOT NULL, "used_usd" {REAL} NOT NULL, "lease_holder" VARCHAR(64), "lease_token" INTEGER, "lease_expires" {REAL}, "fence" INTEGER NOT NULL, "lease_seconds" {REAL}, "version" INTEGER NOT NULL, "paused_reason" VARCHAR(32), "blocked_reason" TEXT, "stalls" INTEGER NOT NULL, "progress_mark" {BOOL} NOT NULL, "evidence_count" INTEGER NOT NULL, "monitor_every" {REAL}, "monitor_due" {REAL}, "handoff_to" VARCHAR(64), "created_at" {REAL} NOT NULL, "updated_at" {REAL} NOT NULL, "done_at" {REAL})
CREATE INDEX IF NOT EXISTS "card_status" ON "card" ("status")
CREATE INDEX IF NOT EXISTS "card_assignee" ON "card" ("assignee")
CREATE INDEX IF NOT EXISTS "card_lease_holder" ON "card" ("lease_holder")
CREATE TABLE IF NOT EXISTS "dependency" ("card_id" INTEGER NOT NULL, "after_id" INTEGER NOT NULL, PRIMARY KEY ("card_id", "after_id"), FOREIGN KEY ("card_id") REFERENCES "card" ("id") ON DELETE CASCADE, FOREIGN KEY ("after_id") REFERENCES "card" ("id") ON DELETE CASCADE)
CREATE INDEX IF NOT EXISTS "dependency_card_id" ON "dependency" ("card_id")
CREATE INDEX IF NOT EXISTS "dependency_after_id" ON "dependency" ("after_id")
CREATE TABLE IF NOT EXISTS "gate" ("id" {SERIAL} NOT NULL PRIMARY KEY, "card_id" INTEGER NOT NULL, "agent" VARCHAR(64) NOT NULL, "kind" VARCHAR(16) NOT NULL, "question" TEXT NOT NULL, "scope" VARCHAR(128), "options" TEXT NOT NULL, "status" VARCHAR(16) NOT NULL, "answer" TEXT, "note" TEXT, "answered_by" VARCHAR(128), "deadline" {REAL}, "lease_token" INTEGER, "created_at" {REAL} NOT NULL, "answered_at" {REAL}, FOREIGN KEY ("card_id") REFERENCES "card" ("id") ON DELETE CASCADE)
CREATE INDEX IF NOT EXISTS "gate_card_id" ON "gate" ("card_id")
CREATE INDEX IF NOT EXISTS "gate_status" ON "gate" ("status")
CREATE TABLE IF NOT EXISTS "grant" ("id" {SERIAL} NOT NULL PRIMARY KEY, "scope" VARCHAR(128) NOT NULL, "agent" VARCHAR(64), "card" INTEGER, "expires_at" {REAL}, "created_by" VARCHAR(128) NOT NULL, "gate" INTEGER, "created_at" {REAL} NOT NULL)
CREATE TABLE IF NOT EXISTS "evidence" ("id" {SERIAL} NOT NULL PRIMARY KEY, "card_id" INTEGER NOT NULL, "agent" VARCHAR(64) NOT NULL, "turn_id" VARCHAR(128), "summary" TEXT NOT NULL, "artifacts" TEXT NOT NULL, "next_action" TEXT, "todos_added" TEXT NOT NULL, "todos_done" TEXT NOT NULL, "tokens_in" {BIGINT} NOT NULL, "tokens_out" {BIGINT} NOT NULL, "tokens" {BIGINT} NOT NULL, "usd" {REAL} NOT NULL, "source" VARCHAR(16) NOT NULL, "extra" TEXT, "payload_hash" VARCHAR(64) NOT NULL, "created_at" {REAL} NOT NULL, FOREIGN KEY ("card_id") REFERENCES "card" ("id") ON DELETE CASCADE)
CREATE INDEX IF NOT EXISTS "evidence_card_id" ON "evidence" ("card_id")
CREATE UNIQUE INDEX IF NOT EXISTS "evidence_card_id_turn_id" ON "evidence" ("card_id", "turn_id")
CREATE INDEX IF NOT EXISTS "evidence_agent_created_at" ON "evidence" ("agent", "created_at")
CREATE TABLE IF NOT EXISTS "handoff" ("id" {SERIAL} NOT NULL PRIMARY KEY, "card_id" INTEGER NOT NULL, "from_agent" VARCHAR(64), "to_agent" VARCHAR(64) NOT NULL, "packet" TEXT NOT NULL, "digest" VARCHAR(64) NOT NULL, "created_by" VARCHAR(128) NOT NULL, "created_at" {REAL} NOT NULL, "accepted_at" {REAL}, "accepted_digest" VARCHAR(64), FOREIGN KEY ("card_id") REFERENCES "card" ("id") ON DELETE CASCADE)
CREATE INDEX IF NOT EXISTS "handoff_card_id" ON "handoff" ("card_id")
CREATE TABLE IF NOT EXISTS "observed" ("id" {SERIAL} NOT NULL PRIMARY KEY, "card_id" INTEGER NOT NULL, "agent" VARCHAR(64) NOT NULL, "path" TEXT NOT NULL, "size" {BIGINT}, "sha256" VARCHAR(64), "created_at" {REAL} NOT NULL, FOREIGN KEY ("card_id") REFERENCES "card" ("id") ON DELETE CASCADE)
CREATE INDEX IF NOT EXISTS "observed_card_id" ON "observed" ("card_id")
CREATE TABLE IF NOT EXISTS "operation" ("op_id" VARCHAR(128) NOT NULL PRIMARY KEY, "op" VARCHAR(32) NOT NULL, "payload_hash" VARCHAR(64) NOT NULL, "result" TEXT NOT NULL, "exit_code" INTEGER NOT NULL, "created_at" {REAL} NOT NULL)
CREATE TABLE IF NOT EXISTS "event" ("seq" {SERIAL} NOT NULL PRIMARY KEY, "at" {REAL} NOT NULL, "actor" VARCHAR(128) NOT NULL, "card" INTEGER, "kind" VARCHAR(32) NOT NULL, "data" TEXT NOT NULL, "op_id" VARCHAR(128))
CREATE INDEX IF NOT EXISTS "event_card" ON "event" ("card")
CREATE UNIQUE INDEX IF NOT EXISTS "event_op_id" ON "event" ("op_id")
"""

V2 = """
CREATE TABLE IF NOT EXISTS "ingest_stream" ("path" TEXT NOT NULL PRIMARY KEY, "inode" {BIGINT}, "offset" {BIGINT} NOT NULL, "lines" INTEGER NOT NULL, "head" VARCHAR(64), "tail" VARCHAR(64), "updated_at" {REAL} NOT NULL)
CREATE TABLE IF NOT EXISTS "ingest_seen" ("key" VARCHAR(64) NOT NULL PRIMARY KEY, "outcome" VARCHAR(16) NOT NULL, "path" TEXT NOT NULL, "line" INTEGER, "card" INTEGER, "created_at" {REAL} NOT NULL)
"""

V3 = """
ALTER TABLE "event" ADD COLUMN "prev" VARCHAR(64)
ALTER TABLE "event" ADD COLUMN "hash" VARCHAR(64)
ALTER TABLE "event" ADD COLUMN "key" VARCHAR(64)
ALTER TABLE "event" ADD COLUMN "sig" TEXT
ALTER TABLE "setting" ADD COLUMN "decided_seq" INTEGER
ALTER TABLE "agent" ADD COLUMN "decided_seq" INTEGER
ALTER TABLE "card" ADD COLUMN "budget_seq" INTEGER
ALTER TABLE "gate" ADD COLUMN "answer_seq" INTEGER
ALTER TABLE "grant" ADD COLUMN "decided_seq" INTEGER
CREATE TABLE IF NOT EXISTS "person" ("fingerprint" VARCHAR(64) NOT NULL PRIMARY KEY, "name" VARCHAR(64) NOT NULL, "public_key" VARCHAR(64) NOT NULL, "added_seq" INTEGER NOT NULL, "revoked_seq" INTEGER)
ALTER TABLE "evidence" ADD COLUMN "unverified" {BOOL} NOT NULL DEFAULT FALSE
ALTER TABLE "card" ADD COLUMN "unverified_evidence" INTEGER NOT NULL DEFAULT 0
"""

V4 = """
CREATE TABLE IF NOT EXISTS "runner" ("agent" VARCHAR(64) NOT NULL PRIMARY KEY, "runner_id" VARCHAR(64), "runtime" VARCHAR(32), "pid" INTEGER, "host" VARCHAR(255), "state" VARCHAR(16) NOT NULL, "card" INTEGER, "turn" INTEGER NOT NULL, "turn_id" VARCHAR(128), "gate" INTEGER, "wake_at" {REAL}, "detail" TEXT, "since" {REAL} NOT NULL, "heartbeat" {REAL}, "seen_seq" {BIGINT}, "started_at" {REAL}, "control" VARCHAR(16), "control_seq" INTEGER)
ALTER TABLE "card" ADD COLUMN "window_seconds" {REAL}
ALTER TABLE "card" ADD COLUMN "window_tokens" {BIGINT}
ALTER TABLE "card" ADD COLUMN "window_usd" {REAL}
ALTER TABLE "card" ADD COLUMN "window_turns" INTEGER
ALTER TABLE "card" ADD COLUMN "window_seq" INTEGER
ALTER TABLE "card" ADD COLUMN "wake_at" {REAL}
ALTER TABLE "agent" ADD COLUMN "window_usd" {REAL}
ALTER TABLE "agent" ADD COLUMN "window_turns" INTEGER
"""

V5 = """
CREATE INDEX IF NOT EXISTS "card_status_lease_holder_handoff_to_assignee" ON "card" ("status", "lease_holder", "handoff_to", "assignee")
"""

V6 = """
CREATE INDEX IF NOT EXISTS "event_kind_seq" ON "event" ("kind", "seq")
"""


V7 = """
CREATE TABLE IF NOT EXISTS "workspace" ("card_id" INTEGER NOT NULL PRIMARY KEY, "path" TEXT NOT NULL, "branch" VARCHAR(255) NOT NULL, "base" VARCHAR(255), "base_commit" VARCHAR(64) NOT NULL, "state" VARCHAR(16) NOT NULL, "head" VARCHAR(64), "wip" VARCHAR(64), "archive_ref" TEXT, "opened_at" {REAL} NOT NULL, "updated_at" {REAL} NOT NULL, FOREIGN KEY ("card_id") REFERENCES "card" ("id") ON DELETE CASCADE)
"""

V8 = """
ALTER TABLE "workspace" ADD COLUMN "checkout" VARCHAR(64)
CREATE TABLE IF NOT EXISTS "card_try" ("card_id" INTEGER NOT NULL PRIMARY KEY, "try_of" INTEGER NOT NULL, "try_no" INTEGER NOT NULL, FOREIGN KEY ("card_id") REFERENCES "card" ("id") ON DELETE CASCADE, FOREIGN KEY ("try_of") REFERENCES "card" ("id") ON DELETE CASCADE)
CREATE INDEX IF NOT EXISTS "card_try_try_of" ON "card_try" ("try_of")
"""


_ADD_COLUMN = re.compile(r'ALTER TABLE "(\w+)" ADD COLUMN "(\w+)"')


def _run(db: Database, script: str) -> None:
    """Each statement of a step; like the CREATE ... IF NOT EXISTS ones, an added
    column already there is left alone, so a step can run again on its own result."""
    types = TYPES["postgresql" if "postgres" in type(db).__name__.lower() else "sqlite"]
    for line in script.strip().splitlines():
        added = _ADD_COLUMN.match(line)
        if added and added.group(2) in {c.name for c in db.get_columns(added.group(1))}:
            continue
        db.execute_sql(line.format(**types))


def _v1(db: Database) -> None:
    _run(db, V1)


def _v2(db: Database) -> None:
    """The file watcher's state: JSONL read offsets and documents already handled."""
    _run(db, V2)


def _v3(db: Database) -> None:
    """Signed human decisions and the hash-chained event log (SECURITY.md), and
    evidence identity (DESIGN §7: whether a piece of evidence has a verifiable
    writer, and how many on each card have not). An old board's events are
    chained as they are; its unsigned history is reported by ``loopx verify`` as
    from before signing, never as signed."""
    from ..authority import chain

    _run(db, V3)
    found = db.execute_sql("SELECT value FROM setting WHERE key = 'board_uid'").fetchall()
    import uuid  # only when a board is made (or upgraded to v3): not on every open

    uid = found[0][0] if found else uuid.uuid4().hex
    if not found:
        db.execute_sql(f"INSERT INTO setting (key, value) VALUES ({db.param}, {db.param})", ("board_uid", uid))
    prev = chain.genesis(uid)
    last = None
    rows = db.execute_sql("SELECT seq, at, actor, card, kind, data, op_id, hash FROM event ORDER BY seq").fetchall()
    for seq, at, actor, card, kind, data, op_id, digest in rows:
        if digest is None:  # (a row already chained — this step run again — keeps its hash and signature)
            digest = chain.event_hash(prev, seq, at, actor, card, kind, data, op_id, None)
            db.execute_sql(
                f"UPDATE event SET prev = {db.param}, hash = {db.param} WHERE seq = {db.param}", (prev, digest, seq)
            )
            last = seq
        prev = digest
    if last is not None and not db.execute_sql("SELECT 1 FROM setting WHERE key = 'signed_from'").fetchall():
        db.execute_sql(
            f"INSERT INTO setting (key, value) VALUES ({db.param}, {db.param})", ("signed_from", str(last + 1))
        )


def _v4(db: Database) -> None:
    """Runners and quota windows (DESIGN §4 "Windows", §10 "Rows"): one row per agent's runner (which
    process drives it, what it is doing, a person's signed control), a card's
    rolling window (and when a spent one refills), an agent's window in
    dollars and turns as well as tokens."""
    _run(db, V4)


def _v5(db: Database) -> None:
    """The four columns a card's owner is worked out from, with its status, in
    one index: the board counts its cards by owner from the index alone (a
    50,000-card board in a few ms, not a read of every row)."""
    _run(db, V5)


def _v6(db: Database) -> None:
    """Events by kind, newest first, from an index: a runner asks for its
    person's newest control at every turn (``ops.runners.controls``), and on a
    board that never paused it that read every event (34 ms at 200,000)."""
    _run(db, V6)


def _v7(db: Database) -> None:
    """Workspaces (issue #26): one git worktree per card, where it is, its
    branch and base, and the code state last recorded (HEAD, saved uncommitted
    work). Every change to a row is an event (workspace_opened, code_state,
    workspace_archived, workspace_removed) that ``verify`` replays."""
    _run(db, V7)


def _v8(db: Database) -> None:
    """Team boards' workspaces and tries by index (issue #26): a workspace names
    the checkout of a PostgreSQL team board that holds it (several checkouts,
    on several machines, share one board); ``card_try`` links each try to the
    card it tries, filled here from the signed ``card_added`` events that are
    the link's proof, so the claim path reads it by index."""
    import json

    _run(db, V8)
    rows = db.execute_sql(
        "SELECT card, data FROM event WHERE kind = 'card_added' ORDER BY seq"
    ).fetchall()  # (once per board)
    for card, text in rows:
        data = json.loads(text) if isinstance(text, str) else text
        first = data.get("try_of")
        if card is None or not isinstance(first, str) or not first.startswith("LX-") or not first[3:].isdigit():
            continue
        if db.execute_sql(f"SELECT 1 FROM card_try WHERE card_id = {db.param}", (card,)).fetchall():
            continue  # (this step run again)
        if not db.execute_sql(f"SELECT 1 FROM card WHERE id = {db.param}", (int(first[3:]),)).fetchall():
            continue
        db.execute_sql(
            f"INSERT INTO card_try (card_id, try_of, try_no) VALUES ({db.param}, {db.param}, {db.param})",
            (card, int(first[3:]), int(data.get("try_no") or 0)),
        )


# (version reached, step). Append new steps; never edit a released one.
STEPS = [
    (1, _v1),
    (2, _v2),
    (3, _v3),
    (4, _v4),
    (5, _v5),
    (6, _v6),
    (7, _v7),
    (8, _v8),
]  # ending at SCHEMA_VERSION (a test holds it)
