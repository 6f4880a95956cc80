"""A person's signing key (SECURITY.md "The human key").

An Ed25519 key pair in one JSON file, by default ``<user config dir>/loopx/key.json``
(``LOOPX_KEY`` names another file). The private half is sealed with a
passphrase (scrypt → AES-256-GCM) unless the person chose none. Agents run as
the same OS user, so the file alone is not a boundary: the passphrase is, or the
runtime's sandbox that denies reading this folder (``loopx init --for …``).

``cryptography`` is imported only when a key is made, opened or used.
"""

from __future__ import annotations

import binascii
import json
import os

from ..rules.digest import sha256_hex
from ..rules.person_folder import (
    person_folder as config_folder,  # the one rule: the hook denies this folder
)

TYPE_CHECKING = False  # (annotations only: typing is not imported on the cold path; checkers read this as typing's)
if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path
    from typing import Protocol

    from cryptography.hazmat.primitives.asymmetric.ed25519 import (
        Ed25519PrivateKey,
        Ed25519PublicKey,
    )

    class Signer(Protocol):
        """What signs for a person: their Ed25519 key, this terminal's holder
        of it (authority/unlock.py), or a stand-in that refuses (``stand_in``)."""

        def sign(self, message: bytes, /) -> bytes: ...

    class Answers(Protocol):
        """What answers a gate for a person: a ``Person`` (their main key) or
        a device of theirs signing one decision (ops/phones.DeviceSigner)."""

        fingerprint: str

        @property
        def actor(self) -> str: ...

        def sign(self, message: bytes) -> str: ...

# The PreToolUse hook reads this module (to check an approval's signature) before
# every tool call a gate allowed: pathlib, base64 and the kernel's errors cost it
# milliseconds it never uses, so they are imported where they are (docs/PERFORMANCE.md).

FORMAT = 1
KEY_MAX = 1 << 20  # bytes of a key file read (one is ~1 KB)
SCRYPT = {"n": 1 << 15, "r": 8, "p": 1}  # ~0.1 s and 32 MiB per unlock: slow to guess, quick to type


def b64(raw: bytes) -> str:
    """``base64.b64encode(raw)`` as text."""
    return binascii.b2a_base64(raw, newline=False).decode("ascii")


def unb64(text: str) -> bytes:
    """``base64.b64decode(text, validate=True)``, which is exactly this call
    (ValueError on anything but strict base64)."""
    return binascii.a2b_base64(text.encode("ascii"), strict_mode=True)


def fingerprint(public_raw: bytes) -> str:
    """A short, stable name of a public key (what events record as ``key``)."""
    return sha256_hex(public_raw)[:16]


def config_dir() -> Path:
    """``config_folder()`` as a Path."""
    from pathlib import Path

    return Path(config_folder())


def key_path() -> Path:
    from pathlib import Path

    raw = os.environ.get("LOOPX_KEY")
    return Path(raw).expanduser() if raw else config_dir() / "key.json"


class Person:
    """A person who proved it: their name on the board and an unlocked key.
    Passed to operators where an actor string would be; only a Person can
    write an event whose actor is ``human:…`` (``events.emit`` signs it)."""

    __slots__ = ("name", "fingerprint", "public_raw", "_private")

    def __init__(self, name: str, private_key: Signer, public_raw: bytes):
        self.name = name
        self._private = private_key
        self.public_raw = public_raw
        self.fingerprint = fingerprint(public_raw)

    @property
    def actor(self) -> str:
        return f"human:{self.name}"

    def named(self, name: str) -> Person:
        """The same key under the name the board knows it by."""
        return Person(name, self._private, self.public_raw)

    def sign(self, message: bytes) -> str:
        return b64(self._private.sign(message))  # (an Ed25519 key, or this terminal's unlock: authority/unlock.py)

    def __str__(self) -> str:  # reads like the actor string it replaces
        return self.actor

    def __repr__(self) -> str:
        return f"Person({self.name!r}, {self.fingerprint})"


class KeyFile:
    """What the key file says without unlocking it."""

    def __init__(self, path: Path, doc: dict):
        self.path, self.doc = path, doc
        self.name: str = doc["name"]
        self.public_raw = unb64(doc["public"])
        self.fingerprint = fingerprint(self.public_raw)
        self.sealed = "sealed" in doc["secret"]

    def unlock(self, passphrase: str | None = None) -> Person:
        from cryptography.exceptions import InvalidTag
        from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

        from ..shapes.errors import Forbidden, InvalidInput

        secret = self.doc["secret"]
        if self.sealed:
            if passphrase is None:
                raise Forbidden(
                    f"your key {self.path} is locked with a passphrase",
                    "run this in a terminal so LoopX can ask for it",
                )
            try:
                seed = _open_seal(secret, passphrase)
            except InvalidTag:
                raise Forbidden(
                    "wrong passphrase for your LoopX key",
                    "try again; `loopx key passphrase` changes it",
                    code="wrong_passphrase",
                ) from None
        else:
            seed = unb64(secret["plain"])
        private = Ed25519PrivateKey.from_private_bytes(seed)
        if _public_raw(private) != self.public_raw:
            raise InvalidInput(
                f"{self.path} is damaged: its private and public halves differ",
                "make a new key with `loopx key init --force`",
            )
        return Person(self.name, private, self.public_raw)


def read(path: Path | None = None) -> KeyFile | None:
    """The key file, or None when there is none."""
    from ..rules import given_paths
    from ..shapes.errors import InvalidInput

    path = path or key_path()
    try:
        raw = given_paths.read_regular(
            str(path),
            KEY_MAX,
            "your LoopX key",
            "fix LOOPX_KEY, or make a new key with `loopx key init --force`",
            missing_ok=True,
        )
        if raw is None:
            return None
        doc = json.loads(raw.decode("utf-8"))
        if not isinstance(doc, dict) or doc.get("loopx_key") != FORMAT:
            raise ValueError("not a LoopX key file")
        return KeyFile(path, doc)
    except FileNotFoundError:
        return None
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise InvalidInput(
            f"cannot read your LoopX key {path}: {exc}",
            "fix LOOPX_KEY, or make a new key with `loopx key init --force`",
        ) from None


def unlock(path: Path | None = None, *, ask: Callable[[str], str] | None = None, tries: int = 1) -> Person:
    """Load and unlock the person's key. ``ask(prompt)`` reads a passphrase
    (default: the controlling terminal, never stdin), up to ``tries`` times
    while it is wrong (as sudo does); the last wrong one is raised."""
    from ..shapes.errors import Forbidden

    found = read(path)
    if found is None:
        where = path or key_path()
        raise Forbidden(
            f"no LoopX key at {where}: only a person with a key can do this",
            "make yours with `loopx key init` (it asks for a passphrase)",
        )
    if not found.sealed:
        return found.unlock()
    prompt = f"Passphrase for LoopX key {found.fingerprint} ({found.name}): "
    for attempt in range(1, tries + 1):
        try:
            return found.unlock((ask or ask_terminal)(prompt))
        except Forbidden as err:
            if err.code != "wrong_passphrase" or attempt == tries:
                raise
            prompt = f"Wrong passphrase, try again ({attempt + 1} of {tries}): "
    raise AssertionError("unreachable")


def ask_terminal(prompt: str) -> str:
    """Read a passphrase from the controlling terminal (``/dev/tty``), echo off."""
    import getpass

    from ..shapes.errors import Forbidden

    try:
        os.close(os.open("/dev/tty", os.O_RDWR | os.O_NOCTTY))  # getpass would fall back to stdin without one
    except OSError:
        raise Forbidden(
            "your LoopX key is locked with a passphrase and there is no terminal to ask for it",
            "run this command in a terminal (or answer in the board)",
        ) from None
    try:
        return getpass.getpass(prompt)
    except EOFError:  # the terminal closed before a line came (input typed ahead is flushed)
        raise Forbidden("no passphrase was typed", "type it at the prompt") from None


class WouldSign(BaseException):  # noqa: N818 - not an error: the end of a check
    """A stand-in's first signature: the checks before it passed. A
    BaseException, so no handler's ``except Exception`` swallows it and every
    transaction it crosses rolls back."""


class _StandInKey:
    def sign(self, message: bytes) -> bytes:
        raise WouldSign


def stand_in(path: Path | None = None) -> Person:
    """The person's public half with no private one: it passes who-is-a-person
    checks and stops at the first signature (check before asking)."""
    from ..shapes.errors import Forbidden

    found = read(path)
    if found is None:
        where = path or key_path()
        raise Forbidden(
            f"no LoopX key at {where}: only a person with a key can do this",
            "make yours with `loopx key init` (it asks for a passphrase)",
        )
    return Person(found.name, _StandInKey(), found.public_raw)


def create(path: Path, name: str, passphrase: str | None, *, force: bool = False) -> KeyFile:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    from ..shapes.errors import UsageError

    if path.exists() and not force:
        raise UsageError(
            f"a LoopX key already exists at {path}",
            "keep it (`loopx key show`), or replace it with `--force` (boards trusting the old one must add the new one)",
        )
    private = Ed25519PrivateKey.generate()
    return save(path, Person(name, private, _public_raw(private)), passphrase)


def reseal(found: KeyFile, person: Person, passphrase: str | None) -> KeyFile:
    """Write the same key under a new passphrase (or none)."""
    return save(found.path, person, passphrase)


def save(path: Path, person: Person, passphrase: str | None = None) -> KeyFile:
    """Write ``person``'s key to ``path`` (sealed when given a passphrase)."""
    from cryptography.hazmat.primitives.serialization import (
        Encoding,
        NoEncryption,
        PrivateFormat,
    )

    # (only a person unlocked from a key file is saved: their signer is the Ed25519 key itself)
    seed = person._private.private_bytes(Encoding.Raw, PrivateFormat.Raw, NoEncryption())  # type: ignore[attr-defined]  # (see above)
    doc = {
        "loopx_key": FORMAT,
        "name": person.name,
        "public": b64(person.public_raw),
        "secret": _seal(seed, passphrase) if passphrase else {"plain": b64(seed)},
    }
    write(path, doc)
    return KeyFile(path, doc)


def write(path: Path, doc: dict) -> None:
    """Atomically, readable by its owner only."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    tmp = path.with_name(path.name + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        json.dump(doc, fh, indent=2)
        fh.write("\n")
    os.replace(tmp, path)


def _public_raw(private: Ed25519PrivateKey) -> bytes:
    # (public_bytes_raw, not public_bytes(Encoding.Raw, …): the serialization
    # package and its SSH formats cost a person's every signed verb ~15 ms.)
    return private.public_key().public_bytes_raw()


def _derive(passphrase: str, salt: bytes, n: int, r: int, p: int) -> bytes:
    import hashlib

    return hashlib.scrypt(passphrase.encode("utf-8"), salt=salt, n=n, r=r, p=p, maxmem=128 * n * r * 2, dklen=32)


def _seal(seed: bytes, passphrase: str) -> dict:
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM

    salt, nonce = os.urandom(16), os.urandom(12)
    box = AESGCM(_derive(passphrase, salt, **SCRYPT)).encrypt(nonce, seed, b"loopx-key-v1")
    return {"kdf": "scrypt", **SCRYPT, "salt": b64(salt), "nonce": b64(nonce), "sealed": b64(box)}


def _open_seal(secret: dict, passphrase: str) -> bytes:
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM

    key = _derive(passphrase, unb64(secret["salt"]), int(secret["n"]), int(secret["r"]), int(secret["p"]))
    return AESGCM(key).decrypt(unb64(secret["nonce"]), unb64(secret["sealed"]), b"loopx-key-v1")


def _ed25519_public(public_raw: bytes) -> Ed25519PublicKey:
    """The Ed25519 public key object. Built by the binding the public class
    itself calls (``Ed25519PublicKey.from_public_bytes`` returns this very
    object), without importing ``cryptography.hazmat.primitives``, whose
    modules (typing, serialization, hashes) cost a cold agent process ~8 ms on
    every gate it asks under a capability; the public class when the binding
    is laid out otherwise (tests/security/test_signature_paths.py holds both equal)."""
    try:
        from cryptography.hazmat.bindings._rust import openssl as rust_openssl

        from_bytes = rust_openssl.ed25519.from_public_bytes
    except (ImportError, AttributeError):
        from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

        from_bytes = Ed25519PublicKey.from_public_bytes
    return from_bytes(public_raw)


def verify_signature(public_raw: bytes, signature_b64: str, message: bytes) -> bool:
    """Fail closed: anything but a signature that verifies is False."""
    try:
        _ed25519_public(public_raw).verify(unb64(signature_b64), message)
        return True
    except Exception:  # InvalidSignature, a malformed key or signature (ValueError, TypeError, binascii.Error)
        return False


def ephemeral(name: str, seed: bytes | None = None) -> Person:
    """A key that lives in memory only: the person of a seeded or demo board
    (``seed`` makes it reproducible; such a key protects nothing and must never
    sign for a real board)."""
    import hashlib

    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    private = (
        Ed25519PrivateKey.from_private_bytes(hashlib.sha256(seed).digest())
        if seed is not None
        else Ed25519PrivateKey.generate()
    )
    return Person(name, private, _public_raw(private))


def default_name() -> str:
    """The name a new key gets: ``LOOPX_HUMAN`` (display only: it grants nothing), else the login name."""
    import re

    name = os.environ.get("LOOPX_HUMAN")
    if not name:
        try:
            import getpass

            name = getpass.getuser()
        except Exception:  # no passwd entry in some containers
            name = "person"
    name = re.sub(r"[^A-Za-z0-9._-]", "-", name)[:64].strip("-")
    return name or "person"
