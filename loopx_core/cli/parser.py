"""The argument parser, derived from the verbs' declarations (``shapes/verbs.py``,
plain data). Imports no handler, pydantic or peewee, so building it is cheap."""

from __future__ import annotations

import argparse

TYPE_CHECKING = False  # (annotations only: typing is not imported on the cold path; checkers read this as typing's)
if TYPE_CHECKING:
    from collections.abc import Container, Iterable
    from typing import Any, NoReturn

EPILOG = "Exit codes: 0 ok · 1 internal · 2 usage · 3 invalid input · 4 not found · 5 conflict · 6 waiting for a human · 7 rejected · 8 paused · 9 nothing to do · 10 forbidden · 11 history altered · 12 the board's storage refuses (disk full, read-only, damaged)"


class _Formatter(argparse.HelpFormatter):
    # A fixed width: argparse otherwise imports shutil (and bz2, lzma) on every
    # parser build just to ask the terminal size, even when no help is printed.
    def __init__(self, prog: str):
        super().__init__(prog, width=100, max_help_position=28)


class Parser(argparse.ArgumentParser):
    """argparse that raises instead of exiting, so errors share one printer (and --json)."""

    def __init__(self, *args: Any, **kwargs: Any):  # (argparse.ArgumentParser's own)
        kwargs.setdefault("formatter_class", _Formatter)
        # No prefix of an option stands for it (argparse's default): `--ag z1`
        # would be `--agent z1`, which the hook, reading words, cannot know.
        # Every subparser is made by this class, so the rule holds for all verbs.
        kwargs["allow_abbrev"] = False
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:  # noqa: D401 - argparse API
        from ..shapes.errors import UsageError

        raise UsageError(message, _did_you_mean(message) or f"see `{self.prog} --help`")


def _did_you_mean(message: str) -> str | None:
    """For a mistyped verb: the closest real one (only on this error path)."""
    import re

    found = re.search(r"invalid choice: '?([^'\s]*)'? \(choose from (.*)\)", message)
    if not found:
        return None
    import difflib

    choices = [c.strip().strip("'\"") for c in found.group(2).split(",")]
    close = difflib.get_close_matches(found.group(1), choices, n=1, cutoff=0.5)
    return f"did you mean {close[0]!r}?" if close else None


def count(text: str) -> int:
    """A whole number >= 0 (an event seq, a limit): refused at parse time, not by the database."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text[:40]!r}") from None
    if not 0 <= value < 1 << 63:  # the database's integers are 64-bit
        raise argparse.ArgumentTypeError(f"must be between 0 and {(1 << 63) - 1}, got {text[:40]}")
    return value


def _common(p: argparse.ArgumentParser) -> None:
    # Accepted after the verb too (`loopx next --json`): agents write it both ways.
    p.add_argument("--json", action="store_true", default=argparse.SUPPRESS, help="print exactly one JSON object")
    p.add_argument(
        "--db",
        default=argparse.SUPPRESS,
        metavar="PATH|URL",
        help="board to use (default: LOOPX_DB, nearest .loopx/, user board)",
    )


TYPES = {"int": int, "float": float, "count": count}


def cmd(name: str, help_text: str, parent: argparse._SubParsersAction[Parser]) -> Parser:
    p = parent.add_parser(name, help=help_text, description=help_text, epilog=EPILOG)
    _common(p)
    return p


def _define(p: argparse.ArgumentParser, args: Iterable[tuple[tuple[str, ...], dict[str, Any]]]) -> None:
    """The arguments a verb declares (shapes/verbs.py), as argparse calls."""
    for names, options in args:
        options = dict(options)
        if "type" in options:
            options["type"] = TYPES[options["type"]]
        if isinstance(options.get("default"), list):
            options["default"] = list(options["default"])  # each parse its own list
        p.add_argument(*names, **options)


def build(argv: list[str] | None = None) -> Parser:
    """The parser, derived from the verbs' declarations (shapes/verbs.py). Given
    ``argv``, only the verb being run is defined: a cold agent call should not
    pay for sixty subparsers it never uses."""
    from ..shapes import verbs

    root = Parser(
        prog="loopx", description="LoopX — the state kernel for long-running AI coding agents.", epilog=EPILOG
    )
    root.add_argument(
        "--db", metavar="PATH|URL", help="board to use (default: LOOPX_DB, nearest .loopx/board.db, user board)"
    )
    root.add_argument("--json", action="store_true", help="print exactly one JSON object")
    root.add_argument("--version", action="store_true", help="print the version")
    sub = root.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)

    wanted = _verb(argv, verbs.TOP) if argv is not None else None
    for name in verbs.TOP:
        if wanted is not None and wanted != name:
            continue
        if name in verbs.GROUPS:
            group = cmd(name, verbs.GROUPS[name], sub)
            gsub = group.add_subparsers(dest="subcommand", metavar="SUBCOMMAND", parser_class=Parser, required=True)
            for (verb, subname), spec in verbs.VERBS.items():
                if verb == name and subname is not None:  # (a group's verbs each have a subcommand)
                    _define(cmd(subname, spec.help, gsub), spec.args)
        else:
            spec = verbs.VERBS[(name, None)]
            _define(cmd(name, spec.help, sub), spec.args)
    return root


def _verb(argv: list[str], top: Container[str]) -> str | None:
    """The verb in ``argv`` (skipping global options), or None to build everything."""
    skip = False
    for token in argv:
        if skip:
            skip = False
            continue
        if token == "--db":
            skip = True
            continue
        if token.startswith("-"):
            if token in ("-h", "--help"):
                return None
            continue
        return token if token in top else None
    return None


def parse(parser: argparse.ArgumentParser, argv: list[str]) -> argparse.Namespace:
    """argparse, strict, except that the arguments after ``--`` go to a verb's
    ``rest`` when it follows a positional (``workspace start CARD … -- ARG…``):
    argparse gives a ``*`` positional nothing once options came between."""
    args, extra = parser.parse_known_args(argv)
    if extra:
        if extra[0] == "--" and isinstance(getattr(args, "rest", None), list) and not args.rest:
            args.rest = extra[1:]
        else:  # (the verb's own help, not the root's: what it takes is there)
            from ..shapes.errors import UsageError

            words = " ".join(
                w for w in ("loopx", getattr(args, "command", None), getattr(args, "subcommand", None)) if w
            )
            raise UsageError(f"unrecognized arguments: {' '.join(extra)}", f"see `{words} --help`")
    return args
