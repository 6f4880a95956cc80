"""Phone benchmark (DESIGN §11 "A phone", issue #43): from a tap on the
phone's page to the waiting runner's next turn.

A real ``loopx serve`` and a real shell runner whose every turn asks a gate;
Debian's chromium headless (tests/phone/cdp.py) with a virtual passkey,
paired by a real ``loopx phone pair``, taps Approve 1.5–3 s after the runner
fell asleep on the gate. Prints, for this machine, the median and p95 of:
- tap → answer recorded: the page's challenge, the passkey's assertion, its
  check and the signed ``gate_answered`` event;
- tap → turn started: until the runner's ``turn_started`` event.
Goal (#43): p95 under a second on loopback. Not an assertion: a measurement.

Usage: python bench/phone_bench.py [--samples 20]   (needs chromium)
"""

from __future__ import annotations

import argparse
import json
import random
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import person_env

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

TURN = r"""
import os, subprocess, sys
card = os.environ["LOOPX_CARD"]
loopx = [sys.executable, "-m", "loopx_core"]
subprocess.run(loopx + ["gate", "ask", card, "--question", "go on?"], stdout=subprocess.DEVNULL)
subprocess.run(loopx + ["writeback", card, "--summary", "asked"], check=True, stdout=subprocess.DEVNULL)
"""


def listen(folder: Path, env: dict, *argv: str, pattern: str) -> tuple[subprocess.Popen, str]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "loopx_core", "--json", *argv, "--port", "0"],
        cwd=folder,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stderr is not None
    for line in proc.stderr:
        found = re.search(pattern, line)
        if found:
            return proc, found.group(1)
    raise SystemExit(f"`loopx {' '.join(argv)}` printed no address")


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=20)
    args = parser.parse_args()
    from tests.phone import cdp

    if cdp.chromium_path() is None:
        raise SystemExit("needs Debian's chromium (apt-get install chromium)")
    with tempfile.TemporaryDirectory(prefix="loopx-phone-bench-") as tmp:
        folder = Path(tmp)
        env = dict(person_env(folder), LOOPX_DB=str(folder / ".loopx" / "board.db"))
        from loopx_core.authority import keys

        keys.create(Path(env["LOOPX_KEY"]), "bench", None)

        def loopx(*argv: str) -> None:
            subprocess.run(
                [sys.executable, "-m", "loopx_core", *argv], cwd=folder, env=env, check=True, stdout=subprocess.DEVNULL
            )

        loopx("init", "--objective", "phone bench")
        loopx("agent", "add", "a1")
        loopx("card", "add", "asks every turn", "--owner", "a1")
        (folder / "turn.py").write_text(TURN)
        import os

        os.environ.update({k: v for k, v in env.items() if k.startswith(("LOOPX_", "XDG_"))})
        from loopx_core.store import events
        from loopx_core.store.backends import Store
        from loopx_core.store.discovery import parse_target
        from loopx_core.store.models import Runner

        store = Store.open(parse_target(env["LOOPX_DB"], "env"))
        with cdp.browser() as page:
            page.add_authenticator()
            pairing, url = listen(folder, env, "phone", "pair", pattern=r"(http://localhost:\d+/pair#t=\S+)")
            page.goto(url)
            page.evaluate("document.querySelector('button[data-pair]').click()", gesture=True)
            page.wait_for("document.getElementById('msg').textContent.startsWith('paired')")
            pairing.wait(60)
            server, page_url = listen(folder, env, "serve", pattern=r"(http://localhost:\d+/)")
            runner = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "loopx_core",
                    "run",
                    "--agent",
                    "a1",
                    "--runtime",
                    "shell",
                    "--",
                    sys.executable,
                    "turn.py",
                ],
                cwd=folder,
                env=env,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            recorded, started = [], []
            try:
                for _ in range(args.samples):
                    end = time.monotonic() + 120
                    while True:
                        with store.read():
                            row = Runner.get_or_none(Runner.agent == "a1")
                        if row is not None and row.state == "waiting" and row.gate:
                            break
                        if time.monotonic() > end:
                            raise SystemExit("the runner never waited on a gate")
                        time.sleep(0.01)
                    gate = f"G-{row.gate}"
                    time.sleep(random.uniform(1.5, 3.0))
                    with store.read():
                        seq = store.max_seq()
                    page.goto(page_url)
                    tapped = time.time()
                    selector = json.dumps('button.yes[data-gate="' + gate + '"]')
                    page.evaluate(f"document.querySelector({selector}).click()", gesture=True)
                    end = time.monotonic() + 120
                    while True:
                        with store.read():
                            found = events.since(seq)
                        answer = next((e for e in found if e.kind == "gate_answered"), None)
                        turn = next((e for e in found if e.kind == "turn_started"), None)
                        if answer is not None and turn is not None:
                            break
                        if time.monotonic() > end:
                            raise SystemExit(f"no turn after the tap: {page.message()}")
                        time.sleep(0.005)
                    recorded.append(answer.at - tapped)
                    started.append(turn.at - tapped)
            finally:
                for proc in (runner, server):
                    proc.terminate()
                    proc.wait(60)
                store.close()
    for name, values in (("tap → answer recorded", recorded), ("tap → turn started", started)):
        print(
            f"{name}: p50 {statistics.median(values) * 1000:.0f} ms, p95 {percentile(values, 95) * 1000:.0f} ms "
            f"(n={len(values)})"
        )


if __name__ == "__main__":
    main()
