"""A person's devices: passkeys that answer gates from a phone (DESIGN §11 "A phone").

A device joins the board by a ``device_paired`` event signed with a person's
main key (``loopx phone pair``); a ``device_revoked`` event signed the same way
ends it. A device then signs nothing but one decision at a time: a WebAuthn
assertion whose challenge is the digest of exactly what was decided (the
``phone`` field every event it signs carries: gate, scope, question, lease,
pinned merge, answer, nonce). The event's ``key`` is the device's fingerprint
(``wa:…``) and its ``sig`` the assertion (authenticator data, clientDataJSON,
signature), so ``loopx verify`` re-checks it offline with py_webauthn, like
any decision.

Read with plain SQL through a ``query`` function; ``webauthn`` is imported only
when a device's signature is checked.
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

Device = namedtuple(
    "Device", "fingerprint credential_id public_key rp_id label person name sign_count added_seq revoked_seq"
)


def b64u(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")


def unb64u(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def fingerprint(credential_id: bytes) -> str:
    """A device's name in the log: short, whatever the credential id's length."""
    return PREFIX + sha256_hex(credential_id)[:32]


def challenge(decision: dict) -> bytes:
    """What the phone signs: the digest of exactly what is decided (canonical JSON)."""
    import hashlib

    return hashlib.sha256(CHALLENGE_PREFIX + chain.data_text(decision).encode("utf-8")).digest()


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
            except (KeyError, ValueError):
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
    ``device``'s key (py_webauthn's check; None: it does). ``origin``: the one
    the server expects; offline, any origin that fits the device's rp id."""
    where = f"event {seq}'s" if seq is not None else "the"
    parts = decode_sig(sig)
    if parts is None or parts["id"] != device.credential_id:
        return f"{where} device signature is not an assertion of that device"
    try:
        client = json.loads(parts["client_data_json"])
        seen = str(client.get("origin") or "")
    except (ValueError, AttributeError):
        return f"{where} device signature's client data is not JSON"
    if origin is None and not origin_fits(seen, device.rp_id):
        return f"{where} device signature was made on {seen[:100]!r}, not a page of {device.rp_id}"
    from webauthn import verify_authentication_response
    from webauthn.helpers.exceptions import InvalidAuthenticationResponse

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
            expected_origin=origin or seen,
            credential_public_key=device.public_key,
            credential_current_sign_count=0,
            require_user_verification=True,
        )
    except (InvalidAuthenticationResponse, ValueError, KeyError, TypeError) as err:
        return f"{where} device signature does not verify ({str(err)[:160]})"
    return None


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
