"""The agent guide's turn by hand (docs/guide/agents.md, "A turn, by hand"),
run as written: the newcomer sees the human loop the product is about — the gate waits for a person (exit 6), the person
answers at a terminal, and only then does the agent carry on."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

GUIDE = Path(__file__).resolve().parents[1] / "docs" / "guide" / "agents.md"


def quickstart_blocks() -> list[list[str]]:
    text = GUIDE.read_text()
    section = text[text.index("## A turn, by hand") :]
    section = section[: section.index("\n## ", 5)]
    blocks = []
    for body in re.findall(r"```bash\n(.*?)```", section, re.S):
        lines, current = [], ""
        for raw in body.splitlines():
            current += raw.rstrip("\\").rstrip() + " " if raw.endswith("\\") else raw
            if raw.endswith("\\"):
                continue
            command = re.sub(r"\s+#.*$", "", current).strip()
            current = ""
            if command and not command.startswith("#"):
                lines.append(command)
        blocks.append(lines)
    return blocks


def run_quickstart(tmp_path: Path, loopx: str) -> None:
    """Every block of the guide's turn, as a newcomer types it, with ``loopx`` meaning
    the command line ``loopx`` (an installed program, or this checkout's module)."""
    project = tmp_path / "project"
    project.mkdir(parents=True)
    (project / "README.md").write_text("the artifact the quick start reports\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("LOOPX_")}
    env.update(
        XDG_DATA_HOME=str(tmp_path / "data"), XDG_CONFIG_HOME=str(tmp_path / "config"), HOME=str(tmp_path / "home")
    )  # `init` makes the person's key here
    codes: dict[str, int] = {}
    setup, turn, person, after = quickstart_blocks()
    assert not any("--can" in line for line in setup), "the quick start must not pre-approve the scope it asks for"

    def run(block, *, tty: bool = False, env=env) -> None:
        env = dict(env)
        for line in block:
            if line.startswith("export "):
                name, value = line[len("export ") :].split("=", 1)
                env[name] = value
                continue
            command = re.sub(r"^loopx\b", loopx, line)
            argv = ["script", "-qec", command, "/dev/null"] if tty else ["bash", "-c", command]
            proc = subprocess.run(argv, cwd=project, env=env, capture_output=True, text=True, timeout=120)
            codes[line.split()[1] + (" " + line.split()[2] if line.split()[1] == "gate" else "")] = proc.returncode
            assert proc.returncode in (0, 6), (line, proc.returncode, proc.stdout, proc.stderr)
        return env

    run(setup)
    agent_env = run(turn)
    assert codes["gate ask"] == 6  # pending: nobody approved it behind the person's back
    run(person, tty=True)  # the person, at a terminal, without the agent's identity
    assert codes["gate answer"] == 0
    run(after, env=agent_env)
    assert codes["gate status"] == 0 and codes["done"] == 0


def test_the_quick_start_shows_the_human_loop(tmp_path):
    run_quickstart(tmp_path, f"{shlex.quote(sys.executable)} -m loopx_core")
