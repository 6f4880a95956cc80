"""One unlock per sitting, and only for the person (issue #40, SECURITY.md
"The human key"). A person's terminal is a real pseudo-terminal running a
shell; the passphrase is typed once and the verbs after it sign without asking
again. Every way an agent of the same user might ride on that unlock is tried
for real, with its own processes: the agent identity set (and scrubbed), no
controlling terminal, a pseudo-terminal it opened itself, another terminal, a
process a runtime started, the socket read as a file."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from loopx_core.authority import keys

from ..kernel.conftest import held
from ..ptys import terminal_session

PASSPHRASE = "correct horse battery staple"
PROMPT = b"Passphrase for LoopX key"
LOOPX = f"{shlex.quote(sys.executable)} -m loopx_core"
ATTACK = f"{shlex.quote(sys.executable)} -m tests.security.unlock_attack"


@pytest.fixture
def sitting(team, tmp_path):
    """A board whose person, alice, has a key sealed with a passphrase; a gate
    pending on LX-1. Returns the board and alice's terminal environment."""
    team.ok("card", "add", "push the release")
    held(team, "LX-1", "a2")
    assert team.cli("gate", "ask", "LX-1", "--question", "may I push?", "--scope", "git:push", agent="a2").code == 6
    alice = keys.create(tmp_path / "alice.json", "alice", PASSPHRASE)
    team.ok("person", "add", "alice", keys.b64(alice.public_raw))
    env = {k: v for k, v in os.environ.items() if k not in ("LOOPX_AGENT", "LOOPX_UNLOCK_FOR")}
    env.update(LOOPX_DB=team.url, LOOPX_KEY=str(alice.path), TERM="dumb", PYTHONPATH=str(Path(__file__).parents[2]))
    yield team, env
    subprocess.run([sys.executable, "-m", "loopx_core", "key", "lock"], env=env, capture_output=True, timeout=60)


def terminal(script: str, env: dict, cwd, on_ready=None, typed: bytes = (PASSPHRASE + "\n").encode()):
    """``script`` on the person's terminal (tests/ptys.py): (exit code, output, prompts)."""
    return terminal_session(script, env, cwd, typed, on_ready)


def rc(command: str) -> str:
    """``command`` then a line with its exit code."""
    return f'{command}; echo "rc=$? <- {command.replace(LOOPX, "loopx")[:60]}"\n'


def test_a_persons_half_hour_asks_the_passphrase_once(sitting):
    team, env = sitting
    script = "".join(
        rc(LOOPX + " " + c)
        for c in (
            "agent add w1 --runtime shell --can git:push",
            "agent add w2 --runtime shel",
            "agent add w3 --can gitpush",
            "agent add w4 --tokens 100",
            "agent add w1 --runtime shell --can git:push",
            "card add 'ship it' --max-turns 2",
            "card budget LX-2 --add-turns 3",
            "card budget LX-2",
            "card budget LX-99 --add-turns 1",
            "card window LX-2 --every 1h --turns 5",
            "card window LX-2 --every 20m",
            "notify set -- /bin/true",
            "notify set -- true",
            "notify set --timeout 5m -- /bin/true",
            "notify test",
            "gate answer G-1 approve",
            "runner pause w1",
            "runner resume w1",
            "workspace cap 20G",
            "price set m1 --input 1 --output 2",
            "dangerous set 'db:*'",
        )
    )
    code, out, prompts = terminal(script, env, team.root)
    assert code == 0, out
    assert prompts == 1, out  # once, for all of it (and the refusals asked nothing)
    codes = [line.split()[0] for line in out.splitlines() if line.startswith("rc=")]
    assert codes == [
        "rc=0",
        "rc=3",
        "rc=3",
        "rc=3",
        "rc=0",
        "rc=0",
        "rc=0",
        "rc=3",
        "rc=4",
        "rc=0",
        "rc=3",
        "rc=0",
        "rc=3",
        "rc=3",
        "rc=0",
        "rc=0",
        "rc=0",
        "rc=0",
        "rc=0",
        "rc=0",
        "rc=0",
    ], out
    assert "did you mean 'shell'" in out and "did you mean 'git:push'" in out, out
    for e in team.ok("events", "--limit", "1000")["events"]:
        if e["actor"] == "human:alice":
            assert e["signed"] is True
    assert team.cli("verify").code == 0
    card = team.ok("card", "show", "LX-2")["card"]
    assert card["quota"]["turns"]["limit"] == 5


def test_key_lock_ends_it_and_the_next_verb_asks_again(sitting):
    team, env = sitting
    script = (
        rc(f"{LOOPX} card add one")
        + rc(f"{LOOPX} card add two")
        + rc(f"{LOOPX} key show")
        + rc(f"{LOOPX} key lock")
        + rc(f"{LOOPX} key show")
        + rc(f"{LOOPX} card add three")
    )
    code, out, prompts = terminal(script, env, team.root)
    assert code == 0 and prompts == 2, out
    assert "1 unlock ended" in out
    shown = [line for line in out.splitlines() if "sealed with a passphrase" in line]
    assert re.search(r"unlocked in this terminal for 1[45]m more", shown[0]) and "unlocked" not in shown[1], out


def test_unlock_for_zero_keeps_nothing(sitting):
    team, env = sitting
    script = rc(f"{LOOPX} card add one") + rc(f"{LOOPX} card add two")
    code, out, prompts = terminal(script, dict(env, LOOPX_UNLOCK_FOR="0"), team.root)
    assert code == 0 and prompts == 2, out


def test_no_agent_process_can_sign_with_the_unlock(sitting, tmp_path):
    """Unlocked in the person's terminal; then each attack asks the holder to
    sign a message of the agent's choosing. Only the control — a plain process
    of that terminal session — gets a signature."""
    team, env = sitting
    runtime = tmp_path / "bin" / "claude"  # a coding runtime's process in the person's terminal
    runtime.parent.mkdir()
    runtime.symlink_to("/bin/bash")
    elsewhere: dict = {}

    def from_another_terminal():  # a second terminal of the same user, and a process with none
        _, shown, asked = terminal(
            f'{ATTACK}\n{LOOPX} card budget LX-1 --add-turns 1; echo "rc=$?"\n', env, team.root, typed=b"\x04"
        )
        elsewhere["pty"], elsewhere["pty_asked"] = shown, asked
        elsewhere["none"] = subprocess.run(
            shlex.split(ATTACK),
            env=env,
            cwd=team.root,
            capture_output=True,
            text=True,
            timeout=60,
            start_new_session=True,
        ).stdout

    script = (
        rc(f"{LOOPX} card add one")  # the person unlocks
        + f"echo CONTROL; {ATTACK}\n"
        + f"echo AGENT_ENV; LOOPX_AGENT=a2 {ATTACK}\n"
        + f"echo SCRUBBED; LOOPX_AGENT=a2 bash -c 'env -u LOOPX_AGENT {ATTACK}; true'\n"
        + f"echo RUNNER; (exec -a loopx bash -c '{ATTACK}; true' run)\n"
        + f"echo CLAUDECODE; CLAUDECODE=1 {ATTACK}\n"
        + f"echo RUNTIME; {runtime} -c '{ATTACK}; true'\n"
        + f"echo SETSID; setsid -w {ATTACK} < /dev/null\n"
        + f"echo NEWPTY; {ATTACK} newpty\n"
        + f"echo SCRIPT; script -qec '{ATTACK}' /dev/null < /dev/null\n"
        + "echo READY; read line\n"
        + f"echo READ; cat {shlex.quote(str(Path(env['XDG_CONFIG_HOME']) / 'loopx' / 'run'))}/*.sock 2>&1 | head -c 300; echo\n"
    )
    code, out, prompts = terminal(script, env, team.root, on_ready=from_another_terminal)
    assert prompts == 1, out
    lines = [
        line
        for line in out.splitlines()
        if line.startswith(
            (
                "CONTROL",
                "AGENT_ENV",
                "SCRUBBED",
                "CLAUDECODE",
                "RUNNER",
                "RUNTIME",
                "SETSID",
                "NEWPTY",
                "SCRIPT",
                "ATTACK",
            )
        )
    ]
    verdict = dict(zip(lines[0::2], lines[1::2]))
    assert verdict["CONTROL"] == "ATTACK SIGNED", out  # the attack works where it may
    assert "LOOPX_AGENT is set" in verdict["AGENT_ENV"]
    assert "LOOPX_AGENT is set" in verdict["SCRUBBED"]  # (its parent shell is the agent's)
    assert "CLAUDECODE is set" in verdict["CLAUDECODE"]
    assert "coding runtime (claude)" in verdict["RUNTIME"]
    assert "a runner" in verdict["RUNNER"]
    assert "no terminal" in verdict["SETSID"]
    assert "another terminal session" in verdict["NEWPTY"]
    assert "another terminal session" in verdict["SCRIPT"]
    read = out.split("\nREAD", 1)[1]
    assert "No such device or address" in read and "SIGNED" not in read, read  # a socket is no file to read
    assert "REFUSED" in elsewhere["pty"] and "another terminal session" in elsewhere["pty"], elsewhere
    assert elsewhere["pty_asked"] == 1 and "rc=10" in elsewhere["pty"], (
        elsewhere
    )  # it asks there: the unlock is not its
    assert "no terminal" in elsewhere["none"], elsewhere
    assert team.ok("card", "show", "LX-1")["card"]["quota"]["turns"]["limit"] is None


def test_bad_input_is_said_before_the_passphrase_is_asked(sitting):
    """No unlock yet: every refusal comes first, and nothing is asked (each of
    these asked for the passphrase, then refused, before #40)."""
    team, env = sitting
    before = team.snapshot()
    script = "".join(
        rc(LOOPX + " " + c)
        for c in (
            "card budget LX-99 --add-turns 1",
            "card budget LX-1",
            "card window LX-1 --every 20m",
            "agent add w4 --tokens 100",
            "agent add w5 --runtime shel",
            "notify set -- true",
            "notify set --timeout 5m -- /bin/true",
            "gate answer G-99 approve",
            "runner pause nobody",
            "card move LX-1 --to done",
        )
    )
    code, out, prompts = terminal(script, env, team.root, typed=b"\x04")
    assert code == 0 and prompts == 0, out
    assert [line.split()[0] for line in out.splitlines() if line.startswith("rc=")] == [
        "rc=4",
        "rc=3",
        "rc=3",
        "rc=3",
        "rc=3",
        "rc=3",
        "rc=3",
        "rc=4",
        "rc=4",
        "rc=2",
    ], out
    assert team.snapshot() == before


def _as_a_user(code: str, **kw) -> subprocess.Popen:
    """``code`` in a python of an unprivileged user (root reads any process's
    memory: the attack is a same-user one), the standard library and LoopX only."""
    argv = ["/usr/bin/python3", "-c", code]
    if os.getuid() == 0:
        argv = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", *argv]
    env = {"PYTHONPATH": str(Path(__file__).parents[2]), "PATH": "/usr/bin:/bin"}
    return subprocess.Popen(
        argv, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kw
    )


@pytest.mark.parametrize("undumpable", [True, False], ids=["holder", "control"])
def test_a_same_user_process_cannot_read_the_holders_memory(undumpable):
    """The holder makes itself undumpable (PR_SET_DUMPABLE 0): another process
    of its user can neither read its memory nor ptrace it. The control, the
    same process without it, is read."""
    if not Path("/usr/bin/python3").exists() or (os.getuid() == 0 and not shutil.which("setpriv")):
        pytest.skip("needs /usr/bin/python3 (and setpriv when run as root)")
    holder = _as_a_user(
        "import os, sys\n"
        + ("from loopx_core.authority import unlock\nunlock._undumpable()\n" if undumpable else "")
        + "print(os.getpid(), flush=True)\nsys.stdin.read()\n"
    )
    try:
        pid = int(holder.stdout.readline())
        reader = _as_a_user(
            "import ctypes, sys\n"
            f"try:\n    open('/proc/{pid}/mem', 'rb').close()\n    print('mem read')\nexcept OSError as e:\n    print('mem refused', e.errno)\n"
            f"libc = ctypes.CDLL(None, use_errno=True)\n"
            f"print('ptrace', libc.ptrace(16, {pid}, 0, 0), ctypes.get_errno())\n"  # PTRACE_ATTACH
        )
        out, err = reader.communicate(timeout=60)
    finally:
        holder.kill()
        holder.wait(timeout=60)
    if undumpable:
        assert "mem refused" in out and "ptrace -1" in out, (out, err)
    else:
        assert "mem read" in out, (out, err)
