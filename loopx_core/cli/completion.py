"""Shell completion for ``loopx``, from the one parser (``cli/parser.build``, itself
built from the verb table): argcomplete answers each TAB from that parser, and
``loopx completion SHELL`` prints the script a shell needs to ask it.

Dynamic rather than a generated static file, so completion never goes stale
when a verb or an option is added. The cost is one ``loopx`` start per TAB, paid
only while completing: an ordinary call checks one environment variable."""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False  # (annotations only; checkers read this as typing's)
if TYPE_CHECKING:
    from . import Context, Outcome

SHELLS = ("bash", "zsh", "fish")
INSTALL = {
    "bash": 'eval "$(loopx completion bash)"    # in ~/.bashrc',
    "zsh": 'eval "$(loopx completion zsh)"     # in ~/.zshrc, after compinit',
    "fish": "loopx completion fish > ~/.config/fish/completions/loopx.fish",
}


def completing() -> bool:
    """Is this process a shell asking for completions (argcomplete's protocol)?"""
    return "_ARGCOMPLETE" in os.environ


def complete() -> None:
    """Answer the shell's completion request from the whole parser, then exit."""
    import argcomplete

    from .parser import build

    argcomplete.autocomplete(build(), always_complete_options=False)
    sys.exit(0)  # argcomplete exits itself; reached only when it had nothing to say


def cmd_completion(ctx: Context) -> Outcome | int:
    import argcomplete

    from . import Outcome

    shell = ctx.args.shell
    # argcomplete's script for zsh starts with `#compdef`, which zsh reads only from a
    # file on fpath; evaluated, it must register itself: compdef does that.
    script = argcomplete.shellcode(["loopx"], shell=shell)
    data = {"shell": shell, "install": INSTALL[shell], "script": script}
    if getattr(ctx.args, "json", False):
        return Outcome(data)
    sys.stdout.write(script if script.endswith("\n") else script + "\n")  # verbatim: a shell reads it
    return 0
