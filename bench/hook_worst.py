"""Worst-case hook time: `loopx hook … pre-tool-use` on hostile 1 MB payloads.

Each payload is shaped to make a shell reader slow — deep `$(` nesting, a
million separators, backquotes, quotes, here-documents, thousands of distinct
paths, JSON nested a thousand levels, PowerShell, a huge patch — and sized just
under the 1,000,000-character limit on shell text, so the checker reads it
rather than refusing it for its size. Every run must end with a decision
(exit 0; a deny, or an empty answer for an allowed call) well inside the 30 s
the runtime gives the hook. Also: the Stop hook handed `/dev/zero` as its
transcript. Target: every case <= 2 s on this machine.

Usage: python bench/hook_worst.py [--runs N]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from common import compiled_env  # noqa: E402
from hook_bench import LOOPX  # noqa: E402

SIZE = 990_000


def fill(unit: str, head: str = "", tail: str = "") -> str:
    return head + unit * ((SIZE - len(head) - len(tail)) // len(unit)) + tail


def shapes(folder: Path) -> dict:
    paths = " ".join(f"src/f{i}.py" for i in range(SIZE // 12))
    return {
        "a;a;a; (commands)": ("Bash", {"command": fill("a;")}),
        "$( nested": ("Bash", {"command": fill("$(")}),
        "words": ("Bash", {"command": fill("w ")}),
        "one long word": ("Bash", {"command": fill("x")}),
        "backquotes": ("Bash", {"command": fill("`")}),
        "escaped backquotes": ("Bash", {"command": fill("`\\`")}),
        "quotes ''": ("Bash", {"command": fill("''")}),
        "$'\\x41' escapes": ("Bash", {"command": fill("\\x41", "echo $'", "'")}),
        "here-document": ("Bash", {"command": fill("git push $(x) `y`\n", "cat <<EOF > out.txt\n", "EOF\n")}),
        "newlines": ("Bash", {"command": fill("\n")}),
        "distinct paths": ("Bash", {"command": "cat " + paths[: SIZE - 4]}),
        "sh -c nesting": ("Bash", {"command": fill("sh -c '", tail="'")}),
        "PowerShell $(": ("PowerShell", {"command": fill("$(")}),
        "PowerShell words": ("PowerShell", {"command": fill("w ")}),
        "PowerShell blocks": ("PowerShell", {"command": fill("{")}),
        "JSON nested 400,000 deep": ("Bash", None),
        "apply_patch 1 MB": (
            "apply_patch",
            {"command": fill("*** Add File: docs/a.md\n+x\n", "*** Begin Patch\n", "*** End Patch\n")},
        ),
        "Write 1 MB": ("Write", {"file_path": str(folder / "big.txt"), "content": fill("x")}),
    }


def payload(folder: Path, tool: str, tool_input: dict | None) -> bytes:
    if tool_input is None:  # nested deeper than json.dumps itself can write
        return (
            '{"tool_name": "Bash", "cwd": %s, "tool_input": {"command": "ls", "x": %s}}'
            % (json.dumps(str(folder)), "[" * 400_000 + "]" * 400_000)
        ).encode()
    return json.dumps(
        {
            "session_id": "bench",
            "transcript_path": str(folder / "t.jsonl"),
            "cwd": str(folder),
            "permission_mode": "default",
            "hook_event_name": "PreToolUse",
            "tool_name": tool,
            "tool_input": tool_input,
            "tool_use_id": "toolu_worst",
        }
    ).encode()


def run(argv, env, cwd, stdin: bytes) -> tuple[float, int, bytes]:
    start = time.perf_counter()
    proc = subprocess.run(argv, env=env, cwd=cwd, input=stdin, capture_output=True, timeout=60)
    return (time.perf_counter() - start) * 1000, proc.returncode, proc.stdout


def decision(stdout: bytes) -> str:
    if not stdout.strip():
        return "allow"
    out = json.loads(stdout)
    return out.get("hookSpecificOutput", {}).get("permissionDecision") or out.get("decision") or "?"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        env = dict(compiled_env(), LOOPX_HUMAN="bench", LOOPX_AGENT="bench")
        env.pop("LOOPX_DB", None)
        setup = lambda *a: subprocess.run(
            LOOPX + list(a), env={**env, "LOOPX_AGENT": ""}, cwd=folder, check=True, capture_output=True
        )
        setup("init")
        setup("agent", "add", "bench")
        setup("card", "add", "bench card")
        setup("next", "--agent", "bench", "--claim")
        hook = LOOPX + ["hook", "claude-code", "pre-tool-use"]
        worst = ("", 0.0)
        print(f"{'payload':28s} {'bytes':>9s} {'median ms':>10s}  decision")
        for name, (tool, tool_input) in shapes(folder).items():
            data = payload(folder, tool, tool_input)
            times, answer = [], "?"
            for _ in range(args.runs):
                ms, code, out = run(hook, env, folder, data)
                if code != 0:
                    raise SystemExit(f"{name}: exit {code}")
                times.append(ms)
                answer = decision(out)
            med = statistics.median(times)
            print(f"{name:28s} {len(data):9,d} {med:10.0f}  {answer}")
            if med > worst[1]:
                worst = (name, med)
        stop = json.dumps(
            {
                "session_id": "bench",
                "transcript_path": "/dev/zero",
                "cwd": str(folder),
                "hook_event_name": "Stop",
                "stop_hook_active": False,
            }
        ).encode()
        ms, code, out = run(LOOPX + ["hook", "claude-code", "stop"], env, folder, stop)
        print(f"{'Stop, transcript /dev/zero':28s} {len(stop):9,d} {ms:10.0f}  {decision(out)} (exit {code})")
        if ms > worst[1]:
            worst = ("Stop, transcript /dev/zero", ms)
        print(f"worst case: {worst[0]}, {worst[1] / 1000:.2f} s (target <= 2 s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
