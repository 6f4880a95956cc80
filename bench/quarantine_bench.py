"""The object quarantine (issue #38): what checking a turn's objects costs.

A turn in a card's workspace writes its objects into the workspace's
quarantine; at the turn's end LoopX checks each one (inflated and hashed, the
name must be the hash) and moves it into the shared store
(``workspace/quarantine.admit``). Prints, for this machine, medians over
--runs of

- ``admit``: checking and moving a quarantine holding one turn's objects
  (--files new files in --commits commits: blobs, trees, commits), against
- the bare git that checks the same objects: ``git fsck --strict`` run on the
  quarantine alone (``GIT_OBJECT_DIRECTORY`` = the quarantine, the shared store
  as its alternate, ``--no-full``), which inflates and hashes each object too.

Each sample starts from the same quarantine (copied in, not timed); admit and
fsck samples are interleaved so machine noise hits both alike. Also the cost
of an empty check (nothing written: every turn that made no commit), for
reference. Target: admit <= 1.5x the bare git.

Usage: python bench/quarantine_bench.py [--files 200] [--commits 5] [--runs 9]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from loopx_core.workspace import quarantine  # noqa: E402

GIT_ID = {
    "GIT_AUTHOR_NAME": "bench",
    "GIT_AUTHOR_EMAIL": "bench@localhost",
    "GIT_COMMITTER_NAME": "bench",
    "GIT_COMMITTER_EMAIL": "bench@localhost",
}


def sh(cwd, *args, env=None) -> str:
    full = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")} | GIT_ID | (env or {})
    return subprocess.run(["git", *args], cwd=cwd, env=full, check=True, capture_output=True, text=True).stdout


def timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return (time.perf_counter() - start) * 1000


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--files", type=int, default=200)
    ap.add_argument("--commits", type=int, default=5)
    ap.add_argument("--runs", type=int, default=9)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="loopx-qbench-") as tmp:
        root = Path(tmp) / "project"
        root.mkdir()
        sh(root, "init", "-q", "-b", "main")
        for i in range(200):
            (root / f"base{i}.py").write_text(f"VALUE = {i}\n" * 30)
        sh(root, "add", "-A")
        sh(root, "commit", "-q", "-m", "base")
        ws = Path(tmp) / "ws"
        sh(root, "worktree", "add", "-q", "-b", "loopx/LX-1", str(ws), "main")
        common = root / ".git"
        q = common / "worktrees" / "ws" / quarantine.NAME
        q.mkdir()
        env = {"GIT_OBJECT_DIRECTORY": str(q), "GIT_ALTERNATE_OBJECT_DIRECTORIES": str(common / "objects")}
        per = max(1, a.files // a.commits)
        for c in range(a.commits):
            for i in range(per):
                (ws / f"new{c}_{i}.py").write_text(f"# turn file {c}/{i}\n" + "y = 2\n" * 40)
            sh(ws, "add", "-A", env=env)
            sh(ws, "commit", "-q", "-m", f"turn commit {c}", env=env)
        template = Path(tmp) / "template"
        shutil.copytree(q, template)
        count = sum(1 for p in template.rglob("*") if p.is_file())
        shutil.rmtree(q)
        store = Path(tmp) / "store-template"
        shutil.copytree(common / "objects", store)

        def fresh() -> None:
            shutil.rmtree(q, ignore_errors=True)
            shutil.copytree(template, q)
            shutil.rmtree(common / "objects")
            shutil.copytree(store, common / "objects")

        def fsck() -> None:
            sh(root, "fsck", "--strict", "--no-full", "--no-dangling", "--no-reflogs", "--no-progress", env=env)

        def admit() -> None:
            got = quarantine.admit(str(common), str(q))
            assert got.moved == count and not got.refused, got

        ours, bare, empty = [], [], []
        for _ in range(a.runs):
            fresh()
            bare.append(timed(fsck))
            fresh()
            ours.append(timed(admit))
            empty.append(timed(lambda: quarantine.admit(str(common), str(q))))  # (now empty)
        o, b = statistics.median(ours), statistics.median(bare)
        print(f"quarantine of {count} objects ({a.files} files in {a.commits} commits), median of {a.runs}:")
        print(f"  bare git fsck --strict of the quarantine: {b:.1f} ms")
        print(f"  LoopX admit (check + move into the store): {o:.1f} ms = {o / b:.2f}x the bare git (target <= 1.5x)")
        print(f"  admit with nothing written (a turn without commits): {statistics.median(empty):.2f} ms")


if __name__ == "__main__":
    main()
