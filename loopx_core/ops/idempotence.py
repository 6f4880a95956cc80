"""``--op-id``: the same id with the same payload returns the first result."""

from __future__ import annotations

import json

from ..rules import clock, limits
from ..shapes.errors import Conflict, InvalidInput
from ..store import events
from ..store.records import Operation
from .writeback import payload_hash

TYPE_CHECKING = False  # (annotations only: typing is not imported on the cold path; checkers read this as typing's)
if TYPE_CHECKING:
    from collections.abc import Callable


def once(store, op_id: str | None, op: str, payload: dict, run: Callable[[], tuple[dict, int]], *, atomic: bool = True) -> tuple[dict, int]:
    """Run ``run`` (which returns the JSON result and exit code) at most once per op id.
    With ``atomic`` the operation and its record commit together."""
    if not op_id:
        return run()
    if not limits.TOKEN_ID.fullmatch(op_id):  # the same shape as --turn-id; the column holds 128
        raise InvalidInput(f"not a valid --op-id: {op_id[:80]!r}", "letters, digits and ._:@/+- (at most 128), e.g. `--op-id turn-42-claim`")
    fingerprint = payload_hash({"op": op, "payload": json.loads(json.dumps(payload, default=str))})

    def replay():
        row = Operation.get(op_id)
        if row is None:
            return None
        if row.payload_hash != fingerprint:
            raise Conflict(f"op id {op_id!r} was used for a different operation", "use a fresh --op-id for a new operation", code="op_conflict")
        return row.result, row.exit_code

    def record(result: dict, code: int) -> None:
        Operation.create(op_id=op_id, op=op, payload_hash=fingerprint, result=result, exit_code=code, created_at=clock.now())

    if atomic:
        def body():
            earlier = replay()
            if earlier is not None:
                return earlier
            with events.stamping(op_id):
                result, code = run()
            record(result, code)
            return result, code

        return store.run(body)
    earlier = store.run(replay)
    if earlier is not None:
        return earlier
    result, code = run()
    store.run(lambda: record(result, code))
    return result, code
