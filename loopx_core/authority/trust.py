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

EVENT_COLUMNS = "seq, prev, hash, at, actor, card, kind, data, op_id, key, sig"
PIN_FILE = "trusted.json"
# The events that may carry a person's signed setting (their data: key, value).
SETTING_EVENTS = ("setting_changed", "price_set", "price_removed")

# Query: a function (sql, params) -> list of row tuples. (collections.namedtuple,
# not typing's: the hook imports this module and typing costs it milliseconds.)


class EventRow(namedtuple("EventRow", EVENT_COLUMNS)):
    """One event as stored: ``data`` is the JSON text exactly as written."""

    __slots__ = ()

    def payload(self) -> dict:
        return json.loads(self.data) if self.data else {}

    def computed_hash(self) -> str:
        return chain.event_hash(self.prev or "", self.seq, self.at, self.actor, self.card, self.kind, self.data, self.op_id, self.key)


PersonKey = namedtuple("PersonKey", "fingerprint name public_raw added_seq revoked_seq")


def event_row(query, seq: int) -> EventRow | None:
    rows = query(f"SELECT {EVENT_COLUMNS} FROM event WHERE seq = ?", (seq,))
    return EventRow(*rows[0]) if rows else None


# -- pins ------------------------------------------------------------------------------

def pin_file() -> str:
    """Where this machine's pins live (a plain path: the hook reads it without pathlib)."""
    from . import keys  # (a person's key files: not every reader needs them)

    return os.path.join(keys.config_folder(), PIN_FILE)


def pin_path():
    from pathlib import Path

    return Path(pin_file())


def read_pins() -> dict:
    try:
        with open(pin_file(), encoding="utf-8") as fh:
            doc = json.load(fh)
        return doc.get("boards", {}) if isinstance(doc, dict) else {}
    except (OSError, ValueError):
        return {}


def pin(board_uid: str, person: PersonKey, where: str) -> None:
    """Remember this board's root key on this machine (the person's own config folder)."""
    from . import keys  # (a person's key files: not every reader needs them)

    pins = read_pins()
    pins[board_uid] = {"root": person.fingerprint, "public": keys.b64(person.public_raw), "name": person.name, "board": where}
    keys.write(pin_path(), {"boards": pins})


# -- the trusted people of one board ---------------------------------------------------

class Trust:
    """The people whose signatures count on one board, as this process sees them."""

    def __init__(self, board_uid: str, people: dict[str, PersonKey], root: PersonKey | None, pinned: bool, problems: list[str]):
        self.board_uid = board_uid
        self.people = people  # fingerprint -> PersonKey, trusted ones only
        self.root = root
        self.pinned = pinned
        self.problems = problems  # why some person rows are not trusted

    def check(self, row: EventRow) -> str | None:
        """Why ``row`` is not a valid signed decision by one of the board's people (None: it is)."""
        from . import keys  # (a person's key files: not every reader needs them)

        if row.hash is None or row.computed_hash() != row.hash:
            return f"event {row.seq} does not match its hash (edited after it was written)"
        if not row.key or not row.sig:
            return f"event {row.seq} is not signed"
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

    def decision_row(self, query, seq: int | None, kinds: tuple[str, ...]) -> EventRow | None:
        """Event ``seq`` if it is a valid signed decision of one of ``kinds``, else None."""
        if seq is None:
            return None
        row = event_row(query, seq)
        if row is None or row.kind not in kinds or self.check(row) is not None:
            return None
        return row

    def decision(self, query, seq: int | None, kinds: tuple[str, ...]) -> dict | None:
        """The data of event ``seq`` if it is a valid signed decision of one of ``kinds``, else None."""
        row = self.decision_row(query, seq, kinds)
        return row.payload() if row is not None else None


def load(query, board_uid: str) -> Trust:
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
    pins = read_pins().get(board_uid)
    pinned = pins is not None
    root = None
    if pinned:
        try:
            pinned_raw = keys.unb64(pins["public"])
        except (KeyError, ValueError, TypeError):
            pinned_raw = b""
        root = next((p for p in candidates if p.public_raw == pinned_raw and p.fingerprint == keys.fingerprint(p.public_raw)), None)
        if root is None:
            problems.append(f"this board's people do not include the root key pinned on this machine ({pins.get('root')}): nothing on it is trusted")
            return Trust(board_uid, {}, None, True, problems)
    trusted: dict[str, PersonKey] = {}
    for person in candidates:
        if person.fingerprint != keys.fingerprint(person.public_raw):
            problems.append(f"person {person.name}: fingerprint does not match the key")
            continue
        row = event_row(query, person.added_seq)
        why = _added_by(row, person, trusted, root)
        if why:
            problems.append(f"person {person.name} ({person.fingerprint}): {why}")
            continue
        if root is None:
            root = person  # no pin: the first self-signed person is the board's root
        trusted[person.fingerprint] = person._replace(revoked_seq=None)
    # Revocations count only when a trusted person signed them.
    trust = Trust(board_uid, trusted, root, pinned, problems)
    for person in candidates:
        if person.revoked_seq is None or person.fingerprint not in trusted:
            continue
        row = event_row(query, person.revoked_seq)
        if row is not None and row.kind == "person_revoked" and trust.check(row) is None and row.payload().get("fingerprint") == person.fingerprint:
            trusted[person.fingerprint] = person
        else:
            problems.append(f"person {person.name}: its revocation is not a valid signed event (ignored)")
    return trust


def _added_by(row: EventRow | None, person: PersonKey, trusted: dict, root: PersonKey | None) -> str | None:
    from . import keys  # (a person's key files: not every reader needs them)

    if row is None or row.kind != "person_added":
        return "the event that added it is missing"
    data = row.payload()
    if data.get("fingerprint") != person.fingerprint or data.get("public_key") != keys.b64(person.public_raw) or data.get("name") != person.name:
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
    if row.actor != f"human:{signer.name}" or not keys.verify_signature(signer.public_raw, row.sig, chain.signed_message(row.hash)):
        return "the signature on the event that added it does not verify"
    return None


def signed_setting(query, key: str, people: "Trust | None" = None) -> str | None:
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


def board_uid_from(query) -> str | None:
    rows = query("SELECT value FROM setting WHERE key = 'board_uid'", ())
    return rows[0][0] if rows else None


def env_pin_dir() -> str:
    """Where pins live, for messages."""
    return os.fspath(pin_path())
