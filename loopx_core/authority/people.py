"""A board's people: who may sign its human decisions (SECURITY.md).

The first person is added when the board is made (``loopx init``), signing
their own entry; every later one is added, and may be revoked, by a person
already on the board. Here: who counts as one of the board's people, and who
decides in a long-running surface; the operators that add, revoke and accept
are ``ops/people.py`` (they write rows and events, this reads neither).
"""

from __future__ import annotations

import os

from ..rules import turn_env
from ..shapes.errors import Altered, Forbidden, InvalidInput
from . import keys, trust

TYPE_CHECKING = False  # (annotations only; checkers read this as typing's)
if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from .trust import BoardReader


def member(store: BoardReader, person: keys.Person) -> keys.Person:
    """``person`` under the name the board knows them by; refused unless their
    key is one of the board's trusted people."""
    people = store.trust()  # (loaded once per open board)
    found = people.people.get(person.fingerprint)
    if found is None and people.changed:
        raise Altered(
            people.changed, "until a person accepts it, this machine signs nothing on it and honours nothing of it"
        )
    if found is None:
        problems = people.problems
        why = f" ({problems[0]})" if problems else ""
        raise Forbidden(
            f"your key {person.fingerprint} is not one of this board's people{why}",
            f"a person on the board adds you: `loopx person add {person.name} {keys.b64(person.public_raw)}`",
            code="not_a_person",
        )
    if found.revoked_seq is not None:
        raise Forbidden(
            f"your key {person.fingerprint} was revoked on this board",
            "make a new key (`loopx key init --force`) and ask a person on the board to add it",
            code="not_a_person",
        )
    return person.named(found.name)


def pin_root(store: BoardReader) -> trust.PersonKey | None:
    """Remember this board's root key on this machine (a person's process only)."""
    t = store.trust()
    where = store.location.describe()
    if t.root is not None and (not t.pinned or where not in trust.read_places()):
        trust.pin(store.board_uid(), t.root, where)
        store.forget_trust()
    return t.root


def session_person(
    store: BoardReader, ask: Callable[[str], str] | None = None, tries: int = 3
) -> tuple[keys.Person | None, str | None, str]:
    """Who decides in a long-running surface (the board): the person whose key
    unlocks (a wrong passphrase is asked again, ``tries`` times in all) and is
    one of the board's people; or None, why not (the surface is then
    read-only) and what to do about it. An agent identity is never a person."""
    agent = turn_env.agent()
    if agent:
        return (
            None,
            f"started with LOOPX_AGENT={agent[:64]}: an agent cannot decide",
            "start `loopx board` in your own shell, without LOOPX_AGENT",
        )
    where = _home_short(keys.key_path())
    try:
        found = keys.read()
        if found is None:
            return (
                None,
                f"no LoopX key at {where}",
                "make yours with `loopx key init`; a person on the board then adds it",
            )
        return member(store, keys.unlock(found.path, ask=ask, tries=tries)), None, ""
    except (Altered, Forbidden, InvalidInput) as err:
        if err.code in ("wrong_passphrase", "not_unlocked"):
            why = (
                f"{tries} wrong passphrases for your key"
                if err.code == "wrong_passphrase" and tries > 1
                else err.message
            )
            return None, why, f"quit (q), run `loopx board` again and type the passphrase of {where}"
        return None, err.message, err.hint or ""


def _home_short(path: str | Path) -> str:
    home = os.path.expanduser("~")
    text = str(path)
    return "~" + text[len(home) :] if home not in ("", "/") and text.startswith(home + os.sep) else text
