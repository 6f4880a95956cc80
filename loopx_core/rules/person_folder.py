"""The person's LoopX folder (their key, the pinned board roots, the anchors):
what ``platformdirs.user_config_dir("loopx")`` names, worked out here because
the PreToolUse hook denies it to agents on every call and importing
platformdirs costs it milliseconds. The key lookup (``authority.keys``), the
hook's ground (``adapters.ground``) and the runtimes' sandboxes
(``adapters.setup``) all ask this one function, so they name the same folder.

platformdirs' rule: ``$XDG_CONFIG_HOME`` counts only when it is an absolute
path (a relative one is ignored, as the XDG specification says), on Linux and
macOS alike; otherwise ``~/.config`` on Linux, ``~/Library/Application Support``
on macOS, ``%LOCALAPPDATA%`` on Windows (where the author's folder comes
first). ``tests/security/test_person_folder.py`` holds it equal to
platformdirs."""

from __future__ import annotations

import os
import posixpath
import sys

APP = "loopx"


def person_folder() -> str:
    if sys.platform == "win32":
        base = os.environ.get("LOCALAPPDATA") or os.path.join(os.path.expanduser("~"), "AppData", "Local")
        return os.path.join(base, APP, APP)
    xdg = os.environ.get("XDG_CONFIG_HOME", "")
    if posixpath.isabs(xdg):
        return os.path.join(xdg, APP)
    home = os.path.expanduser("~")
    if sys.platform == "darwin":
        return os.path.join(home, "Library", "Application Support", APP)
    return os.path.join(home, ".config", APP)
