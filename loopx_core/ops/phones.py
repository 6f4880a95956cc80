"""A person's phone: pair a passkey, list and revoke devices, and answer a
gate with a WebAuthn assertion (DESIGN §11 "A phone", authority/devices.py).

Pairing and revoking are the person's signed decisions (their main key).
An answer from the phone is recorded by the gate-answer operator itself
(``gates.answer``), signed by the device: the event carries the decision the
assertion's challenge is the digest of, and the assertion.
"""

from __future__ import annotations

import time

from ..authority import devices
from ..rules import clock, ids
from ..rules.scopes import covers
from ..shapes.errors import Conflict, Forbidden, InvalidInput, NotFound
from ..shapes.values import CardView, GateView
from ..store import events, records
from . import cards, dangerous, gates, merges

TYPE_CHECKING = False  # (annotations only; checkers read this as typing's)
if TYPE_CHECKING:
    from typing import Any

    from ..authority.keys import Person
    from ..store.base import Store

LABEL_MAX = 64


class DeviceSigner:
    """The person, answering on a device: what ``events.emit`` signs with. Its
    "signature" is the assertion the phone made over ``attests`` (the decision)."""

    def __init__(self, device: devices.Device, decision: dict, sig: str):
        self.actor = f"human:{device.name}"
        self.fingerprint = device.fingerprint
        self.attests = decision
        self._sig = sig

    def sign(self, message: bytes) -> str:
        return self._sig


def pair(
    store: Store,
    person: Person,
    credential_id: bytes,
    public_key: bytes,
    sign_count: int,
    rp_id: str,
    origin: str,
    label: str,
) -> dict:
    """Add a device (one transaction), signed with the person's main key. The
    event records its COSE key and, for the readers' check, the same key as
    SubjectPublicKeyInfo with its algorithm (``devices.spki_of``)."""
    label = " ".join(label.split())[:LABEL_MAX] or "phone"
    fp = devices.fingerprint(credential_id)
    try:
        spki, alg = devices.spki_of(public_key)
    except Exception as err:  # (py_webauthn's decoding errors, or an algorithm LoopX does not check)
        raise InvalidInput(f"not a passkey LoopX can pair: {str(err)[:200]}", "pair a passkey of the phone") from None

    def body() -> dict:
        store.forget_trust()
        if fp in store.trust().devices():
            raise Conflict(f"device {fp} is already paired", "`loopx phone list` shows it", code="already_paired")
        seq = events.emit(
            person,
            devices.PAIRED,
            None,
            device=fp,
            credential_id=devices.b64u(credential_id),
            public_key=devices.b64u(public_key),
            spki=devices.b64u(spki),
            alg=alg,
            sign_count=sign_count,
            rp_id=rp_id,
            origin=origin,
            label=label,
        )
        return {"device": fp, "label": label, "rp_id": rp_id, "seq": seq}

    try:
        return store.run(body)
    finally:
        store.forget_trust()


def listing(store: Store) -> list[dict]:
    with store.read():
        store.forget_trust()
        found = store.trust().devices()
        return [
            {
                "device": d.fingerprint,
                "label": d.label,
                "person": d.name,
                "rp_id": d.rp_id,
                "paired_seq": d.added_seq,
                "revoked": d.revoked_seq is not None,
                "last_used_seq": last_use(d.fingerprint)[1],
            }
            for d in found.values()
        ]


def revoke(store: Store, person: Person, fp: str) -> dict:
    def body() -> dict:
        store.forget_trust()
        found = store.trust().devices()
        matches = [d for d in found.values() if d.fingerprint == fp or d.fingerprint.startswith(fp) or d.label == fp]
        if not matches or not fp:
            raise NotFound(
                f"no one paired device {fp[:80]!r}", "`loopx phone list` shows the devices", code="unknown_device"
            )
        if len(matches) > 1:
            raise InvalidInput(
                f"{fp[:80]!r} names {len(matches)} devices",
                "give its whole fingerprint, as `loopx phone list` shows it",
            )
        device = matches[0]
        if device.revoked_seq is not None:
            raise Conflict(f"device {device.fingerprint} is already revoked", "nothing to do", code="already_revoked")
        events.emit(person, devices.REVOKED, None, device=device.fingerprint, label=device.label)
        return {"device": device.fingerprint, "label": device.label}

    try:
        return store.run(body)
    finally:
        store.forget_trust()


def last_use(fp: str) -> tuple[int, int | None]:
    """The highest sign count the device's recorded answers carry, and the newest one's seq."""
    count, seq = 0, None
    for row_seq, sig in records.rows('SELECT "seq", "sig" FROM "event" WHERE "key" = ? ORDER BY "seq"', (fp,)):
        count, seq = max(count, devices.sign_count(sig) or 0), row_seq
    return count, seq


def usable(store: Store) -> dict[str, devices.Device]:
    """The devices that may answer now (paired, not revoked), reloaded from the log."""
    store.forget_trust()
    return {fp: d for fp, d in store.trust().devices().items() if d.revoked_seq is None}


# -- what needs the person, and deciding it ---------------------------------------------


def needs(store: Store) -> list[dict[str, Any]]:
    """The pending gates, as the phone shows them (a merge with its diff summary)."""
    found = []
    for view in gates.list_gates(store, pending=True):
        item: dict[str, Any] = {
            "gate": view.key,
            "card": ids.fmt(ids.CARD, view.card),
            "agent": view.agent,
            "kind": view.kind,
            "question": view.question,
            "scope": view.scope,
            "options": list(view.options),
            "asked_at": view.created_at,
            "refused": _refused(store, view),
        }
        if view.kind == merges.KIND:
            with store.read():
                row = _gate(view.id)
            diff = merges.gate_diff(store, row)
            if diff is not None:
                item["diff"] = {
                    "base": diff.base,
                    "branch": diff.branch,
                    "commits": diff.commits,
                    "head": diff.pin.head if diff.pin is not None else None,
                    "files": [[f.path, f.added, f.removed] for f in diff.files[:40]],
                    "more": diff.more + max(0, len(diff.files) - 40),
                }
        found.append(item)
    return found


def paused(store: Store, limit: int = 20) -> list[dict[str, Any]]:
    """The paused cards (a budget or window spent, a person's pause): shown, decided on the board."""
    found, _ = cards.card_page(store, "paused", limit=limit)
    return [{"card": c.key, "title": c.title, "owner": c.assignee, "reason": c.paused_reason} for c in found]


def _gate(gate_id: int) -> Any:
    from ..store.records import Gate

    row = Gate.get(gate_id)
    if row is None:
        raise NotFound(f"no gate {ids.fmt(ids.GATE, gate_id)}", "reload the page", code="unknown_gate")
    return row


def _refused(store: Store, view: GateView) -> str | None:
    """Why this gate is not answered from a phone (None: it can be)."""
    key = view.key
    if view.kind == merges.KIND:
        with store.read():
            plan = merges.plan_of(_gate(view.id))
        if plan.ground:
            return f"{key}'s merge changes the repository's ground ({', '.join(plan.ground[:5])}): it takes your second key — answer it on the board (y, then Y)"
    if view.scope:
        with store.read():
            marked = dangerous.patterns(store)
        if any(covers(p, view.scope) for p in marked):
            return f"{view.scope} is a scope you marked dangerous: it takes your second key — answer {key} on the board (y, then Y)"
    return None


def decide(store: Store, gate_id: int, decision: str, choice: str | None, text: str | None, nonce: str) -> dict:
    """Exactly what the phone is asked to sign for this answer: the digest of it is the challenge."""
    if decision not in ("approve", "reject"):
        raise InvalidInput("answer approve or reject", "tap a button on the page")
    with store.read():
        gate = _gate(gate_id)
        view = gates.checked_view(store, gate)
        plan = merges.plan_of(gate) if gate.kind == merges.KIND else None
    if view.status != "pending":
        raise Conflict(f"{view.key} is already {view.status}", "reload the page", code="already_answered")
    why = _refused(store, view)
    if why is not None and decision == "approve":
        raise Forbidden(why, "open the board (`loopx`) and answer it there", code="second_key_needed")
    if decision == "reject" and (choice or text):
        raise InvalidInput("an option or your words say yes", "tap Reject alone to say no")
    answer = "rejected" if decision == "reject" else "approved"
    if choice is not None:
        answer = gates.chosen_option(gate, choice)
    elif text is not None:
        if not text.strip():
            raise InvalidInput("the answer's text is empty", "write the answer, or tap Approve")
        answer = text
    return {
        "v": 1,
        "gate": view.key,
        "card": ids.fmt(ids.CARD, view.card),
        "agent": view.agent,
        "scope": view.scope,
        "question": devices.question_digest(view.question),
        "lease_token": gate.lease_token,
        "head": plan.head if plan is not None else None,
        "base_commit": plan.base_commit if plan is not None else None,
        "decision": decision,
        "answer": answer,
        "choice": choice is not None,
        "nonce": nonce,
    }


def answer(store: Store, decision: dict, sig: str, device: devices.Device) -> tuple[GateView, CardView]:
    """Record the phone's answer through the gate-answer operator, signed by the device."""
    gate_id = ids.parse(ids.GATE, decision["gate"])
    choice = decision["answer"] if decision["choice"] else None
    text = (
        decision["answer"]
        if decision["decision"] == "approve" and not choice and decision["answer"] != "approved"
        else None
    )
    now = clock.now()
    note = f"answered on phone {time.strftime('%H:%M:%S', time.localtime(now))} ({device.label}, {device.fingerprint[:11]})"
    return gates.answer(
        store,
        gate_id,
        decision["decision"],
        DeviceSigner(device, decision, sig),
        note=note,
        choice=choice,
        text=text,
    )
