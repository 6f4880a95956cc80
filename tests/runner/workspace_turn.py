"""A scripted agent turn for the workspace tests (issue #26): the `shell` runtime's command.

Runs in the folder the runner starts it in (the card's workspace). ``argv[1]``:

- ``edit``: write ``shared.txt`` saying who wrote it, read it back, write back
  what it read (the summary) — two agents doing this at once must each read
  their own;
- ``half``: write ``half.txt`` and change ``README.md``, then write its pid to
  ``$HALF_PID_FILE`` and sleep until killed (a turn killed mid-way with uncommitted edits);
- ``resume``: write back what ``half.txt`` and ``README.md`` hold (the next turn
  resumes from the killed one's edits), and where it ran;
- ``plant``: a program (not git) writing into the repository's shared git folder
  what a turn must not create there (issue #38: the sandbox cannot deny a path
  that does not exist yet), then committing its own work on its branch;
- ``finish``: the whole card — write ``<card>.txt``, commit it, write back,
  ``loopx done`` (the card then waits on the person's merge).
"""

import os
import subprocess
import sys
import time

card, agent, turn_id = os.environ["LOOPX_CARD"], os.environ["LOOPX_AGENT"], os.environ["LOOPX_TURN_ID"]
loopx = [sys.executable, "-m", "loopx_core"]


def writeback(summary: str) -> None:
    subprocess.run(
        loopx + ["writeback", card, "--summary", summary, "--turn-id", turn_id], check=True, stdout=subprocess.DEVNULL
    )


def read(name: str) -> str:
    try:
        with open(name) as fh:
            return fh.read().strip()
    except OSError:
        return "(missing)"


action = sys.argv[1]
if action == "edit":
    with open("shared.txt", "w") as fh:
        fh.write(f"written by {agent}\n")
    time.sleep(0.5)  # the other agent writes its own shared.txt meanwhile, in its own workspace
    writeback(f"read back: {read('shared.txt')} in {os.getcwd()}")
elif action == "half":
    with open("half.txt", "w") as fh:
        fh.write(f"half done by {agent}\n")
    with open("README.md", "a") as fh:
        fh.write(f"edited by {agent}\n")
    with open(os.environ["HALF_PID_FILE"], "w") as fh:
        fh.write(str(os.getpid()))
    while True:
        time.sleep(1)
elif action == "resume":
    writeback(f"half.txt: {read('half.txt')} | README: {read('README.md').replace(chr(10), ' / ')} | cwd {os.getcwd()}")
elif action == "finish":
    with open(f"{card}.txt", "w") as fh:
        fh.write(f"{card} by {agent}\n")
    subprocess.run(["git", "add", f"{card}.txt"], check=True)
    subprocess.run(
        [
            "git",
            "-c",
            "user.name=agent",
            "-c",
            "user.email=agent@example.invalid",
            "commit",
            "-q",
            "-m",
            f"finish {card}",
        ],
        check=True,
    )
    writeback(f"finished {card}")
    subprocess.run(loopx + ["done", card, "--summary", f"finished {card}"], check=True, stdout=subprocess.DEVNULL)
elif action == "plant":
    common = subprocess.run(
        ["git", "rev-parse", "--path-format=absolute", "--git-common-dir"], check=True, capture_output=True, text=True
    ).stdout.strip()
    head = subprocess.run(["git", "rev-parse", "HEAD"], check=True, capture_output=True, text=True).stdout.strip()
    for rel, text in (
        ("MERGE_HEAD", "0" * 40),
        ("shallow", head),
        ("refs/stash", head),
        ("logs/refs/stash", f"{'0' * 40} {head} agent <a@x> 0 +0000\tWIP on main: planted\n"),
        ("refs/heads/evil", head),
        ("refs/heads/loopx/LX-99", head),
        ("refs/heads/loopx/LX-99x/deep", head),
    ):
        path = os.path.join(common, *rel.split("/"))
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as fh:
            fh.write(text if text.endswith("\n") else text + "\n")
    with open(f"{card}.txt", "w") as fh:
        fh.write("own work\n")
    subprocess.run(["git", "add", f"{card}.txt"], check=True)
    subprocess.run(
        ["git", "-c", "user.name=agent", "-c", "user.email=agent@example.invalid", "commit", "-q", "-m", "own work"],
        check=True,
    )
    writeback("planted")
