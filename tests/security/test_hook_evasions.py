"""Every way around `git push` (tests/adapters/test_commands.py's table), run
as the runtime runs the hook: a cold `loopx hook` process per call, Claude
Code's and Codex's payloads. Each must be denied with a gate a person can
answer — the scope the hidden command needs, or `shell:opaque` /
`shell:interactive` when LoopX cannot read what would run."""

from __future__ import annotations

import pytest

from tests.adapters.conftest import deny_reason, payload
from tests.adapters.test_commands import EVASIONS, GUARDED


@pytest.fixture(params=["sqlite"])
def backend(request) -> str:
    """SQLite only: the hook's checks do not depend on the backend (a
    PostgreSQL-only case builds its own board)."""
    return request.param


RUNTIMES = {"claude-code": "claude/pre_tool_use_bash.json", "codex": "codex/pre_tool_use_bash.json"}


@pytest.mark.parametrize("name, command", EVASIONS, ids=[e[0] for e in EVASIONS])
def test_evasion_is_denied_with_a_gate(hooks, working, name, command):
    (working.root / "push.sh").write_text("#!/bin/sh\ngit push origin main\n")
    runtime = "codex" if len(name) % 2 else "claude-code"  # both runtimes, alternately
    res = hooks.spawn(
        runtime, "pre-tool-use", payload(RUNTIMES[runtime], CWD=str(working.root), COMMAND=command, SESSION="s")
    )
    assert res.code == 0 and "Traceback" not in res.stderr
    reason = deny_reason(res)
    assert "gate G-1 is opened" in reason
    [gate] = working.ok("gate", "list")["gates"]
    assert gate["scope"] in GUARDED and gate["status"] == "pending" and gate["card"] == "LX-1"


def test_a_person_can_allow_what_the_hook_cannot_read(hooks, working):
    """`shell:opaque` is a scope like any other: approved for the lease, the
    same command runs; rejected, it stays denied."""
    call = payload(
        "claude/pre_tool_use_bash.json", CWD=str(working.root), COMMAND='eval "$(make print-deploy-command)"'
    )
    assert "`shell:opaque`" in deny_reason(hooks.spawn("claude-code", "pre-tool-use", call))
    hooks.answer("G-1")
    allowed = hooks.spawn("claude-code", "pre-tool-use", call)
    assert allowed.out["hookSpecificOutput"]["permissionDecision"] == "allow"


WRITE_THEN_RUN = [
    "echo 'git push origin HEAD:main' > push.sh && sh push.sh",
    "printf 'git push origin HEAD:main\\n' > push.sh; bash ./push.sh",
    "cp /dev/null push.sh && echo 'git push origin HEAD:main' >> push.sh && . ./push.sh",
    "echo 'git push origin HEAD:main' | tee push.sh > /dev/null; source push.sh",
    "sh push.sh & echo 'git push origin HEAD:main' > push.sh",
    "sh later.sh",  # a script that does not exist yet: what runs is only known when it does
]


def _repo_with_a_remote(folder, remote):
    import subprocess

    def git(*argv, cwd=folder):
        subprocess.run(["git", *argv], cwd=cwd, check=True, capture_output=True, timeout=60)

    git("init", "-q", "--bare", str(remote), cwd=folder.parent)
    git("init", "-q", "-b", "main")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", "start")
    git("remote", "add", "origin", str(remote))


def _pushed(remote) -> bool:
    import subprocess

    return (
        subprocess.run(
            ["git", "rev-parse", "--verify", "-q", "refs/heads/main"], cwd=remote, capture_output=True, timeout=60
        ).returncode
        == 0
    )


@pytest.mark.parametrize("command", WRITE_THEN_RUN)
def test_a_script_written_on_the_same_line_needs_a_gate(hooks, working, tmp_path, command):
    """The hook reads a script before the line runs: the old file, or none. A
    script another command of the line could write first is `shell:opaque`."""
    (working.root / "push.sh").write_text("echo nothing to see\n")  # what the hook would have read
    res = hooks.spawn(
        "claude-code",
        "pre-tool-use",
        payload(RUNTIMES["claude-code"], CWD=str(working.root), COMMAND=command, SESSION="s"),
    )
    reason = deny_reason(res)
    assert "`shell:opaque`" in reason and "gate G-1 is opened" in reason


def test_a_script_written_on_the_same_line_really_pushes(tmp_path):
    """The harm: the line pushes to main with no gate asked, whatever push.sh held before."""
    import subprocess

    clone, remote = tmp_path / "clone", tmp_path / "remote.git"
    clone.mkdir()
    _repo_with_a_remote(clone, remote)
    (clone / "push.sh").write_text("echo nothing to see\n")
    subprocess.run(["bash", "-c", WRITE_THEN_RUN[0]], cwd=clone, check=True, capture_output=True, timeout=60)
    assert _pushed(remote)


@pytest.mark.parametrize(
    "command",
    [
        "sh build.sh",
        "./build.sh",
        "cd . && ./build.sh",
        "source build.sh && pytest -q",
        "python3 -m venv .venv && . .venv/bin/activate",
    ],
)
def test_a_script_nothing_on_the_line_writes_is_read_and_allowed(hooks, working, command):
    script = working.root / "build.sh"
    script.write_text("#!/bin/sh\necho building\n")
    script.chmod(0o755)
    res = hooks.spawn(
        "claude-code",
        "pre-tool-use",
        payload(RUNTIMES["claude-code"], CWD=str(working.root), COMMAND=command, SESSION="s"),
    )
    assert res.out is None, res


@pytest.mark.parametrize(
    "command",
    ["loopx gate answ?r G-1 approve", "loopx handoff LX-1 --to a1 --summary x --agent a[1]", "git pu?h origin main"],
)
def test_a_pattern_where_a_verb_or_an_identity_goes_needs_a_gate(hooks, working, command):
    """The shell expands `answ?r` to `answer` when such a file exists: the hook
    cannot know which verb, subcommand or agent the pattern becomes."""
    (working.root / "answer").touch()
    (working.root / "push").touch()
    (working.root / "a1").touch()
    res = hooks.spawn(
        "claude-code",
        "pre-tool-use",
        payload(RUNTIMES["claude-code"], CWD=str(working.root), COMMAND=command, SESSION="s"),
    )
    assert "`shell:opaque`" in deny_reason(res)
