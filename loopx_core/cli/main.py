"""``loopx`` entry point: parse, dispatch, print, exit with the documented code."""

from __future__ import annotations

import json
import os
import sys

TYPE_CHECKING = False  # (annotations only: typing is not imported on the cold path; checkers read this as typing's)
if TYPE_CHECKING:
    from ..shapes.errors import LoopxError
    from . import Outcome


def _emit(outcome: Outcome, as_json: bool) -> None:
    if outcome.warnings:  # on stderr either way: an agent reading --json sees them in the "warnings" field too
        from .render import for_terminal

        sys.stderr.write("".join(for_terminal(f"loopx: warning: {w}") + "\n" for w in outcome.warnings))
    if as_json:
        sys.stdout.write(json.dumps(outcome.data, separators=(",", ":"), default=str) + "\n")
    elif outcome.text:
        from .render import for_terminal

        sys.stdout.write(for_terminal(outcome.text) + "\n")


def _emit_error(err: LoopxError, as_json: bool) -> None:
    if as_json:
        sys.stdout.write(json.dumps(err.to_json(), default=str) + "\n")
    else:
        from .render import for_terminal

        msg = f"loopx: {err.message}"
        if err.hint:
            msg += f"\n  → {err.hint}"
        msg = for_terminal(msg)
        from ..shapes.errors import ALTERED

        if err.exit_code == ALTERED and sys.stderr.isatty():
            msg = f"\x1b[1;31m{msg}\x1b[0m"  # (red, as the board shows it: the board is not the one this machine saw)
        sys.stderr.write(msg + "\n")


def _remember_damage(err: LoopxError) -> None:
    """A read met a damaged page: mark the board so writes refuse it (store/failures.py)."""
    from ..store import failures, records

    failures.remember_damage(records.current_or_none(), err)


def _refuse_undecodable(argv: list[str]) -> None:
    """An argument that is not UTF-8 (Python keeps its bytes as surrogates)
    would fail deep inside, on its way to the board: refused here, exit 3."""
    for word in argv:
        try:
            word.encode("utf-8")
        except UnicodeEncodeError:
            from ..shapes.errors import InvalidInput

            try:  # the bytes the shell passed (\xff), else the code points (\ud800)
                shown = word.encode("utf-8", "surrogateescape").decode("ascii", "backslashreplace")[:80]
            except UnicodeEncodeError:
                shown = word.encode("ascii", "backslashreplace").decode("ascii")[:80]
            raise InvalidInput(
                f"the argument '{shown}' is not UTF-8 text",
                "pass UTF-8 text (check the shell's locale)",
                code="not_utf8",
            ) from None


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if "hook" in argv[:4]:  # runtimes call this before every tool: skip the parser
        from ..adapters.hook_entry import dispatch

        code = dispatch(argv)
        if code is not None:
            return code
    as_json = "--json" in argv
    from ..shapes.errors import INTERNAL, LoopxError

    try:
        _refuse_undecodable(argv)
        from .parser import build, parse

        args = parse(build(argv), argv)
        as_json = bool(getattr(args, "json", False))
        if args.version:
            from .. import __version__

            print(__version__)
            return 0
        if args.command is None:
            args.command, args.text = "board", False
        from ..shapes import verbs

        sub = getattr(args, "subcommand", None)
        spec = verbs.VERBS[(args.command, sub)]  # every verb is declared once, there
        from . import Context

        ctx = Context(args)
        ctx.name_board()
        if spec.human:  # one list: the hook refuses the same verbs to agents (shapes/human_verbs.py)
            ctx.refuse_agent(f"run `loopx {args.command}{' ' + sub if sub else ''}`")
        handler = verbs.resolve(spec.handler)
        try:
            if spec.probe and not ctx.agent_named() and ctx.would_ask():
                ctx.probe(handler)  # check before asking the passphrase
            outcome = handler(ctx)
            if ctx.signed:
                ctx.witness()
        finally:
            ctx.close()
        if isinstance(outcome, int):  # a long-running surface's exit code
            return outcome
        if outcome is None:
            return 0
        _emit(outcome, as_json)
        return outcome.code
    except LoopxError as err:
        if err.code == "board_damaged":  # (a lookup that found the log's card missing: store/rows.py)
            _remember_damage(err)
        _emit_error(err, as_json)
        return err.exit_code
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0
    except Exception as exc:  # the last line of defence: never a bare traceback for an agent
        if os.environ.get("LOOPX_DEBUG"):
            raise
        from ..store.failures import explain

        known = explain(exc)  # a full disk, a read-only or damaged board, a path that cannot be
        if known is not None and known.code == "board_damaged":
            _remember_damage(known)
        if known is not None:
            _emit_error(known, as_json)
            return known.exit_code
        internal = LoopxError(
            f"internal error: {type(exc).__name__}: {exc}", "rerun with LOOPX_DEBUG=1 for a traceback and report it"
        )
        _emit_error(internal, as_json)
        return INTERNAL


def entry() -> None:
    # A shell asking for completions (cli/completion.py) — never for a hook: a hook
    # that exited 0 with nothing said would read as "allow" to the runtime.
    if "_ARGCOMPLETE" in os.environ and "hook" not in sys.argv[1:4]:
        from .completion import complete

        complete()
    sys.exit(main())


if __name__ == "__main__":
    entry()
