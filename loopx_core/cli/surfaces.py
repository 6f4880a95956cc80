"""The long-running surfaces (``loopx demo``, ``watch``, ``mcp``, ``hook``), each
in its own module so the agent verbs never import them. Each handler returns
the process's exit code."""

from __future__ import annotations

import sys

TYPE_CHECKING = False  # (annotations only: typing is not imported on the cold path; checkers read this as typing's)
if TYPE_CHECKING:
    from . import Context


def demo(ctx: Context) -> int:
    args = ctx.args
    if args.keep:
        from ..rules.given_paths import check_target
        from ..shapes.errors import UsageError

        check_target(args.keep, "--keep", "give --keep a folder (a new one is made)", want="folder", error=UsageError)
    if args.script or not (sys.stdout.isatty() and sys.stdin.isatty()):
        from ..demo.script import run_script

        return run_script(keep=args.keep, as_json=bool(getattr(args, "json", False)))
    from loopx_tui.launch import run_demo

    return run_demo(keep=args.keep)


def watch(ctx: Context) -> int:
    from ..watch.cli import run_watch

    return run_watch(getattr(ctx.args, "db", None), once=ctx.args.once, as_json=bool(getattr(ctx.args, "json", False)))


def mcp(ctx: Context) -> int:
    from ..adapters.mcp_server import serve

    return serve(getattr(ctx.args, "db", None))


def hook(ctx: Context) -> int:
    from ..adapters.hooks import run_hook

    return run_hook(ctx.args.runtime, ctx.args.event, getattr(ctx.args, "db", None))
