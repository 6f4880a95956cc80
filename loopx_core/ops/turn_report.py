"""A turn's report as every surface records it: ``loopx writeback`` and the MCP
``writeback`` tool map their arguments to ``record`` and nothing more — the
same operator, fenced by the same lease token, under the same op id (a retry
through either surface returns the first result), with the same warnings."""

from __future__ import annotations

from ..rules.artifacts import missing_warnings
from .idempotence import once
from .writeback import writeback

TYPE_CHECKING = False  # (annotations only: typing is not imported on the cold path; checkers read this as typing's)
if TYPE_CHECKING:
    from ..store.base import Store


def record(
    store: Store,
    card_id: int,
    agent: str,
    data: dict,
    *,
    lease_token: int | None,
    op_id: str | None,
    source: str,
    code: dict | None = None,
) -> tuple[dict, int, bool]:
    """Record ``data`` (a validated evidence shape) on the card; returns the
    result, its exit code and whether it is a replay of an op id's first run.
    ``code``: the card's workspace as captured before the transaction."""
    ran = []

    def run() -> tuple[dict, int]:
        evidence, card, created = writeback(
            store, card_id, agent, data, source=source, lease_token=lease_token, code=code
        )
        ran.append(True)
        ev = evidence.to_json()
        return {
            "evidence": ev,
            "card": card.to_json(),
            "created": created,
            "warnings": missing_warnings(ev["artifacts"]),
        }, 0

    result, exit_code = once(store, op_id, "writeback", {"agent": agent, "card": card_id, "data": data}, run)
    return result, exit_code, not ran
