"""Whose signatures a board honours, and checking one signed event
(SECURITY.md "People and trust").

A board's people are rows of the ``person`` table, each added by an event signed
by a person already trusted — the first (the root) by itself, when the board was
made. A machine that has seen a board pins its root key in
``<config dir>/loopx/trusted.json``; a board whose root differs from the pin is
trusted for nothing. Without a pin (a second machine, a team board) the board's
own root is used, as ssh does on first contact.

This module reads with plain SQL through a ``query(sql, params)`` function, so
the hook can use it over ``sqlite3`` without importing the ORM. Placeholders
are ``?``; ``Store.query`` adapts them for PostgreSQL.
"""

from __future__ import annotations

import json
import os
from collections import namedtuple

from . import chain
from .witness import read_json

EVENT_COLUMNS = "seq, prev, hash, at, actor, card, kind, data, op_id, key, sig"
PIN_FILE = "trusted.json"
# The events that may carry a person's signed setting (their data: key, value).
SETTING_EVENTS = ("setting_changed", "price_set", "price_removed")

# Query: a function (sql, params) -> list of row tuples. (collections.namedtuple,
# not typing's: the hook imports this module and typing costs it milliseconds.)

TYPE_CHECKING = False  # (checkers read this as typing's)
if TYPE_CHECKING:
    from pathlib import Path
    from typing import NamedTuple, Protocol

    from .chain import LogReader, Query

    class BoardReader(LogReader, Protocol):
        """The store as authority reads it (``store.base.Store``, a layer above)."""

        def trust(self) -> Trust: ...
        def forget_trust(self) -> None: ...
        def project_folder(self) -> Path | None: ...
        def checkout_id(self) -> str | None: ...

    class _EventFields(NamedTuple):  # EVENT_COLUMNS with their types (tests/kernel/test_records.py holds them equal)
        seq: int
        prev: str | None
        hash: str | None
        at: float
        actor: str
        card: int | None
        kind: str
        data: str
        op_id: str | None
        key: str | None
        sig: str | None

else:
    _EventFields = namedtuple("EventRow", EVENT_COLUMNS)


class EventRow(_EventFields):
    """One event as stored: ``data`` is the JSON text exactly as written."""

    __slots__ = ()

    def payload(self) -> dict:
        return json.loads(self.data) if self.data else {}

    def computed_hash(self) -> str:
        return chain.event_hash(
            self.prev or "", self.seq, self.at, self.actor, self.card, self.kind, self.data, self.op_id, self.key
        )


PersonKey = namedtuple("PersonKey", "fingerprint name public_raw added_seq revoked_seq")


def event_row(query: Query, seq: int) -> EventRow | None:
    rows = query(f"SELECT {EVENT_COLUMNS} FROM event WHERE seq = ?", (seq,))
    return EventRow(*rows[0]) if rows else None


# -- pins ------------------------------------------------------------------------------


def pin_file() -> str:
    """Where this machine's pins live (a plain path: the hook reads it without pathlib)."""
    from . import keys  # (a person's key files: not every reader needs them)

    return os.path.join(keys.config_folder(), PIN_FILE)


def pin_path() -> Path:
    from pathlib import Path

    return Path(pin_file())


def _read_doc() -> dict:
    return read_json(pin_file())


def read_pins() -> dict:
    """Board id -> the root key pinned for it."""
    found = _read_doc().get("boards", {})
    return found if isinstance(found, dict) else {}


def read_places() -> dict:
    """A board's place (its file, or its database URL) -> the board id and root
    this machine knows there: a new board where one was is announced, not trusted."""
    found = _read_doc().get("places", {})
    return found if isinstance(found, dict) else {}


def pin(board_uid: str, person: PersonKey, where: str, *, replace: bool = False) -> None:
    """Remember this board's root key on this machine (the person's own config
    folder), and this board as the one at ``where`` — unless another board is
    known there and the person did not ``replace`` it."""
    from . import keys  # (a person's key files: not every reader needs them)

    doc = _read_doc()
    boards = doc.get("boards")
    boards = boards if isinstance(boards, dict) else {}
    places = doc.get("places")
    places = places if isinstance(places, dict) else {}
    held = places.get(where)
    if isinstance(held, dict) and held.get("board") != board_uid and not replace:
        return
    public = keys.b64(person.public_raw)
    boards[board_uid] = {"root": person.fingerprint, "public": public, "name": person.name, "board": where}
    places[where] = {"board": board_uid, "root": person.fingerprint, "public": public}
    keys.write(pin_path(), dict(doc, boards=boards, places=places))


def changed_board(where: str, held: dict, board_uid: str, found_root: str | None) -> str:
    """ssh's "REMOTE HOST IDENTIFICATION HAS CHANGED", for a board."""
    now = f"board {board_uid}" + (f" (root {found_root})" if found_root else "")
    was = f"board {held.get('board')} (root {held.get('root')})"
    return (
        f"BOARD IDENTIFICATION HAS CHANGED at {where}: this machine pinned {was} there, it is now {now}. "
        "Someone may have replaced it (an agent can delete .loopx/ and make a new board, or put another in its place): nothing on it is trusted. "
        "If you replaced it yourself, read its root with `loopx person list` and accept it: `loopx key trust ROOT_FINGERPRINT --replace`"
    )


# -- the trusted people of one board ---------------------------------------------------


class Trust:
    """The people whose signatures count on one board, as this process sees them."""

    def __init__(
        self,
        board_uid: str,
        people: dict[str, PersonKey],
        root: PersonKey | None,
        pinned: bool,
        problems: list[str],
        changed: str | None = None,
    ):
        self.board_uid = board_uid
        self.changed = changed  # the announcement when another board stands where this machine knew one
        self.people = people  # fingerprint -> PersonKey, trusted ones only
        self.root = root
        self.pinned = pinned
        self.problems = problems  # why some person rows are not trusted
        self.query: Query | None = None  # the board it was loaded from (a device's pairing is read from it)
        self._devices: dict | None = None
        self._devices_upto = 0

    def devices(self, upto: int = 0) -> dict:
        """The people's paired devices (authority/devices.py), as the log says up
        to event ``upto`` at least: read again when an event after the last read
        asks (a long-running process sees a device paired or revoked since)."""
        if self._devices is None or upto > self._devices_upto:
            from . import devices

            query = self.query
            head = query("SELECT MAX(seq) FROM event", ()) if query is not None else []  # (first: the rows cover it)
            rows = (
                query(
                    f"SELECT {EVENT_COLUMNS} FROM event WHERE kind IN (?, ?) ORDER BY seq",
                    (devices.PAIRED, devices.REVOKED),
                )
                if query is not None
                else []
            )
            self._devices_upto = max(upto, (head[0][0] or 0) if head else 0)
            self._devices = devices.load((EventRow(*r) for r in rows), self)
        return self._devices

    def check(self, row: EventRow) -> str | None:
        """Why ``row`` is not a valid signed decision by one of the board's people (None: it is)."""
        from . import keys  # (a person's key files: not every reader needs them)

        if row.hash is None or row.computed_hash() != row.hash:
            return f"event {row.seq} does not match its hash (edited after it was written)"
        if not row.key or not row.sig:
            return f"event {row.seq} is not signed"
        if row.key.startswith("wa:"):  # a decision made on one of a person's devices (devices.PREFIX)
            from . import devices

            return devices.check(row, self.devices(row.seq), self)
        person = self.people.get(row.key)
        if person is None:
            return f"event {row.seq} is signed by key {row.key}, which is not one of this board's people"
        if person.revoked_seq is not None and row.seq > person.revoked_seq:
            return f"event {row.seq} is signed by {person.name}'s key after it was revoked"
        if row.actor != f"human:{person.name}":
            return f"event {row.seq} claims to be by {row.actor} but is signed by {person.name}"
        if not keys.verify_signature(person.public_raw, row.sig, chain.signed_message(row.hash)):
            return f"event {row.seq}'s signature does not verify"
        return None

    def decision_row(self, query: Query, seq: int | None, kinds: tuple[str, ...]) -> EventRow | None:
        """Event ``seq`` if it is a valid signed decision of one of ``kinds``, else None."""
        if seq is None:
            return None
        row = event_row(query, seq)
        if row is None or row.kind not in kinds or self.check(row) is not None:
            return None
        return row

    def decision(self, query: Query, seq: int | None, kinds: tuple[str, ...]) -> dict | None:
        """The data of event ``seq`` if it is a valid signed decision of one of ``kinds``, else None."""
        row = self.decision_row(query, seq, kinds)
        return row.payload() if row is not None else None


def load(query: Query, board_uid: str, place: str | None = None, *, machine: bool = True) -> Trust:
    """The board's trusted people, as this machine sees them. ``place``: where
    the board was found (its file, or its URL as ``describe`` shows it); a board
    there other than the one this machine pinned there trusts nobody.
    ``machine=False``: the board on its own terms, as a machine that never saw
    it would (its first person is its root) — what a person accepting it checks."""
    from . import keys  # (a person's key files: not every reader needs them)

    rows = query("SELECT fingerprint, name, public_key, added_seq, revoked_seq FROM person ORDER BY added_seq", ())
    candidates = []
    for fp, name, public, added, revoked in rows:
        try:
            raw = keys.unb64(public)
        except ValueError:
            continue
        candidates.append(PersonKey(fp, name, raw, added, revoked))
    problems: list[str] = []
    doc = _read_doc() if machine else {}
    pins = (doc.get("boards") or {}).get(board_uid) if isinstance(doc.get("boards"), dict) else None
    held = (doc.get("places") or {}).get(place) if place is not None and isinstance(doc.get("places"), dict) else None
    if place is not None and isinstance(held, dict):  # (held is what this machine knows at the place)
        found_root = candidates[0].fingerprint if candidates else None
        if held.get("board") != board_uid or (pins is not None and pins.get("public") != held.get("public")):
            why = changed_board(place, held, board_uid, found_root)
            return Trust(board_uid, {}, None, True, [why], changed=why)
        pins = pins or held  # (the place remembers the root too: a pin removed alone changes nothing)
    if place is not None and machine:
        from . import witness

        gone = witness.check(query, witness.anchor_key(board_uid, place))
        if gone is not None:  # an older copy of the board, or a log cut short: what it says now was undone
            why = f"{witness.alarm(gone)}. Nothing on it is trusted; {witness.ACCEPT}"
            return Trust(board_uid, {}, None, True, [why], changed=why)
    pinned = pins is not None
    root = None
    if pins is not None:
        try:
            pinned_raw = keys.unb64(pins["public"])
        except (KeyError, ValueError, TypeError):
            pinned_raw = b""
        root = next(
            (p for p in candidates if p.public_raw == pinned_raw and p.fingerprint == keys.fingerprint(p.public_raw)),
            None,
        )
        if root is None:
            if place is not None and isinstance(
                held, dict
            ):  # the same board id, another root: announced like another board
                why = changed_board(place, held, board_uid, candidates[0].fingerprint if candidates else None)
                return Trust(board_uid, {}, None, True, [why], changed=why)
            problems.append(
                f"this board's people do not include the root key pinned on this machine ({pins.get('root')}): nothing on it is trusted"
            )
            return Trust(board_uid, {}, None, True, problems)
    trusted: dict[str, PersonKey] = {}
    for person in candidates:
        if person.fingerprint != keys.fingerprint(person.public_raw):
            problems.append(f"person {person.name}: fingerprint does not match the key")
            continue
        row = event_row(query, person.added_seq)
        not_added = _added_by(row, person, trusted, root)
        if not_added:
            problems.append(f"person {person.name} ({person.fingerprint}): {not_added}")
            continue
        if root is None:
            root = person  # no pin: the first self-signed person is the board's root
        trusted[person.fingerprint] = person._replace(revoked_seq=None)
    # Revocations count only when a trusted person signed them.
    trust = Trust(board_uid, trusted, root, pinned, problems)
    trust.query = query
    for person in candidates:
        if person.revoked_seq is None or person.fingerprint not in trusted:
            continue
        row = event_row(query, person.revoked_seq)
        if (
            row is not None
            and row.kind == "person_revoked"
            and trust.check(row) is None
            and row.payload().get("fingerprint") == person.fingerprint
        ):
            trusted[person.fingerprint] = person
        else:
            problems.append(f"person {person.name}: its revocation is not a valid signed event (ignored)")
    return trust


def _added_by(row: EventRow | None, person: PersonKey, trusted: dict, root: PersonKey | None) -> str | None:
    from . import keys  # (a person's key files: not every reader needs them)

    if row is None or row.kind != "person_added":
        return "the event that added it is missing"
    data = row.payload()
    if (
        data.get("fingerprint") != person.fingerprint
        or data.get("public_key") != keys.b64(person.public_raw)
        or data.get("name") != person.name
    ):
        return "it differs from the signed event that added it"
    if row.hash is None or row.computed_hash() != row.hash or not row.sig:
        return "the event that added it was altered"
    is_root = root is None or root.fingerprint == person.fingerprint
    if row.key == person.fingerprint and is_root and not trusted:
        signer = person  # the root signs its own entry
    elif row.key in trusted:
        signer = trusted[row.key]
        if signer.revoked_seq is not None and row.seq > signer.revoked_seq:
            return "added by a revoked key"
    else:
        return "added by a key the board does not trust"
    if row.actor != f"human:{signer.name}" or not keys.verify_signature(
        signer.public_raw, row.sig, chain.signed_message(row.hash)
    ):
        return "the signature on the event that added it does not verify"
    return None


def signed_setting(query: Query, key: str, people: Trust | None = None) -> str | None:
    """A person's setting (prices, the hook policy, the test-board clock): its
    value only when the signed event that set it verifies and says the same."""
    rows = query("SELECT value, decided_seq FROM setting WHERE key = ?", (key,))
    if not rows or rows[0][1] is None:
        return None
    value, seq = rows[0]
    people = people or load(query, board_uid_from(query) or "")
    decided = people.decision(query, seq, SETTING_EVENTS)
    if decided is None or decided.get("key") != key or decided.get("value") != value:
        return None
    return value


def clock_movable(query: Query, people: Trust | None = None) -> bool:
    """May ``LOOPX_NOW`` move this board's clock? Only on a board a person made
    for tests and demos (its signed ``test_clock`` setting on). The one rule:
    the kernel (``Store.open``) and the hook's reader (``adapters/fastcheck``)
    both ask it, and on any other board both leave the clock alone."""
    return signed_setting(query, "test_clock", people) == "on"


def latest_setting(query: Query, people: Trust, key: str) -> tuple[int, float, str | None, bool] | None:
    """The newest ``setting_changed`` event that set ``key``, read from the log
    (a setting row edited or deleted counts for nothing): (seq, at, value,
    verified). Not verified: that event's signature fails (fail closed). None:
    never set."""
    rows = query(
        'SELECT "seq", "at" FROM "event" WHERE "kind" = ? AND "data" LIKE ? ORDER BY "seq" DESC',
        ("setting_changed", f'%"{key}"%'),
    )
    for seq, at in rows:
        decided = people.decision(query, seq, ("setting_changed",))
        if decided is None:
            return seq, at, None, False
        if decided.get("key") == key:  # (else another setting whose value mentions the name)
            return seq, at, decided.get("value"), True
    return None


def board_uid_from(query: Query) -> str | None:
    rows = query("SELECT value FROM setting WHERE key = 'board_uid'", ())
    return rows[0][0] if rows else None


def env_pin_dir() -> str:
    """Where pins live, for messages."""
    return os.fspath(pin_path())
