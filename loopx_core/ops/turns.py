"""Did a turn leave evidence? The runner's check after each turn (DESIGN §10
"Runners"), the same rule as the Stop hook's: an agent's own report — a
writeback (not usage measured from a transcript, not a failed turn the
runner recorded, not an inbox document that only names it) — or a handoff
it made."""

from __future__ import annotations

from typing import NamedTuple

from ..store.models import Evidence, Handoff
from ..store.orm import peewee as pw
from .writeback import NOT_REPORTS


class Marks(NamedTuple):
    """Where the board's evidence and handoffs stood when a turn began."""

    evidence: int
    handoff: int


def marks(store) -> Marks:
    with store.read():
        return Marks(
            int(Evidence.select(pw.fn.MAX(Evidence.id)).scalar() or 0),
            int(Handoff.select(pw.fn.MAX(Handoff.id)).scalar() or 0),
        )


def wrote_since(store, agent: str, since: Marks) -> bool:
    with store.read():
        return (
            Evidence.select(Evidence.id).where((Evidence.id > since.evidence) & (Evidence.agent == agent) & Evidence.source.not_in(NOT_REPORTS) & (Evidence.unverified == False)).exists()  # noqa: E712
            or Handoff.select(Handoff.id).where((Handoff.id > since.handoff) & (Handoff.from_agent == agent)).exists()
        )
