"""One card, several tries (#26, DESIGN §12 "Tries").

A try is a card of its own — its own lease, budget, workspace and branch
(``loopx/LX-9``), claimable by another agent — linked to the card it tries:
its signed ``card_added`` records ``try_of`` (the first card, which is try 1
itself) and ``try_no``, the link's proof; ``card_try`` (v8) indexes it for
the claim path (``try_family``). The person compares the tries side by side (diff
size, verify result, turns, tokens, dollars) and keeps one: a signed
``try_kept`` on the first card; every other try still open is cancelled
(signed ``card_moved``) after its workspace was archived under
``refs/loopx/LX-N/archive/…`` — nothing is deleted."""

from __future__ import annotations

import json
from typing import NamedTuple

from ..rules import clock, ids
from ..shapes.errors import Conflict, InvalidInput
from ..shapes.values import CardView
from ..store import events, records
from ..store.records import Card
from ..store.rows import card_row, card_view
from .card_steps import apply_move, create_card, person_only
from .reaper import reap_card
from .try_family import family, first_of

TYPE_CHECKING = False  # (annotations only: typing is not imported on the cold path; checkers read this as typing's)
if TYPE_CHECKING:
    from ..authority import keys
    from ..store.base import Store

MAX_TRIES = 8  # tries of one card, the card itself included
OFF = ("done", "cancelled")


class Try(NamedTuple):
    """One try, as the person compares them."""

    card: CardView
    number: int  # 1: the card itself
    files: int | None  # None: no workspace branch to compare
    added: int | None
    removed: int | None
    verify: bool | None  # the last verify's result (None: none ran)
    workspace: str | None  # its folder, while open
    head: str | None = None  # the branch's commit compared (``card keep --head`` pins it)

    def to_json(self) -> dict:
        c = self.card.to_json()
        return {
            "try": self.number,
            "card": c["id"],
            "title": c["title"],
            "status": c["status"],
            "owner": c["owner"],
            "diff": None if self.files is None else {"files": self.files, "added": self.added, "removed": self.removed},
            "verify": self.verify,
            "quota": c["quota"],
            "workspace": self.workspace,
            "head": self.head,
        }


def _new_try(first: Card, person: str | keys.Person, agent: str | None, now: float) -> Card:
    tries = family(first.id)
    key = ids.fmt(ids.CARD, first.id)
    if len(tries) >= MAX_TRIES:
        raise InvalidInput(
            f"{key} has {len(tries)} tries already (at most {MAX_TRIES})", "keep one with `loopx card keep CARD`"
        )
    number = max(n for n, _ in tries) + 1
    data = {
        "title": f"{first.title} (try {number} of {key})",
        "body": first.body,
        "needs": first.needs,
        "priority": first.priority,
        "owner": agent,
        "next": first.next_action,
        "verify": first.verify,
        "max_turns": first.max_turns,
        "max_tokens": first.max_tokens,
        "max_usd": first.max_usd,
    }
    return create_card(data, person, now, try_of=key, try_no=number)


def add_tries(store: Store, card_id: int, person: keys.Person, agents: list[str | None]) -> list[CardView]:
    """``len(agents)`` more tries of the card (each for that agent, or for any
    when None), in one transaction: all or none."""
    person_only(person, "give a card to several agents")

    def body() -> list[CardView]:
        now = clock.now()
        first = reap_card(card_row(card_id))
        key = ids.fmt(ids.CARD, card_id)
        source = first_of(card_id)
        if source != card_id:
            raise InvalidInput(
                f"{key} is itself a try of {ids.fmt(ids.CARD, source)}",
                f"try that card again: `loopx card try {ids.fmt(ids.CARD, source)}`",
            )
        if first.status in OFF:
            raise Conflict(
                f"{key} is {first.status}: there is nothing left to try", "add a new card instead", code="illegal_move"
            )
        return [card_view(_new_try(first, person, agent, now)) for agent in agents]

    return store.run(body)


def add_with_tries(store: Store, data: dict, person: str | keys.Person, count: int) -> tuple[CardView, list[CardView]]:
    """A new card given to ``count`` agents at once: the card (try 1) and its
    other tries, in one transaction."""
    person_only(person, "give a card to several agents")

    def body() -> tuple[CardView, list[CardView]]:
        now = clock.now()
        first = create_card(data, person, now)
        return card_view(first), [card_view(_new_try(first, person, None, now)) for _ in range(count - 1)]

    return store.run(body)


VERIFY_KINDS = ("done_reported", "verify_failed", "done")  # the log's record of a done's verify command (#38)


def _verify_result(card_id: int) -> bool | None:
    """The card's last verify result as the chained log records it (never an
    evidence row, which an edit of the board file could swap between tries)."""
    marks = ", ".join("?" * len(VERIFY_KINDS))
    for kind, text in records.rows(
        f'SELECT "kind", "data" FROM "event" WHERE "card" = ? AND "kind" IN ({marks}) ORDER BY "seq" DESC',
        (card_id, *VERIFY_KINDS),
    ):
        data = json.loads(text) if isinstance(text, str) else (text or {})
        if kind == "verify_failed":
            return False
        if kind == "done_reported" and isinstance(data.get("verify"), dict):
            return bool(data["verify"].get("passed"))
        if kind == "done" and data.get("verify"):
            return True  # (a done from before done_reported: it ran the command, and it passed)
    return None


def _used_from_log(card: Card) -> Card:
    """The card with its used turns, tokens and dollars as the log's newest
    charge recorded them (the row's counters are a cache an edit could zero;
    nothing is written here)."""
    from ..authority.replay import used_in_log

    logged = used_in_log(records.rows, card.id)
    if logged is not None:
        card.used_turns, card.used_tokens, card.used_usd = logged
    return card


def compare(store: Store, card_id: int) -> tuple[int, list[Try]]:
    """The tries of the card (or of the card it tries), side by side: (the first card's id, its tries)."""
    from . import merges, workspaces

    with store.read():
        first = first_of(card_row(card_id).id)
        rows = [(n, card_row(c)) for n, c in family(first)]
        cards = [(n, card_view(_used_from_log(row)), _verify_result(row.id)) for n, row in rows]
    out = []
    for n, view, verified in cards:
        diff = merges.diff_summary(store, view.id)  # (git, outside the read)
        path = workspaces.open_path(store, view.id)
        files, added, removed = (len(diff.files) + diff.more, diff.added, diff.removed) if diff else (None, None, None)
        head = diff.pin.head if diff is not None and diff.pin is not None else None
        out.append(Try(view, n, files, added, removed, verified, path, head))
    return first, out


def keep(store: Store, card_id: int, person: keys.Person, head: str | None = None) -> tuple[CardView, list[CardView]]:
    """The person keeps the try ``card_id``; every other open try is cancelled
    once its workspace is archived (nothing deleted). Returns (kept, cancelled).
    ``head``: the kept try's branch commit the person compared (``card tries``):
    when its branch moved since, nothing is kept (``try_moved``) — what they
    chose is what is kept (#38). The signed ``try_kept`` names the commit."""
    from . import merges, workspaces

    person_only(person, "keep a try")
    key = ids.fmt(ids.CARD, card_id)
    seen = merges.branch_pin(store, card_id)  # (git, before any transaction)
    if head is not None:
        now_head = seen.head if seen is not None else None
        if now_head is None or not (now_head == head or (len(head) >= 7 and now_head.startswith(head.lower()))):
            raise Conflict(
                f"{key}'s branch moved since you compared the tries ({head[:12]} → {(now_head or 'nothing')[:12]}): nothing kept",
                f"compare them again (`loopx card tries {key}`), then keep the one you choose with its new --head",
                code="try_moved",
            )

    def plan() -> tuple[int, list[int]]:
        kept = card_row(card_id)
        first = first_of(card_id)
        tries = family(first)
        if len(tries) < 2:
            raise InvalidInput(
                f"{key} has no other tries to choose from",
                f"give it another agent first: `loopx card try {key} --to AGENT`",
            )
        if kept.status == "cancelled":
            raise Conflict(f"{key} was cancelled", "keep another try", code="illegal_move")
        others = [c for _, c in tries if c != card_id]
        merged = [c for c in others if card_row(c, lock=False).status == "done"]
        if merged:
            done_key = ids.fmt(ids.CARD, merged[0])
            raise Conflict(
                f"{done_key}, another try, is done already: its code is in the base",
                f"keep {done_key}, or cancel {key} by hand",
                code="illegal_move",
            )
        return first, [c for c in others if card_row(c, lock=False).status != "cancelled"]

    with store.read():
        first, losing = plan()
    archived = {}
    for other in losing:  # git, each in its own transaction, before the decision: nothing is lost
        found = workspaces.lookup(store, other)
        if found is not None and found.state == "open":
            archived[ids.fmt(ids.CARD, other)] = workspaces.archive(store, other, person).archive_ref

    def decide() -> tuple[CardView, list[CardView]]:
        now = clock.now()
        first_again, still = plan()
        gone = [card_view(apply_move(reap_card(card_row(c)), "cancelled", person, now)) for c in still]
        pinned = {"head": seen.head, "base_commit": seen.base_commit} if seen is not None else {}
        events.emit(
            person, "try_kept", first_again, kept=key, cancelled=[c.key for c in gone], archived=archived, **pinned
        )
        return card_view(reap_card(card_row(card_id))), gone

    return store.run(decide)
