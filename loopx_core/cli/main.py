"""``loopx`` entry point: parse, dispatch, print, exit with the documented code."""

from __future__ import annotations

import json
import os
import sys


def _emit(outcome, as_json: bool) -> None:
    if as_json:
        sys.stdout.write(json.dumps(outcome.data, separators=(",", ":"), default=str) + "\n")
    elif outcome.text:
        from .render import for_terminal

        sys.stdout.write(for_terminal(outcome.text) + "\n")


def _emit_error(err, as_json: bool) -> None:
    if as_json:
        sys.stdout.write(json.dumps(err.to_json(), default=str) + "\n")
    else:
        from .render import for_terminal

        msg = f"loopx: {err.message}"
        if err.hint:
            msg += f"\n  → {err.hint}"
        sys.stderr.write(for_terminal(msg) + "\n")


def _surface(args) -> int | None:
    """The long-running surfaces, each in its own module so agent verbs never import them."""
    if args.command == "demo":
        if args.script or not (sys.stdout.isatty() and sys.stdin.isatty()):
            from ..demo.script import run_script

            return run_script(keep=args.keep)
        from loopx_tui.launch import run_demo

        return run_demo(keep=args.keep)
    if args.command == "watch":
        from ..watch.cli import run_watch

        return run_watch(getattr(args, "db", None), once=args.once)
    if args.command == "mcp":
        from ..adapters.mcp_server import serve

        return serve(getattr(args, "db", None))
    if args.command == "hook":
        from ..adapters.hooks import run_hook

        return run_hook(args.runtime, args.event, getattr(args, "db", None))
    return None


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
        from .parser import build

        args = build(argv).parse_args(argv)
        as_json = bool(getattr(args, "json", False))
        if args.version:
            from .. import __version__

            print(__version__)
            return 0
        if args.command is None:
            args.command, args.text = "board", False
        code = _surface(args)
        if code is not None:
            return code
        from .commands import HANDLERS, Context

        sub = getattr(args, "subcommand", None)
        handler = HANDLERS[(args.command, sub)]
        ctx = Context(args)
        from ..rules.human_verbs import is_human_verb

        if is_human_verb(args.command, sub):  # one list: the hook refuses the same verbs to agents
            ctx.refuse_agent(f"run `loopx {args.command}{' ' + sub if sub else ''}`")
        try:
            outcome = handler(ctx)
        finally:
            ctx.close()
        if outcome is None:
            return 0
        _emit(outcome, as_json)
        return outcome.code
    except LoopxError as err:
        _emit_error(err, as_json)
        return err.exit_code
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0
    except Exception as exc:  # the last line of defence: never a bare traceback for an agent
        if os.environ.get("LOOPX_DEBUG"):
            raise
        err = LoopxError(f"internal error: {type(exc).__name__}: {exc}", "rerun with LOOPX_DEBUG=1 for a traceback and report it")
        _emit_error(err, as_json)
        return INTERNAL


def entry() -> None:
    sys.exit(main())


if __name__ == "__main__":
    entry()
