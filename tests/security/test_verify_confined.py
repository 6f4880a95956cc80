"""A card's verify command runs the agent's code. Finished from a sandboxed
turn — the MCP ``done`` tool, whose server runs outside the runtime's sandbox,
as the person — it must run as confined as the agent's turns, never as the
person (issue #39). The attack: the person's verify is ``sh check.sh``, and
the agent's ``check.sh`` writes the main checkout and reads the person's key
folder. Real ``loopx mcp`` processes, real bubblewrap; the same through the
real Claude Code: tests/e2e/test_day.py."""

from __future__ import annotations

import contextlib
import os
import shutil
import sys
from pathlib import Path

import pytest

from tests.conftest import git
from tests.kernel.test_workspaces import _loopx_in as loopx_in

pytestmark = pytest.mark.skipif(
    shutil.which("bwrap") is None, reason="bubblewrap is not installed (apt-get install bubblewrap)"
)


@contextlib.asynccontextmanager
async def mcp(board, agent: str, cwd: Path, **env):
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    full = {
        "LOOPX_DB": board.url,
        "PYTHONPATH": os.pathsep.join(sys.path),
        "LOOPX_AGENT": agent,
        "PATH": os.environ.get("PATH", ""),
        "XDG_CONFIG_HOME": os.environ["XDG_CONFIG_HOME"],
        "XDG_DATA_HOME": os.environ["XDG_DATA_HOME"],
        "LOOPX_KEY": os.environ["LOOPX_KEY"],
        **env,
    }  # (the worst case: the server's environment names the person's key)
    params = StdioServerParameters(command=sys.executable, args=["-m", "loopx_core", "mcp"], env=full, cwd=str(cwd))
    with open(os.devnull, "w") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write):
            async with ClientSession(read, write) as client:
                await client.initialize()
                yield client


@pytest.fixture
def tested(repo_team):
    """A person's card whose verify runs the agent's tests; a1 claims it (its workspace is
    made), writes a check.sh that tries to get out, and writes back."""
    repo_team.ok("card", "add", "Tested work", "--verify", "sh check.sh")
    db = repo_team.url if repo_team.backend == "postgresql" else None
    code, claimed = loopx_in(repo_team.root, "next", "--claim", agent="a1", db=db)
    assert code == 0, claimed
    ws = Path(claimed["workspace"]["path"])
    key = Path(os.environ["LOOPX_KEY"])  # the person's key (the suite's: tests/conftest.py)
    assert key.is_file()
    repo_team.escaped = repo_team.root / "escaped.txt"
    (ws / "check.sh").write_text(
        f"echo ran > ran.txt\ncat '{key}' > leaked.txt\necho out > '{repo_team.escaped}'\nexit 0\n"
    )
    git(ws, "add", "check.sh")  # committed, as done asks (#39: uncommitted work refuses it)
    git(ws, "commit", "-q", "-m", "the tests")
    code, out = loopx_in(ws, "writeback", "LX-1", "--summary", "wrote the tests", agent="a1", db=db)
    assert code == 0, out
    repo_team.ws = ws
    return repo_team


async def test_the_mcp_done_runs_the_verify_command_confined(tested):
    async with mcp(tested, "a1", tested.ws) as client:
        result = await client.call_tool("done", {"card": "LX-1", "summary": "tested"})
    assert not result.is_error, result.content[0].text
    assert (tested.ws / "ran.txt").read_text() == "ran\n"  # the agent's code ran, in its workspace …
    assert not tested.escaped.exists()  # … and wrote nothing outside it
    assert (tested.ws / "leaked.txt").read_text() == ""  # nor read the person's key
    [verify] = [e["extra"]["verify"] for e in tested.ok("log", "LX-1")["evidence"] if e["source"] == "verify"]
    assert verify["passed"], verify


async def test_without_a_sandbox_to_run_it_in_the_mcp_done_refuses(tested, tmp_path):
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / "git").symlink_to(shutil.which("git"))
    async with mcp(tested, "a1", tested.ws, PATH=str(tmp_path / "bin")) as client:  # git, and no bwrap, on this PATH
        result = await client.call_tool("done", {"card": "LX-1", "summary": "tested"})
    assert result.is_error and "[verify_unconfined]" in result.content[0].text, result.content[0].text
    assert not (tested.ws / "ran.txt").exists() and not tested.escaped.exists()  # nothing ran
    assert tested.ok("card", "show", "LX-1")["card"]["status"] == "active"
