"""LoopX's human-only verbs: the commands only a person may run.

One list, read by the CLI's human-only check and by the PreToolUse hook, which
denies them to agents through every shell tool (no scope can allow them).
Standard library only: the hook imports it cold. Add a verb here and both
places refuse it.

Each entry is the verb and, for verbs with subcommands, the subcommand.
"""

from __future__ import annotations

HUMAN_VERBS = frozenset({
    ("gate", "answer"),
    ("agent", "add"),
    ("card", "budget"),
    ("card", "window"),
    ("card", "move"),
    ("card", "assign"),
    ("card", "unassign"),
    ("price", "set"),
    ("price", "remove"),
    ("person", "add"),
    ("person", "revoke"),
    ("key", "init"),
    ("key", "passphrase"),
    ("key", "trust"),
    ("policy", "sign"),
    ("runner", "pause"),
    ("runner", "resume"),
    ("runner", "stop"),
    ("run", None),  # a runner is the person's process: an agent's turn never starts one
})


def is_human_verb(verb: str | None, subcommand: str | None = None) -> bool:
    return (verb, subcommand) in HUMAN_VERBS or (verb, None) in HUMAN_VERBS
