"""``--op-id``: the same id with the same payload returns the first result."""

from __future__ import annotations

import json
from contextvars import ContextVar

from ..rules import clock, limits
from ..rules.digest import payload_hash
from ..shapes.errors import Conflict, InvalidInput
from ..store import events
from ..store.records import Operation

TYPE_CHECKING = False  # (annotations only: typing is not imported on the cold path; checkers read this as typing's)
if TYPE_CHECKING:
    from collections.abc import Callable

    from ..store.base import Store

# The record of a staged operation (``once(atomic=False)``), written by the
# operator in its last transaction: ``settle``.
_pending: ContextVar = ContextVar("loopx_pending_op", default=None)


def settle(result: dict, code: int) -> None:
    """Inside an operator's last write transaction: record the running op id's
    answer there, so a kill after that commit finds it on the retry."""
    record = _pending.get()
    if record is not None:  # (left set: a busy retry of the transaction runs this again)
        record(result, code)


def once(
    store: Store, op_id: str | None, op: str, payload: dict, run: Callable[[], tuple[dict, int]], *, atomic: bool = True
) -> tuple[dict, int]:
    """Run ``run`` (which returns the JSON result and exit code) at most once per op id.
    The operation and its record commit together: in ``run``'s one transaction
    (``atomic``), else in its last one, where the operator calls ``settle``."""
    if not op_id:
        return run()
    if not limits.TOKEN_ID.fullmatch(op_id):  # the same shape as --turn-id; the column holds 128
        raise InvalidInput(
            f"not a valid --op-id: {op_id[:80]!r}",
            "letters, digits and ._:@/+- (at most 128), e.g. `--op-id turn-42-claim`",
        )
    fingerprint = payload_hash({"op": op, "payload": json.loads(json.dumps(payload, default=str))})

    def replay() -> tuple[dict, int] | None:
        row = Operation.get(op_id)
        if row is None:
            return None
        if row.payload_hash != fingerprint:
            raise Conflict(
                f"op id {op_id!r} was used for a different operation",
                "use a fresh --op-id for a new operation",
                code="op_conflict",
            )
        return row.result, row.exit_code

    def record(result: dict, code: int) -> None:
        Operation.create(
            op_id=op_id, op=op, payload_hash=fingerprint, result=result, exit_code=code, created_at=clock.now()
        )

    if atomic:

        def body() -> tuple[dict, int]:
            earlier = replay()
            if earlier is not None:
                return earlier
            with events.stamping(op_id):
                result, code = run()
            record(result, code)
            return result, code

        return store.run(body)
    # Staged: an operator of several transactions (``done`` runs its verify
    # command between two) calls ``settle`` in its last one.
    earlier = store.run(replay)
    if earlier is not None:
        return earlier
    token = _pending.set(record)
    try:
        result, code = run()
    except Conflict:
        earlier = store.run(replay)  # a twin with the same op id finished first
        if earlier is not None:
            return earlier
        raise
    finally:
        _pending.reset(token)
    return result, code
