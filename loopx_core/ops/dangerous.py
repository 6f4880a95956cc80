"""The scopes a person marked dangerous: in the board, approving a gate for
one takes a second, different key (DESIGN §9).

A person's signed setting (``loopx dangerous set 'db:*' 'deploy:*'``). The
list is the latest signed ``setting_changed`` event that set it, read from
the event log — not the setting row: a row edited or deleted in the database
counts for nothing. An event that does not verify makes every scope
dangerous (fail closed). Matching is ``rules/scopes.covers``."""

from __future__ import annotations

import json

from ..authority import trust
from ..rules import limits
from ..shapes.errors import InvalidInput

TYPE_CHECKING = False  # (annotations only: typing is not imported on the cold path; checkers read this as typing's)
if TYPE_CHECKING:
    from ..authority import keys
    from ..store.base import Store

SETTING = "dangerous_scopes"
EVERY_SCOPE = ("*",)


def patterns(store: Store) -> tuple[str, ...]:
    """The patterns the person signed last (inside a read or a transaction)."""
    found = trust.latest_setting(store.query, store.trust(), SETTING)
    if found is None:
        return ()
    _, _, value, verified = found
    if not verified:
        return EVERY_SCOPE  # an unsigned or altered list: fail closed
    try:
        chosen = json.loads(value or "")
    except ValueError:
        return EVERY_SCOPE
    if not isinstance(chosen, list) or not all(isinstance(p, str) for p in chosen):
        return EVERY_SCOPE
    return tuple(chosen)


def set_patterns(store: Store, wanted: list[str], person: keys.Person) -> tuple[str, ...]:
    """Replace the list (one transaction), signed by ``person`` (a ``keys.Person``)."""
    chosen: list[str] = []
    for pattern in wanted:
        if len(pattern) > limits.SCOPE_MAX or not limits.SCOPE.fullmatch(pattern) and pattern != "*":
            raise InvalidInput(
                f"{pattern[:140]!r} is not a scope pattern",
                "a scope like db:drop, a family like 'db:*', or '*' (quote the * in the shell)",
            )
        if pattern not in chosen:
            chosen.append(pattern)
    store.run(lambda: store.put_signed_setting(SETTING, json.dumps(chosen), person))
    return tuple(chosen)
