"""``loopx demo --script``: one agent turn cycle on a throwaway board, run
through the real CLI, printing each command and what it answered (with
``--json``: one JSON object holding every step, printed at the end)."""

from __future__ import annotations

import json
import shlex
import subprocess
import tempfile
from pathlib import Path

from ..rules import spawn

TYPE_CHECKING = False  # (annotations only; checkers read this as typing's)
if TYPE_CHECKING:
    from ..authority.keys import Person

STEPS: list[tuple[str, str, dict]] = [
    ("set up a board", "loopx init --objective 'Ship the login page'", {}),
    ("register two agents", "loopx agent add claude-1 --runtime claude-code --can git:push", {}),
    ("", "loopx agent add codex-1 --runtime codex", {}),
    (
        "add cards (one needs a deploy permission; one waits on another)",
        "loopx card add 'Write the login form' --max-turns 5 --next 'sketch the form'",
        {},
    ),
    ("", "loopx card add 'Deploy to staging' --needs deploy:staging --after LX-1", {}),
    ("an agent's pre-turn check claims the best ready card", "loopx next --agent claude-1 --claim", {}),
    ("it reads its continuation", "loopx context LX-1", {}),
    (
        "it works, then writes back evidence with an artifact and todos",
        "loopx writeback LX-1 --agent claude-1 --summary 'Form markup and validation' --artifact src/login.html --todo-add 'add tests' --next 'write the tests' --tokens 5400 --usd 0.03 --turn-id turn-1",
        {},
    ),
    (
        "a retry of the same turn is a no-op",
        "loopx writeback LX-1 --agent claude-1 --summary 'Form markup and validation' --artifact src/login.html --todo-add 'add tests' --next 'write the tests' --tokens 5400 --usd 0.03 --turn-id turn-1",
        {},
    ),
    ("a second agent cannot take the held card", "loopx claim LX-1 --agent codex-1", {}),
    ("the first agent finishes", "loopx done LX-1 --agent claude-1 --summary 'Login form done, tests pass'", {}),
    (
        "the deploy card is unblocked; codex claims it and is stopped at a gate",
        "loopx next --agent codex-1 --claim",
        {},
    ),
    ("a human answers the gate (in the board: y)", "@approve G-1", {}),
    ("codex goes on", "loopx next --agent codex-1", {}),
    ("", "loopx writeback LX-2 --agent codex-1 --summary 'Deployed build 42 to staging' --tokens 2100", {}),
    ("", "loopx done LX-2 --agent codex-1 --summary 'Staging is live'", {}),
    ("the board", "loopx board --text", {}),
]


def run_script(keep: str | None = None, *, as_json: bool = False) -> int:
    folder = Path(keep) if keep else Path(tempfile.mkdtemp(prefix="loopx-demo-"))
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "src").mkdir(exist_ok=True)
    (folder / "src" / "login.html").write_text("<form id='login'>…</form>\n")
    from .runner import KEY_FILE, demo_person

    person = demo_person(folder)  # the demo's throwaway key: its person is "you"
    env = spawn.person_env(
        LOOPX_DB=str(folder / ".loopx" / "board.db"),
        LOOPX_KEY=str(folder / ".loopx" / KEY_FILE),
        XDG_CONFIG_HOME=str(folder / ".config"),
    )
    env.pop("LOOPX_AGENT", None)
    say = (lambda *_: None) if as_json else print
    steps = []
    say(f"LoopX demo — a throwaway board in {folder}\n")
    for title, command, _ in STEPS:
        if title:
            say(f"\n## {title}")
        if command.startswith("@approve"):
            said = _approve(env, command.split()[1], person)
            say(f"  {said}")
            steps.append({"step": title, "command": command, "exit": 0, "output": said})
            continue
        argv = shlex.split(command)
        say(f"$ {command}")
        proc = subprocess.run(spawn.loopx_argv(*argv[1:]), cwd=folder, env=env, capture_output=True, text=True)
        output = (proc.stdout + proc.stderr).rstrip()
        if output:
            say("\n".join("  " + line for line in output.splitlines()))
        say(f"  (exit {proc.returncode})")
        steps.append({"step": title, "command": command, "exit": proc.returncode, "output": output})
    reopen = f"LOOPX_DB={env['LOOPX_DB']} loopx"
    if as_json:
        print(json.dumps({"demo": "script", "board": env["LOOPX_DB"], "reopen": reopen, "steps": steps}))
    say(f"\nDone. Open this board live with:  {reopen}")
    say("Or watch simulated agents at work:  loopx demo")
    return 0


def _approve(env: dict, gate: str, person: Person) -> str:
    """What the board does when you press y: the gate operator, as a human."""
    from ..ops.gates import answer
    from ..rules import ids
    from ..store.backends import Store
    from ..store.discovery import parse_target

    store = Store.open(parse_target(env["LOOPX_DB"], "flag"))
    try:
        g, card = answer(store, ids.parse(ids.GATE, gate), "approve", person, note="looks good")
    finally:
        store.close()
    return f"you pressed y: {g.key} {g.status} by {g.answered_by}; {card.key} is {card.status}"
