"""The phone (#43): ``loopx phone pair`` and ``loopx serve`` as real processes,
driven by Debian's headless chromium over the DevTools protocol, whose
WebAuthn domain gives the page a virtual platform authenticator (a passkey
with user verification, as a phone's). SQLite boards: the page and the
passkey do not depend on the backend."""

from __future__ import annotations

import contextlib
import json
import os
import re
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator

import pytest

from tests.runner.conftest import Watch, plan  # noqa: F401  (the runner tests' board watcher, the scripted turn's plan)

from . import cdp

HERE = os.path.dirname(os.path.abspath(__file__))


def pytest_collection_modifyitems(config, items):
    for item in items:  # real processes and a browser: the suite's slow tests (CI runs them on 3.11)
        if str(item.fspath).startswith(HERE):
            item.add_marker(pytest.mark.slow)


CHROMIUM_MISSING = (
    "NO BROWSER: Debian's chromium is not installed, so the phone's round trip was NOT tested "
    "(apt-get install -y chromium; .ci/run installs it)"
)


@pytest.fixture
def backend() -> str:
    return "sqlite"


@pytest.fixture
def watch(board, tmp_path):
    w = Watch(board, tmp_path)
    yield w
    w.close()


@pytest.fixture
def page() -> Iterator[cdp.Page]:
    if cdp.chromium_path() is None:
        pytest.skip(CHROMIUM_MISSING)
    with cdp.browser() as p:
        p.add_authenticator()
        yield p


class Listener:
    """A ``loopx`` process that listens (``phone pair``, ``serve``), and the address it printed."""

    def __init__(self, proc: subprocess.Popen, url: str):
        self.proc, self.url = proc, url
        self.origin = re.match(r"https?://[^/]+", url).group(0)  # type: ignore[union-attr]

    def post(self, path: str, body: object, headers: dict | None = None, raw: bytes | None = None) -> tuple[int, dict]:
        """A request as any local process could send it (``headers`` replace the page's own)."""
        sent = {"Content-Type": "application/json", "Origin": self.origin, **(headers or {})}
        sent = {k: v for k, v in sent.items() if v is not None}
        data = raw if raw is not None else json.dumps(body).encode()
        req = urllib.request.Request(self.origin + path, data=data, headers=sent, method="POST")
        return _open(req)

    def get(self, path: str, headers: dict | None = None) -> tuple[int, str, dict]:
        req = urllib.request.Request(self.origin + path, headers=headers or {})
        try:
            with urllib.request.urlopen(req, timeout=30) as r:
                return r.status, r.read().decode(), dict(r.headers)
        except urllib.error.HTTPError as err:
            return err.code, err.read().decode(), dict(err.headers)


def _open(req: urllib.request.Request) -> tuple[int, dict]:
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, json.loads(r.read() or b"{}")
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read() or b"{}")


def listen(board, *argv: str, env: dict | None = None, pattern: str = r"(http://localhost:\d+/\S*)") -> Listener:
    """Start ``loopx ARGV…`` (the person's environment) and wait for the address it prints."""
    full = dict(os.environ, LOOPX_DB=board.url, **(env or {}))
    full.pop("LOOPX_AGENT", None)
    proc = subprocess.Popen(
        [sys.executable, "-m", "loopx_core", "--json", *argv, "--port", "0"],
        cwd=board.root,
        env=full,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
    )
    deadline = time.monotonic() + 60
    seen = []
    assert proc.stderr is not None
    while time.monotonic() < deadline:
        line = proc.stderr.readline()
        if not line and proc.poll() is not None:
            break
        seen.append(line)
        found = re.search(pattern, line)
        if found:
            return Listener(proc, found.group(1))
    proc.kill()
    pytest.fail(
        f"`loopx {' '.join(argv)}` printed no address:\n{''.join(seen)}{proc.stdout.read() if proc.stdout else ''}"
    )


@contextlib.contextmanager
def serving(board) -> Iterator[Listener]:
    server = listen(board, "serve")
    try:
        yield server
    finally:
        server.proc.terminate()
        server.proc.wait(timeout=30)


def pair(board, page: cdp.Page, label: str = "test phone") -> dict:
    """``loopx phone pair``, the QR code's address opened on the page, the passkey made there."""
    pairing = listen(board, "phone", "pair", pattern=r"(http://localhost:\d+/pair#t=\S+)")
    page.goto(pairing.url)
    page.evaluate(f"document.getElementById('label').value = {json.dumps(label)}")
    page.evaluate("document.querySelector('button[data-pair]').click()", gesture=True)
    page.wait_for("document.getElementById('msg').textContent.startsWith('paired')")
    out, err = pairing.proc.communicate(timeout=60)
    assert pairing.proc.returncode == 0, (out, err)
    return json.loads(out.strip().splitlines()[-1])["device"]


def tap(page: cdp.Page, selector: str) -> str:
    """Tap a button on the page and wait for what it says."""
    page.evaluate("document.getElementById('msg').textContent = ''")
    page.evaluate(f"document.querySelector({json.dumps(selector)}).click()", gesture=True)
    return str(
        page.wait_for(
            "(t => (t.includes('✓') || t.startsWith('not answered')) && t)(document.getElementById('msg').textContent)"
        )
    )
