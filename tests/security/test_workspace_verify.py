"""An agent without the sandbox (the hook's refusals left aside: it runs git
from a program, or is a plain shell loop) destroys the commits LoopX recorded
for its card — force-moving its branch or deleting the ref, dropping LoopX's
saved-work ref, expiring the reflogs and collecting the garbage. ``loopx
verify`` says history was altered (exit 11) naming the card. Real git, real
``loopx`` processes run in the workspace as the agent (issue #26)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.conftest import git
from tests.kernel.test_workspaces import (
    _loopx_in as loopx_in,  # a real, cold loopx run in a folder, finding its board itself
)


def as_agent(folder: Path, command: str) -> None:
    """The agent's own shell, unconfined: what no hook reads (a script it wrote)."""
    script = folder / ".attack.sh"
    script.write_text(command)
    subprocess.run(
        ["bash", str(script)],
        cwd=folder,
        check=True,
        capture_output=True,
        timeout=60,
        env={
            **os.environ,
            "GIT_AUTHOR_NAME": "a",
            "GIT_AUTHOR_EMAIL": "a@localhost",
            "GIT_COMMITTER_NAME": "a",
            "GIT_COMMITTER_EMAIL": "a@localhost",
        },
    )
    script.unlink()


@pytest.fixture
def recorded(repo_team):
    """a1 claims LX-1 (its workspace is made), commits, leaves an edit uncommitted
    and writes back from its workspace: the evidence names the commit and the
    saved work."""
    repo_team.ok("card", "add", "Fix the parser")
    db = (
        repo_team.url if repo_team.backend == "postgresql" else None
    )  # (a team board: named, its checkout found from the folder)
    code, claimed = loopx_in(repo_team.root, "next", "--claim", agent="a1", db=db)
    assert code == 0, claimed
    ws = Path(claimed["workspace"]["path"])
    as_agent(
        ws,
        "echo fixed > parser.txt && git add parser.txt && git commit -qm 'fix the parser' && echo more >> parser.txt",
    )
    code, out = loopx_in(ws, "writeback", "LX-1", "--summary", "fixed the parser", agent="a1", db=db)
    assert code == 0, out
    assert repo_team.cli("verify").code == 0
    repo_team.ws = ws
    repo_team.commit = git(ws, "rev-parse", "HEAD").strip()
    return repo_team


DESTROY = "git reflog expire --expire=now --all && git gc -q --prune=now"
ATTACKS = {
    "force-moves its branch": "git update-ref refs/heads/loopx/LX-1 HEAD~1 && git reset -q --hard HEAD",
    "deletes its branch's ref": 'git checkout -q -f --detach HEAD~1 && rm -f "$(git rev-parse --git-common-dir)/refs/heads/loopx/LX-1"',
}


@pytest.mark.parametrize("attack", sorted(ATTACKS))
def test_commits_an_agent_destroys_are_named_by_verify(recorded, attack):
    ws = recorded.ws
    # LoopX's saved-work refs keep the commits too: the agent drops them as well
    as_agent(
        ws,
        "for r in $(git for-each-ref --format='%(refname)' refs/loopx/); do git update-ref -d \"$r\"; done && "
        + ATTACKS[attack]
        + " && "
        + DESTROY,
    )
    assert (
        subprocess.run(["git", "cat-file", "-e", recorded.commit], cwd=recorded.root, capture_output=True).returncode
        != 0
    )  # really gone
    res = recorded.cli("verify")
    assert res.code == 11, res
    said = [p for p in res.data["verify"]["problems"] if recorded.commit[:12] in p["what"]]
    assert said and said[0]["where"] == "card LX-1", res.data


def test_the_hook_refuses_each_step_of_the_attack(recorded, hooks):
    from tests.adapters.conftest import deny_reason, payload

    for step in (
        "git update-ref -d refs/heads/loopx/LX-1",
        "git branch -D loopx/LX-1",
        "git update-ref -d refs/loopx/LX-1/wip/x",
        "git reflog expire --expire=now --all",
        "git gc --prune=now",
    ):
        res = hooks.spawn(
            "claude-code",
            "pre-tool-use",
            payload("claude/pre_tool_use_bash.json", CWD=str(recorded.ws), COMMAND=step),
            agent="a1",
        )
        assert "never lets an agent do this" in deny_reason(res), step
