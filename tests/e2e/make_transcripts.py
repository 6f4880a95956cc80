"""Regenerate the real-transcript fixtures in tests/adapters/fixtures/real/.

Runs one short session per pinned runtime against the scripted model (claim,
a background shell command, a writeback, the end of the turn, then — on Claude
Code — the background task's notice), copies the transcript the binary wrote
and scrubs it: temp paths become /project and /home/user, long strings are cut.

    .venv/bin/python -m tests.e2e.make_transcripts
"""

from __future__ import annotations

import json
import re
import tempfile
from pathlib import Path

from .harness import ALL, Project
from .model_server import Call, Say, ScriptedModel

OUT = Path(__file__).resolve().parents[1] / "adapters" / "fixtures" / "real"
NAMES = {"claude-code": "claude-2.1.197.jsonl", "claude-sdk": "claude-2.1.335.jsonl", "codex": "codex-0.171.0.jsonl"}
LONGEST = 240


def steps(runtime):
    work = [runtime.tool("next", claim=True)]
    if runtime.name == "codex":
        work.append(runtime.shell("echo working"))
    else:
        work.append(
            Call(
                "Bash",
                {
                    "command": "sleep 0.3; echo background-finished",
                    "description": "background work",
                    "run_in_background": True,
                },
            )
        )
    work += [runtime.tool("writeback", card="LX-1", summary="Started the work"), Say("Turn done.")]
    if runtime.name != "codex":
        work.append(Say("Saw the background notice."))
    return work


def scrub(value, subs):
    if isinstance(value, dict):
        return {k: scrub(v, subs) for k, v in value.items()}
    if isinstance(value, list):
        return [scrub(v, subs) for v in value]
    if isinstance(value, str):
        for old, new in subs:
            value = value.replace(old, new)
        return value if len(value) <= LONGEST else value[:LONGEST] + "…[cut]"
    return value


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    base = Path(tempfile.mkdtemp(prefix="loopx-transcripts-"))
    for runtime in ALL:
        project = Project(base / runtime.name)
        try:
            project.init(runtime.setup, "agent-1")
            project.card("Fix the date parser")
            with ScriptedModel() as model:
                session = runtime.run(project, model, steps(runtime))
            assert session.code == 0, session.explain()
            found = sorted(project.home.glob(".claude/projects/*/*.jsonl")) + sorted(
                project.home.glob(".codex/sessions/**/*.jsonl")
            )
            subs = [
                (str(project.home), "/home/user"),
                (str(project.root), "/project"),
                (re.sub(r"[^A-Za-z0-9]", "-", str(project.root)), "-project"),
                ("/tmp/claude-0", "/tmp/claude"),
            ]
            lines = [
                json.dumps(scrub(json.loads(line), subs), ensure_ascii=False)
                for line in found[0].read_text().splitlines()
                if line.strip()
            ]
            (OUT / NAMES[runtime.name]).write_text("\n".join(lines) + "\n")
            print(f"{runtime.name}: {len(lines)} lines → {OUT / NAMES[runtime.name]}")
        finally:
            project.close()


if __name__ == "__main__":
    main()
