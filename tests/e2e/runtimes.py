"""The real runtimes the e2e suite drives, installed from npm and pinned exactly.

``tests/e2e/runtimes/package.json`` + ``package-lock.json`` pin
``@anthropic-ai/claude-code``, ``@anthropic-ai/claude-agent-sdk`` (its bundled
CLI is a newer Claude Code) and ``@openai/codex``. ``install()`` runs ``npm ci``
into ``.cache/runtimes/`` only when the lock changed since the last install (a
stamp holds the lock's sha256), so reruns cost nothing. ``./dev runtimes`` and
``./dev test`` call it: ``python tests/e2e/runtimes.py``.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PINS = Path(__file__).resolve().parent / "runtimes"
CACHE = REPO / ".cache" / "runtimes"
STAMP = CACHE / ".lock-sha256"
MODULES = CACHE / "node_modules"

# name → (binary inside node_modules, what it is)
BINARIES = {
    "claude-code": ("@anthropic-ai/claude-code/bin/claude.exe", "Claude Code 2.1.197 (@anthropic-ai/claude-code)"),
    "claude-sdk": (
        "@anthropic-ai/claude-agent-sdk-linux-x64/claude",
        "Claude Code 2.1.335 (the CLI inside @anthropic-ai/claude-agent-sdk 0.3.335)",
    ),
    "codex": ("@openai/codex/bin/codex.js", "Codex 0.171.0 (@openai/codex)"),
}
SKIP_ENV = "LOOPX_E2E_SKIP"  # =1: skip the e2e suite (local quick runs only; prints a loud warning)


def lock_digest() -> str:
    return hashlib.sha256((PINS / "package-lock.json").read_bytes() + (PINS / "package.json").read_bytes()).hexdigest()


def installed() -> bool:
    return (
        STAMP.exists()
        and STAMP.read_text().strip() == lock_digest()
        and all((MODULES / rel).exists() for rel, _ in BINARIES.values())
    )


def install(out=sys.stderr) -> None:
    """npm ci into the cache when the lock changed. Raises RuntimeError with the reason."""
    if installed():
        return
    npm = shutil.which("npm")
    if npm is None:
        raise RuntimeError("npm is not on PATH: install Node.js ≥ 18 and npm (Debian: apt-get install nodejs npm)")
    CACHE.mkdir(parents=True, exist_ok=True)
    for name in ("package.json", "package-lock.json"):
        shutil.copyfile(PINS / name, CACHE / name)
    out.write(f"installing the pinned runtimes into {CACHE} (npm ci)…\n")
    proc = subprocess.run(
        [npm, "ci", "--no-audit", "--no-fund", "--loglevel=error"],
        cwd=CACHE,
        capture_output=True,
        text=True,
        timeout=900,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"npm ci failed (exit {proc.returncode}):\n{proc.stdout[-2000:]}{proc.stderr[-4000:]}")
    missing = [rel for rel, _ in BINARIES.values() if not (MODULES / rel).exists()]
    if missing:
        raise RuntimeError(
            f"npm ci finished but these binaries are missing: {', '.join(missing)} (an optional platform package did not install?)"
        )
    STAMP.write_text(lock_digest() + "\n")


def binary(name: str) -> Path:
    return MODULES / BINARIES[name][0]


def problem() -> str | None:
    """Why the runtimes cannot be used here, or None."""
    if not installed():
        return f"the pinned runtimes are not installed in {CACHE} (or the lock changed): run ./dev runtimes"
    for name, (rel, what) in BINARIES.items():
        path = MODULES / rel
        if not os.access(path, os.X_OK):
            return f"{what} at {path} is not executable"
        home = CACHE / "version-check-home"  # not /tmp: Codex refuses its helper links there
        env = dict(os.environ, HOME=str(home), CODEX_HOME=str(home / ".codex"))
        try:
            proc = subprocess.run(
                [str(path), "--version"], capture_output=True, text=True, timeout=60, env=env, stdin=subprocess.DEVNULL
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            return f"{what} at {path} does not run: {exc}"
        if proc.returncode != 0:
            return f"{what} at {path} does not run (exit {proc.returncode}): {proc.stderr.strip()[-500:]}"
    return None


if __name__ == "__main__":
    try:
        install()
    except (RuntimeError, OSError, subprocess.TimeoutExpired) as exc:
        sys.stderr.write(
            f"!!! the e2e runtimes could not be installed: {exc}\n!!! the e2e suite will fail; set {SKIP_ENV}=1 to skip it on purpose\n"
        )
        sys.exit(1)
    for name, (rel, what) in BINARIES.items():
        print(f"{name}: {what} → {MODULES / rel}")
