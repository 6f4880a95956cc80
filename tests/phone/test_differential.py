"""The readers' check of a passkey's assertion (``devices.assertion_fails``:
``cryptography`` only, so the PreToolUse hook never imports ``webauthn``) and
py_webauthn's ``verify_authentication_response`` give the same answer: for
real assertions of chromium's virtual authenticator — one recorded by a tap on
``loopx serve``, and one made directly for each algorithm pairing accepts — and
for each kind of tampering, re-signed with the passkey's own private key where
the signature alone would catch it (so each field's check is what is tested)."""

from __future__ import annotations

import base64
import contextlib
import json
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, padding, rsa
from cryptography.hazmat.primitives.serialization import load_der_private_key

from loopx_core.authority import devices
from loopx_core.authority.trust import EVENT_COLUMNS, EventRow

from . import cdp
from .conftest import pair, serving, tap
from .test_attacks import ask

DECISION = {"gate": "G-1", "decision": "approve", "answer": "approved", "nonce": "n-1"}


def reference_fails(sig: str, device: devices.Device, expected: bytes, origin: str) -> bool:
    """py_webauthn's own answer, called directly (not through devices.py)."""
    from webauthn import verify_authentication_response

    parts = devices.decode_sig(sig)
    assert parts is not None
    try:
        verify_authentication_response(
            credential={
                "id": devices.b64u(parts["id"]),
                "rawId": devices.b64u(parts["id"]),
                "type": "public-key",
                "response": {
                    "authenticatorData": devices.b64u(parts["authenticator_data"]),
                    "clientDataJSON": devices.b64u(parts["client_data_json"]),
                    "signature": devices.b64u(parts["signature"]),
                },
            },
            expected_challenge=expected,
            expected_rp_id=device.rp_id,
            expected_origin=origin,
            credential_public_key=device.public_key,
            credential_current_sign_count=0,
            require_user_verification=True,
        )
    except Exception:
        return True
    return False


class Signer:
    """The passkey's private key (the virtual authenticator gives it out), to re-sign a tampered assertion."""

    def __init__(self, key: Any):
        self.key = key

    def sign(self, authenticator_data: bytes, client_data_json: bytes) -> bytes:
        data = authenticator_data + hashes_sha256(client_data_json)
        if isinstance(self.key, ec.EllipticCurvePrivateKey):
            return bytes(self.key.sign(data, ec.ECDSA(hashes.SHA256())))
        if isinstance(self.key, ed25519.Ed25519PrivateKey):
            return bytes(self.key.sign(data))
        assert isinstance(self.key, rsa.RSAPrivateKey)
        return bytes(self.key.sign(data, padding.PKCS1v15(), hashes.SHA256()))


def hashes_sha256(data: bytes) -> bytes:
    digest = hashes.Hash(hashes.SHA256())
    digest.update(data)
    return digest.finalize()


def variants(sig: str, device: devices.Device, other: devices.Device, signer: Signer) -> Iterator[tuple[str, str, Any]]:
    """(what, the assertion, the device it is checked against) for each kind of tampering."""
    parts = devices.decode_sig(sig)
    assert parts is not None
    cid, auth, client_raw, signature = (
        parts["id"],
        parts["authenticator_data"],
        parts["client_data_json"],
        parts["signature"],
    )
    client = json.loads(client_raw)

    def made(auth_data: bytes, client_json: bytes, resign: bool = True, sig_bytes: bytes | None = None) -> str:
        signed = signer.sign(auth_data, client_json) if resign else (sig_bytes or signature)
        return devices.encode_sig(cid, auth_data, client_json, signed)

    def client_with(**change: object) -> bytes:
        return json.dumps({**client, **change}, separators=(",", ":")).encode()

    yield "as made", sig, device
    yield "re-signed unchanged", made(auth, client_raw), device
    yield "authenticator data altered", made(auth[:33] + b"\xff" + auth[34:], client_raw, resign=False), device
    yield "authenticator data with bytes after it", made(auth + b"\x00\x01", client_raw), device
    yield "client data altered", made(auth, client_raw.replace(b"{", b"{ ", 1), resign=False), device
    yield "client data with a member more, re-signed", made(auth, client_with(extra="x")), device
    yield "client data not an object", made(auth, b"[1]"), device
    yield "another type", made(auth, client_with(type="webauthn.create")), device
    yield "another challenge", made(auth, client_with(challenge=devices.b64u(b"\x00" * 32))), device
    yield "another origin", made(auth, client_with(origin="http://localhost:1")), device
    yield "an origin of another host", made(auth, client_with(origin="https://evil.example")), device
    evil = hashes_sha256(b"evil.example")
    yield "another rp id hash", made(evil + auth[32:], client_raw), device
    yield "without user verification", made(auth[:32] + bytes([auth[32] & ~devices.UV]) + auth[33:], client_raw), device
    yield "without user presence", made(auth[:32] + bytes([auth[32] & ~devices.UP]) + auth[33:], client_raw), device
    yield (
        "backed up, not backup eligible",
        made(auth[:32] + bytes([(auth[32] | devices.BS) & ~devices.BE]) + auth[33:], client_raw),
        device,
    )
    flipped = bytearray(signature)
    flipped[len(flipped) // 2] ^= 0x01
    yield "signature bit flipped", made(auth, client_raw, resign=False, sig_bytes=bytes(flipped)), device
    yield "another device's key", sig, other._replace(credential_id=cid)


def agree(
    sig: str, device: devices.Device, other: devices.Device, signer: Signer, origin: str, expected: bytes
) -> list:
    """Every variant: the fast check and py_webauthn agree, online (the page's origin) and offline."""
    seen = []
    for what, variant, against in variants(sig, device, other, signer):
        fast = devices.assertion_fails(variant, against, expected, origin=origin)
        offline = devices.assertion_fails(variant, against, expected)
        library = devices.library_fails(variant, against, expected, origin=origin)
        reference = reference_fails(variant, against, expected, origin)
        assert (fast is not None) == reference == (library is not None), (what, fast, library)
        # A device paired before pairing recorded its SPKI: still checked, by py_webauthn.
        legacy = devices.assertion_fails(variant, against._replace(spki=b"", alg=0), expected, origin=origin)
        assert (legacy is not None) == reference, (what, legacy)
        if what != "another origin":  # (offline, any port of the host fits: verify checks the host)
            assert (offline is not None) == reference, (what, offline)
        seen.append((what, reference))
    return seen


EXPECTED_FAILS = {
    "as made": False,
    "re-signed unchanged": False,
    "client data with a member more, re-signed": False,
}


# -- a page on localhost where the test makes passkeys itself ------------------------------------------


class Blank(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = b"<!doctype html><title>x</title>"
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        return


@contextlib.contextmanager
def blank_page() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Blank)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://localhost:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


MAKE = """(async () => {
  const b = s => Uint8Array.from(atob(s.replace(/-/g, '+').replace(/_/g, '/')), c => c.charCodeAt(0));
  const u = a => btoa(String.fromCharCode(...new Uint8Array(a))).replace(/\\+/g, '-').replace(/\\//g, '_').replace(/=+$/, '');
  const c = await navigator.credentials.create({publicKey: {
    rp: {id: 'localhost', name: 'LoopX'}, user: {id: crypto.getRandomValues(new Uint8Array(16)), name: 'tester', displayName: 'tester'},
    challenge: b(%(challenge)s), pubKeyCredParams: [{type: 'public-key', alg: %(alg)d}],
    authenticatorSelection: {residentKey: 'preferred', userVerification: 'required'}}});
  return JSON.stringify({id: c.id, rawId: u(c.rawId), type: c.type, response: {
    clientDataJSON: u(c.response.clientDataJSON), attestationObject: u(c.response.attestationObject)}});
})()"""

GET = """(async () => {
  const b = s => Uint8Array.from(atob(s.replace(/-/g, '+').replace(/_/g, '/')), c => c.charCodeAt(0));
  const u = a => btoa(String.fromCharCode(...new Uint8Array(a))).replace(/\\+/g, '-').replace(/\\//g, '_').replace(/=+$/, '');
  const a = await navigator.credentials.get({publicKey: {rpId: 'localhost', challenge: b(%(challenge)s),
    allowCredentials: [{type: 'public-key', id: b(%(id)s)}], userVerification: 'required'}});
  return JSON.stringify({rawId: u(a.rawId), authenticatorData: u(a.response.authenticatorData),
    clientDataJSON: u(a.response.clientDataJSON), signature: u(a.response.signature)});
})()"""


def make_device(page: cdp.Page, origin: str, alg: int) -> devices.Device:
    """A passkey made on the page and checked as pairing checks it (py_webauthn), as a Device."""
    from webauthn import verify_registration_response

    challenge = b"c" * 32
    made = json.loads(page.evaluate(MAKE % {"challenge": json.dumps(devices.b64u(challenge)), "alg": alg}, True))
    verified = verify_registration_response(
        credential=made, expected_challenge=challenge, expected_rp_id="localhost", expected_origin=origin
    )
    spki, got = devices.spki_of(verified.credential_public_key)
    assert got == alg
    cid = verified.credential_id
    return devices.Device(
        devices.fingerprint(cid), cid, verified.credential_public_key, "localhost", "", "", "", 0, 1, None, spki, alg
    )


def assertion(page: cdp.Page, device: devices.Device, expected: bytes) -> str:
    got = json.loads(
        page.evaluate(
            GET
            % {"challenge": json.dumps(devices.b64u(expected)), "id": json.dumps(devices.b64u(device.credential_id))},
            True,
        )
    )
    return devices.encode_sig(
        devices.unb64u(got["rawId"]),
        devices.unb64u(got["authenticatorData"]),
        devices.unb64u(got["clientDataJSON"]),
        devices.unb64u(got["signature"]),
    )


def signer_of(page: cdp.Page, device: devices.Device) -> Signer:
    (credential,) = [c for c in page.credentials() if devices.unb64u(c["credentialId"]) == device.credential_id]
    return Signer(load_der_private_key(base64.b64decode(credential["privateKey"]), None))


@pytest.mark.parametrize("alg", [devices.ES256, devices.EDDSA, devices.RS256], ids=["ES256", "EdDSA", "RS256"])
def test_the_readers_check_and_py_webauthn_agree_for_each_algorithm_and_tampering(page, alg):
    with blank_page() as origin:
        page.goto(origin + "/")
        device = make_device(page, origin, alg)
        other = make_device(page, origin, devices.ES256 if alg != devices.ES256 else devices.EDDSA)
        expected = devices.challenge(DECISION)
        sig = assertion(page, device, expected)
        seen = agree(sig, device, other, signer_of(page, device), origin, expected)
    assert dict(seen) == {what: EXPECTED_FAILS.get(what, True) for what, _ in seen}, seen
    assert len(seen) == 17


def test_a_recorded_phone_answer_is_judged_the_same_by_both(team, page):
    """The assertion of a real tap on ``loopx serve``, as the log holds it, and the device as pairing recorded it."""
    pair(team, page)
    ask(team)
    with serving(team) as server:
        page.goto(server.url)
        assert tap(page, 'button.yes[data-gate="G-1"]') == "G-1 approved ✓"
        origin = server.origin
    store = team.store()
    try:
        with store.read():
            rows = store.query(f"SELECT {EVENT_COLUMNS} FROM event WHERE kind = 'gate_answered'", ())
            row = EventRow(*rows[0])
            (device,) = store.trust().devices().values()
            assert store.trust().check(row) is None
    finally:
        store.close()
    assert device.alg == devices.ES256 and device.spki  # pairing recorded the key the readers check
    with blank_page() as blank:
        page.goto(blank + "/")
        other = make_device(page, blank, devices.ES256)
    expected = devices.challenge(row.payload()["phone"])
    seen = agree(row.sig or "", device, other, signer_of(page, device), origin, expected)
    assert dict(seen) == {what: EXPECTED_FAILS.get(what, True) for what, _ in seen}, seen


@pytest.fixture(params=["binding", "public module"])
def loading(request, monkeypatch):
    if request.param == "public module":  # `import` of the binding raises ImportError
        monkeypatch.setitem(sys.modules, "cryptography.hazmat.bindings._rust", None)
    return request.param


def test_the_signature_check_takes_only_the_key_its_algorithm_names(loading):
    """Either way the SubjectPublicKeyInfo is loaded: each algorithm's signature holds
    with its own key and fails with a changed message, another key, or a key of
    another kind or curve than the algorithm names."""
    from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

    keys: dict[int, Any] = {
        devices.ES256: ec.generate_private_key(ec.SECP256R1()),
        devices.EDDSA: ed25519.Ed25519PrivateKey.generate(),
        devices.RS256: rsa.generate_private_key(public_exponent=65537, key_size=2048),
    }
    p384 = ec.generate_private_key(ec.SECP384R1())

    def spki(private: Any) -> bytes:
        return bytes(private.public_key().public_bytes(Encoding.DER, PublicFormat.SubjectPublicKeyInfo))

    auth, client = b"authenticator data", b"{}"
    message = auth + hashes_sha256(client)
    for alg, private in keys.items():
        signed = Signer(private).sign(auth, client)
        assert devices.signature_holds(spki(private), alg, signed, message)
        assert not devices.signature_holds(spki(private), alg, signed, message + b"x")
        for other_alg, other in keys.items():
            if other_alg != alg:
                assert not devices.signature_holds(spki(other), alg, signed, message)
                assert not devices.signature_holds(spki(private), other_alg, signed, message)
        assert not devices.signature_holds(spki(private), 0, signed, message)
        assert not devices.signature_holds(b"not a key", alg, signed, message)
    p384_signed = p384.sign(message, ec.ECDSA(hashes.SHA256()))
    assert not devices.signature_holds(spki(p384), devices.ES256, p384_signed, message)  # ES256 is P-256
