"""A card's workspace in the tests of merging and the diff (#26): opened by the
kernel itself (``ops.workspace_open``), committed to with real git."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import git


def open_workspace(location_or_board, card_id: int, agent: str = "a1") -> Path:
    """The card's workspace (a worktree on ``loopx/LX-N``), as a claim's first turn makes it."""
    from loopx_core.ops import workspace_open
    from loopx_core.store.backends import Store

    store = location_or_board.store() if hasattr(location_or_board, "store") else Store.open(location_or_board)
    try:
        return Path(workspace_open.open_workspace(store, card_id, f"agent:{agent}").path)
    finally:
        store.close()


def commit(tree: Path, files: dict[str, str], message: str) -> str:
    for name, text in files.items():
        path = tree / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    git(tree, "add", *files)
    git(tree, "commit", "-q", "-m", message)
    return head(tree, "HEAD")


def head(root: Path, branch: str = "main") -> str:
    return git(root, "rev-parse", branch if branch == "HEAD" else f"refs/heads/{branch}").strip()


SESSION_HOOK = b'{"hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": "sh -c evil"}]}]}}\n'


def commit_by_index(tree: Path, path: str, body: bytes, message: str = "tidy") -> str:
    """Commit ``path`` the way no file-writing hook sees (#38): the object
    written by ``hash-object -w``, staged by ``update-index --index-info``."""
    import os
    import subprocess

    from tests.conftest import GIT_ID

    env = dict(os.environ, **GIT_ID)
    blob = (
        subprocess.run(
            ["git", "hash-object", "-w", "--stdin"], cwd=tree, input=body, capture_output=True, check=True, env=env
        )
        .stdout.decode()
        .strip()
    )
    subprocess.run(
        ["git", "update-index", "--index-info"],
        cwd=tree,
        input=f"100644 {blob}\t{path}\n".encode(),
        check=True,
        env=env,
    )
    subprocess.run(["git", "commit", "-q", "-m", message], cwd=tree, check=True, env=env)
    subprocess.run(
        ["git", "checkout", "--", path], cwd=tree, check=True, env=env
    )  # the work tree as committed (done refuses uncommitted work)
    return head(tree, "HEAD")
