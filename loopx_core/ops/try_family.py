"""Which cards are tries of one card (#26, "One card, several tries"). The
link's proof is a try's signed ``card_added`` (``try_of``, ``try_no``); the
``card_try`` table (v8) indexes it, written in the same transaction, so the
claim path — which asks before every claim of a ready card — reads a card's
tries by index, never by scanning the log. Standard library and
``store.records`` only."""

from __future__ import annotations

from ..store import records


def first_of(card_id: int) -> int:
    """The card a try tries (the card itself when it is no try)."""
    found = records.scalar('SELECT "try_of" FROM "card_try" WHERE "card_id" = ?', (card_id,))
    return int(found) if found is not None else card_id


def family(first: int) -> list[tuple[int, int]]:
    """(try number, card id) of the first card and its tries, in order."""
    found = [(1, first)]
    for card, number in records.rows(
        'SELECT "card_id", "try_no" FROM "card_try" WHERE "try_of" = ? ORDER BY "card_id"', (first,)
    ):
        found.append((int(number or len(found) + 1), int(card)))
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
