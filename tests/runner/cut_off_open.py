"""``loopx …`` whose first workspace open is cut off as a PostgreSQL restart
cuts it (the store's ``Uncommitted``: the server went away before the
transaction's commit, nothing of it written). The runner test's real runner
process, with the fault put at the one moment a restart's timing cannot be
held to."""

import sys

from loopx_core.cli.main import entry
from loopx_core.ops import workspace_open
from loopx_core.store.pg import Uncommitted

real = workspace_open.begin_turn
cut = []


def begin_turn(*args, **kwargs):
    if not cut:
        cut.append(1)
        raise Uncommitted("opening the workspace", ConnectionError("server closed the connection unexpectedly"))
    return real(*args, **kwargs)


workspace_open.begin_turn = begin_turn
sys.argv[0] = "loopx"
entry()
