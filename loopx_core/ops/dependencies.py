"""A card's dependencies (``card add --after``): which of the cards it comes
after are still open, and — once one is done — the cards waiting only on it
go ready. Shared by the person's operators (``cards``), ``done`` and a
merge brought in (``merges``). It imports no verb."""

from __future__ import annotations

from ..rules import ids
from ..store import events, records
from ..store.records import Card
from ..store.rows import card_row, touch
from .lifecycle import move


def open_deps(card_id: int) -> list[int]:
    return [
        after
        for (after,) in records.rows(
            """SELECT d."after_id" FROM "dependency" d JOIN "card" c ON d."after_id" = c."id" WHERE d."card_id" = ? AND c."status" != 'done' ORDER BY d."after_id" """,
            (card_id,),
        )
    ]


def unblock_after(card: Card, now: float) -> None:
    """``card`` is done: the cards waiting only on it go ready."""
    for (waiting_id,) in records.rows(
        'SELECT "card_id" FROM "dependency" WHERE "after_id" = ? ORDER BY "card_id"', (card.id,)
    ):
        waiting = card_row(waiting_id)  # (the dependency's key holds it there)
        if (
            waiting.status == "blocked"
            and (waiting.blocked_reason or "").startswith("waiting on")
            and not open_deps(waiting.id)
        ):
            move(waiting, "ready", "unblocked")
            waiting.blocked_reason = None
            touch(waiting, now)
            events.emit("system", "unblocked", waiting.id, by=ids.fmt(ids.CARD, card.id))
