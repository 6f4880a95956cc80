"""Who did it: actor strings recorded on every event (DESIGN §3)."""

from __future__ import annotations

import os


def human_actor() -> str:
    """The person at this terminal: ``human:<LOOPX_HUMAN or login name>``."""
    name = os.environ.get("LOOPX_HUMAN")
    if not name:
        try:
            import getpass

            name = getpass.getuser()
        except Exception:  # no passwd entry in some containers
            name = "human"
    return f"human:{name}"
