"""Peewee models of a board (DESIGN §3): the one schema. Rows never leave
loopx_core: operators turn them into the frozen values of ``values.py``.

The migrations (``migrations.py``) must make exactly these tables, columns and
indexes, in this column order (a column a later step added comes last), and the
per-turn path's column lists (``columns.py``) are generated from them: both are
held by tests (tests/kernel/test_migrations.py, tests/kernel/test_records.py)."""

from __future__ import annotations

import json
from typing import cast

from ..authority.chain import data_text
from .orm import peewee as pw

TYPE_CHECKING = False  # (annotations only; checkers read this as typing's)
if TYPE_CHECKING:
    from typing import Any

    from .base import Store


class _BoardDatabase(pw.DatabaseProxy):
    """Peewee's database for the models: the one of the store whose transaction
    is running (``Store.run``/``Store.read`` bind it in a context variable,
    ``records.current()``), else the store opened last — the same rule as the
    record layer, so two boards open in one process (two threads, or a test
    with two boards) never mix, and nothing here is set process-wide."""

    __slots__ = ()

    @property
    def obj(self) -> pw.Database | None:
        from . import records

        # (the bound store is a base.Store: records names only what it uses)
        store = cast("Store | None", records.current_or_none())
        return None if store is None else store.db

    def __setattr__(self, attr: str, value: object) -> None:
        if attr != "obj":  # (Proxy.__init__ sets obj = None: the store is found per call, above)
            object.__setattr__(self, attr, value)


database = _BoardDatabase()


class JSONText(pw.TextField):
    """JSON in a TEXT column: identical on SQLite and PostgreSQL."""

    def db_value(self, value: object) -> str | None:  # (any JSON value)
        return None if value is None else data_text(value)

    def python_value(self, value: str | None) -> Any:  # (the JSON document: any JSON value)
        return None if value is None else json.loads(value)


class Base(pw.Model):
    class Meta:
        database = database
        legacy_table_names = False


class Setting(Base):
    key = pw.CharField(primary_key=True, max_length=64)
    value = pw.TextField()
    decided_seq = pw.IntegerField(null=True)  # v3: the signed event that set a person's setting


class Agent(Base):
    id = pw.CharField(primary_key=True, max_length=64)
    runtime = pw.CharField(max_length=32, null=True)
    capabilities = JSONText(default=list)
    watch = JSONText(default=list)
    token_limit = pw.BigIntegerField(null=True)
    window_seconds = pw.DoubleField(null=True)
    created_at = pw.DoubleField()
    decided_seq = pw.IntegerField(null=True)  # v3: the signed event that set its scopes
    window_usd = pw.DoubleField(null=True)  # v4: its rolling window in dollars (with window_seconds)
    window_turns = pw.IntegerField(null=True)  # v4: … and in turns


class Card(Base):
    id = pw.AutoField()
    title = pw.TextField()
    body = pw.TextField(default="")
    status = pw.CharField(max_length=16, index=True)
    assignee = pw.CharField(max_length=64, null=True, index=True)
    needs = JSONText(default=list)
    priority = pw.IntegerField(default=2)
    next_action = pw.TextField(null=True)
    todos = JSONText(default=list)  # [{"id": 1, "text": "...", "done": false}]
    todo_seq = pw.IntegerField(default=0)
    verify = pw.TextField(null=True)
    max_turns = pw.IntegerField(null=True)
    max_tokens = pw.BigIntegerField(null=True)
    max_usd = pw.DoubleField(null=True)
    used_turns = pw.IntegerField(default=0)
    used_tokens = pw.BigIntegerField(default=0)
    used_usd = pw.DoubleField(default=0.0)
    lease_holder = pw.CharField(max_length=64, null=True, index=True)
    lease_token = pw.IntegerField(null=True)
    lease_expires = pw.DoubleField(null=True)
    fence = pw.IntegerField(default=0)  # the last lease token issued on this card
    lease_seconds = pw.DoubleField(null=True)
    version = pw.IntegerField(default=1)
    paused_reason = pw.CharField(max_length=32, null=True)
    blocked_reason = pw.TextField(null=True)
    stalls = pw.IntegerField(default=0)  # writebacks in a row without progress
    progress_mark = pw.BooleanField(default=False)  # a gate was asked since the last writeback
    evidence_count = pw.IntegerField(default=0)
    monitor_every = pw.DoubleField(null=True)
    monitor_due = pw.DoubleField(null=True)
    handoff_to = pw.CharField(max_length=64, null=True)
    created_at = pw.DoubleField()
    updated_at = pw.DoubleField()
    done_at = pw.DoubleField(null=True)
    budget_seq = pw.IntegerField(null=True)  # v3: the signed event that set its limits (a person's)
    unverified_evidence = pw.IntegerField(default=0)  # schema v3: evidence whose writer is not verified (the inbox)
    # v4: a rolling quota window a person gave the card (quota.py), and when a spent one refills.
    window_seconds = pw.DoubleField(null=True)
    window_tokens = pw.BigIntegerField(null=True)
    window_usd = pw.DoubleField(null=True)
    window_turns = pw.IntegerField(null=True)
    window_seq = pw.IntegerField(null=True)  # the signed event that set the window
    wake_at = pw.DoubleField(null=True)  # paused by its window: it resumes by itself at this time

    class Meta:
        # v5: the board's count by owner reads this index alone (ops/board_pages.tally), never the rows.
        indexes = ((("status", "lease_holder", "handoff_to", "assignee"), False),)


class Dependency(Base):
    card = pw.ForeignKeyField(Card, backref="deps", on_delete="CASCADE")
    after = pw.ForeignKeyField(Card, backref="dependents", on_delete="CASCADE")

    class Meta:
        primary_key = pw.CompositeKey("card", "after")


class Gate(Base):
    id = pw.AutoField()
    card = pw.ForeignKeyField(Card, backref="gates", on_delete="CASCADE")
    agent = pw.CharField(max_length=64)
    kind = pw.CharField(max_length=16, default="question")  # question | permission
    question = pw.TextField()
    scope = pw.CharField(max_length=128, null=True)
    options = JSONText(default=list)
    status = pw.CharField(max_length=16, index=True)  # pending | approved | rejected | expired
    answer = pw.TextField(null=True)
    note = pw.TextField(null=True)
    answered_by = pw.CharField(max_length=128, null=True)
    deadline = pw.DoubleField(null=True)
    lease_token = pw.IntegerField(null=True)
    created_at = pw.DoubleField()
    answered_at = pw.DoubleField(null=True)
    answer_seq = pw.IntegerField(null=True)  # v3: the signed event that answered it (a person's)


class Grant(Base):
    id = pw.AutoField()
    scope = pw.CharField(max_length=128)
    agent = pw.CharField(max_length=64, null=True)  # None: any agent
    card = pw.IntegerField(null=True)  # None: any card
    expires_at = pw.DoubleField(null=True)
    created_by = pw.CharField(max_length=128)
    gate = pw.IntegerField(null=True)
    created_at = pw.DoubleField()
    decided_seq = pw.IntegerField(null=True)  # v3: the signed event that created it


class Evidence(Base):
    id = pw.AutoField()
    card = pw.ForeignKeyField(Card, backref="evidence", on_delete="CASCADE")
    agent = pw.CharField(max_length=64)
    turn_id = pw.CharField(max_length=128, null=True)
    summary = pw.TextField()
    artifacts = JSONText(default=list)
    next_action = pw.TextField(null=True)
    todos_added = JSONText(default=list)
    todos_done = JSONText(default=list)
    tokens_in = pw.BigIntegerField(default=0)
    tokens_out = pw.BigIntegerField(default=0)
    tokens = pw.BigIntegerField(default=0)
    usd = pw.DoubleField(default=0.0)
    source = pw.CharField(max_length=16)
    extra = JSONText(null=True)  # e.g. the verify command's result
    payload_hash = pw.CharField(max_length=64)
    created_at = pw.DoubleField()
    unverified = pw.BooleanField(default=False)  # schema v3: no verifiable writer (a document in the inbox)

    class Meta:
        indexes = ((("card", "turn_id"), True), (("agent", "created_at"), False))


class Handoff(Base):
    id = pw.AutoField()
    card = pw.ForeignKeyField(Card, backref="handoffs", on_delete="CASCADE")
    from_agent = pw.CharField(max_length=64, null=True)
    to_agent = pw.CharField(max_length=64)
    packet = pw.TextField()  # canonical JSON: the digest is over exactly these bytes
    digest = pw.CharField(max_length=64)
    created_by = pw.CharField(max_length=128)
    created_at = pw.DoubleField()
    accepted_at = pw.DoubleField(null=True)
    accepted_digest = pw.CharField(max_length=64, null=True)


class Observed(Base):
    id = pw.AutoField()
    card = pw.ForeignKeyField(Card, backref="observed", on_delete="CASCADE")
    agent = pw.CharField(max_length=64)
    path = pw.TextField()
    size = pw.BigIntegerField(null=True)
    sha256 = pw.CharField(max_length=64, null=True)
    created_at = pw.DoubleField()


class Operation(Base):
    """A remembered ``--op-id``: the same id with the same payload replays ``result``."""

    op_id = pw.CharField(primary_key=True, max_length=128)
    op = pw.CharField(max_length=32)
    payload_hash = pw.CharField(max_length=64)
    result = JSONText()
    exit_code = pw.IntegerField(default=0)
    created_at = pw.DoubleField()


class Event(Base):
    seq = pw.AutoField()
    at = pw.DoubleField()
    actor = pw.CharField(max_length=128)
    card = pw.IntegerField(null=True, index=True)
    kind = pw.CharField(max_length=32)
    data = JSONText(default=dict)
    op_id = pw.CharField(max_length=128, null=True, unique=True)
    # v3, the hash chain (chain.py): every row links to the one before it.
    prev = pw.CharField(max_length=64, null=True)
    hash = pw.CharField(max_length=64, null=True)
    key = pw.CharField(max_length=64, null=True)  # a person's key fingerprint, on signed events
    sig = pw.TextField(null=True)  # their Ed25519 signature over chain.signed_message(hash)

    class Meta:
        # v6: the newest event of some kinds (a runner's control) without reading the log.
        indexes = ((("kind", "seq"), False),)


class Person(Base):
    """v3: a person whose signed decisions the board honours (trust.py)."""

    fingerprint = pw.CharField(primary_key=True, max_length=64)
    name = pw.CharField(max_length=64)
    public_key = pw.CharField(max_length=64)  # base64 of the raw Ed25519 public key
    added_seq = pw.IntegerField()  # the signed event that added this person
    revoked_seq = pw.IntegerField(null=True)


class Runner(Base):
    """v4: the runner (``loopx run``) driving one agent, and a person's control of it (runners.py)."""

    agent = pw.CharField(primary_key=True, max_length=64)
    runner_id = pw.CharField(max_length=64, null=True)  # the live runner process's own id (fencing)
    runtime = pw.CharField(max_length=32, null=True)
    pid = pw.IntegerField(null=True)
    host = pw.CharField(max_length=255, null=True)
    state = pw.CharField(max_length=16)  # running | asleep | waiting | paused | stopped
    card = pw.IntegerField(null=True)
    turn = pw.IntegerField(default=0)  # turns this agent's runners have started
    turn_id = pw.CharField(max_length=128, null=True)
    gate = pw.IntegerField(null=True)
    wake_at = pw.DoubleField(null=True)
    detail = pw.TextField(null=True)
    since = pw.DoubleField()  # when the current state began
    heartbeat = pw.DoubleField(null=True)  # liveness (no event: not a change of state)
    seen_seq = pw.BigIntegerField(null=True)  # the last event the runner had looked at when it last decided
    started_at = pw.DoubleField(null=True)
    control = pw.CharField(max_length=16, null=True)  # pause | stop | None, as a person signed it (shown only)
    control_seq = pw.IntegerField(null=True)  # the signed event of that control


class Workspace(Base):
    """v7: a card's workspace, a git worktree on its own branch (ops/workspaces.py)."""

    card = pw.ForeignKeyField(Card, primary_key=True, backref="workspace", on_delete="CASCADE", column_name="card_id")
    path = pw.TextField()  # the worktree's folder
    branch = pw.CharField(max_length=255)  # loopx/LX-7
    base = pw.CharField(max_length=255, null=True)  # the branch it started from (and merges into)
    base_commit = pw.CharField(max_length=64)  # the commit it started from
    state = pw.CharField(max_length=16)  # open | archived | removed
    head = pw.CharField(max_length=64, null=True)  # HEAD as last recorded
    wip = pw.CharField(max_length=64, null=True)  # the last saved uncommitted work (a commit under refs/loopx/)
    archive_ref = pw.TextField(null=True)  # the LoopX ref that keeps its commits once archived
    opened_at = pw.DoubleField()
    updated_at = pw.DoubleField()
    # v8: the checkout of a team board (PostgreSQL) that holds it (its .loopx/team.json's
    # id, store/team_checkout.py); None: the board's one project folder (a .loopx/ board)
    checkout = pw.CharField(max_length=64, null=True)


class CardTry(Base):
    """v8: a try's link to the card it tries (#26) — an index of what its signed
    ``card_added`` says (``try_of``, ``try_no``), made in the same transaction,
    so the claim path finds a card's tries by one indexed read, not a scan of
    the log. The first card (try 1) has no row."""

    card = pw.ForeignKeyField(Card, primary_key=True, backref="try_link", on_delete="CASCADE", column_name="card_id")
    try_of = pw.ForeignKeyField(Card, backref="tries", on_delete="CASCADE", column_name="try_of")
    try_no = pw.IntegerField()

    class Meta:
        table_name = "card_try"


TABLES = [
    Setting,
    Agent,
    Card,
    Dependency,
    Gate,
    Grant,
    Evidence,
    Handoff,
    Observed,
    Operation,
    Event,
    Person,
    Workspace,
    CardTry,
]


# -- schema v2: the file watcher's own state (DESIGN §7) -----------------------
# Not part of ``TABLES`` (the board's own data, e.g. for ``export``);
# ``loopx migrate`` copies them as well, so a watcher on the copy resumes.


class IngestStream(Base):
    """How far a ``*.loopx.jsonl`` stream has been read, so a restart resumes exactly."""

    path = pw.TextField(primary_key=True)  # absolute path of the stream
    inode = pw.BigIntegerField(null=True)  # a new inode means the file was replaced
    offset = pw.BigIntegerField(default=0)  # bytes consumed (always at a line end)
    lines = pw.IntegerField(default=0)  # lines consumed, to number the next one
    head = pw.CharField(max_length=64, null=True)  # sha256 of the first bytes (up to 4 KiB) consumed
    tail = pw.CharField(max_length=64, null=True)  # sha256 of the last bytes before offset
    updated_at = pw.DoubleField()


class IngestSeen(Base):
    """A document or line already handled: ingested (keyed by its content) or
    refused (keyed by file, line and content, so one refusal is reported once)."""

    key = pw.CharField(primary_key=True, max_length=64)
    outcome = pw.CharField(max_length=16)  # ingested | refused
    path = pw.TextField()
    line = pw.IntegerField(null=True)
    card = pw.IntegerField(null=True)
    created_at = pw.DoubleField()


WATCH_TABLES = [IngestStream, IngestSeen]

# v4: runners (not in ``TABLES``: a process's state, but copied by ``loopx migrate``
# so a person's controls travel with the events that signed them).
RUNNER_TABLES = [Runner]


def every_model() -> list:
    """Every table of a board, in the order they are declared: the schema the
    migrations must make and ``columns.py`` is generated from."""
    return list(Base.__subclasses__())
