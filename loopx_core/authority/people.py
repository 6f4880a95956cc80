"""A board's people: who may sign its human decisions (SECURITY.md).

The first person is added when the board is made (``loopx init``), signing
their own entry; every later one is added, and may be revoked, by a person
already on the board. Operators here take a ``keys.Person`` (an unlocked key).
"""

from __future__ import annotations

import os

from ..shapes.errors import Altered, Conflict, Forbidden, InvalidInput, NotFound
from ..store import events
from ..store.models import Person as PersonRow
from ..store.orm import peewee as pw
from . import keys, trust


def member(store, person: keys.Person) -> keys.Person:
    """``person`` under the name the board knows them by; refused unless their
    key is one of the board's trusted people."""
    found = store.trust().people.get(person.fingerprint)
    if found is None and store.trust().changed:
        raise Altered(store.trust().changed, "until a person accepts it, this machine signs nothing on it and honours nothing of it")
    if found is None:
        problems = store.trust().problems
        why = f" ({problems[0]})" if problems else ""
        raise Forbidden(
            f"your key {person.fingerprint} is not one of this board's people{why}",
            f"a person on the board adds you: `loopx person add {person.name} {keys.b64(person.public_raw)}`",
            code="not_a_person",
        )
    if found.revoked_seq is not None:
        raise Forbidden(f"your key {person.fingerprint} was revoked on this board", "make a new key (`loopx key init --force`) and ask a person on the board to add it", code="not_a_person")
    return person.named(found.name)


def has_people(store) -> bool:
    return PersonRow.select().exists()


def add_root(store, person: keys.Person) -> None:
    """Make ``person`` the board's first person (inside the caller's transaction)."""
    _insert(person, person.name, person.public_raw)
    store.forget_trust()


def add_person(store, by: keys.Person, name: str, public_b64: str) -> dict:
    try:
        raw = keys.unb64(public_b64.strip())
    except ValueError:
        raw = b""
    if len(raw) != 32:
        raise InvalidInput("not an Ed25519 public key", "paste what `loopx key show` prints on their machine (base64, 44 characters)")
    by = member(store, by)

    def body():
        fp = keys.fingerprint(raw)
        if PersonRow.get_or_none(PersonRow.fingerprint == fp) is not None:
            raise Conflict(f"key {fp} is already on this board", "`loopx person list` shows the people", code="no_change")
        _insert(by, name, raw)
        return {"fingerprint": fp, "name": name}

    out = store.run(body)
    store.forget_trust()
    return out


def _insert(signer: keys.Person, name: str, raw: bytes) -> None:
    fp = keys.fingerprint(raw)
    seq = events.emit(signer, "person_added", None, fingerprint=fp, name=name, public_key=keys.b64(raw))
    PersonRow.create(fingerprint=fp, name=name, public_key=keys.b64(raw), added_seq=seq)


def revoke_person(store, by: keys.Person, fingerprint: str) -> dict:
    by = member(store, by)

    def body():
        row = PersonRow.get_or_none(PersonRow.fingerprint == fingerprint)
        if row is None:
            raise NotFound(f"no person with key {fingerprint[:64]!r}", "`loopx person list` shows the people")
        if row.revoked_seq is not None:
            raise Conflict(f"key {fingerprint} is already revoked", "", code="no_change")
        others = PersonRow.select().where((PersonRow.fingerprint != fingerprint) & PersonRow.revoked_seq.is_null()).count()
        if others == 0:
            raise Conflict("that is the board's last person", "add another person first (`loopx person add`), then revoke this key")
        row.revoked_seq = events.emit(by, "person_revoked", None, fingerprint=fingerprint, name=row.name)
        row.save()
        return {"fingerprint": fingerprint, "name": row.name, "revoked": True}

    out = store.run(body)
    store.forget_trust()
    return out


def list_people(store) -> list[dict]:
    t = store.trust()
    with store.read():
        rows = list(PersonRow.select().order_by(PersonRow.added_seq))
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


def pin_root(store) -> trust.PersonKey | None:
    """Remember this board's root key on this machine (a person's process only)."""
    t = store.trust()
    where = store.location.describe()
    if t.root is not None and (not t.pinned or where not in trust.read_places()):
        trust.pin(store.board_uid(), t.root, where)
        store.forget_trust()
    return t.root


def accept_board(store, person: keys.Person, root: str) -> dict:
    """A person accepts the board at this place as it is now (``loopx key trust
    --replace``): another board where this machine knew one, or its log after
    it went back behind what this machine's witnesses saw. Its root must be
    ``root`` and ``person`` one of its people; the acceptance is a signed event
    on it, then this machine pins it there and follows its log from its head."""
    from . import witness

    where, uid = store.location.describe(), store.board_uid()
    own = trust.load(store.query, uid, machine=False)
    if own.root is None:
        raise Forbidden("this board has no root person", "; ".join(own.problems) or "a person runs `loopx init` on it")
    if own.root.fingerprint != root:
        raise Forbidden(f"this board's root key is {own.root.fingerprint}, not {root}", "do not accept it: ask the person who made it to read you its fingerprint (`loopx person list`)")
    found = own.people.get(person.fingerprint)
    if found is None or found.revoked_seq is not None:
        raise Forbidden(f"your key {person.fingerprint} is not one of this board's people", "only a person on the board accepts it (a person on it adds you: `loopx person add`)", code="not_a_person")
    held = trust.read_places().get(where)
    replaces = held.get("board") if isinstance(held, dict) and held.get("board") != uid else None
    signer = person.named(found.name)
    seq = store.run(lambda: events.emit(signer, "board_accepted", None, place=where, root=root, replaces=replaces))
    trust.pin(uid, own.root, where, replace=True)
    with store.read():
        now = witness.head(store.query)
    witness.advance(witness.anchor_key(uid, where), now, replace=True)
    store.forget_trust()
    return {"board": uid, "place": where, "root": root, "replaces": replaces, "seq": seq}


def count(store) -> int:
    return int(PersonRow.select(pw.fn.COUNT(PersonRow.fingerprint)).scalar() or 0)


def session_person(store, ask=None, tries: int = 3) -> tuple[keys.Person | None, str | None, str]:
    """Who decides in a long-running surface (the board): the person whose key
    unlocks (a wrong passphrase is asked again, ``tries`` times in all) and is
    one of the board's people; or None, why not (the surface is then
    read-only) and what to do about it. An agent identity is never a person."""
    agent = os.environ.get("LOOPX_AGENT")
    if agent:
        return None, f"started with LOOPX_AGENT={agent[:64]}: an agent cannot decide", "start `loopx board` in your own shell, without LOOPX_AGENT"
    where = _home_short(keys.key_path())
    try:
        found = keys.read()
        if found is None:
            return None, f"no LoopX key at {where}", "make yours with `loopx key init`; a person on the board then adds it"
        return member(store, keys.unlock(found.path, ask=ask, tries=tries)), None, ""
    except (Altered, Forbidden, InvalidInput) as err:
        if err.code in ("wrong_passphrase", "not_unlocked"):
            why = f"{tries} wrong passphrases for your key" if err.code == "wrong_passphrase" and tries > 1 else err.message
            return None, why, f"quit (q), run `loopx board` again and type the passphrase of {where}"
        return None, err.message, err.hint or ""


def _home_short(path) -> str:
    home = os.path.expanduser("~")
    text = str(path)
    return "~" + text[len(home):] if home not in ("", "/") and text.startswith(home + os.sep) else text
