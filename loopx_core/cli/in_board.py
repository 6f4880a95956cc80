"""A person's verb run by the board, under the board's one unlock (issue #40).

The board is one more surface of the verb table (``shapes/verbs.py``): a
command the person types there (``:``) or a form fills in is parsed by the
verb's own parser and run by the verb's own handler — the same validation and
the same signed operator as at the CLI, one rule in one place — with the
person the board unlocked instead of a passphrase prompt. Handlers are named in
the table and imported when run (``verbs.resolve``), as the CLI does.

Only the verbs a person decides with on the board are here: not the ones that
start a long-running surface or a runtime, nor the key's own verbs.
"""

from __future__ import annotations

import shlex

from ..shapes import verbs
from ..shapes.errors import UsageError
from . import Context

TYPE_CHECKING = False  # (annotations only: typing is not imported on the cold path; checkers read this as typing's)
if TYPE_CHECKING:
    from ..authority.keys import Person
    from ..store.backends import Store
    from . import Outcome

# What the board runs: a person's decisions, and the reads that go with them.
BOARD_VERBS = frozenset(
    {
        ("agent", "add"),
        ("agent", "list"),
        ("agent", "show"),
        ("card", "add"),
        ("card", "edit"),
        ("card", "budget"),
        ("card", "window"),
        ("card", "move"),
        ("card", "assign"),
        ("card", "unassign"),
        ("card", "show"),
        ("notify", "set"),
        ("notify", "test"),
        ("notify", "show"),
        ("workspace", "cap"),
        ("workspace", "setup"),
        ("workspace", "list"),
        ("price", "set"),
        ("price", "remove"),
        ("price", "list"),
        ("dangerous", "set"),
        ("dangerous", "list"),
        ("runner", "pause"),
        ("runner", "resume"),
        ("runner", "stop"),
        ("runner", "list"),
        ("gate", "answer"),
        ("gate", "list"),
        ("person", "list"),
        ("phone", "list"),
        ("phone", "revoke"),  # a lost phone, from the board
    }
)

# The phrases the board's command line offers, as a person starts typing.
SUGGESTIONS = tuple(f"{verb} {sub} " for verb, sub in sorted(BOARD_VERBS))


def words(line: str) -> list[str]:
    """The command line as words (``loopx`` in front is optional)."""
    try:
        argv = shlex.split(line)
    except ValueError as exc:
        raise UsageError(f"cannot read that line: {exc}", "close each quote") from None
    if argv[:1] == ["loopx"]:
        argv = argv[1:]
    if not argv:
        raise UsageError(
            "type a command", "e.g. `card edit LX-3 --verify 'pytest -q'`, `notify test`, `workspace cap 20G`"
        )
    return argv


def run(store: Store, argv: list[str], person: Person) -> Outcome | None | int:
    """Run ``loopx ARGV`` as ``person`` (unlocked, one of the board's people) on
    ``store``: the verb's ``Outcome``, or its refusal raised."""
    from .parser import build, parse

    if "--db" in argv or any(a.startswith("--db=") for a in argv):
        raise UsageError("the board runs commands on itself", "leave --db out")
    args = parse(build(argv), argv)
    key = (args.command, getattr(args, "subcommand", None))
    if key not in BOARD_VERBS:
        shown = " ".join(w for w in key if w)
        raise UsageError(f"`{shown}` is not run from the board", "run it in your terminal")
    spec = verbs.VERBS[key]
    context = Context(args)
    context.act_as(store, person)
    if spec.human:
        context.refuse_agent(f"run `loopx {' '.join(w for w in key if w)}`")
    return verbs.resolve(spec.handler)(context)
