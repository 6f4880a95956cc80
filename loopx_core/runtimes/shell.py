"""A shell command as a runtime: any program, run once a turn (the registry,
``runtimes/__init__.py``, says what a runtime module provides; this one has no
hooks, settings or transcript). It gets the continuation packet on stdin and
in ``LOOPX_CONTEXT``, records its turn with the ``loopx`` commands (its
packet names them: it runs in no sandbox) and reports its own usage in its
writebacks.
"""

from __future__ import annotations

from . import base

NAME = "shell"
TITLE = "a shell command"


class Command(base.Runtime):
    """The person's command, as it is (``loopx run … -- CMD``)."""

    name = NAME
    uses_tools = False
    needs_command = True
