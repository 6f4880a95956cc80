"""The verbs of keys, people and verification (SECURITY.md): ``key``,
``person``, ``verify``, and the key step of ``init``."""

from __future__ import annotations

import json
import shlex
import sys

from ..authority import keys
from ..rules.text import terminal_safe
from ..shapes.errors import (
    ALTERED,
    Altered,
    Forbidden,
    InvalidInput,
    NotFound,
    UsageError,
)
from . import Context, Outcome

TYPE_CHECKING = False  # (annotations only; checkers read this as typing's)
if TYPE_CHECKING:
    import argparse
    from typing import Any

    from ..adapters.policy import Policy
    from ..ops import notify
    from ..store.backends import Store


def _interactive() -> bool:
    return sys.stdin.isatty()


def _new_passphrase() -> str | None:
    """Ask twice on the terminal; empty means none."""
    first = keys.ask_terminal(
        "New passphrase for your LoopX key (empty: none — then only an agent sandbox protects it): "
    )
    if not first:
        return None
    if keys.ask_terminal("Again: ") != first:
        raise UsageError("the two passphrases differ", "run the command again")
    return first


def _unsealed_warning(found: keys.KeyFile) -> str:
    return (
        f"your key {found.fingerprint} has NO passphrase: any program running as you — agents included — can sign as you "
        "unless the runtime's sandbox keeps them out of "
        + str(found.path.parent)
        + " (`loopx init --for claude-code|codex` turns it on). "
        "Seal it: `loopx key passphrase`."
    )


def person_for_init(args: argparse.Namespace) -> tuple[keys.Person, str]:
    """The person running ``init``: their key, made now if they have none."""
    found = keys.read()
    if found is not None:
        return keys.unlock(found.path), ""
    passphrase = _new_passphrase() if _interactive() else None
    found = keys.create(keys.key_path(), getattr(args, "name", None) or keys.default_name(), passphrase)
    note = f"made your LoopX key {found.fingerprint} ({found.name}) at {found.path}"
    if not found.sealed:
        note += "\n" + _unsealed_warning(found)
    # the passphrase was typed twice a moment ago: signing with it asks no third time
    return found.unlock(passphrase), note


def cmd_key_init(ctx: Context) -> Outcome:
    ctx.refuse_agent("make a person's key")
    a = ctx.args
    name = a.name or keys.default_name()
    from ..rules.limits import AGENT_ID

    if not AGENT_ID.fullmatch(name):
        raise UsageError(f"not a usable name: {name[:64]!r}", "letters, digits and ._- (at most 64), e.g. alice")
    passphrase = None if a.no_passphrase else (_new_passphrase() if _interactive() else None)
    if not a.no_passphrase and not _interactive():
        raise UsageError(
            "making a key with a passphrase needs a terminal",
            "run it in a terminal, or pass --no-passphrase (only safe where agents run in their sandbox)",
        )
    found = keys.create(keys.key_path(), name, passphrase, force=a.force)
    text = f"made your LoopX key {found.fingerprint} ({found.name}) at {found.path}"
    if not found.sealed:
        text += "\n" + _unsealed_warning(found)
    text += "\nnext: `loopx init` in your project makes a board with you as its first person; on an existing board a person adds you with `loopx person add`"
    return Outcome({"key": _key_json(found)}, 0, text)


def _key_json(found: keys.KeyFile) -> dict:
    return {
        "fingerprint": found.fingerprint,
        "name": found.name,
        "public_key": keys.b64(found.public_raw),
        "path": str(found.path),
        "sealed": found.sealed,
    }


def cmd_key_show(ctx: Context) -> Outcome:
    found = keys.read()
    if found is None:
        raise Forbidden(f"no LoopX key at {keys.key_path()}", "make one with `loopx key init`")
    data = _key_json(found)
    from ..authority import unlock
    from ..rules import clock

    left = unlock.time_left(found.fingerprint) if found.sealed else None
    data["unlocked_here_for"] = left
    held = (
        f"  unlocked in this terminal for {clock.human_delta(left)} more unless used (`loopx key lock` ends it)"
        if left is not None
        else ""
    )
    text = (
        f"{found.name}  {found.fingerprint}  {'sealed with a passphrase' if found.sealed else 'NO passphrase'}{held}\n"
        f"public key: {data['public_key']}\n"
        f"→ a person on a board adds you with: loopx person add {found.name} {data['public_key']}"
    )
    return Outcome({"key": data}, 0, text)


def cmd_key_lock(ctx: Context) -> Outcome:
    from ..authority import unlock

    ended = unlock.lock_all()
    text = f"locked: {ended} unlock{'s' if ended != 1 else ''} ended" if ended else "locked: no terminal held an unlock"
    return Outcome({"locked": ended}, 0, text + "\nthe next signed verb asks for your passphrase")


def cmd_key_passphrase(ctx: Context) -> Outcome:
    ctx.refuse_agent("change a person's key")
    found = keys.read()
    if found is None:
        raise Forbidden(f"no LoopX key at {keys.key_path()}", "make one with `loopx key init`")
    person = keys.unlock(found.path)
    if ctx.args.none:
        passphrase = None
    elif not _interactive():
        raise UsageError("setting a passphrase needs a terminal", "run it in a terminal")
    else:
        passphrase = _new_passphrase()
    found = keys.reseal(found, person, passphrase)
    from ..authority import unlock

    unlock.lock_all()  # (an unlock of the old passphrase ends with it)
    text = "passphrase set" if found.sealed else "passphrase removed\n" + _unsealed_warning(found)
    return Outcome({"key": _key_json(found)}, 0, text)


def cmd_key_trust(ctx: Context) -> Outcome:
    """Pin this board's root on this machine, after checking it is the one a person read out."""
    from ..authority import trust

    store = ctx.store
    t = store.trust()
    want = ctx.args.fingerprint.strip()
    if ctx.args.replace:
        return _replace_board(ctx, want)
    if t.changed:
        raise Altered(t.changed, "to accept it: `loopx key trust ROOT_FINGERPRINT --replace`")
    if t.root is None:
        raise Forbidden(
            "this board has no trusted root person",
            "; ".join(t.problems) or "it was made by an older LoopX: a person runs `loopx init` on it",
        )
    if t.root.fingerprint != want:
        raise Forbidden(
            f"this board's root key is {t.root.fingerprint}, not {want}",
            "do not trust it: ask the person who made the board to read you its fingerprint (`loopx person list`)",
        )
    trust.pin(store.board_uid(), t.root, store.location.describe())
    store.forget_trust()
    return Outcome(
        {"pinned": {"board": store.board_uid(), "root": want}},
        0,
        f"pinned {want} ({t.root.name}) as this board's root on this machine",
    )


def _replace_board(ctx: Context, want: str) -> Outcome:
    """The person accepts the board found here as it is now — another board
    where this machine knew one, or a log that went back behind what this
    machine saw: its root must be the one they name, and their key one of its
    people; they sign the acceptance on the board."""
    from ..ops.people import accept_board

    ctx.refuse_agent("accept a board")
    found = accept_board(ctx.store, keys.unlock(), want)
    was = f"; it replaces board {found['replaces']} here" if found["replaces"] else ""
    return Outcome(
        {"accepted": found},
        0,
        f"accepted board {found['board']} at {found['place']} with root {want}{was}; this machine follows its log from event {found['seq']}",
    )


def cmd_person_add(ctx: Context) -> Outcome:
    from ..ops.people import add_person

    a = ctx.args
    from ..rules.limits import AGENT_ID

    if not AGENT_ID.fullmatch(a.name):
        raise UsageError(f"not a usable name: {a.name[:64]!r}", "letters, digits and ._- (at most 64), e.g. bob")
    added = add_person(ctx.store, ctx.person("add people to a board"), a.name, a.public_key)
    root = ctx.store.trust().root  # (a board with people has its root)
    pin = f"\n→ on their machine: `loopx key trust {root.fingerprint}` pins this board" if root is not None else ""
    return Outcome(
        {"person": added},
        0,
        f"added {added['name']} ({added['fingerprint']}): their signed decisions now count on this board{pin}",
    )


def cmd_person_list(ctx: Context) -> Outcome:
    from ..ops.people import list_people

    found = list_people(ctx.store)
    lines = [
        f"{p['fingerprint']}  {p['name']:<16} {'root ' if p['root'] else ''}{'revoked' if p['revoked'] else ('trusted' if p['trusted'] else 'NOT trusted')}"
        for p in found
    ]
    problems = ctx.store.trust().problems
    return Outcome(
        {"people": found, "problems": problems},
        0,
        "\n".join(lines + [f"! {p}" for p in problems])
        or "no people: this board predates signing — a person runs `loopx init` on it",
    )


def cmd_person_revoke(ctx: Context) -> Outcome:
    from ..ops.people import revoke_person

    out = revoke_person(ctx.store, ctx.person("revoke people"), ctx.args.fingerprint.strip())
    return Outcome(
        {"person": out},
        0,
        f"revoked {out['name']} ({out['fingerprint']}): signatures made with it from now on count for nothing",
    )


def cmd_verify(ctx: Context) -> Outcome:
    from ..authority import verify

    if ctx.args.file:
        report = verify.verify_export(_read_export(ctx.args.file), root=ctx.args.root)
    else:
        damage = _file_damage(ctx.store)
        if damage:
            return damage
        report = verify.verify_store(ctx.store)
        verify.save_anchor(ctx.store, report)
    data = {"verify": report.to_json()}
    if report.ok:
        text = f"ok: {report.events} events chained, {report.signed} signed by the board's people, every decision matches its signature"
        text += "".join(f"\nnote: {n}" for n in report.notes)
        return Outcome(data, 0, text)
    first = report.first
    assert first is not None  # (not ok: it has a problem)
    lines = [f"ALTERED: {first.where} {first.what}"] + [
        f"  also: {p.where} {p.what}" for p in report.problems if p is not first
    ][:20]
    lines.append(
        "→ decisions that do not verify are not honoured; compare with a backup or an export (`loopx verify --file`), and tell the people on the board"
    )
    return Outcome(data, ALTERED, "\n".join(lines))


def _file_damage(store: Store) -> Outcome | None:
    """SQLite's integrity check of the board's file, before its rows are read:
    damage is named (exit 12) and marked, so writes refuse the board until a
    check finds it whole again (store/failures.py)."""
    if store.backend != "sqlite":
        return None
    from ..shapes.errors import STORAGE
    from ..store import failures

    found = failures.integrity_problems(store.connection())
    path = store.location.path
    if not found:
        failures.clear_damage(path)
        return None
    failures.mark_damaged(path, "; ".join(found)[:2000])
    problems = [{"seq": None, "where": "file", "what": what[:300]} for what in found]
    data = {
        "verify": {
            "ok": False,
            "damaged": True,
            "events": None,
            "signed": None,
            "head": None,
            "first_bad": problems[0],
            "problems": problems,
            "notes": [],
        }
    }
    lines = [f"DAMAGED: the board's file {store.location.describe()} fails SQLite's integrity check:"] + [
        f"  {what[:300]}" for what in found[:20]
    ]
    lines.append(
        f"→ writes refuse this board now. {failures.DAMAGED_HINT}; `loopx verify` clears this once the file checks out"
    )
    return Outcome(data, STORAGE, "\n".join(lines))


def _policy_file(ctx: Context) -> tuple[str, Any, Policy]:
    """The policy file of this board's project: its path, its JSON document (None
    when there is none: then the empty policy) and the policy parsed (refused when broken)."""
    import os

    from ..adapters import policy

    path = os.path.join(str(ctx.store.project_root()), ".loopx", policy.POLICY_FILE)
    from ..rules.given_paths import read_regular

    raw = read_regular(
        path, policy.MAX_POLICY * 4, "the policy", "fix the file (it must be one JSON object)", missing_ok=True
    )
    if raw is None:
        return path, None, policy.Policy()
    try:
        doc = json.loads(raw.decode("utf-8")[: policy.MAX_POLICY + 1])
    except (ValueError, RecursionError) as exc:
        raise InvalidInput(f"cannot read {path}: {exc}", "fix the file (it must be one JSON object)") from None
    parsed = policy.parse(doc, path, signed=True)  # (what it would be once signed: its own problems only)
    return path, doc, parsed


def cmd_policy_show(ctx: Context) -> Outcome:
    from ..adapters import policy

    path, doc, parsed = _policy_file(ctx)
    if doc is None:
        return Outcome({"policy": None, "path": path}, 0, f"no policy file at {path}: only the built-in rules apply")
    signed = ctx.store.signed_setting("policy") == policy.digest(doc)
    loosens = bool(doc.get("allow") or doc.get("outside_ok")) if isinstance(doc, dict) else False
    text = json.dumps(doc, indent=2) + "\n"
    if signed:
        text += "signed by a person: all of it applies"
    elif loosens:
        text += "NOT signed: its `rules` apply, its `allow`/`outside_ok` entries are ignored → a person runs `loopx policy sign`"
    else:
        text += "not signed (it only adds scopes, so all of it applies)"
    text += "".join(f"\n! {p}" for p in parsed.problems)
    return Outcome({"policy": doc, "path": path, "signed": signed, "problems": list(parsed.problems)}, 0, text)


def cmd_policy_sign(ctx: Context) -> Outcome:
    from ..adapters import policy

    person = ctx.person("sign the hook policy")
    path, doc, parsed = _policy_file(ctx)
    if doc is None:
        raise NotFound(f"no policy file at {path}", 'write one first (DESIGN §11 "The hook\'s policy file")')
    if parsed.problems:
        raise InvalidInput("the policy file has problems: " + "; ".join(parsed.problems), "fix them, then sign it")
    value = policy.digest(doc)
    ctx.store.run(lambda: ctx.store.put_signed_setting("policy", value, person, policy=doc))
    return Outcome(
        {"policy": doc, "path": path, "signed": True, "digest": value},
        0,
        f"signed {path} ({value[:12]}): its allow/outside_ok entries now apply; any later edit is unsigned again",
    )


def _dangerous_text(found: tuple[str, ...]) -> str:
    if not found:
        return "no scope is marked dangerous: y alone approves any gate in the board"
    return "dangerous (in the board, y then Y approves their gates): " + " ".join(found)


def cmd_dangerous_list(ctx: Context) -> Outcome:
    from ..ops import dangerous

    with ctx.store.read():
        found = dangerous.patterns(ctx.store)
    return Outcome({"dangerous": list(found)}, 0, _dangerous_text(found))


def cmd_dangerous_set(ctx: Context) -> Outcome:
    from ..ops import dangerous

    a = ctx.args
    if bool(a.patterns) == bool(a.none):
        raise UsageError(
            "name the scopes to mark dangerous, or pass --none", "e.g. `loopx dangerous set 'db:*' 'deploy:*'`"
        )
    person = ctx.person("mark scopes dangerous")
    found = dangerous.set_patterns(ctx.store, list(a.patterns), person)
    return Outcome({"dangerous": list(found)}, 0, _dangerous_text(found))


def _read_export(path: str) -> dict:
    from .reading import EXPORT_MAX, read_text

    text = read_text(
        path, EXPORT_MAX, "the export", "pass a file written by `loopx export` (at most 256 MiB)", error=UsageError
    )
    try:
        doc = json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise UsageError(
            f"cannot read the export {path[:200]!r}: {str(exc)[:200]}", "pass a file written by `loopx export`"
        ) from None
    if not isinstance(doc, dict) or "chain" not in doc:
        raise UsageError(
            f"{path!r} is not a LoopX export with its chain",
            "export it again with this LoopX (`loopx export > board.json`)",
        )
    return doc


def _notify_text(cmd: notify.Command | None, last: tuple[float, bool, str | None] | None = None) -> str:
    if cmd is None:
        return "no notification command: only the board's bell tells you (set one: `loopx notify set -- /usr/bin/notify-send LoopX`)"
    shown = " ".join(shlex.quote(a) for a in cmd.argv)
    text = f"runs: {shown} TITLE BODY (JSON on stdin), killed after {cmd.timeout:g} s, one message per gate in {cmd.every:g} s"
    if last is not None:
        text += "\n" + _outcome_text(*last)
    return text


def _outcome_text(at: float, ok: bool, error: str | None) -> str:
    from ..rules import clock

    return f"last: {clock.iso(at)} " + ("✓" if ok else f"✗ {terminal_safe(error or '')}")


def cmd_notify_show(ctx: Context) -> Outcome:
    from ..ops import notify

    with ctx.store.read():
        cmd = notify.command(ctx.store)
        rows = ctx.store.query(
            """SELECT "at", "data" FROM "event" WHERE "kind" = 'notified' ORDER BY "seq" DESC LIMIT 1"""
        )
    last = None
    if rows:
        data = json.loads(rows[0][1] or "{}")
        last = (rows[0][0], bool(data.get("ok")), data.get("error"))
    out = {
        "notify": cmd.to_json() if cmd else None,
        "last": None if last is None else {"at": last[0], "ok": last[1], "error": last[2]},
    }
    return Outcome(out, 0, _notify_text(cmd, last))


def cmd_notify_set(ctx: Context) -> Outcome:
    from ..ops import notify
    from ..rules.durations import parse_duration

    a = ctx.args
    argv = list(a.argv)
    if argv[:1] == ["--"]:
        argv = argv[1:]
    given = [bool(argv), a.shell is not None, bool(a.none)]
    if sum(given) != 1:
        raise UsageError(
            "give the command after --, or --shell 'CMD', or --none",
            "e.g. `loopx notify set -- /usr/bin/notify-send LoopX` or `loopx notify set --shell 'curl -fsS -d \"$1: $2\" https://ntfy.sh/mine'`",
        )
    if a.shell is not None:
        argv = [
            "/bin/sh",
            "-c",
            a.shell,
            "loopx-notify",
        ]  # the person's own shell text; the message is $1 and $2, never spliced in
    try:
        timeout, every = parse_duration(a.timeout), parse_duration(a.every)
    except ValueError as exc:
        raise UsageError(str(exc), "durations look like 10s, 5m, 1h") from None
    person = ctx.person("set the notification command")
    cmd = notify.set_command(ctx.store, None if a.none else argv, person, timeout=timeout, every=every)
    return Outcome({"notify": cmd.to_json() if cmd else None}, 0, _notify_text(cmd))


def cmd_notify_test(ctx: Context) -> Outcome:
    from ..ops import notify, notify_send

    ctx.person("test the notification command")
    with ctx.store.read():
        cmd = notify.command(ctx.store)
    if cmd is None:
        raise UsageError(
            "no notification command is set (or its signature does not verify)",
            "`loopx notify set -- /usr/bin/notify-send LoopX`, then test it again",
        )
    notice = notify.Notice(
        "test", "test", None, None, "LoopX test notification", "if you read this, LoopX can reach you"
    )
    ok, error, seconds = notify_send.run(cmd, notice)
    notify.record(ctx.store, notice, ok, error, seconds)
    out = {"ok": ok, "error": error, "seconds": round(seconds, 3)}
    return Outcome(
        out, 0 if ok else 5, "the command ran ✓" if ok else f"the command failed: {terminal_safe(error or '')}"
    )
