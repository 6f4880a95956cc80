"""Workspaces (issue #26) on a 10,000-file repository: what LoopX adds to git.

Prints, for this machine, medians over --runs, each LoopX sample taken next to
its bare counterpart so machine noise hits both alike:

- opening a card's workspace (``ops.workspace_open.open_workspace``: the board read,
  ``git worktree add -b loopx/LX-N PATH BASE``, the event) against ``git
  worktree add`` itself. Target: <= 1.2x. Also the cold ``loopx workspace
  open`` process, for reference (a Python start on top).
- recording a turn's code state with uncommitted and untracked edits
  (``ops.workspaces.record``: the snapshot through a temporary index, the WIP
  commit and its ref, the commits since, the diff summary, the event) against
  the same git commands run bare one after the other. Target: <= 1.5x.

Usage: python bench/workspace_bench.py [--files 10000] [--runs 5]
(The per-turn verbs with no workspace: bench/run.py, unchanged.)
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

from common import person_env

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
GIT_ID = {
    "GIT_AUTHOR_NAME": "bench",
    "GIT_AUTHOR_EMAIL": "bench@localhost",
    "GIT_COMMITTER_NAME": "bench",
    "GIT_COMMITTER_EMAIL": "bench@localhost",
}


def sh(cwd, *args, env=None) -> str:
    return subprocess.run(
        ["git", *args], cwd=cwd, env=env or dict(os.environ, **GIT_ID), check=True, capture_output=True, text=True
    ).stdout


def make_repository(root: Path, files: int) -> None:
    root.mkdir(parents=True)
    sh(root, "init", "-q", "-b", "main")
    (root / ".git" / "info" / "exclude").write_text(".loopx/\n")
    for i in range(files):
        folder = root / f"pkg{i // 100:03d}"
        folder.mkdir(exist_ok=True)
        (folder / f"mod{i % 100:03d}.py").write_text(f"# module {i}\nVALUE = {i}\n" + "x = 1\n" * 20)
    sh(root, "add", "-A")
    sh(root, "commit", "-q", "-m", "ten thousand files")


def timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return (time.perf_counter() - start) * 1000


def bare_record(path: str, base: str, since: str, n: int) -> None:
    """What recording a code state needs of git, run bare (the same commands)."""
    env = dict(os.environ, **GIT_ID)
    index = sh(path, "rev-parse", "--path-format=absolute", "--git-path", "index").strip()
    temp = tempfile.mktemp(prefix="bench-index-")
    shutil.copyfile(index, temp)
    tenv = dict(env, GIT_INDEX_FILE=temp)
    sh(path, "add", "--all", "--", ".", env=tenv)
    tree = sh(path, "write-tree", env=tenv).strip()
    os.unlink(temp)
    head = sh(path, "rev-parse", "--verify", "--quiet", "HEAD^{commit}").strip()
    sh(path, "rev-parse", "--verify", f"{head}^{{tree}}")
    commit = sh(path, "commit-tree", tree, "-p", head, "-m", "bench", env=env).strip()
    sh(path, "update-ref", f"refs/bench/wip/{n}", commit)
    sh(path, "rev-list", "--reverse", f"{since}..HEAD")
    sh(path, "symbolic-ref", "--quiet", "--short", "HEAD")
    sh(path, "diff", "--no-ext-diff", "--no-textconv", "--no-renames", "--numstat", base, tree)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--files", type=int, default=10_000)
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        project = folder / "project"
        make_repository(project, args.files)
        env = person_env(folder)
        env["XDG_DATA_HOME"] = str(folder / "data")
        os.environ.update(
            LOOPX_KEY=env["LOOPX_KEY"], XDG_CONFIG_HOME=env["XDG_CONFIG_HOME"], XDG_DATA_HOME=env["XDG_DATA_HOME"]
        )
        from loopx_core.authority import keys
        from loopx_core.ops import workspace_open, workspaces
        from loopx_core.ops.board import init_board
        from loopx_core.ops.cards import add_card
        from loopx_core.store.discovery import parse_target

        person = keys.unlock(keys.create(folder / "person-key.json", "bench", None).path)
        store, _ = init_board(parse_target(str(project / ".loopx" / "board.db"), "init"), "workspace bench", person)
        person = person.named(store.trust().people[person.fingerprint].name)
        cards = 3 * args.runs
        for c in range(cards):
            add_card(store, {"title": f"card {c + 1}"}, person)
        base = sh(project, "rev-parse", "HEAD").strip()
        opened, bare_add, cold = [], [], []
        loopx = [sys.executable, "-m", "loopx_core", "workspace", "open"]
        cli_env = dict(env, LOOPX_DB=str(project / ".loopx" / "board.db"))
        for n in range(args.runs):
            bare_add.append(
                timed(
                    lambda n=n: sh(
                        project, "worktree", "add", "-q", "-b", f"bench/{n}", str(folder / "bare" / str(n)), base
                    )
                )
            )
            opened.append(timed(lambda n=n: workspace_open.open_workspace(store, n + 1, "agent:bench")))
            cold.append(
                timed(
                    lambda n=n: subprocess.run(
                        [*loopx, f"LX-{args.runs + n + 1}"], env=cli_env, cwd=project, check=True, capture_output=True
                    )
                )
            )
        # a turn's edits: ten files changed, two new ones
        ws = workspaces.lookup(store, 1).path
        recorded, bare = [], []
        for n in range(args.runs):
            for i in range(10):
                with open(os.path.join(ws, f"pkg{i:03d}", "mod000.py"), "a") as fh:
                    fh.write(f"# turn {n}\n")
            for name in (f"new-{n}-a.txt", f"new-{n}-b.txt"):
                Path(ws, name).write_text("new\n")
            bare.append(timed(lambda n=n: bare_record(ws, base, base, n)))
            recorded.append(timed(lambda: workspaces.record(store, 1, "agent:bench")))
        store.close()

    def line(what, ours, theirs, target=None):
        ratio = statistics.median(ours) / statistics.median(theirs)
        mark = "" if target is None else ("  ok" if ratio <= target else f"  OVER the {target}x target")
        print(
            f"{what:<46} {statistics.median(ours):8.1f} ms vs {statistics.median(theirs):8.1f} ms  {ratio:5.2f}x{mark}"
        )

    print(f"workspaces on a {args.files:,}-file repository, medians of {args.runs}")
    line("open a workspace vs git worktree add", opened, bare_add, 1.2)
    line("  (cold `loopx workspace open` vs the same)", cold, bare_add)
    line("record a turn's code state vs its git commands", recorded, bare, 1.5)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
