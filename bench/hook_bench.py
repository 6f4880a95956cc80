"""Hook benchmark: what the PreToolUse hook costs on every tool call.

Prints the cold-process median of `loopx hook claude-code pre-tool-use` for
- a safe call (Bash `ls -la`: decided before the board is opened),
- a dangerous call (Bash `git push`, retried while its gate is pending: the
  hook reads the board and denies with the same gate),
- the same dangerous call once a human approved the gate (allowed),
- with --phone (needs chromium): the call of a second agent whose gate was
  approved on the phone (a passkey paired by a real ``loopx phone pair``, a tap
  on ``loopx serve``), its WebAuthn assertion checked on every call; with
  --before DIR also the same call checked by the LoopX source in DIR (e.g. an
  older commit's ``git archive``), every hook run as ``python -I -c`` with that
  tree first on sys.path,
each as a ratio to the floor: a bare python process that opens the SQLite board
and runs one query. Runs are interleaved so machine noise hits all alike.
Target: the allow path (a safe call) <= 1.5x the floor (#16), the others <= 2x.

Usage: python bench/hook_bench.py [--runs N] [--phone [--before DIR]]
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

from common import person_env

from loopx_core.rules.spawn import loopx_argv

HERE = Path(__file__).resolve().parent
LOOPX = loopx_argv()  # what the hook command `init` writes runs: the interpreter, isolated


def payload(folder: Path, command: str) -> bytes:
    return json.dumps(
        {
            "session_id": "bench-session",
            "transcript_path": str(folder / "transcript.jsonl"),
            "cwd": str(folder),
            "permission_mode": "default",
            "hook_event_name": "PreToolUse",
            "tool_name": "Bash",
            "tool_input": {"command": command, "description": "bench"},
            "tool_use_id": "toolu_bench",
        }
    ).encode()


def timed(argv, env, cwd, stdin: bytes | None = None) -> tuple[float, bytes]:
    start = time.perf_counter()
    proc = subprocess.run(argv, env=env, cwd=cwd, input=stdin, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    return (time.perf_counter() - start) * 1000, proc.stdout


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=21)
    ap.add_argument("--phone", action="store_true", help="also a call allowed by a gate approved on a phone")
    ap.add_argument("--before", metavar="DIR", help="with --phone: also that call checked by the LoopX source in DIR")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        env = person_env(folder)
        env.pop("LOOPX_AGENT", None)
        env.pop("LOOPX_DB", None)
        run = lambda *a, **kw: subprocess.run(
            LOOPX + list(a), env=env, cwd=folder, check=True, capture_output=True, **kw
        )
        run("init")
        run("agent", "add", "bench")
        run("card", "add", "bench card")
        run("next", "--agent", "bench", "--claim")
        hook_env = dict(env, LOOPX_AGENT="bench")
        hook = LOOPX + ["hook", "claude-code", "pre-tool-use"]
        safe, danger = payload(folder, "ls -la"), payload(folder, "git push origin main")
        out = subprocess.run(hook, env=hook_env, cwd=folder, input=danger, capture_output=True, check=True).stdout
        assert b'"deny"' in out, out  # opens G-1
        board = folder / ".loopx" / "board.db"
        floor = [
            sys.executable,
            "-c",
            f"import sqlite3\nc=sqlite3.connect({str(board)!r})\nc.execute('select count(*) from card').fetchone()",
        ]

        def rounds(cases: dict, n: int) -> dict:
            times = {name: [] for name in cases}
            for i in range(n + 2):
                for name, (argv, e, stdin, expect) in cases.items():
                    ms, stdout = timed(argv, e, folder, stdin)
                    if expect is not None and expect not in stdout:
                        raise SystemExit(f"{name}: unexpected output {stdout[:200]!r}")
                    if i >= 2:  # warm the page cache and .pyc files first
                        times[name].append(ms)
            return {k: statistics.median(v) for k, v in times.items()}

        pending = rounds(
            {
                "floor": (floor, env, None, None),
                "safe": (hook, hook_env, safe, None),
                "dangerous (gate pending: deny)": (hook, hook_env, danger, b'"deny"'),
            },
            args.runs,
        )
        gate_env = dict(env)
        subprocess.run(
            LOOPX + ["gate", "answer", "G-1", "approve"], env=gate_env, cwd=folder, check=False, capture_output=True
        )
        approved_ok = (
            b'"allow"' in subprocess.run(hook, env=hook_env, cwd=folder, input=danger, capture_output=True).stdout
        )
        approved = (
            rounds(
                {
                    "floor": (floor, env, None, None),
                    "dangerous (gate approved: allow)": (hook, hook_env, danger, b'"allow"'),
                },
                args.runs,
            )
            if approved_ok
            else {}
        )
        print(f"floor (python + sqlite open + one query): {pending['floor']:.1f} ms median of {args.runs}")
        for name, ms in pending.items():
            if name != "floor":
                print(
                    f"pre-tool-use, {name}: {ms:.1f} ms = {ms / pending['floor']:.2f}x floor (target <= {'1.5' if name == 'safe' else '2'}x)"
                )
        for name, ms in approved.items():
            if name != "floor":
                print(f"pre-tool-use, {name}: {ms:.1f} ms = {ms / approved['floor']:.2f}x floor (target <= 2x)")
        if not approved_ok:
            print("(approved case skipped: `script` is needed to answer the gate from a pseudo-terminal)")
        if args.phone:
            run("agent", "add", "bench2")
            run("card", "add", "phone card")
            run("next", "--agent", "bench2", "--claim")
            phone_env = dict(env, LOOPX_AGENT="bench2")
            out = subprocess.run(hook, env=phone_env, cwd=folder, input=danger, capture_output=True).stdout
            assert b'"deny"' in out, out  # opens G-2
            approve_on_phone(folder, env, "G-2")
            cases = {
                "floor": (floor, env, None, None),
                "dangerous (gate approved: allow)": (tree_hook(HERE.parent), hook_env, danger, b'"allow"'),
                "dangerous (gate approved on a phone: allow)": (tree_hook(HERE.parent), phone_env, danger, b'"allow"'),
            }
            if args.before:
                import compileall

                compileall.compile_dir(str(Path(args.before) / "loopx_core"), quiet=1)
                cases["the same, checked by --before"] = (tree_hook(Path(args.before)), phone_env, danger, b'"allow"')
            phone = rounds(cases, args.runs)
            print(f"--phone, floor: {phone['floor']:.1f} ms (each hook as `python -I -c`, its tree first on sys.path)")
            for name, ms in phone.items():
                if name != "floor":
                    print(f"pre-tool-use, {name}: {ms:.1f} ms = {ms / phone['floor']:.2f}x floor")
    return 0


def tree_hook(tree: Path) -> list[str]:
    """The PreToolUse hook run from the LoopX source at ``tree``."""
    code = f"import sys\nsys.path.insert(0, {str(tree)!r})\nfrom loopx_core.cli.main import entry\nentry()"
    return [sys.executable, "-I", "-c", code, "hook", "claude-code", "pre-tool-use"]


def approve_on_phone(folder: Path, env: dict, gate: str) -> None:
    """Pair a passkey (chromium's virtual authenticator) and approve ``gate`` with it on ``loopx serve``."""
    import re

    sys.path.insert(0, str(HERE.parent))
    from tests.phone import cdp

    if cdp.chromium_path() is None:
        raise SystemExit("--phone needs Debian's chromium (apt-get install chromium)")
    env = dict(env, LOOPX_DB=str(folder / ".loopx" / "board.db"))

    def listen(*argv: str, pattern: str) -> tuple[subprocess.Popen, str]:
        proc = subprocess.Popen(
            LOOPX + ["--json", *argv, "--port", "0"],
            cwd=folder,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        assert proc.stderr is not None
        for line in proc.stderr:
            found = re.search(pattern, line.decode())
            if found:
                return proc, found.group(1)
        raise SystemExit(f"`loopx {' '.join(argv)}` printed no address")

    with cdp.browser() as page:
        page.add_authenticator()
        pairing, url = listen("phone", "pair", pattern=r"(http://localhost:\d+/pair#t=\S+)")
        page.goto(url)
        page.evaluate("document.querySelector('button[data-pair]').click()", gesture=True)
        page.wait_for("document.getElementById('msg').textContent.startsWith('paired')")
        pairing.wait(60)
        server, page_url = listen("serve", pattern=r"(http://localhost:\d+/)")
        try:
            page.goto(page_url)
            page.evaluate(f"document.querySelector('button.yes[data-gate=\"{gate}\"]').click()", gesture=True)
            page.wait_for("document.getElementById('msg').textContent.includes('✓')")
        finally:
            server.terminate()
            server.wait(60)


if __name__ == "__main__":
    sys.exit(main())
