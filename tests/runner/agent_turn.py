"""A scripted agent turn for the runner tests: the `shell` runtime's command.

It reads the continuation packet from stdin (and checks LOOPX_CONTEXT says the
same), finds "step N" in its next action, and does what the project's
``.plan.json`` says for that step (default: work) through the real CLI:

- ``work``: write ``out/step-N.txt``, write back "did step N" with it as an
  artifact and "step N+1" as the next action, under this turn's id;
- ``gate``: ask a person "may I go on after step N?", then write back;
- ``slow:S``: wait S seconds, then work;
- ``hang``: write its pid to ``.hang-<agent>.pid`` and sleep (until killed);
- ``hold``: create ``.held-<agent>``, wait until the test creates
  ``.let-go-<agent>`` (a turn in flight for as long as the test needs), then work;
- ``silent``: print a message with escape sequences and exit 3, writing nothing;
- ``spend:T``: work, reporting T tokens;
- ``daemon`` / ``daemon-hang``: first start a helper that leaves the turn the
  way sandbox helpers do (Claude Code's ``socat`` bridge: a double fork and
  ``setsid``, its parent gone) — ``socat`` listening on a socket where the
  machine has it, else ``sleep`` — and write its pid to
  ``.daemon-<agent>.pid``; then work (``daemon``) or hang (``daemon-hang``).

``.plan.json``: {"steps": {"N": action}, "agents": {"AGENT": {"N": action}}}.
"""

import json
import os
import re
import subprocess
import sys
import time

packet = sys.stdin.read()
if os.environ.get("LOOPX_CONTEXT") != packet:
    sys.exit(99)
if "LOOPX_KEY" in os.environ or "LOOPX_HUMAN" in os.environ:
    sys.exit(98)  # the person's key never reaches an agent's turn
card, agent, turn_id = os.environ["LOOPX_CARD"], os.environ["LOOPX_AGENT"], os.environ["LOOPX_TURN_ID"]
found = re.search(r"## Next action\n+step (\d+)", packet)
step = int(found.group(1)) if found else 1
try:
    with open(".plan.json") as fh:
        plan = json.load(fh)
except OSError:
    plan = {}
action = plan.get("agents", {}).get(agent, {}).get(str(step)) or plan.get("steps", {}).get(str(step)) or "work"
loopx = [sys.executable, "-m", "loopx_core"]


def writeback(summary, *extra):
    subprocess.run(
        loopx + ["writeback", card, "--summary", summary, "--next", f"step {step + 1}", "--turn-id", turn_id, *extra],
        check=True,
        stdout=subprocess.DEVNULL,
    )


def work(*extra):
    os.makedirs("out", exist_ok=True)
    path = f"out/step-{step}.txt"
    with open(path + ".tmp", "w") as fh:
        fh.write(f"{agent} did step {step} of {card}\n")
    os.replace(path + ".tmp", path)
    writeback(f"did step {step}", "--artifact", path, *extra)


def daemon():
    """A helper out of the turn's process group and session, its parent gone."""
    import shutil
    import tempfile

    socat = shutil.which("socat")
    argv = (
        ["socat", f"UNIX-LISTEN:{tempfile.gettempdir()}/loopx-test-{os.getpid()}.sock,fork,unlink-early", "/dev/null"]
        if socat
        else ["sleep", "600"]
    )
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            with open(f".daemon-{agent}.pid.tmp", "w") as fh:
                fh.write(str(os.getpid()))
            os.replace(f".daemon-{agent}.pid.tmp", f".daemon-{agent}.pid")
            devnull = os.open(os.devnull, os.O_RDWR)
            for fd in (0, 1, 2):
                os.dup2(devnull, fd)
            os.execvp(argv[0], argv)
        os._exit(0)
    os.wait()
    while not os.path.exists(f".daemon-{agent}.pid"):
        time.sleep(0.01)


if action.startswith("daemon"):
    daemon()
    action = "hang" if action == "daemon-hang" else "work"
if action == "work":
    work()
elif action == "gate":
    code = subprocess.run(
        loopx + ["gate", "ask", card, "--question", f"may I go on after step {step}?"], stdout=subprocess.DEVNULL
    ).returncode
    assert code == 6, code
    writeback(f"asked about step {step}")
elif action.startswith("slow:"):
    time.sleep(float(action[5:]))
    work()
elif action == "hang":
    with open(f".hang-{agent}.pid", "w") as fh:
        fh.write(str(os.getpid()))
    time.sleep(600)
elif action == "hold":
    open(f".held-{agent}", "w").close()
    deadline = time.monotonic() + 300
    while not os.path.exists(f".let-go-{agent}"):
        if time.monotonic() > deadline:
            sys.exit(4)
        time.sleep(0.02)
    work()
elif action == "silent":
    print("\x1b[31mboom\x1b[0m: the agent crashed \x07 on step", step, flush=True)
    print("Traceback: something \x1b]0;title\x07 went wrong", file=sys.stderr, flush=True)
    sys.exit(3)
elif action.startswith("spend:"):
    work("--tokens", action[6:])
else:
    sys.exit(f"unknown action {action!r}")
