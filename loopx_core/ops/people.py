"""The board's people as operators: adding the first person when the board is
made, adding and revoking people, accepting a board (SECURITY.md). Each is one
transaction that writes a signed event and the row it projects; the rows are
read and written through ``store/records.py`` so a person's verbs load no ORM.
Who counts as a person on the board (``member``) is ``authority/people.py``."""

from __future__ import annotations

from ..authority import keys, trust
from ..authority.people import member
from ..shapes.errors import Conflict, Forbidden, InvalidInput, NotFound
from ..store import events
from ..store.records import Person, exists, scalar

TYPE_CHECKING = False  # (annotations only: typing is not imported on the cold path; checkers read this as typing's)
if TYPE_CHECKING:
    from ..store.base import Store


def has_people(store: Store) -> bool:
    return exists('SELECT 1 FROM "person"')


def count(store: Store) -> int:
    return int(scalar('SELECT COUNT(*) FROM "person"') or 0)


def add_root(store: Store, person: keys.Person) -> None:
    """Make ``person`` the board's first person (inside the caller's transaction)."""
    _insert(person, person.name, person.public_raw)
    store.forget_trust()


def add_person(store: Store, by: keys.Person, name: str, public_b64: str) -> dict:
    try:
        raw = keys.unb64(public_b64.strip())
    except ValueError:
        raw = b""
    if len(raw) != 32:
        raise InvalidInput(
            "not an Ed25519 public key", "paste what `loopx key show` prints on their machine (base64, 44 characters)"
        )
    by = member(store, by)

    def body() -> dict:
        fp = keys.fingerprint(raw)
        if Person.get(fp) is not None:
            raise Conflict(
                f"key {fp} is already on this board", "`loopx person list` shows the people", code="no_change"
            )
        _insert(by, name, raw)
        return {"fingerprint": fp, "name": name}

    out = store.run(body)
    store.forget_trust()
    return out


def _insert(signer: keys.Person, name: str, raw: bytes) -> None:
    fp = keys.fingerprint(raw)
    seq = events.emit(signer, "person_added", None, fingerprint=fp, name=name, public_key=keys.b64(raw))
    Person.create(fingerprint=fp, name=name, public_key=keys.b64(raw), added_seq=seq)


def revoke_person(store: Store, by: keys.Person, fingerprint: str) -> dict:
    by = member(store, by)

    def body() -> dict:
        row = Person.get(fingerprint)
        if row is None:
            raise NotFound(f"no person with key {fingerprint[:64]!r}", "`loopx person list` shows the people")
        if row.revoked_seq is not None:
            raise Conflict(f"key {fingerprint} is already revoked", "", code="no_change")
        if not exists('SELECT 1 FROM "person" WHERE "fingerprint" <> ? AND "revoked_seq" IS NULL', (fingerprint,)):
            raise Conflict(
                "that is the board's last person", "add another person first (`loopx person add`), then revoke this key"
            )
        row.revoked_seq = events.emit(by, "person_revoked", None, fingerprint=fingerprint, name=row.name)
        row.save()
        return {"fingerprint": fingerprint, "name": row.name, "revoked": True}

    out = store.run(body)
    store.forget_trust()
    return out


def list_people(store: Store) -> list[dict]:
    t = store.trust()
    with store.read():
        rows = Person.where('ORDER BY "added_seq"')
    return [
        {
            "fingerprint": r.fingerprint,
            "name": r.name,
            "public_key": r.public_key,
            "trusted": r.fingerprint in t.people,
            "root": t.root is not None and t.root.fingerprint == r.fingerprint,
            "revoked": r.revoked_seq is not None,
        }
        for r in rows
    ]


def accept_board(store: Store, person: keys.Person, root: str) -> dict:
    """A person accepts the board at this place as it is now (``loopx key trust
    --replace``): another board where this machine knew one, or its log after
    it went back behind what this machine's witnesses saw. Its root must be
    ``root`` and ``person`` one of its people; the acceptance is a signed event
    on it, then this machine pins it there and follows its log from its head."""
    from ..authority import witness

    where, uid = store.location.describe(), store.board_uid()
    own = trust.load(store.query, uid, machine=False)
    if own.root is None:
        raise Forbidden("this board has no root person", "; ".join(own.problems) or "a person runs `loopx init` on it")
    if own.root.fingerprint != root:
        raise Forbidden(
            f"this board's root key is {own.root.fingerprint}, not {root}",
            "do not accept it: ask the person who made it to read you its fingerprint (`loopx person list`)",
        )
    found = own.people.get(person.fingerprint)
    if found is None or found.revoked_seq is not None:
        raise Forbidden(
            f"your key {person.fingerprint} is not one of this board's people",
            "only a person on the board accepts it (a person on it adds you: `loopx person add`)",
            code="not_a_person",
        )
    held = trust.read_places().get(where)
    replaces = held.get("board") if isinstance(held, dict) and held.get("board") != uid else None
    signer = person.named(found.name)
    seq = store.run(lambda: events.emit(signer, "board_accepted", None, place=where, root=root, replaces=replaces))
    trust.pin(uid, own.root, where, replace=True)
    with store.read():
        now = witness.head(store.query)
    if now is not None:  # (board_accepted was just written: the log has a head)
        witness.advance(witness.anchor_key(uid, where), now, replace=True)
    store.forget_trust()
    return {"board": uid, "place": where, "root": root, "replaces": replaces, "seq": seq}
