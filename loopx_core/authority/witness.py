"""Witnesses: the person's long-lived processes remember the log they saw
(SECURITY.md "Witnesses").

The chain makes an edit visible, but not a rollback: an older copy of a board
is a valid chain too, only shorter. So every process of the person's that
stays up — the board, every runner — and every signed command remembers the
head of the log it saw (seq and hash), and writes it as this machine's anchor
(``anchors.json`` in the person's LoopX folder, per board id). ``observe``
checks, each time such a process looks at the board, that the head it saw
before and the machine's anchor are still in the chain at the same seq with
the same hash — one indexed read each, never a walk of the chain — and then
moves the anchor forward. A head that vanished or changed is the log going
backwards: the runner stops, the board turns read-only with a red alert, and
``loopx verify`` exits 11 naming it.

Several runners and the board write the anchor file at once: each write is a
read-modify-write of the whole file under an exclusive lock, landed with
``os.replace`` (a reader never sees half a file).
"""

from __future__ import annotations

import json
import os
from collections import namedtuple

TYPE_CHECKING = False  # (annotations only: typing is not imported on the cold path; checkers read this as typing's)
if TYPE_CHECKING:
    from ..shapes.errors import Altered
    from .chain import LogReader, Query

ANCHOR_FILE = "anchors.json"

Head = namedtuple("Head", "seq hash")


class Gone(namedtuple("Gone", "seq what")):
    """A remembered head the log no longer holds: event ``seq``, and what became of it."""

    __slots__ = ()

    def __str__(self) -> str:
        return f"event {self.seq} {self.what}"


ACCEPT = "if you put an older copy back yourself, accept the board as it is now: `loopx key trust ROOT_FINGERPRINT --replace`"


def alarm(gone: Gone) -> str:
    """What a witness says when the log went backwards (the runner, the board, a command)."""
    return f"THE BOARD'S LOG WENT BACKWARDS: {gone}"


def refused(gone: Gone) -> Altered:
    """The error a witness raises: exit 11, nothing more done on this board."""
    from ..shapes.errors import Altered

    return Altered(
        alarm(gone), "nothing more is done on it: `loopx verify` names what changed; " + ACCEPT, code="log_went_back"
    )


def anchor_file() -> str:
    from .keys import config_folder

    return os.path.join(config_folder(), ANCHOR_FILE)


def read_json(path: str) -> dict:
    """A JSON object of the person's LoopX folder (pins, anchors); {} when missing or broken."""
    try:
        with open(path, encoding="utf-8") as fh:
            doc = json.load(fh)
        return doc if isinstance(doc, dict) else {}
    except (OSError, ValueError):
        return {}


def _read_all() -> dict:
    return read_json(anchor_file())


def anchor_key(board_uid: str, place: str) -> str:
    """Anchors are per board and place: a copy of a project (its ``.loopx/``
    too) is a board of its own from there on, and must not look rolled back."""
    return f"{board_uid} {place}"


def store_key(store: LogReader) -> str:
    return anchor_key(store.board_uid(), store.location.describe())


def read_anchor(board_uid: str) -> Head | None:
    """The newest head of this board (``anchor_key``) any witness on this machine saw."""
    seen = _read_all().get(board_uid)
    if not isinstance(seen, dict):
        return None
    try:
        digest = seen["hash"]
        return Head(
            int(seen["seq"]), digest if isinstance(digest, str) else None
        )  # (an event written without a hash: verify names it)
    except (TypeError, KeyError, ValueError):
        return None


def head(query: Query) -> Head | None:
    rows = query("SELECT seq, hash FROM event ORDER BY seq DESC LIMIT 1", ())
    return Head(int(rows[0][0]), rows[0][1]) if rows else None


def vanished(query: Query, seen: Head, who: str, did: str = "saw") -> Gone | None:
    """Why the log no longer holds ``seen`` as ``who`` saw (or acted on) it (None: it does)."""
    rows = query("SELECT hash FROM event WHERE seq = ?", (seen.seq,))
    if not rows:
        how = "saw the log up to it" if did == "saw" else f"{did} it"
        return Gone(
            seen.seq, f"is gone: {who} {how} (the log was truncated or cut, or an older copy of the board put back)"
        )
    if rows[0][0] != seen.hash:
        return Gone(
            seen.seq,
            f"differs from the one {who} {did} (the history was rewritten or an older copy of the board put back)",
        )
    return None


def check(query: Query, board_uid: str, seen: Head | None = None) -> Gone | None:
    """The remembered heads — ``seen`` (this process's) and this machine's
    anchor — still in the chain? What vanished, or None."""
    for mark, who in ((seen, "this process"), (read_anchor(board_uid), "this machine")):
        if mark is not None:
            why = vanished(query, mark, who)
            if why:
                return why
    return None


def advance(board_uid: str, new: Head, *, replace: bool = False) -> None:
    """Move this machine's anchor of the board to ``new`` (never backwards,
    unless a person ``replace``s it: they accepted the board as it is now)."""
    from .keys import config_dir

    folder = config_dir()
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    from ..rules.file_lock import locked

    with locked(os.path.join(str(folder), ANCHOR_FILE + ".lock")):
        doc = _read_all()
        old = doc.get(board_uid)
        if not replace and isinstance(old, dict) and isinstance(old.get("seq"), int) and old["seq"] >= new.seq:
            return
        doc[board_uid] = {"seq": new.seq, "hash": new.hash}
        path = anchor_file()
        tmp = f"{path}.{os.getpid()}.tmp"  # (one temp file per writer: two never share one)
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(doc, fh, indent=1)
            fh.write("\n")
        os.replace(tmp, path)


HELD = 16  # events a process remembers acting on (its newest controls)


class Witness:
    """One long-lived process's memory of the log. ``observe(store)`` whenever
    it sees new events: None while the log only grew, else why it did not —
    and from then on the same answer (a witness that saw the log go backwards
    never trusts the board again in this process). ``acted_on``: an event the
    process obeys (a runner's control), remembered too: one deleted from the
    middle of the log is not behind the head, but it is gone all the same."""

    def __init__(self) -> None:
        self.seen: Head | None = None
        self.held: dict[int, str] = {}  # seq -> hash of events this process acted on
        self.problem: Gone | None = None

    def observe(self, store: LogReader, acted_on: int | None = None) -> Gone | None:
        if self.problem is not None:
            return self.problem
        uid = store_key(store)
        with store.read():
            why = check(store.query, uid, self.seen)
            for seq, digest in self.held.items():
                why = why or vanished(store.query, Head(seq, digest), "this process", "acted on")
            if why is None and acted_on is not None and acted_on not in self.held:
                rows = store.query("SELECT hash FROM event WHERE seq = ?", (acted_on,))
                if rows:
                    self.held[acted_on] = rows[0][0]
                    while len(self.held) > HELD:
                        self.held.pop(next(iter(self.held)))
            now = head(store.query)
        if why:
            self.problem = why
            return why
        if now is not None and (self.seen is None or now.seq > self.seen.seq):
            self.seen = now
            advance(uid, now)
        return None
