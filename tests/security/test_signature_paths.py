"""A person's signature is checked the same whichever way the Ed25519 key is
built: through cryptography's binding (the cold path: keys._ed25519_public) or
its public class (the fallback). Both refuse a changed message, a changed or
malformed signature and a malformed key."""

from __future__ import annotations

import sys

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import (
    Ed25519PrivateKey,
    Ed25519PublicKey,
)
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

from loopx_core.authority import keys


@pytest.fixture(params=["binding", "public class"])
def path(request, monkeypatch):
    if request.param == "public class":
        monkeypatch.setitem(
            sys.modules, "cryptography.hazmat.bindings._rust", None
        )  # `import` of it raises ImportError
    return request.param


def test_both_ways_give_the_same_answers(path):
    private = Ed25519PrivateKey.generate()
    public_raw = private.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
    message = b"loopx-event-v1:" + b"a" * 64
    signature = keys.b64(private.sign(message))
    other = keys.b64(Ed25519PrivateKey.generate().sign(message))

    built = keys._ed25519_public(public_raw)
    assert isinstance(built, Ed25519PublicKey) and built == Ed25519PublicKey.from_public_bytes(public_raw)
    assert keys.verify_signature(public_raw, signature, message) is True
    assert keys.verify_signature(public_raw, signature, message + b"x") is False
    assert keys.verify_signature(public_raw, other, message) is False
    assert keys.verify_signature(public_raw, signature[:-4] + "AAA=", message) is False
    assert keys.verify_signature(public_raw, "not base64!", message) is False
    assert keys.verify_signature(public_raw[:-1], signature, message) is False
    assert keys.verify_signature(b"\x00" * 32, signature, message) is False


def test_the_chains_digest_is_sha256():
    """rules/digest.py (CPython's own SHA-256, not OpenSSL's) hashes the event chain: the same digests as hashlib."""
    import hashlib

    from loopx_core.rules.digest import sha256_hex

    for data in (b"", b"loopx-genesis-v1:abc", "é ünïcode ✓".encode(), bytes(range(256)) * 300):
        assert sha256_hex(data) == hashlib.sha256(data).hexdigest()
