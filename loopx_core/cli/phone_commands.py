"""The phone's verbs (DESIGN §11 "A phone"): ``phone pair|list|revoke`` and
``serve``, the person's own process that serves the phone's page."""

from __future__ import annotations

import secrets
import sys
import threading
import time
from urllib.parse import urlsplit

from ..rules.text import terminal_safe
from ..shapes.errors import UsageError
from . import Context, Outcome

TYPE_CHECKING = False  # (annotations only)
if TYPE_CHECKING:
    from ..adapters.phone_server import Pairing, PhoneServer


def _origin(origin: str | None) -> str | None:
    if origin is None:
        return None
    parts = urlsplit(origin)
    local = parts.hostname == "localhost"
    if parts.scheme not in ("https", "http") or not parts.hostname or parts.path not in ("", "/"):
        raise UsageError(f"not a page's address: {origin[:200]!r}", "e.g. --origin https://board.example.ts.net")
    if parts.scheme == "http" and not local:
        raise UsageError(
            "a passkey works only on https (or http://localhost)",
            "reach the page through your tailnet's HTTPS or a reverse proxy with a certificate (docs/guide/phone.md)",
        )
    return origin.rstrip("/")


def _listen(ctx: Context, pairing: Pairing | None = None) -> PhoneServer:
    from ..adapters.phone_server import PhoneServer

    a = ctx.args
    try:
        return PhoneServer(ctx.store, a.host, a.port, _origin(a.origin), pairing)
    except OSError as err:
        raise UsageError(
            f"cannot listen on {a.host}:{a.port}: {err.strerror or err}",
            "pick another with --port (or stop what uses it)",
        ) from None


def cmd_phone_pair(ctx: Context) -> Outcome:
    from ..adapters.phone_server import Pairing
    from ..ops import phones
    from ..rules.durations import parse_duration

    person = ctx.person("pair a device")
    try:
        expires = parse_duration(ctx.args.expires)
    except ValueError as exc:
        raise UsageError(f"--expires: {exc}", "e.g. --expires 5m") from None
    if not 0 < expires <= 3600:
        raise UsageError("--expires is more than 0 and at most 1h", "e.g. --expires 5m")
    token = secrets.token_urlsafe(24)
    box: dict[str, PhoneServer] = {}

    def finish(credential_id: bytes, public_key: bytes, count: int, label: str) -> dict:
        server = box["server"]
        return phones.pair(ctx.store, person, credential_id, public_key, count, server.rp_id, server.origin, label)

    pairing = Pairing(token, time.time() + expires, person.name, person.fingerprint.encode(), finish)
    server = box["server"] = _listen(ctx, pairing)
    url = f"{server.origin}/pair#t={token}"
    import segno

    out = sys.stderr
    print(f"Scan with your phone, or open on it (once, within {ctx.args.expires}):", file=out)
    segno.make(url, error="m").terminal(out=out, compact=True)
    print(url, file=out, flush=True)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.2}, daemon=True)
    thread.start()
    try:
        pairing.done.wait(max(0.0, pairing.expires_at - time.time()))
    except KeyboardInterrupt:
        pass
    finally:
        server.shutdown()
        server.server_close()
    if pairing.result is None:
        raise UsageError("no phone paired before the code expired", "run `loopx phone pair` again")
    found = pairing.result
    return Outcome(
        {"device": found},
        0,
        f"paired {terminal_safe(found['label'])} ({found['device']}) as your device: `loopx serve`, then answer gates on it",
    )


def cmd_phone_list(ctx: Context) -> Outcome:
    from ..ops import phones

    found = phones.listing(ctx.store)
    lines = [
        f"{d['device']}  {terminal_safe(d['label'])}  {d['person']}  {d['rp_id']}"
        + ("  revoked" if d["revoked"] else "")
        for d in found
    ]
    return Outcome({"devices": found}, 0, "\n".join(lines) or "no device is paired (`loopx phone pair`)")


def cmd_phone_revoke(ctx: Context) -> Outcome:
    from ..ops import phones

    out = phones.revoke(ctx.store, ctx.person("revoke a device"), ctx.args.device.strip())
    return Outcome(
        {"device": out},
        0,
        f"revoked {terminal_safe(out['label'])} ({out['device']}): its answers count for nothing now",
    )


def cmd_serve(ctx: Context) -> int:
    ctx.refuse_agent("serve the phone's page")
    server = _listen(ctx)
    print(f"serving what needs you at {server.url} (Ctrl-C stops)", file=sys.stderr, flush=True)
    try:
        server.serve_forever(poll_interval=0.2)
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0
