"""The ``loopx`` command line (DESIGN §6), and what every handler shares.

Each verb is declared once, with its handler's ``"module:function"``, in
``shapes/verbs.py``; the handlers are in one module per verb group
(``docs/ARCHITECTURE.md``, "Where each verb's handler lives"). Here, below all
of them, is what they share: the ``Context`` a handler is given (the parsed
args, the board, who is calling), the ``Outcome`` it returns (the JSON object
it prints with ``--json``, the exit code, the short human text otherwise), and
the small readers of ids, pages and inputs the verb groups use alike.

Why the package itself: every ``loopx`` process loads it already, so what the
handlers share costs an agent's per-turn verb no module of its own (the cold
path, tests/adapters/test_cold_path.py). The PreToolUse hook loads it too:
its top level imports nothing the hook does not load anyway (``json``); the
rest is imported where it is used. It imports no module of the package, so
none imports back."""

from __future__ import annotations

import json

TYPE_CHECKING = False  # (annotations only: typing is not imported on the cold path; checkers read this as typing's)
if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable

    from ..authority.keys import Person
    from ..authority.witness import Witness
    from ..store.backends import Store
    from ..store.discovery import BoardLocation


class Outcome:
    """What a verb answers; ``warnings`` go to stderr (text and --json alike),
    and a --json answer carries them as a field too."""

    __slots__ = ("data", "code", "text", "warnings")

    def __init__(self, data: dict, code: int = 0, text: str = "", warnings: list[str] | None = None):
        self.data, self.code, self.text, self.warnings = data, code, text, warnings or []


def turn_defaults(args: argparse.Namespace) -> None:
    """``--lease-token`` and ``--turn-id`` default to the runner's turn (``rules/turn_env``)."""
    from ..rules import turn_env

    if hasattr(args, "lease_token"):
        args.lease_token = turn_env.lease_token(args.lease_token)
    if hasattr(args, "turn_id"):
        args.turn_id = turn_env.turn_id(args.turn_id)


class Context:
    """What every handler needs: the parsed args, the board, who is calling."""

    def __init__(self, args: argparse.Namespace):
        self.args = args
        self._store: Store | None = None
        self._location: BoardLocation | None = None
        self._person: Person | None = None
        self._held: Person | None = None  # this terminal's unlock of the person's key, when it holds one
        self._probing = False
        turn_defaults(args)
        self._witness: Witness | None = None  # a person's signed command witnesses the log (authority/witness.py)

    @property
    def location(self) -> BoardLocation:
        if self._location is None:
            from ..store.discovery import discover

            try:
                self._location = discover(getattr(self.args, "db", None))
            except ValueError as exc:
                from ..shapes.errors import UsageError

                raise UsageError(str(exc), "pass --db PATH or a sqlite:/// or postgresql:// URL") from None
        return self._location

    def name_board(self) -> None:
        """Find the board before any handler runs (a wrong --db is said by the
        command that opens it): a PostgreSQL board named before peewee loads
        lets peewee find its driver (store/orm.py)."""
        from ..shapes.errors import UsageError

        try:
            _ = self.location
        except UsageError:
            pass

    @property
    def store(self) -> Store:
        if self._store is None:
            from ..store.backends import Store

            location = self.location
            self._store = Store.open(location)  # only `loopx init` creates a board
        return self._store

    def close(self) -> None:
        """Close the board's connection (in-process callers run many commands)."""
        if self._store is not None:
            self._store.close()
            self._store = None

    def _named_agent(self) -> str | None:
        """``--agent``, else ``LOOPX_AGENT`` (``rules/turn_env``)."""
        from ..rules import turn_env

        return turn_env.agent(getattr(self.args, "agent", None))

    def agent(self) -> str:
        agent = self._named_agent()
        if not agent:
            from ..shapes.errors import UsageError

            raise UsageError(
                "no agent identity", "pass --agent ID or set LOOPX_AGENT (register it with `loopx agent add ID`)"
            )
        return agent_id(agent)

    def caller(self, what: str) -> str | Person:
        """``agent:<id>`` when an agent identity is present, else the person (their key)."""
        agent = self._named_agent()
        return f"agent:{agent_id(agent)}" if agent else self.person(what)

    def act_as(self, store: Store, person: Person) -> None:
        """Run on ``store`` as ``person``, unlocked already (the board's: its
        one unlock, cli/in_board.py): nothing is asked, and the store stays the caller's."""
        self._store, self._person = store, person

    def agent_named(self) -> bool:
        """An agent identity is present (``--agent`` or ``LOOPX_AGENT``)."""
        return bool(self._named_agent())

    def refuse_agent(self, what: str) -> None:
        if self._named_agent():
            from ..shapes.errors import Forbidden

            raise Forbidden(
                f"an agent cannot {what}",
                "only a person does this, from the board or their own terminal with their key",
                code="person_only",
            )

    def person(self, what: str) -> Person:
        """The person running this: refused for an agent identity, else proved by
        their key (unlocked here) being one of the board's people. A terminal,
        LOOPX_HUMAN or a missing LOOPX_AGENT alone proves nothing (SECURITY.md)."""
        self.refuse_agent(what)
        if self._person is None:
            from ..authority import keys
            from ..authority.people import member

            if self._probing:  # (check before asking: a stand-in that stops at the first signature)
                self._person = member(self.store, keys.stand_in())
            elif self._held is not None or not self.would_ask():
                self._person = member(self.store, self._held or keys.unlock())
            else:
                self._person = member(self.store, keys.unlock())
                self._hold(self._person)
            self.witness()
        return self._person

    def would_ask(self) -> bool:
        """A person's key must be unlocked with its passphrase: it is sealed
        and this terminal holds no unlock of it (authority/unlock.py)."""
        from ..authority import keys, unlock

        found = keys.read()
        if found is None or not found.sealed:
            return False
        held = unlock.held(found.fingerprint, found.public_raw)
        if held is not None:
            self._held = keys.Person(found.name, held, found.public_raw)
            return False
        return True

    def _hold(self, person: Person) -> None:
        """Keep a passphrase just typed for this terminal session a while."""
        from ..authority import keys, unlock

        found = keys.read()
        if found is not None and found.sealed and found.fingerprint == person.fingerprint:
            try:
                unlock.hold(person)
            except OSError:
                pass

    def probe(self, handler: Callable[[Context], object]) -> None:
        """Run ``handler`` as far as its first signature, with a stand-in for
        the person, and undo it: bad input, an unknown id or a refused state is
        said before the passphrase is asked (its transaction rolls back)."""
        from ..authority.keys import WouldSign

        self._probing = True
        try:
            handler(self)
        except WouldSign:
            pass
        finally:
            self._probing = False
            self._person = None

    @property
    def signed(self) -> bool:
        """A person proved who they are in this command."""
        return self._person is not None

    def witness(self) -> None:
        """Before a person signs, the log must still hold what this machine saw;
        after the command, its head is what this machine saw."""
        from ..authority import witness

        if self._witness is None:
            self._witness = witness.Witness()
        gone = self._witness.observe(self.store)
        if gone is not None:
            raise witness.refused(gone)


def agent_id(text: str) -> str:
    """A well-formed agent id (a malformed one can never be registered: invalid input, not "unknown")."""
    from ..rules.limits import AGENT_ID

    if not AGENT_ID.fullmatch(text):
        from ..shapes.errors import InvalidInput

        raise InvalidInput(
            f"not a valid agent id: {text[:80]!r}", "agent ids are letters, digits and ._- (at most 64), e.g. claude-1"
        )
    return text


def card_id(text: str) -> int:
    from ..rules import ids

    return _parse_id(ids.CARD, text, "cards look like LX-12")


def gate_id(text: str) -> int:
    from ..rules import ids

    return _parse_id(ids.GATE, text, "gates look like G-7")


def _parse_id(prefix: str, text: str, hint: str) -> int:
    from ..rules import ids

    try:
        return ids.parse(prefix, text)
    except ValueError as exc:
        from ..shapes.errors import InvalidInput

        raise InvalidInput(str(exc), hint) from None


def validate(kind: str, data: dict) -> dict:
    from ..shapes.inputs import validate as run

    return run(kind, data)


def page_limit(limit: int | None, default: int | None = None, low: int = 1) -> int:
    from ..shapes.inputs import page_limit as run

    return run(limit, default, low)


def drop_none(data: dict) -> dict:
    return {k: v for k, v in data.items() if v is not None}


def more_text(words: list[str], flag: str, cursor: str | None) -> str:
    """The line after a page that is not the last: the command for the next one."""
    if cursor is None:
        return ""
    import shlex

    return "\nmore: `loopx " + " ".join(shlex.quote(w) for w in [*words, flag, cursor]) + "` for the next page"


def flag_words(args: argparse.Namespace, *names: str) -> list[str]:
    """The filters a page was asked with, as the words ``more_text``'s next command repeats."""
    words = []
    for name in names:
        value = getattr(args, name)
        if value is True:
            words.append(f"--{name}")
        elif value not in (None, False):
            words += [f"--{name}", str(value)]
    return words


def agent_card_op(
    ctx: Context, op: str, payload: dict, fn: Callable[[str, int], tuple[dict, int, str]], atomic: bool = True
) -> Outcome:
    """An agent's operation on its card (``gate ask`` and the turn's verbs):
    ``fn(agent, card)`` run once per ``--op-id``; a replay answers what the first run recorded."""
    from ..ops.idempotence import once

    agent = ctx.agent()
    cid = card_id(ctx.args.card)
    texts: list[str] = []

    def run() -> tuple[dict, int]:
        data, code, text = fn(agent, cid)
        texts.append(text)
        return data, code

    result, code = once(ctx.store, ctx.args.op_id, op, {"agent": agent, "card": cid, **payload}, run, atomic=atomic)
    return Outcome(result, code, texts[0] if texts else "(replayed) " + json.dumps(result)[:300])
