"""SHA-256 of the short texts the kernel hashes on every write (the event
chain, payload and packet digests, key fingerprints).

``hashlib`` loads OpenSSL's ``_hashlib`` at import (~2 ms of a cold agent
process); for inputs this short CPython's own SHA-256 — the module hashlib
itself falls back to — gives the same digest at no such cost. Files
(``artifacts``) keep hashlib's OpenSSL, which is faster on large inputs."""

from __future__ import annotations

import json

try:
    from _sha2 import sha256  # type: ignore[import-not-found]  # CPython 3.12+ (a private module: no stubs)
except ImportError:  # pragma: no cover - which one exists depends on the Python version
    try:
        from _sha256 import sha256  # type: ignore[import-not-found]  # CPython 3.11 (no stubs either)
    except ImportError:
        from hashlib import sha256


def sha256_hex(data: bytes) -> str:
    return sha256(data).hexdigest()


def payload_hash(data: dict) -> str:
    """The digest of a JSON payload, whatever its keys' order: a writeback's
    (a retried ``--turn-id`` must send the same) and an ``--op-id``'s."""
    return sha256_hex(json.dumps(data, sort_keys=True, separators=(",", ":")).encode())
