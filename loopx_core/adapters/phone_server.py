"""``loopx serve`` and ``loopx phone pair``'s listener: the person's own
process, serving the phone's page and taking its answers (DESIGN §11 "A phone").

What gets in: nothing approves but a WebAuthn assertion of a paired device
over the digest of exactly what is decided, made for a nonce this process
issued and used once. No cookie, no session: a request carries its own
authority or none. Every POST must come from the page's own origin (the
``Origin`` header), with a JSON body (no form can post one cross-site), to an
expected ``Host`` (no DNS rebinding); the listener counts requests and
failures and turns callers away past a small rate. Pages are built in
``phone_page`` from strings: no file is served.
"""

from __future__ import annotations

import hmac
import json
import secrets
import threading
import time
from collections import deque
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

from ..authority import devices
from ..ops import phones
from ..rules import clock, ids
from ..shapes.errors import LoopxError
from . import phone_page

TYPE_CHECKING = False  # (annotations only; checkers read this as typing's)
if TYPE_CHECKING:
    from collections.abc import Callable

    from ..store.base import Store

BODY_MAX = 64 * 1024
NONCE_FOR = 120.0  # seconds a challenge may be answered in
POSTS_PER_MINUTE = 60
FAILURES_PER_MINUTE = 10


class Refused(Exception):
    def __init__(self, http_code: int, message: str):
        super().__init__(message)
        self.http_code, self.message = http_code, message


class Pairing:
    """One ``loopx phone pair``: its one-time token (never stored, only compared), its expiry."""

    def __init__(self, token: str, expires_at: float, person: str, user_id: bytes, finish: Callable[..., dict]):
        self.token, self.expires_at, self.person, self.user_id = token, expires_at, person, user_id
        self.finish = finish  # (credential_id, public_key, sign_count, label) -> the signed device
        self.challenge: bytes | None = None
        self.used = False
        self.result: dict | None = None
        self.done = threading.Event()

    def check(self, token: object) -> None:
        if self.used:
            raise Refused(403, "this pairing code was used already: run `loopx phone pair` again")
        if time.time() > self.expires_at:
            raise Refused(403, "this pairing code expired: run `loopx phone pair` again")
        if not isinstance(token, str) or not hmac.compare_digest(token.encode(), self.token.encode()):
            raise Refused(403, "not the pairing code `loopx phone pair` showed")


class Limiter:
    """A sliding minute of requests and of failures, for the whole listener."""

    def __init__(self) -> None:
        self.posts: deque[float] = deque()
        self.failures: deque[float] = deque()
        self.lock = threading.Lock()

    def _trim(self, q: deque[float], now: float) -> None:
        while q and q[0] < now - 60:
            q.popleft()

    def admit(self) -> None:
        now = time.monotonic()
        with self.lock:
            self._trim(self.posts, now)
            self._trim(self.failures, now)
            if len(self.posts) >= POSTS_PER_MINUTE or len(self.failures) >= FAILURES_PER_MINUTE:
                raise Refused(429, "too many requests: wait a minute")
            self.posts.append(now)

    def failed(self) -> None:
        with self.lock:
            self.failures.append(time.monotonic())


class PhoneServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, store: Store, host: str, port: int, origin: str | None = None, pairing: Pairing | None = None):
        super().__init__((host, port), Handler)
        bound = self.server_address[1]
        self.store = store
        self.origin = (origin or f"http://localhost:{bound}").rstrip("/")
        self.rp_id = urlsplit(self.origin).hostname or "localhost"
        netloc = urlsplit(self.origin).netloc
        self.hosts = {netloc, f"localhost:{bound}", f"127.0.0.1:{bound}", f"[::1]:{bound}"}
        self.pairing = pairing
        self.limiter = Limiter()
        self.nonces: dict[str, tuple[float, dict]] = {}
        self.counts: dict[str, int] = {}  # device -> the highest sign count seen (with the log's)
        self.lock = threading.Lock()  # one answer at a time

    @property
    def url(self) -> str:
        return self.origin + "/"

    # -- answering -----------------------------------------------------------------

    def challenge(self, body: dict) -> dict:
        gate_id = ids.parse(ids.GATE, body.get("gate"))
        found = phones.usable(self.store)
        mine = [d for d in found.values() if d.rp_id == self.rp_id]
        if not mine:
            raise Refused(403, "no device is paired for this page: run `loopx phone pair`")
        nonce = secrets.token_urlsafe(24)
        choice, text = body.get("choice"), body.get("text")
        decision = phones.decide(
            self.store,
            gate_id,
            str(body.get("decision")),
            str(choice) if choice is not None else None,
            str(text)[:2000] if text is not None else None,
            nonce,
        )
        with self.lock:
            now = time.monotonic()
            for key in [k for k, (t, _) in self.nonces.items() if t < now]:
                del self.nonces[key]
            if len(self.nonces) > 100:
                raise Refused(429, "too many open questions: answer or wait two minutes")
            self.nonces[nonce] = (now + NONCE_FOR, decision)
        from webauthn import generate_authentication_options, options_to_json
        from webauthn.helpers.structs import PublicKeyCredentialDescriptor, UserVerificationRequirement

        options = generate_authentication_options(
            rp_id=self.rp_id,
            challenge=devices.challenge(decision),  # the digest of exactly what is decided
            allow_credentials=[PublicKeyCredentialDescriptor(id=d.credential_id) for d in mine],
            user_verification=UserVerificationRequirement.REQUIRED,
        )
        wanted = json.loads(options_to_json(options))
        return {"nonce": nonce, "options": wanted, "decision": decision}

    def answer(self, body: dict) -> dict:
        nonce = body.get("nonce")
        with self.lock:
            held = self.nonces.pop(nonce, None) if isinstance(nonce, str) else None
        if held is None or held[0] < time.monotonic():
            raise Refused(403, "this answer's question is unknown, used or expired: tap the button again")
        decision = held[1]
        credential = body.get("credential")
        if not isinstance(credential, dict) or not isinstance(credential.get("response"), dict):
            raise Refused(400, "no passkey answer in the request")
        response = credential["response"]
        try:
            raw_id = devices.unb64u(str(credential.get("rawId")))
            sig = devices.encode_sig(
                raw_id,
                devices.unb64u(str(response.get("authenticatorData"))),
                devices.unb64u(str(response.get("clientDataJSON"))),
                devices.unb64u(str(response.get("signature"))),
            )
        except ValueError:
            raise Refused(400, "the passkey answer is not base64url") from None
        device = phones.usable(self.store).get(devices.fingerprint(raw_id))
        if device is None or device.rp_id != self.rp_id:
            raise Refused(403, "that passkey is not a device paired for this page")
        expected = devices.challenge(decision)  # py_webauthn's check first, then the one every reader will make
        why = devices.library_fails(sig, device, expected, origin=self.origin) or devices.assertion_fails(
            sig, device, expected, origin=self.origin
        )
        if why is not None:
            raise Refused(403, why)
        count = devices.sign_count(sig) or 0
        with self.lock:
            with self.store.read():
                logged, _ = phones.last_use(device.fingerprint)
            last = max(self.counts.get(device.fingerprint, 0), logged, device.sign_count)
            if (count or last) and count <= last:
                raise Refused(
                    403, f"the passkey's counter went back ({count} after {last}): a cloned or replayed passkey"
                )
            gate_id = ids.parse(ids.GATE, decision["gate"])
            now_decision = phones.decide(
                self.store,
                gate_id,
                decision["decision"],
                decision["answer"] if decision["choice"] else None,
                decision["answer"] if _is_text(decision) else None,
                decision["nonce"],
            )
            if now_decision != decision:
                raise Refused(409, "the gate changed since you tapped: reload and look again")
            view, _ = phones.answer(self.store, decision, sig, device)
            self.counts[device.fingerprint] = count
        return {"ok": True, "gate": view.key, "status": view.status, "message": f"{view.key} {view.status} ✓"}

    # -- pairing -------------------------------------------------------------------

    def pair_options(self, body: dict) -> dict:
        pairing = self._pairing()
        pairing.check(body.get("token"))
        from webauthn import generate_registration_options, options_to_json
        from webauthn.helpers.structs import (
            AuthenticatorSelectionCriteria,
            PublicKeyCredentialDescriptor,
            ResidentKeyRequirement,
            UserVerificationRequirement,
        )

        known = [d for d in phones.usable(self.store).values() if d.rp_id == self.rp_id]
        options = generate_registration_options(
            rp_id=self.rp_id,
            rp_name="LoopX",
            user_id=pairing.user_id,
            user_name=pairing.person,
            authenticator_selection=AuthenticatorSelectionCriteria(
                resident_key=ResidentKeyRequirement.PREFERRED,
                user_verification=UserVerificationRequirement.REQUIRED,
            ),
            exclude_credentials=[PublicKeyCredentialDescriptor(id=d.credential_id) for d in known],
            supported_pub_key_algs=_algs(),
        )
        pairing.challenge = options.challenge
        return {"options": json.loads(options_to_json(options))}

    def pair_finish(self, body: dict) -> dict:
        pairing = self._pairing()
        pairing.check(body.get("token"))
        if pairing.challenge is None:
            raise Refused(409, "ask for the passkey's options first")
        from webauthn import verify_registration_response
        from webauthn.helpers.exceptions import InvalidRegistrationResponse

        try:
            made = verify_registration_response(
                credential=body.get("credential"),  # type: ignore[arg-type]
                expected_challenge=pairing.challenge,
                expected_rp_id=self.rp_id,
                expected_origin=self.origin,
                require_user_verification=True,
                supported_pub_key_algs=_algs(),
            )
        except (InvalidRegistrationResponse, ValueError, KeyError, TypeError) as err:
            raise Refused(403, f"the passkey was not made: {str(err)[:200]}") from None
        pairing.used = True
        label = str(body.get("label") or "phone")[: phones.LABEL_MAX]
        result = pairing.finish(made.credential_id, made.credential_public_key, made.sign_count, label)
        pairing.result = result
        pairing.done.set()
        return {"ok": True, "message": f"paired: {result['label']} ({result['device']}) — you can close this page"}

    def _pairing(self) -> Pairing:
        if self.pairing is None:
            raise Refused(404, "no pairing is under way: run `loopx phone pair`")
        return self.pairing


def _algs() -> list:
    """The passkeys pairing accepts: the algorithms the readers' check covers (devices.ALGS)."""
    from webauthn.helpers.cose import COSEAlgorithmIdentifier

    return [COSEAlgorithmIdentifier(alg) for alg in devices.ALGS]


def _is_text(decision: dict) -> bool:
    return decision["decision"] == "approve" and not decision["choice"] and decision["answer"] != "approved"


class Handler(BaseHTTPRequestHandler):
    server: PhoneServer
    server_version = "loopx"
    sys_version = ""

    def log_message(self, format: str, *args: Any) -> None:  # (quiet: the person's terminal is not a log)
        return

    def _send(self, status: int, body: bytes, kind: str, nonce: str = "") -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.send_header("X-Frame-Options", "DENY")
        self.send_header("Referrer-Policy", "no-referrer")
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header(
            "Content-Security-Policy",
            f"default-src 'none'; script-src 'nonce-{nonce}'; style-src 'nonce-{nonce}'; connect-src 'self'; "
            "frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
        )
        self.end_headers()
        self.wfile.write(body)

    def _json(self, status: int, data: dict) -> None:
        self._send(status, json.dumps(data).encode(), "application/json")

    def _host_ok(self) -> bool:
        return self.headers.get("Host", "") in self.server.hosts

    def do_GET(self) -> None:
        if not self._host_ok():
            return self._json(421, {"error": "unknown Host"})
        path = urlsplit(self.path).path
        nonce = secrets.token_urlsafe(16)
        server = self.server
        if path == "/pair" and server.pairing is not None:
            page = phone_page.pair_page(nonce, server.pairing.person)
        elif path == "/" and server.pairing is None:
            try:
                page = phone_page.needs_page(
                    phones.needs(server.store), nonce, clock.now(), phones.paused(server.store)
                )
            except LoopxError as err:
                return self._json(500, {"error": err.message})
        else:
            return self._json(404, {"error": "not here"})
        self._send(200, page.encode("utf-8"), "text/html; charset=utf-8", nonce)

    def do_POST(self) -> None:
        server = self.server
        routes: dict[str, Callable[[dict], dict]] = {
            "/api/challenge": server.challenge,
            "/api/answer": server.answer,
            "/api/pair/options": server.pair_options,
            "/api/pair/finish": server.pair_finish,
        }
        try:
            server.limiter.admit()
            if not self._host_ok():
                raise Refused(421, "unknown Host")
            if self.headers.get("Origin") != server.origin:
                raise Refused(403, f"requests come from the page itself ({server.origin}), not from elsewhere")
            if (self.headers.get("Content-Type") or "").split(";")[0].strip() != "application/json":
                raise Refused(415, "JSON only")
            route = routes.get(urlsplit(self.path).path)
            if route is None:
                raise Refused(404, "not here")
            size = int(self.headers.get("Content-Length") or 0)
            if size <= 0 or size > BODY_MAX:
                raise Refused(413, "no body, or too large")
            try:
                body = json.loads(self.rfile.read(size))
            except ValueError:
                raise Refused(400, "not JSON") from None
            if not isinstance(body, dict):
                raise Refused(400, "not a JSON object")
            self._json(200, route(body))
        except Refused as err:
            if err.http_code in (400, 403, 409):
                server.limiter.failed()
            self._json(err.http_code, {"error": err.message})
        except LoopxError as err:
            server.limiter.failed()
            self._json(409, {"error": err.message + (f" — {err.hint}" if err.hint else "")})
        except Exception as err:  # a malformed request the checks above let through: refused, never a traceback
            server.limiter.failed()
            self._json(400, {"error": f"not a request this page makes ({type(err).__name__})"})
