"""The board's tables as the per-turn path reads them (``records.py``),
generated from the peewee models by ``python -m loopx_core.store.columns_gen``:
do not edit (tests/kernel/test_records.py fails while it differs).

``TABLES[name] = (primary key, columns)``; a column is ``(name, kind, default)``
with the database's column name (a foreign key is ``card_id``), a kind of
``int``, ``float``, ``text``, ``json`` or ``bool``, and a default that is a
value, ``list``/``dict`` (called for a fresh one per row), or ``...`` where the
database numbers the key itself. The primary key is None for a composite one.
"""

TABLES = {
    "setting": ("key", (
        ("key", "text", None),
        ("value", "text", None),
        ("decided_seq", "int", None),
    )),
    "agent": ("id", (
        ("id", "text", None),
        ("runtime", "text", None),
        ("capabilities", "json", list),
        ("watch", "json", list),
        ("token_limit", "int", None),
        ("window_seconds", "float", None),
        ("created_at", "float", None),
        ("decided_seq", "int", None),
        ("window_usd", "float", None),
        ("window_turns", "int", None),
    )),
    "card": ("id", (
        ("id", "int", ...),
        ("title", "text", None),
        ("body", "text", ""),
        ("status", "text", None),
        ("assignee", "text", None),
        ("needs", "json", list),
        ("priority", "int", 2),
        ("next_action", "text", None),
        ("todos", "json", list),
        ("todo_seq", "int", 0),
        ("verify", "text", None),
        ("max_turns", "int", None),
        ("max_tokens", "int", None),
        ("max_usd", "float", None),
        ("used_turns", "int", 0),
        ("used_tokens", "int", 0),
        ("used_usd", "float", 0.0),
        ("lease_holder", "text", None),
        ("lease_token", "int", None),
        ("lease_expires", "float", None),
        ("fence", "int", 0),
        ("lease_seconds", "float", None),
        ("version", "int", 1),
        ("paused_reason", "text", None),
        ("blocked_reason", "text", None),
        ("stalls", "int", 0),
        ("progress_mark", "bool", False),
        ("evidence_count", "int", 0),
        ("monitor_every", "float", None),
        ("monitor_due", "float", None),
        ("handoff_to", "text", None),
        ("created_at", "float", None),
        ("updated_at", "float", None),
        ("done_at", "float", None),
        ("budget_seq", "int", None),
        ("unverified_evidence", "int", 0),
        ("window_seconds", "float", None),
        ("window_tokens", "int", None),
        ("window_usd", "float", None),
        ("window_turns", "int", None),
        ("window_seq", "int", None),
        ("wake_at", "float", None),
    )),
    "dependency": (None, (
        ("card_id", "int", None),
        ("after_id", "int", None),
    )),
    "gate": ("id", (
        ("id", "int", ...),
        ("card_id", "int", None),
        ("agent", "text", None),
        ("kind", "text", "question"),
        ("question", "text", None),
        ("scope", "text", None),
        ("options", "json", list),
        ("status", "text", None),
        ("answer", "text", None),
        ("note", "text", None),
        ("answered_by", "text", None),
        ("deadline", "float", None),
        ("lease_token", "int", None),
        ("created_at", "float", None),
        ("answered_at", "float", None),
        ("answer_seq", "int", None),
    )),
    "grant": ("id", (
        ("id", "int", ...),
        ("scope", "text", None),
        ("agent", "text", None),
        ("card", "int", None),
        ("expires_at", "float", None),
        ("created_by", "text", None),
        ("gate", "int", None),
        ("created_at", "float", None),
        ("decided_seq", "int", None),
    )),
    "evidence": ("id", (
        ("id", "int", ...),
        ("card_id", "int", None),
        ("agent", "text", None),
        ("turn_id", "text", None),
        ("summary", "text", None),
        ("artifacts", "json", list),
        ("next_action", "text", None),
        ("todos_added", "json", list),
        ("todos_done", "json", list),
        ("tokens_in", "int", 0),
        ("tokens_out", "int", 0),
        ("tokens", "int", 0),
        ("usd", "float", 0.0),
        ("source", "text", None),
        ("extra", "json", None),
        ("payload_hash", "text", None),
        ("created_at", "float", None),
        ("unverified", "bool", False),
    )),
    "handoff": ("id", (
        ("id", "int", ...),
        ("card_id", "int", None),
        ("from_agent", "text", None),
        ("to_agent", "text", None),
        ("packet", "text", None),
        ("digest", "text", None),
        ("created_by", "text", None),
        ("created_at", "float", None),
        ("accepted_at", "float", None),
        ("accepted_digest", "text", None),
    )),
    "observed": ("id", (
        ("id", "int", ...),
        ("card_id", "int", None),
        ("agent", "text", None),
        ("path", "text", None),
        ("size", "int", None),
        ("sha256", "text", None),
        ("created_at", "float", None),
    )),
    "operation": ("op_id", (
        ("op_id", "text", None),
        ("op", "text", None),
        ("payload_hash", "text", None),
        ("result", "json", None),
        ("exit_code", "int", 0),
        ("created_at", "float", None),
    )),
    "event": ("seq", (
        ("seq", "int", ...),
        ("at", "float", None),
        ("actor", "text", None),
        ("card", "int", None),
        ("kind", "text", None),
        ("data", "json", dict),
        ("op_id", "text", None),
        ("prev", "text", None),
        ("hash", "text", None),
        ("key", "text", None),
        ("sig", "text", None),
    )),
    "person": ("fingerprint", (
        ("fingerprint", "text", None),
        ("name", "text", None),
        ("public_key", "text", None),
        ("added_seq", "int", None),
        ("revoked_seq", "int", None),
    )),
    "runner": ("agent", (
        ("agent", "text", None),
        ("runner_id", "text", None),
        ("runtime", "text", None),
        ("pid", "int", None),
        ("host", "text", None),
        ("state", "text", None),
        ("card", "int", None),
        ("turn", "int", 0),
        ("turn_id", "text", None),
        ("gate", "int", None),
        ("wake_at", "float", None),
        ("detail", "text", None),
        ("since", "float", None),
        ("heartbeat", "float", None),
        ("seen_seq", "int", None),
        ("started_at", "float", None),
        ("control", "text", None),
        ("control_seq", "int", None),
    )),
    "workspace": ("card_id", (
        ("card_id", "int", None),
        ("path", "text", None),
        ("branch", "text", None),
        ("base", "text", None),
        ("base_commit", "text", None),
        ("state", "text", None),
        ("head", "text", None),
        ("wip", "text", None),
        ("archive_ref", "text", None),
        ("opened_at", "float", None),
        ("updated_at", "float", None),
        ("checkout", "text", None),
    )),
    "card_try": ("card_id", (
        ("card_id", "int", None),
        ("try_of", "int", None),
        ("try_no", "int", None),
    )),
    "ingest_stream": ("path", (
        ("path", "text", None),
        ("inode", "int", None),
        ("offset", "int", 0),
        ("lines", "int", 0),
        ("head", "text", None),
        ("tail", "text", None),
        ("updated_at", "float", None),
    )),
    "ingest_seen": ("key", (
        ("key", "text", None),
        ("outcome", "text", None),
        ("path", "text", None),
        ("line", "int", None),
        ("card", "int", None),
        ("created_at", "float", None),
    )),
}

TYPE_CHECKING = False  # (typing is not imported on the cold path; checkers read this as typing's)

if TYPE_CHECKING:  # each table's columns as a row's attributes (records.py's row classes)
    from typing import Any

    class SettingColumns:
        key: str
        value: str
        decided_seq: int | None

    class AgentColumns:
        id: str
        runtime: str | None
        capabilities: list[Any]
        watch: list[Any]
        token_limit: int | None
        window_seconds: float | None
        created_at: float
        decided_seq: int | None
        window_usd: float | None
        window_turns: int | None

    class CardColumns:
        id: int
        title: str
        body: str
        status: str
        assignee: str | None
        needs: list[Any]
        priority: int
        next_action: str | None
        todos: list[Any]
        todo_seq: int
        verify: str | None
        max_turns: int | None
        max_tokens: int | None
        max_usd: float | None
        used_turns: int
        used_tokens: int
        used_usd: float
        lease_holder: str | None
        lease_token: int | None
        lease_expires: float | None
        fence: int
        lease_seconds: float | None
        version: int
        paused_reason: str | None
        blocked_reason: str | None
        stalls: int
        progress_mark: bool
        evidence_count: int
        monitor_every: float | None
        monitor_due: float | None
        handoff_to: str | None
        created_at: float
        updated_at: float
        done_at: float | None
        budget_seq: int | None
        unverified_evidence: int
        window_seconds: float | None
        window_tokens: int | None
        window_usd: float | None
        window_turns: int | None
        window_seq: int | None
        wake_at: float | None

    class DependencyColumns:
        card_id: int
        after_id: int

    class GateColumns:
        id: int
        card_id: int
        agent: str
        kind: str
        question: str
        scope: str | None
        options: list[Any]
        status: str
        answer: str | None
        note: str | None
        answered_by: str | None
        deadline: float | None
        lease_token: int | None
        created_at: float
        answered_at: float | None
        answer_seq: int | None

    class GrantColumns:
        id: int
        scope: str
        agent: str | None
        card: int | None
        expires_at: float | None
        created_by: str
        gate: int | None
        created_at: float
        decided_seq: int | None

    class EvidenceColumns:
        id: int
        card_id: int
        agent: str
        turn_id: str | None
        summary: str
        artifacts: list[Any]
        next_action: str | None
        todos_added: list[Any]
        todos_done: list[Any]
        tokens_in: int
        tokens_out: int
        tokens: int
        usd: float
        source: str
        extra: Any
        payload_hash: str
        created_at: float
        unverified: bool

    class HandoffColumns:
        id: int
        card_id: int
        from_agent: str | None
        to_agent: str
        packet: str
        digest: str
        created_by: str
        created_at: float
        accepted_at: float | None
        accepted_digest: str | None

    class ObservedColumns:
        id: int
        card_id: int
        agent: str
        path: str
        size: int | None
        sha256: str | None
        created_at: float

    class OperationColumns:
        op_id: str
        op: str
        payload_hash: str
        result: Any
        exit_code: int
        created_at: float

    class EventColumns:
        seq: int
        at: float
        actor: str
        card: int | None
        kind: str
        data: dict[str, Any]
        op_id: str | None
        prev: str | None
        hash: str | None
        key: str | None
        sig: str | None

    class PersonColumns:
        fingerprint: str
        name: str
        public_key: str
        added_seq: int
        revoked_seq: int | None

    class RunnerColumns:
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
        control: str | None
        control_seq: int | None

    class WorkspaceColumns:
        card_id: int
        path: str
        branch: str
        base: str | None
        base_commit: str
        state: str
        head: str | None
        wip: str | None
        archive_ref: str | None
        opened_at: float
        updated_at: float
        checkout: str | None

    class CardTryColumns:
        card_id: int
        try_of: int
        try_no: int

    class IngestStreamColumns:
        path: str
        inode: int | None
        offset: int
        lines: int
        head: str | None
        tail: str | None
        updated_at: float

    class IngestSeenColumns:
        key: str
        outcome: str
        path: str
        line: int | None
        card: int | None
        created_at: float

else:
    SettingColumns = AgentColumns = CardColumns = DependencyColumns = GateColumns = GrantColumns = EvidenceColumns = HandoffColumns = ObservedColumns = OperationColumns = EventColumns = PersonColumns = RunnerColumns = WorkspaceColumns = CardTryColumns = IngestStreamColumns = IngestSeenColumns = object
