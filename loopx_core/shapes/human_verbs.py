"""LoopX's human-only verbs: the commands only a person may run.

Derived from the verbs' declarations (``shapes/verbs.py``, ``human=True``),
read by the CLI's dispatch and by the PreToolUse hook, which denies them to
agents through every shell tool (no scope can allow them). Standard library
only: the hook imports it cold. Declare a verb human-only there and both
places refuse it.

Each entry is the verb and, for verbs with subcommands, the subcommand.
"""

from __future__ import annotations

from . import verbs

HUMAN_VERBS = frozenset(key for key, verb in verbs.VERBS.items() if verb.human)


def is_human_verb(verb: str | None, subcommand: str | None = None) -> bool:
    return (verb, subcommand) in HUMAN_VERBS or (verb, None) in HUMAN_VERBS
