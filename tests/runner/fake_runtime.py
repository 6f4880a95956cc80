"""A stand-in for the real ``claude`` / ``codex`` binaries that replays what
they really printed, for the runner's stream tests.

The fixtures in ``fixtures/`` were captured from the pinned npm packages
(Claude Code 2.1.197, Codex 0.171.0 — PITFALLS "The real runtimes") driven
offline by the e2e suite's scripted model server on 127.0.0.1: one Bash tool
call, then a text answer, with known usage (1200 input + 1000 cache read + 50
cache write + 40 output, then 1300 + 1200 cache read + 15 output). Each
``claude -p … --output-format stream-json --verbose`` / ``codex exec --json``
run here prints that stream line by line and writes the session's transcript
(Claude Code: ``$HOME/.claude/projects/<folder>/<session>.jsonl``; Codex: the
rollout under ``$CODEX_HOME/sessions/…``) as the real one does, under a new
session id.

What it does besides is read from ``.fake.json`` in its working folder:
``hang_after`` (stream line index after which it sleeps until killed),
``writeback`` (write back before the end), ``stop_hook_after`` (Claude Code:
run the real ``loopx hook claude-code stop`` with the transcript written up to
that transcript line, as a configured Stop hook would while the transcript is
still being written), ``no_transcript`` (write none).

Usage: ``fake_runtime.py claude|codex ARGS…`` (the runner's arguments follow).
"""

import json
import os
import subprocess
import sys
import time
import uuid
from pathlib import Path

HERE = Path(__file__).resolve().parent / "fixtures"
kind = sys.argv[1]
try:
    config = json.loads(Path(".fake.json").read_text())
except OSError:
    config = {}
with open(".fake-args.json", "w") as fh:  # what the runner asked for (a test reads it)
    json.dump(sys.argv[2:], fh)
with open(".fake.pid", "w") as fh:
    fh.write(str(os.getpid()))
session = str(uuid.uuid4())
home = Path(os.environ["HOME"])
loopx = [sys.executable, "-m", "loopx_core"]


def lines(name):
    return [line for line in (HERE / name).read_text().splitlines() if line.strip()]


def replace_session(line, old):
    return line.replace(old, session)


def writeback():
    card, turn = os.environ["LOOPX_CARD"], os.environ["LOOPX_TURN_ID"]
    subprocess.run(
        loopx + ["writeback", card, "--summary", f"the {kind} turn did its work", "--turn-id", turn],
        check=True,
        stdout=subprocess.DEVNULL,
    )


def hang():
    time.sleep(600)


if kind == "claude":
    stream = lines("claude-2.1.197.stream.jsonl")
    old = json.loads(stream[0])["session_id"]
    transcript = [replace_session(line, old) for line in lines("claude-2.1.197.transcript.jsonl")]
    folder = home / ".claude" / "projects" / "-project"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{session}.jsonl"
    written = 0
    lag = config.get("stop_hook_after")  # the transcript lags behind the stream until the Stop hook ran

    def write_transcript(upto):
        global written
        if config.get("no_transcript"):
            return
        if lag is not None:
            upto = min(upto, lag)
        with open(path, "a") as fh:
            for line in transcript[written:upto]:
                fh.write(line + "\n")
        written = max(written, upto)

    assistants = [i for i, line in enumerate(transcript) if json.loads(line).get("type") == "assistant"]
    for i, line in enumerate(stream):
        event = json.loads(line)
        if event.get("type") == "assistant":  # the transcript holds each call once its message is done
            write_transcript(assistants.pop(0) + 1)
        if event.get("type") == "result":
            if config.get("writeback"):
                writeback()
            if "stop_hook_after" in config:
                write_transcript(config["stop_hook_after"])
                payload = {
                    "session_id": session,
                    "transcript_path": str(path),
                    "cwd": os.getcwd(),
                    "hook_event_name": "Stop",
                    "stop_hook_active": False,
                }
                subprocess.run(
                    loopx + ["hook", "claude-code", "stop"],
                    input=json.dumps(payload),
                    text=True,
                    check=True,
                    capture_output=True,
                )
                lag = None
            write_transcript(len(transcript))
        print(replace_session(line, old), flush=True)
        if config.get("hang_after") == i:
            hang()
        time.sleep(0.05)
elif kind == "codex":
    stream = lines("codex-0.171.0.stream.jsonl")
    old = json.loads(stream[0])["thread_id"]
    rollout = [replace_session(line, old) for line in lines("codex-0.171.0.rollout.jsonl")]
    folder = Path(os.environ.get("CODEX_HOME") or home / ".codex") / "sessions" / "2026" / "12" / "03"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"rollout-2026-12-03T19-58-18-{session}.jsonl"
    counts = [i for i, line in enumerate(rollout) if '"token_count"' in line]
    for i, line in enumerate(stream):
        event = json.loads(line)
        if event.get("type") == "item.completed" and event["item"].get("type") == "command_execution":
            upto = counts[0] + 1  # the first model call's usage is in the rollout
        elif event.get("type") == "turn.completed":
            if config.get("writeback"):
                writeback()
            upto = len(rollout)
        else:
            upto = None
        if upto is not None and not config.get("no_transcript"):
            with open(path, "w") as fh:
                fh.write("".join(r + "\n" for r in rollout[:upto]))
        print(replace_session(line, old), flush=True)
        if config.get("hang_after") == i:
            hang()
        time.sleep(0.05)
else:
    sys.exit(f"unknown runtime {kind}")
