"""A person's devices: passkeys that answer gates from a phone (DESIGN §11 "A phone").

A device joins the board by a ``device_paired`` event signed with a person's
main key (``loopx phone pair``); a ``device_revoked`` event signed the same way
ends it. A device then signs nothing but one decision at a time: a WebAuthn
assertion whose challenge is the digest of exactly what was decided (the
``phone`` field every event it signs carries: gate, scope, question, lease,
pinned merge, answer, nonce). The event's ``key`` is the device's fingerprint
(``wa:…``) and its ``sig`` the assertion (authenticator data, clientDataJSON,
signature), so ``loopx verify`` re-checks it offline, like any decision.

Two checks of one assertion (docs/decisions/2026-12-07-readers-check-passkeys-with-cryptography.md):
``loopx serve`` accepts an answer only if py_webauthn's ``verify_authentication_response``
(``library_fails``) and ``assertion_fails`` both pass; every reader after it — the kernel,
the PreToolUse hook, ``verify`` — runs ``assertion_fails`` alone: a few comparisons and
one signature with ``cryptography`` over the key pairing recorded as SubjectPublicKeyInfo
(``spki``, decoded from the COSE key by py_webauthn), so a cold process never imports
``webauthn`` (0.26–0.57 s a hook call).
tests/phone/test_differential.py holds the two checks to the same answers.
"""

from __future__ import annotations

import base64
import json
from collections import namedtuple

from ..rules.decisions import signed_answer
from ..rules.digest import sha256_hex
from . import chain

TYPE_CHECKING = False  # (annotations only; checkers read this as typing's)
if TYPE_CHECKING:  # (trust.py asks this module: its types, as seen from here)
    from collections.abc import Iterable
    from typing import Any, Protocol

    class EventRow(Protocol):
        @property
        def seq(self) -> int: ...
        @property
        def actor(self) -> str: ...
        @property
        def kind(self) -> str: ...
        @property
        def key(self) -> str | None: ...
        @property
        def sig(self) -> str | None: ...
        def payload(self) -> dict: ...

    class Trust(Protocol):
        people: dict[str, Any]

        def check(self, row: Any) -> str | None: ...


PREFIX = "wa:"  # an event key that names a device, not a person's main key
SIG_PREFIX = "webauthn-v1:"
PAIRED, REVOKED = "device_paired", "device_revoked"
# What a device may sign: the answer of one gate, and what that answer makes happen at once.
SIGNS = ("gate_answered", "merged", "merge_conflict", "merge_moved")
CHALLENGE_PREFIX = b"loopx-phone-v1:"
# The COSE algorithms a passkey may pair with: those ``signature_holds`` checks.
ES256, EDDSA, RS256 = -7, -8, -257
ALGS = (ES256, EDDSA, RS256)
UP, UV, BE, BS, AT, ED = 0x01, 0x04, 0x08, 0x10, 0x40, 0x80  # authenticator data's flags

Device = namedtuple(
    "Device",
    "fingerprint credential_id public_key rp_id label person name sign_count added_seq revoked_seq spki alg",
    defaults=(b"", 0),
)


def b64u(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")


def unb64u(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _sha256(data: bytes) -> bytes:
    return bytes.fromhex(sha256_hex(data))  # (CPython's own SHA-256: rules/digest.py)


def fingerprint(credential_id: bytes) -> str:
    """A device's name in the log: short, whatever the credential id's length."""
    return PREFIX + sha256_hex(credential_id)[:32]


def challenge(decision: dict) -> bytes:
    """What the phone signs: the digest of exactly what is decided (canonical JSON)."""
    return _sha256(CHALLENGE_PREFIX + chain.data_text(decision).encode("utf-8"))


def question_digest(question: str) -> str:
    return sha256_hex(question.encode("utf-8"))


def encode_sig(credential_id: bytes, authenticator_data: bytes, client_data_json: bytes, signature: bytes) -> str:
    parts = {
        "id": b64u(credential_id),
        "authenticator_data": b64u(authenticator_data),
        "client_data_json": b64u(client_data_json),
        "signature": b64u(signature),
    }
    return SIG_PREFIX + json.dumps(parts, separators=(",", ":"), sort_keys=True)


def decode_sig(sig: str) -> dict[str, bytes] | None:
    if not sig.startswith(SIG_PREFIX):
        return None
    try:
        parts = json.loads(sig[len(SIG_PREFIX) :])
        return {k: unb64u(parts[k]) for k in ("id", "authenticator_data", "client_data_json", "signature")}
    except (ValueError, KeyError, TypeError):
        return None


def sign_count(sig: str | None) -> int | None:
    """The authenticator's counter in a device's signature (None: not one)."""
    parts = decode_sig(sig or "")
    if parts is None or len(parts["authenticator_data"]) < 37:
        return None
    return int.from_bytes(parts["authenticator_data"][33:37], "big")


def origin_fits(origin: str, rp_id: str) -> bool:
    """An origin a passkey for ``rp_id`` may answer from: https on that host
    (any port), or http on localhost (a secure context only there)."""
    for scheme in ("https://",) + (("http://",) if rp_id == "localhost" else ()):
        if origin == scheme + rp_id or (origin.startswith(scheme + rp_id + ":") and origin.rsplit(":", 1)[1].isdigit()):
            return True
    return False


def load(rows: Iterable[EventRow], people: Trust) -> dict[str, Device]:
    """The board's devices whose pairing a trusted person signed (revoked ones too, with
    the seq), from the ``device_paired`` and ``device_revoked`` events in log order."""
    found: dict[str, Device] = {}
    for row in rows:
        if row.key is None or row.key.startswith(PREFIX) or people.check(row) is not None:
            continue
        data = row.payload()
        fp = data.get("device")
        if row.kind == PAIRED:
            try:
                cred = unb64u(str(data["credential_id"]))
                public = unb64u(str(data["public_key"]))
                spki = unb64u(str(data.get("spki") or ""))
                alg = int(data.get("alg") or 0)
            except (KeyError, ValueError, TypeError):
                continue
            signer = people.people.get(row.key)
            if fp != fingerprint(cred) or fp in found or signer is None:
                continue
            found[fp] = Device(
                fp,
                cred,
                public,
                str(data.get("rp_id") or ""),
                str(data.get("label") or ""),
                signer.fingerprint,
                signer.name,
                int(data.get("sign_count") or 0),
                row.seq,
                None,
                spki,
                alg,
            )
        elif fp in found and found[fp].revoked_seq is None:
            found[fp] = found[fp]._replace(revoked_seq=row.seq)
    return found


def check(row: EventRow, devices: dict[str, Device], people: Trust) -> str | None:
    """Why ``row`` is not a valid decision signed on one of the person's devices (None: it is)."""
    device = devices.get(row.key or "")
    if device is None:
        return f"event {row.seq} is signed by device {row.key}, which no person of this board paired"
    if device.revoked_seq is not None and row.seq > device.revoked_seq:
        return f"event {row.seq} is signed by device {device.label or row.key} after it was revoked"
    owner = people.people.get(device.person)
    if owner is None or (owner.revoked_seq is not None and row.seq > owner.revoked_seq):
        return f"event {row.seq} is signed by a device of a key that is no longer one of this board's people"
    if row.actor != f"human:{owner.name}":
        return f"event {row.seq} claims to be by {row.actor} but is signed by {owner.name}'s device"
    if row.kind not in SIGNS:
        return f"event {row.seq} ({row.kind}) is not a decision a device may sign"
    data = row.payload()
    decision = data.get("phone")
    if not isinstance(decision, dict):
        return f"event {row.seq} is signed by a device but does not say what was decided"
    why = bound(row.kind, data, decision)
    if why:
        return f"event {row.seq}: {why}"
    return assertion_fails(row.sig or "", device, challenge(decision), row.seq)


def bound(kind: str, data: dict, decision: dict) -> str | None:
    """Does the event say what the phone signed? (its gate, answer, scope, lease, pin)"""
    if decision.get("gate") != data.get("gate"):
        return "the phone's answer is for another gate"
    if kind == "gate_answered":
        for field in ("scope", "agent", "lease_token", "head", "base_commit"):
            if decision.get(field) != data.get(field):
                return f"the phone signed another {field}"
        said = "approved" if decision.get("decision") == "approve" else "rejected"
        if (
            data.get("answer") != said
            or decision.get("answer") != signed_answer(data)
            or data.get("grant") is not None
            or data.get("remember")
        ):
            return "the phone signed another answer"
    elif kind in ("merged", "merge_moved") and decision.get("head") != data.get("head"):
        return "the phone signed another merge"  # (a conflict found on answering names the branch's new head)
    return None


def assertion_fails(
    sig: str, device: Device, expected: bytes, seq: int | None = None, origin: str | None = None
) -> str | None:
    """Why the WebAuthn assertion ``sig`` does not sign ``expected`` with
    ``device``'s key (None: it does): the readers' check, ``cryptography`` only.
    ``origin``: the one the server expects; offline, any origin that fits the
    device's rp id. A device paired before pairing recorded its ``spki`` is
    checked by py_webauthn (``library_fails``)."""
    where = f"event {seq}'s" if seq is not None else "the"
    parts, client, why = _opened(sig, device, origin)
    if why is not None:
        return f"{where} {why}"
    if not device.spki:
        return library_fails(sig, device, expected, seq, origin)
    why = _client_fails(client, expected) or _authenticator_fails(parts["authenticator_data"], device.rp_id)
    if why is None and not signature_holds(
        device.spki,
        device.alg,
        parts["signature"],
        parts["authenticator_data"] + _sha256(parts["client_data_json"]),
    ):
        why = "the signature is not the device key's"
    return f"{where} device signature does not verify ({why})" if why else None


def library_fails(
    sig: str, device: Device, expected: bytes, seq: int | None = None, origin: str | None = None
) -> str | None:
    """``assertion_fails``'s answer, by py_webauthn's ``verify_authentication_response``
    over the COSE key pairing recorded: the check ``loopx serve`` makes first."""
    where = f"event {seq}'s" if seq is not None else "the"
    parts, client, why = _opened(sig, device, origin)
    if why is not None:
        return f"{where} {why}"
    from webauthn import verify_authentication_response
    from webauthn.helpers.exceptions import WebAuthnException

    credential = {
        "id": b64u(parts["id"]),
        "rawId": b64u(parts["id"]),
        "type": "public-key",
        "response": {
            "authenticatorData": b64u(parts["authenticator_data"]),
            "clientDataJSON": b64u(parts["client_data_json"]),
            "signature": b64u(parts["signature"]),
        },
    }
    try:
        verify_authentication_response(
            credential=credential,
            expected_challenge=expected,
            expected_rp_id=device.rp_id,
            expected_origin=origin or str(client["origin"]),
            credential_public_key=device.public_key,
            credential_current_sign_count=0,
            require_user_verification=True,
        )
    except (WebAuthnException, ValueError, KeyError, TypeError) as err:
        return f"{where} device signature does not verify ({str(err)[:160]})"
    return None


def _opened(sig: str, device: Device, origin: str | None) -> tuple[dict[str, bytes], dict, str | None]:
    """The assertion's parts and client data, and why they are not one of ``device``'s on its page."""
    parts = decode_sig(sig)
    if parts is None or parts["id"] != device.credential_id:
        return {}, {}, "device signature is not an assertion of that device"
    try:
        client = json.loads(parts["client_data_json"])
    except ValueError:
        client = None
    if not isinstance(client, dict) or not isinstance(client.get("origin"), str):
        return parts, {}, "device signature's client data is not JSON"
    seen = client["origin"]
    if origin is None and not origin_fits(seen, device.rp_id):
        return parts, client, f"device signature was made on {seen[:100]!r}, not a page of {device.rp_id}"
    if origin is not None and seen != origin:
        return parts, client, f"device signature was made on {seen[:100]!r}, not on {origin}"
    return parts, client, None


def _client_fails(client: dict, expected: bytes) -> str | None:
    if client.get("type") != "webauthn.get":
        return "its client data is not an assertion's (webauthn.get)"
    if client.get("challenge") != b64u(expected):
        return "it signed another challenge"
    return None


def _authenticator_fails(data: bytes, rp_id: str) -> str | None:
    """The authenticator data of an assertion for ``rp_id``, the person present and verified."""
    if len(data) < 37:
        return "its authenticator data is shorter than 37 bytes"
    if data[:32] != _sha256(rp_id.encode("utf-8")):
        return f"it was made for another relying party than {rp_id}"
    flags = data[32]
    if not flags & UP:
        return "the person was not present"
    if not flags & UV:
        return "the person was not verified"
    if flags & BS and not flags & BE:
        return "its backup flags are impossible"
    if flags & AT or (not flags & ED and len(data) != 37):
        return "its authenticator data has more than an assertion's"  # (an extension's CBOR only, flagged ED)
    return None


def signature_holds(spki: bytes, alg: int, signature: bytes, data: bytes) -> bool:
    """Fail closed: ``signature`` is ``alg``'s over ``data`` by the SubjectPublicKeyInfo
    ``spki`` (ES256: ECDSA P-256 SHA-256; EdDSA: Ed25519; RS256: PKCS#1 v1.5 SHA-256)."""
    try:
        key: Any = _load_spki(spki)
        if alg == EDDSA:
            from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

            if not isinstance(key, Ed25519PublicKey):
                return False
            key.verify(signature, data)
        elif alg == ES256:
            from cryptography.hazmat.primitives import hashes
            from cryptography.hazmat.primitives.asymmetric import ec

            if not isinstance(key, ec.EllipticCurvePublicKey) or key.curve.name != "secp256r1":
                return False
            key.verify(signature, data, _ecdsa_sha256(ec.ECDSA, hashes.SHA256()))
        elif alg == RS256:
            from cryptography.hazmat.primitives import hashes
            from cryptography.hazmat.primitives.asymmetric import padding, rsa

            if not isinstance(key, rsa.RSAPublicKey):
                return False
            key.verify(signature, data, padding.PKCS1v15(), hashes.SHA256())
        else:
            return False
        return True
    except Exception:  # InvalidSignature, a malformed key or signature
        return False


def _ecdsa_sha256(ecdsa: type, algorithm: object) -> Any:
    """``ECDSA(SHA256())`` as ``verify`` reads it (its ``algorithm``), without the
    import of OpenSSL's whole backend (~8 ms cold) that ``ECDSA.__init__`` makes
    to ask whether it could sign deterministically, which a check never does."""

    class Verifying(ecdsa):
        def __init__(self) -> None:
            pass

        algorithm = property(lambda self: algorithm)
        deterministic_signing = property(lambda self: False)

    return Verifying()


def _load_spki(spki: bytes) -> object:
    """``serialization.load_der_public_key``, which is this very binding, without
    importing ``cryptography.hazmat.primitives.serialization`` (~30 ms cold)."""
    try:
        from cryptography.hazmat.bindings._rust import openssl as rust_openssl

        load = rust_openssl.keys.load_der_public_key
    except (ImportError, AttributeError):
        from cryptography.hazmat.primitives.serialization import load_der_public_key

        load = load_der_public_key
    return load(spki)


def spki_of(cose_key: bytes) -> tuple[bytes, int]:
    """At pairing: the passkey's COSE public key as SubjectPublicKeyInfo DER and its
    COSE algorithm, decoded by py_webauthn; ValueError if ``signature_holds`` could not check it."""
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat
    from webauthn.helpers import decode_credential_public_key, decoded_public_key_to_cryptography

    decoded = decode_credential_public_key(cose_key)
    alg = int(decoded.alg)
    key = decoded_public_key_to_cryptography(decoded)
    if alg not in ALGS or (
        alg == ES256 and not (isinstance(key, ec.EllipticCurvePublicKey) and key.curve.name == "secp256r1")
    ):
        raise ValueError(f"a passkey of COSE algorithm {alg}: LoopX pairs ES256 (P-256), EdDSA and RS256 only")
    return key.public_bytes(Encoding.DER, PublicFormat.SubjectPublicKeyInfo), alg


class Counters:
    """A device's counter only goes up, answer after answer (``loopx verify``
    walks the log in order): one that went back is a cloned or replayed passkey.
    The events of one answer (its ``gate_answered`` and the merge it made) share
    one assertion."""

    def __init__(self) -> None:
        self.last: dict[str, tuple[int, str]] = {}  # device -> (count, the nonce it answered)

    def see(self, row: EventRow) -> str | None:
        count = sign_count(row.sig) or 0
        nonce = str((row.payload().get("phone") or {}).get("nonce") or "")
        before = self.last.get(row.key or "")
        self.last[row.key or ""] = (max(count, before[0] if before else 0), nonce)
        if before is None or before[1] == nonce or not (count or before[0]):
            return None
        if count <= before[0]:
            return f"device {row.key}'s counter went back ({count} after {before[0]}): a cloned or replayed passkey"
        return None
