"""A small DevTools-protocol client for Debian's headless chromium: a page,
its WebAuthn virtual authenticator (a passkey with user verification, as a
phone's platform authenticator), navigation and script evaluation."""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from websockets.sync.client import ClientConnection, connect


def chromium_path() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


class Page:
    def __init__(self, ws: ClientConnection, session: str):
        self.ws, self.session = ws, session
        self.authenticator = ""
        self._ids = itertools.count(1000)

    def send(self, method: str, params: dict | None = None, timeout: float = 30) -> dict:
        ident = next(self._ids)
        self.ws.send(json.dumps({"id": ident, "method": method, "params": params or {}, "sessionId": self.session}))
        deadline = time.monotonic() + timeout
        while True:
            msg = json.loads(self.ws.recv(timeout=max(0.1, deadline - time.monotonic())))
            if msg.get("id") == ident:
                if "error" in msg:
                    raise RuntimeError(f"{method}: {msg['error']}")
                return msg.get("result", {})

    def evaluate(self, expression: str, gesture: bool = False) -> Any:
        out = self.send(
            "Runtime.evaluate",
            {"expression": expression, "awaitPromise": True, "returnByValue": True, "userGesture": gesture},
        )
        if "exceptionDetails" in out:
            raise RuntimeError(f"{expression[:80]}: {out['exceptionDetails']}")
        return out.get("result", {}).get("value")

    def goto(self, url: str, timeout: float = 30) -> None:
        self.send("Page.navigate", {"url": url})
        self.wait_for("document.readyState === 'complete' && location.href !== 'about:blank'", timeout)

    def wait_for(self, expression: str, timeout: float = 30) -> Any:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with contextlib.suppress(RuntimeError):
                value = self.evaluate(expression)
                if value:
                    return value
            time.sleep(0.05)
        raise TimeoutError(f"never true: {expression}")

    def message(self) -> str:
        return str(self.evaluate("document.getElementById('msg')?.textContent || ''"))

    def add_authenticator(self) -> str:
        self.send("WebAuthn.enable", {"enableUI": False})
        out = self.send(
            "WebAuthn.addVirtualAuthenticator",
            {
                "options": {
                    "protocol": "ctap2",
                    "transport": "internal",
                    "hasResidentKey": True,
                    "hasUserVerification": True,
                    "isUserVerified": True,
                    "automaticPresenceSimulation": True,
                }
            },
        )
        self.authenticator = str(out["authenticatorId"])
        return self.authenticator

    def credentials(self) -> list[dict]:
        """The passkeys the virtual authenticator holds (with their private keys and sign counts)."""
        return list(self.send("WebAuthn.getCredentials", {"authenticatorId": self.authenticator})["credentials"])

    def put_credential(self, credential: dict) -> None:
        """Replace a passkey (the same key) with ``credential``: e.g. its counter set back."""
        self.send(
            "WebAuthn.removeCredential",
            {"authenticatorId": self.authenticator, "credentialId": credential["credentialId"]},
        )
        self.send("WebAuthn.addCredential", {"authenticatorId": self.authenticator, "credential": credential})


@contextlib.contextmanager
def browser() -> Iterator[Page]:
    """A headless chromium with one page (its own profile, thrown away)."""
    exe = chromium_path()
    assert exe, "chromium is not installed"
    with tempfile.TemporaryDirectory(prefix="loopx-chromium-") as profile:
        proc = subprocess.Popen(
            [
                exe,
                "--headless=new",
                "--no-sandbox",
                "--disable-gpu",
                "--no-first-run",
                "--no-default-browser-check",
                "--disable-extensions",
                "--disable-background-networking",
                "--remote-debugging-port=0",
                f"--user-data-dir={profile}",
                "about:blank",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,  # its helpers (zygote, crashpad) in one group, ended with it
            # Its caches and dconf under the throwaway profile, never a real home.
            env=dict(os.environ, HOME=profile, XDG_CACHE_HOME=profile, XDG_CONFIG_HOME=profile),
        )
        try:
            port_file = Path(profile) / "DevToolsActivePort"
            deadline = time.monotonic() + 60
            while not (port_file.exists() and len(port_file.read_text().splitlines()) >= 2):
                if time.monotonic() > deadline or proc.poll() is not None:
                    raise RuntimeError("chromium did not start its DevTools endpoint")
                time.sleep(0.05)
            port, path = port_file.read_text().splitlines()[:2]
            with connect(f"ws://127.0.0.1:{port}{path}", max_size=None, open_timeout=30) as ws:
                ws.send(json.dumps({"id": 1, "method": "Target.createTarget", "params": {"url": "about:blank"}}))
                target = _reply(ws, 1)["targetId"]
                ws.send(
                    json.dumps(
                        {"id": 2, "method": "Target.attachToTarget", "params": {"targetId": target, "flatten": True}}
                    )
                )
                page = Page(ws, _reply(ws, 2)["sessionId"])
                page.send("Page.enable")
                page.send("Runtime.enable")
                yield page
        finally:
            _end_group(proc)


def _end_group(proc: subprocess.Popen) -> None:
    """End chromium and every helper it started (its process group), and wait until they are gone."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, sig)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                try:
                    os.killpg(proc.pid, 0)
                except ProcessLookupError:
                    return
            time.sleep(0.05)


def _reply(ws: ClientConnection, ident: int) -> dict:
    while True:
        msg = json.loads(ws.recv(timeout=30))
        if msg.get("id") == ident:
            if "error" in msg:
                raise RuntimeError(str(msg["error"]))
            return dict(msg["result"])
