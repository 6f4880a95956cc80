"""What every bench script shares."""

from __future__ import annotations

import os
from pathlib import Path

HERE = Path(__file__).resolve().parent


def compiled_env() -> dict:
    """An installed LoopX runs from .pyc files (pip compiles them). Do the same
    here, and let Python read them even where PYTHONDONTWRITEBYTECODE is set,
    so the figures are what an agent on a real install pays."""
    import compileall

    for package in ("loopx_core", "loopx_tui"):
        compileall.compile_dir(str(HERE.parent / package), quiet=1)
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env.pop("LOOPX_AGENT", None)
    return env


def person_env(folder: Path) -> dict:
    """The bench's person: a key and a config folder inside the bench's own
    folder, so a bench never touches the real ~/.config/loopx."""
    return dict(
        compiled_env(), LOOPX_KEY=str(Path(folder) / "person-key.json"), XDG_CONFIG_HOME=str(Path(folder) / "config")
    )


def floor_argv(folder: Path) -> list[str]:
    """The floor every ratio is against: a bare python process that opens SQLite,
    inserts a row and commits."""
    import sqlite3
    import sys

    db = Path(folder) / "floor.db"
    if not db.exists():
        con = sqlite3.connect(db)
        con.execute("create table t (x integer)")
        con.commit()
        con.close()
    return [
        sys.executable,
        "-c",
        f"import sqlite3\nc=sqlite3.connect({str(db)!r})\nc.execute('insert into t values (1)')\nc.commit()",
    ]
