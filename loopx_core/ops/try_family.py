"""Which cards are tries of one card (#26, "One card, several tries"), read
from the log alone — the link lives only in a try's signed ``card_added``
(``try_of``, ``try_no``). Standard library and ``store.records`` only: the
claim path (``claims``) asks it before every claim of a ready card."""

from __future__ import annotations

import json

from ..rules import ids
from ..store import records


def _added(card_id: int) -> dict:
    text = records.scalar('SELECT "data" FROM "event" WHERE "card" = ? AND "kind" = ? ORDER BY "seq" LIMIT 1', (card_id, "card_added"))
    return json.loads(text) if isinstance(text, str) else (text or {})


def first_of(card_id: int) -> int:
    """The card a try tries (the card itself when it is no try)."""
    return ids.parse(ids.CARD, _added(card_id).get("try_of") or card_id)


def family(first: int) -> list[tuple[int, int]]:
    """(try number, card id) of the first card and its tries, in order."""
    key = ids.fmt(ids.CARD, first)
    found = [(1, first)]
    for card, text in records.rows('SELECT "card", "data" FROM "event" WHERE "kind" = ? AND "data" LIKE ? ORDER BY "seq"', ("card_added", f'%"try_of":"{key}"%')):
        data = json.loads(text) if isinstance(text, str) else text
        if data.get("try_of") == key:
            found.append((int(data.get("try_no") or len(found) + 1), card))
    return found


def other_try_of(card_id: int, agent: str) -> int | None:
    """Another try of the same card that ``agent`` holds or has worked on (any
    event of its on that card: a claim, a writeback, an accepted handoff), or
    None. Tries exist to compare different agents' work: one agent, one try."""
    others = [card for _, card in family(first_of(card_id)) if card != card_id]
    if not others:
        return None
    marks = ", ".join("?" * len(others))
    return records.scalar(
        f'SELECT "card" FROM "event" WHERE "card" IN ({marks}) AND "actor" IN (?, ?) ORDER BY "seq" LIMIT 1',
        (*others, f"agent:{agent}", f"runner:{agent}"),
    )
