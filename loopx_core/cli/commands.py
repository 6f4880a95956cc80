"""One handler per verb (each verb is declared once, with its handler's name,
in ``shapes/verbs.py``). A handler returns an ``Outcome``: the JSON object it
prints with ``--json``, the exit code, and the short human text otherwise."""

from __future__ import annotations

import contextlib
import json
import sys
import time

from ..rules import clock, ids, turn_env
from ..rules.hints import take_work
from ..shapes import errors
from ..shapes.errors import Forbidden, InvalidInput, NotFound, UsageError
from . import render

TYPE_CHECKING = False  # (annotations only: typing is not imported on the cold path; checkers read this as typing's)
if TYPE_CHECKING:
    from collections.abc import Callable

    from ..shapes.values import CardView


class Outcome:
    """What a verb answers; ``warnings`` go to stderr (text and --json alike),
    and a --json answer carries them as a field too."""

    __slots__ = ("data", "code", "text", "warnings")

    def __init__(self, data: dict, code: int = 0, text: str = "", warnings: list[str] | None = None):
        self.data, self.code, self.text, self.warnings = data, code, text, warnings or []


def turn_defaults(args) -> None:
    """``--lease-token`` and ``--turn-id`` default to the runner's turn (``rules/turn_env``)."""
    if hasattr(args, "lease_token"):
        args.lease_token = turn_env.lease_token(args.lease_token)
    if hasattr(args, "turn_id"):
        args.turn_id = turn_env.turn_id(args.turn_id)


class Context:
    """What every handler needs: the parsed args, the board, who is calling."""

    def __init__(self, args):
        self.args = args
        self._store = None
        self._location = None
        self._person = None
        self._held = None  # this terminal's unlock of the person's key, when it holds one
        self._probing = False
        turn_defaults(args)
        self._witness = None  # a person's signed command witnesses the log (authority/witness.py)

    @property
    def location(self):
        if self._location is None:
            from ..store.discovery import discover

            try:
                self._location = discover(getattr(self.args, "db", None))
            except ValueError as exc:
                raise UsageError(str(exc), "pass --db PATH or a sqlite:/// or postgresql:// URL") from None
        return self._location

    def name_board(self) -> None:
        """Find the board before any handler runs (a wrong --db is said by the
        command that opens it): a PostgreSQL board named before peewee loads
        lets peewee find its driver (store/orm.py)."""
        with contextlib.suppress(UsageError):
            _ = self.location

    @property
    def store(self):
        if self._store is None:
            from ..store.backends import Store

            location = self.location
            self._store = Store.open(location)  # only `loopx init` creates a board
        return self._store

    def close(self) -> None:
        """Close the board's connection (in-process callers run many commands)."""
        if self._store is not None:
            self._store.close()
            self._store = None

    def agent(self) -> str:
        agent = turn_env.agent(getattr(self.args, "agent", None))
        if not agent:
            raise UsageError("no agent identity", "pass --agent ID or set LOOPX_AGENT (register it with `loopx agent add ID`)")
        return agent_id(agent)

    def caller(self, what: str):
        """``agent:<id>`` when an agent identity is present, else the person (their key)."""
        agent = turn_env.agent(getattr(self.args, "agent", None))
        return f"agent:{agent_id(agent)}" if agent else self.person(what)

    def act_as(self, store, person) -> None:
        """Run on ``store`` as ``person``, unlocked already (the board's: its
        one unlock, cli/in_board.py): nothing is asked, and the store stays the caller's."""
        self._store, self._person = store, person

    def agent_named(self) -> bool:
        """An agent identity is present (``--agent`` or ``LOOPX_AGENT``)."""
        return bool(turn_env.agent(getattr(self.args, "agent", None)))

    def refuse_agent(self, what: str) -> None:
        if turn_env.agent(getattr(self.args, "agent", None)):
            raise Forbidden(f"an agent cannot {what}", "only a person does this, from the board or their own terminal with their key", code="person_only")

    def person(self, what: str):
        """The person running this: refused for an agent identity, else proved by
        their key (unlocked here) being one of the board's people. A terminal,
        LOOPX_HUMAN or a missing LOOPX_AGENT alone proves nothing (SECURITY.md)."""
        self.refuse_agent(what)
        if self._person is None:
            from ..authority import keys
            from ..authority.people import member

            if self._probing:  # (check before asking: a stand-in that stops at the first signature)
                self._person = member(self.store, keys.stand_in())
            elif self._held is not None or not self.would_ask():
                self._person = member(self.store, self._held or keys.unlock())
            else:
                self._person = member(self.store, keys.unlock())
                self._hold(self._person)
            self.witness()
        return self._person

    def would_ask(self) -> bool:
        """A person's key must be unlocked with its passphrase: it is sealed
        and this terminal holds no unlock of it (authority/unlock.py)."""
        from ..authority import keys, unlock

        found = keys.read()
        if found is None or not found.sealed:
            return False
        held = unlock.held(found.fingerprint, found.public_raw)
        if held is not None:
            self._held = keys.Person(found.name, held, found.public_raw)
            return False
        return True

    def _hold(self, person) -> None:
        """Keep a passphrase just typed for this terminal session a while."""
        from ..authority import keys, unlock

        found = keys.read()
        if found is not None and found.sealed and found.fingerprint == person.fingerprint:
            with contextlib.suppress(OSError):
                unlock.hold(person)

    def probe(self, handler) -> None:
        """Run ``handler`` as far as its first signature, with a stand-in for
        the person, and undo it: bad input, an unknown id or a refused state is
        said before the passphrase is asked (its transaction rolls back)."""
        from ..authority.keys import WouldSign

        self._probing = True
        try:
            handler(self)
        except WouldSign:
            pass
        finally:
            self._probing = False
            self._person = None

    @property
    def signed(self) -> bool:
        """A person proved who they are in this command."""
        return self._person is not None

    def witness(self) -> None:
        """Before a person signs, the log must still hold what this machine saw;
        after the command, its head is what this machine saw."""
        from ..authority import witness

        if self._witness is None:
            self._witness = witness.Witness()
        gone = self._witness.observe(self.store)
        if gone is not None:
            raise witness.refused(gone)




def agent_id(text: str) -> str:
    """A well-formed agent id (a malformed one can never be registered: invalid input, not "unknown")."""
    from ..rules.limits import AGENT_ID

    if not AGENT_ID.fullmatch(text):
        raise InvalidInput(f"not a valid agent id: {text[:80]!r}", "agent ids are letters, digits and ._- (at most 64), e.g. claude-1")
    return text


def card_id(text: str) -> int:
    try:
        return ids.parse(ids.CARD, text)
    except ValueError as exc:
        raise InvalidInput(str(exc), "cards look like LX-12") from None


def gate_id(text: str) -> int:
    try:
        return ids.parse(ids.GATE, text)
    except ValueError as exc:
        raise InvalidInput(str(exc), "gates look like G-7") from None


def validate(kind: str, data: dict) -> dict:
    from ..shapes.inputs import validate as run

    return run(kind, data)


def page_limit(limit: int | None, default: int | None = None, low: int = 1) -> int:
    from ..shapes.inputs import page_limit as run

    return run(limit, default, low)


def _drop_none(data: dict) -> dict:
    return {k: v for k, v in data.items() if v is not None}


def more_text(words: list[str], flag: str, cursor: str | None) -> str:
    """The line after a page that is not the last: the command for the next one."""
    if cursor is None:
        return ""
    import shlex

    return "\nmore: `loopx " + " ".join(shlex.quote(w) for w in [*words, flag, cursor]) + "` for the next page"


def _filters(args, *names: str) -> list[str]:
    words = []
    for name in names:
        value = getattr(args, name)
        if value is True:
            words.append(f"--{name}")
        elif value not in (None, False):
            words += [f"--{name}", str(value)]
    return words


# -- board ------------------------------------------------------------------

def cmd_init(ctx: Context) -> Outcome:
    from ..ops.board import init_board
    from ..store.discovery import init_target

    args = ctx.args
    if turn_env.agent():  # (init's own --agent names the agent to register)
        raise Forbidden("an agent cannot create or set up a board", "only a person does this, in their own terminal with their key", code="person_only")
    objective = None
    if args.objective is not None:
        objective = validate("text", {"text": args.objective})["text"]
    location = init_target(getattr(args, "db", None))
    if clock.frozen_by_env() and not args.test_board and not location.exists:
        raise UsageError("LOOPX_NOW is set, but only a test board lets it move the clock", "unset LOOPX_NOW, or make a board for tests and demos: `loopx init --test-board`", code="clock_refused")
    key_note = ""
    if args.dry_run:  # nothing is created or changed, the board included
        from ..store.backends import Store

        store = Store.open(location) if location.exists else None
        created = False
        text = f"{'using' if store else 'would create'} board {location.describe()}"
        if objective is not None:
            text += f"\nwould set the objective to {objective!r}"
    else:
        from .trust_commands import person_for_init

        person, key_note = person_for_init(args)
        store, created = init_board(location, objective, person, test_board=args.test_board)
        ctx._person = person.named(store.trust().people[person.fingerprint].name)
        text = f"{'created' if created else 'using'} board {location.describe()}"
        if store.location.checkout is not None:
            text += f"\nthis folder is this machine's checkout of it: {store.location.checkout} (workspaces are made for it)"
        if key_note:
            text += "\n" + key_note
    ctx._store = store
    data: dict = {"board": {"path": location.describe(), "url": location.url, "created": created}}
    if store is not None and store.location.checkout is not None:
        data["board"]["checkout"] = str(store.location.checkout)
    if args.dry_run:
        data["board"]["exists"] = store is not None
        data["dry_run"] = True
    if args.runtime:
        from ..adapters.setup import init_runtime

        result = init_runtime(store, args.runtime, agent=args.agent, can=args.can, dry_run=args.dry_run, location=store.location if store is not None else location, sandbox=args.sandbox, person=ctx._person)
        data["setup"] = result.to_json()
        text += "\n" + result.text + _in_a_workspace(args.runtime, args.agent)
    elif args.dry_run:
        text += "\ndry run: nothing was written; run it again without --dry-run"
    else:
        text += "\nnext: register an agent (`loopx agent add claude-1`) and add a card (`loopx card add \"TITLE\"`)"
    return Outcome(data, 0, text)


def _in_a_workspace(runtime: str, agent: str | None) -> str:
    """Run in a card's workspace, ``init --for`` sets up the main checkout (where
    the board and the runtimes' settings are): say how to work in the workspace."""
    import os

    from ..rules import workspace_bounds

    bounds = workspace_bounds.find(os.getcwd())
    if bounds is None or bounds.main is None:
        return ""
    card = (bounds.branch or "").removeprefix("loopx/") or "CARD"
    return (f"\nthis folder is a card's workspace: the settings above are the main checkout's ({bounds.main}); "
            f"start {runtime} here with them, bounded to this workspace: `loopx workspace start {card} --runtime {runtime} --agent {agent or 'ID'}` "
            f"(started any other way it reads this folder's own settings, which its agent can write)")


def cmd_where(ctx: Context) -> Outcome:
    loc = ctx.location
    data = {"board": {"path": loc.describe(), "url": loc.url, "source": loc.source, "exists": loc.exists, "backend": loc.backend}}
    pointer, pointer_text = None, ""
    if loc.checkout is not None:  # a team board: the checkout this folder belongs to (issue #26)
        data["board"]["checkout"] = str(loc.checkout)
        pointer, pointer_text = _pointer_names(loc)
        data["board"]["pointer"] = pointer
    if loc.source == "none":
        from ..store.discovery import NO_BOARD

        return Outcome(data, 0, f"{NO_BOARD}\n→ `loopx init` creates {loc.describe()}")
    why = {
        "flag": "from --db", "env": "from LOOPX_DB", "nearest": "nearest .loopx/ board", "user": "your user board (no .loopx/ found)",
        "worktree": "this folder is a git worktree of the project; the board of its main checkout",
    }[loc.source]
    text = f"{loc.describe()}  ({why}{'' if loc.exists else ', not created yet — run `loopx init`'})"
    if loc.checkout is not None:
        text += f"\nthis machine's checkout of it: {loc.checkout} (its .loopx/team.json{pointer_text})"
    return Outcome(data, 0, text)


def _pointer_names(loc) -> tuple[str, str]:
    """Does the checkout's ``.loopx/team.json`` name this board? Without opening the
    board (``where`` never does): the address ``init`` wrote in it against this one.
    The board's uid would take a query, so an equal address is "this address"."""
    from ..store import team_checkout

    found = team_checkout.read(loc.checkout)
    named = found.get("board") if found else None
    if not isinstance(named, str):
        return "not checked", ", which does not say which board it was written for: not checked"
    if named == loc.describe():
        return "this address", ""
    return "another address", (f", written for {render.one_line(named)} — not this board's address: "
                               f"`loopx init` here points this checkout at this board, or use that board")


def cmd_board(ctx: Context) -> Outcome | None:
    if not getattr(ctx.args, "text", False) and not getattr(ctx.args, "json", False) and sys.stdout.isatty() and sys.stdin.isatty():
        try:
            from loopx_tui.launch import run_board
        except ImportError:
            pass  # (the board is an extra: the text below stands in)
        else:
            code = run_board(ctx.location)
            return Outcome({}, code or 0, "") if code else None
    from ..ops.board import board_cards

    cards = [c.to_json() for c in board_cards(ctx.store)]
    return Outcome({"cards": cards}, 0, render.board_text(cards, ctx.store.location.describe()))


def cmd_export(ctx: Context) -> Outcome:
    from ..ops.board import export

    data = export(ctx.store)
    return Outcome(data, 0, json.dumps(data, indent=2))


def cmd_migrate(ctx: Context) -> Outcome:
    from ..store.backends import Store
    from ..store.discovery import parse_target

    try:
        target_loc = parse_target(ctx.args.to, "flag")
    except ValueError as exc:
        raise UsageError(str(exc), "pass a SQLite path or a postgresql:// URL") from None
    from ..store.migrate import (
        migrate,  # (after --to is parsed: a PostgreSQL target lets peewee load its driver, store/orm.py)
    )

    source = ctx.store
    if target_loc.url == source.location.url:
        raise UsageError("--to is the board being copied", "name a different, empty board")
    target = Store.open(target_loc, create=True, frozen_ok=True)
    result = migrate(source, target)
    lines = [f"copied {source.location.describe()} → {target_loc.describe()} (verified: counts and sha256 match)"]
    lines += [f"  {name:<10} {info['rows']:>7} rows  {info['sha256'][:12]}" for name, info in result["tables"].items()]
    lines.append(f"next: point agents at it with LOOPX_DB={target_loc.url}")
    return Outcome({"migration": {"from": source.location.url, "to": target_loc.url, **result}}, 0, "\n".join(lines))


# -- agents -----------------------------------------------------------------

def cmd_agent_add(ctx: Context) -> Outcome:
    from ..ops.agents import add_agent

    a = ctx.args
    ctx.refuse_agent("register agents or change their scopes")
    from ..rules.given_paths import check_target

    for folder in a.watch or ():
        check_target(folder, "the watch folder", "give --watch a folder (it may not exist yet)", want="folder")
    data = validate("agent", _drop_none({"id": a.id, "runtime": a.runtime, "can": a.can, "watch": a.watch, "tokens": a.tokens, "usd": a.usd, "turns": a.turns, "window": a.window}))
    agent, changed = add_agent(ctx.store, data, ctx.person("register agents or change their scopes"))
    verb = "registered" if changed else "unchanged:"
    caps = ", ".join(agent.capabilities) or "no scopes"
    return Outcome({"agent": agent.to_json()}, 0, f"{verb} agent {agent.id} ({caps})\nnext: it takes a card with {take_work(agent.id)}")


def cmd_agent_list(ctx: Context) -> Outcome:
    from ..ops.agents import agent_page

    after = agent_id(ctx.args.after) if ctx.args.after is not None else ""
    views, cursor = agent_page(ctx.store, limit=page_limit(ctx.args.limit), after=after)
    agents = [a.to_json() for a in views]
    lines = [f"{a['id']:<16} {a['runtime'] or '-':<12} {', '.join(a['capabilities']) or '-':<24} window {render.window_text(a['window'])}" for a in agents]
    text = "\n".join(lines) or "no agents yet → `loopx agent add ID --can SCOPE`"
    return Outcome({"agents": agents, "next_after": cursor}, 0, text + more_text(["agent", "list", *_filters(ctx.args, "limit")], "--after", cursor))


def cmd_agent_show(ctx: Context) -> Outcome:
    from ..ops.agents import get_agent

    agent = get_agent(ctx.store, agent_id(ctx.args.id)).to_json()
    return Outcome({"agent": agent}, 0, json.dumps(agent, indent=2))


# -- cards ------------------------------------------------------------------

def cmd_card_add(ctx: Context) -> Outcome:
    from ..ops.cards import add_card
    from ..ops.idempotence import once

    a = ctx.args
    data = validate("card", _drop_none({
        "title": a.title, "body": a.body, "needs": a.needs, "after": a.after, "priority": a.priority, "owner": a.owner,
        "next": a.next, "verify": a.verify, "max_turns": a.max_turns, "max_tokens": a.max_tokens, "max_usd": a.max_usd, "backlog": a.backlog,
    }))
    tries = a.tries
    if tries is not None:
        from ..ops.tries import MAX_TRIES

        if not 2 <= tries <= MAX_TRIES:
            raise InvalidInput(f"--tries {tries}: give a card to 2 to {MAX_TRIES} agents", "leave --tries out for one")
    caller = ctx.person("give a card to several agents") if tries else ctx.caller("add cards")

    def run():
        if not tries:
            return {"card": add_card(ctx.store, data, caller).to_json()}, 0
        from ..ops.tries import add_with_tries

        card, more = add_with_tries(ctx.store, data, caller, tries)
        return {"card": card.to_json(), "tries": [c.to_json() for c in more]}, 0

    result, code = once(ctx.store, a.op_id, "card_add", {**data, "tries": tries}, run)
    card = result["card"]
    text = f"added {render.card_line(card)}"
    for extra in result.get("tries") or []:
        text += f"\nadded {render.card_line(extra)}"
    if result.get("tries"):
        text += f"\n{len(result['tries']) + 1} tries, each its own workspace; compare them with `loopx card tries {card['id']}`, keep one with `loopx card keep CARD`"
    return Outcome(result, code, text + f"\nnext: an agent takes it with {take_work()}")


def cmd_card_try(ctx: Context) -> Outcome:
    from ..ops.idempotence import once
    from ..ops.tries import add_tries

    cid = card_id(ctx.args.card)
    agent = agent_id(ctx.args.to) if ctx.args.to else None
    actor = ctx.person("give a card to several agents")

    def run():
        return {"card": add_tries(ctx.store, cid, actor, [agent])[0].to_json()}, 0

    result, code = once(ctx.store, ctx.args.op_id, "card_try", {"card": cid, "agent": agent}, run)
    return Outcome(result, code, f"added {render.card_line(result['card'])}\ncompare the tries with `loopx card tries {ids.fmt(ids.CARD, cid)}`")


def cmd_card_tries(ctx: Context) -> Outcome:
    from ..ops.tries import compare

    first, tries = compare(ctx.store, card_id(ctx.args.card))
    rows = [t.to_json() for t in tries]
    lines = []
    for t in rows:
        diff = t["diff"]
        size = f"{diff['files']} file{'s' if diff['files'] != 1 else ''} +{diff['added']} −{diff['removed']}" if diff else "no branch"
        verify = {True: "verify passed", False: "verify failed", None: "no verify"}[t["verify"]]
        q = t["quota"]
        at = f"at {t['head'][:12]}" if t.get("head") else ""
        lines.append(f"try {t['try']}  {t['card']}  {t['status']:<10} {t['owner'] or '—':<12} {size:<22} {verify:<14} "
                     f"{q['turns']['used']} turns {q['tokens']['used']} tok ${q['usd']['used']:.2f} {at}".rstrip())
    pin = f" --head {rows[0]['head'][:12]}" if rows[0].get("head") else ""
    text = "\n".join(render.one_line(line) for line in lines) + f"\n→ keep one: `loopx card keep {rows[0]['card']}{pin}` (or the try's id and commit)"
    return Outcome({"card": ids.fmt(ids.CARD, first), "tries": rows}, 0, text)


def cmd_card_keep(ctx: Context) -> Outcome:
    from ..ops.idempotence import once
    from ..ops.tries import keep

    cid = card_id(ctx.args.card)
    actor = ctx.person("keep a try")

    head = ctx.args.head.strip().lower() if ctx.args.head else None
    if head is not None and not (7 <= len(head) <= 64 and all(c in "0123456789abcdef" for c in head)):
        raise InvalidInput(f"--head {ctx.args.head[:70]!r} is not a commit id", "give the commit `loopx card tries` shows (7 hex digits or more)")

    def run():
        kept, cancelled = keep(ctx.store, cid, actor, head)
        return {"card": kept.to_json(), "cancelled": [c.to_json() for c in cancelled]}, 0

    result, code = once(ctx.store, ctx.args.op_id, "card_keep", {"card": cid, **({"head": head} if head else {})}, run)
    gone = ", ".join(c["id"] for c in result["cancelled"]) or "none still open"
    return Outcome(result, code, f"kept {render.card_line(result['card'])}\ncancelled (workspaces archived under refs/loopx/…): {gone}")


def cmd_card_list(ctx: Context) -> Outcome:
    from ..rules.columns import COLUMN_OF

    status, owner = ctx.args.status, ctx.args.owner
    if status is not None and status not in COLUMN_OF:
        raise InvalidInput(f"no status {status[:40]!r}", "one of: " + ", ".join(COLUMN_OF))
    owner = agent_id(owner) if owner is not None else None
    limit = page_limit(ctx.args.limit)
    after = card_id(ctx.args.after) if ctx.args.after is not None else 0
    if getattr(ctx.args, "json", False) and not ctx.args.full and ctx._store is None:
        location = ctx.location
        if location.backend == "sqlite":  # an agent's list between turns: no peewee (plainread.py)
            from ..store.plainread import card_page as plain_page

            found = plain_page(location.path, status, owner, limit=limit, after=after)
            if found is not None:
                return Outcome({"cards": found[0], "next_after": ids.fmt(ids.CARD, found[1])}, 0, "")
    from ..ops.cards import card_page

    views, last = card_page(ctx.store, status, owner, limit=limit, after=after)
    cursor = ids.fmt(ids.CARD, last)
    full = [c.to_json() for c in views]
    cards = full if ctx.args.full else [c.to_row() for c in views]
    text = "\n".join(render.card_line(c) for c in full) or "no cards match"
    text += more_text(["card", "list", *_filters(ctx.args, "status", "owner", "limit", "full")], "--after", cursor)
    return Outcome({"cards": cards, "next_after": cursor}, 0, text)


def cmd_card_show(ctx: Context) -> Outcome:
    from ..ops.cards import show_card, usage_of
    from ..ops.workspaces import last_rebuild, lookup, rebuilt_text

    cid = card_id(ctx.args.card)
    card = show_card(ctx.store, cid).to_json()
    usage = usage_of(ctx.store, cid)
    data: dict = {"card": card, "usage": usage}
    text = render.card_block(card)
    ws = lookup(ctx.store, cid)
    if ws is not None:
        rebuilt = last_rebuild(ctx.store, cid)
        data["workspace"] = {"path": ws.path, "branch": ws.branch, "state": ws.state, "rebuilt": rebuilt}
        text += f"\n  workspace {ws.state}: {ws.path} on {ws.branch}"
        if rebuilt is not None:
            text += "\n  " + render.one_line(rebuilt_text(card["id"], rebuilt))
    return Outcome(data, 0, text + render.usage_block(usage))


def _person_card_op(ctx: Context, op: str, payload: dict, fn: Callable[[object], CardView], verb: str) -> Outcome:
    from ..ops.idempotence import once

    actor = ctx.person(verb)

    def run():
        return {"card": fn(actor).to_json()}, 0

    result, code = once(ctx.store, ctx.args.op_id, op, payload, run)
    return Outcome(result, code, f"{render.card_line(result['card'])}")


def cmd_card_move(ctx: Context) -> Outcome:
    from ..ops.cards import move_card

    cid = card_id(ctx.args.card)
    return _person_card_op(ctx, "card_move", {"card": cid, "to": ctx.args.to}, lambda actor: move_card(ctx.store, cid, ctx.args.to, actor), "move cards")


def cmd_card_assign(ctx: Context) -> Outcome:
    from ..ops.cards import assign_card

    cid = card_id(ctx.args.card)
    to = validate("next", {"agent": ctx.args.to})["agent"]
    summary = validate("text", {"text": ctx.args.summary})["text"] if ctx.args.summary else None
    out = _person_card_op(ctx, "card_assign", {"card": cid, "to": to, "summary": summary}, lambda actor: assign_card(ctx.store, cid, to, actor, summary), "reassign cards")
    if out.data["card"]["status"] == "handoff":
        out.text += f"\nhanded to {to}: it accepts with `loopx accept {out.data['card']['id']}`"
    return out


def cmd_card_unassign(ctx: Context) -> Outcome:
    from ..ops.cards import assign_card

    cid = card_id(ctx.args.card)
    return _person_card_op(ctx, "card_unassign", {"card": cid}, lambda actor: assign_card(ctx.store, cid, None, actor), "unassign cards")


def cmd_card_budget(ctx: Context) -> Outcome:
    from ..ops.cards import budget_card

    cid = card_id(ctx.args.card)
    data = validate("budget", _drop_none({"add_turns": ctx.args.add_turns, "add_tokens": ctx.args.add_tokens, "add_usd": ctx.args.add_usd}))
    return _person_card_op(ctx, "card_budget", {"card": cid, **data}, lambda actor: budget_card(ctx.store, cid, data, actor), "change a budget")


def cmd_card_edit(ctx: Context) -> Outcome:
    from ..ops.cards import edit_card

    cid = card_id(ctx.args.card)
    a = ctx.args
    data = validate("edit", _drop_none({"title": a.title, "body": a.body, "next": a.next, "verify": a.verify}))
    return _person_card_op(ctx, "card_edit", {"card": cid, **data}, lambda actor: edit_card(ctx.store, cid, data, actor), "edit cards")


def cmd_card_window(ctx: Context) -> Outcome:
    from ..ops.cards import window_card

    cid = card_id(ctx.args.card)
    a = ctx.args
    data = validate("window", _drop_none({"every": a.every, "tokens": a.tokens, "usd": a.usd, "turns": a.turns, "clear": a.clear or None}))
    out = _person_card_op(ctx, "card_window", {"card": cid, **data}, lambda actor: window_card(ctx.store, cid, data, actor), "set a card's window")
    card = out.data["card"]
    if card["window"] is None:
        out.text += "\nno window"
    elif card["status"] == "paused" and card["wake_at"]:
        out.text += f"\nits window is spent: it resumes by itself at {card['wake_at']}"
    return out


def _price_line(model: str, price: dict) -> str:
    rest = "".join(f" · {k.replace('_', ' ')} ${price[k]:g}" for k in ("cache_read", "cache_write") if k in price)
    return f"{model}: input ${price['input']:g} · output ${price['output']:g}{rest} per million tokens"


def cmd_price_set(ctx: Context) -> Outcome:
    from ..rules.prices import set_price

    a = ctx.args
    data = validate("price", _drop_none({"model": a.model, "input": a.input, "output": a.output, "cache_read": a.cache_read, "cache_write": a.cache_write}))
    actor = ctx.person("set prices")
    price = set_price(ctx.store, data.pop("model"), data, actor)
    return Outcome({"model": a.model, "price": price}, 0, _price_line(a.model, price))


def cmd_price_list(ctx: Context) -> Outcome:
    from ..rules.prices import load

    table = load(ctx.store)
    text = "\n".join(_price_line(m, table[m]) for m in sorted(table))
    return Outcome({"prices": table}, 0, text or "no prices: hook-measured usage is charged $0\nadd one: `loopx price set MODEL --input $ --output $` (dollars per million tokens)")


def cmd_price_remove(ctx: Context) -> Outcome:
    from ..rules.prices import remove_price

    actor = ctx.person("remove prices")
    if not remove_price(ctx.store, ctx.args.model, actor):
        raise NotFound(f"no price for {ctx.args.model[:128]!r}", "`loopx price list` shows the prices")
    return Outcome({"model": ctx.args.model, "removed": True}, 0, f"removed the price of {ctx.args.model}")


def cmd_log(ctx: Context) -> Outcome:
    from ..ops.cards import card_detail

    d = card_detail(ctx.store, card_id(ctx.args.card), event_limit=0, evidence_limit=10**9)
    data: dict = {"card": d.card.to_json(), "evidence": [e.to_json() for e in d.evidence], "observed": [o.to_json() for o in d.observed]}
    lines = [render.card_block(data["card"]), ""]
    for e in data["evidence"]:
        arts = "".join(f"\n      {a['path']} {render.artifact_state(a)}" for a in e["artifacts"])
        how = e["source"] + (", unverified" if e["unverified"] else "")
        lines.append(f"  {e['id']} {e['created_at']} {e['agent']} [{how}] {e['summary']}{arts}")
    for o in data["observed"]:
        lines.append(f"  observed {o['created_at']} {o['agent']} {o['path']} {o['size']} B")
    if not data["evidence"]:
        lines.append("  no evidence yet")
    return Outcome(data, 0, "\n".join(lines))


def cmd_events(ctx: Context) -> Outcome | None:
    from ..store import events

    store = ctx.store
    card = card_id(ctx.args.card) if ctx.args.card else None
    seq = ctx.args.since
    if not ctx.args.follow:
        from ..rules.limits import PAGE_MAX

        limit = page_limit(ctx.args.limit, PAGE_MAX, low=0)  # --limit 0: no events (DESIGN §10)
        with store.read():
            found = [e.to_json() for e in events.since(seq, card=card, limit=limit + 1)]
        cursor = str(found[limit - 1]["seq"]) if len(found) > limit and limit else None
        found = found[:limit]
        text = "\n".join(f"{e['seq']:>6} {e['at']} {e['actor']:<20} {e['card'] or '':<7} {e['kind']}" for e in found) or "no events"
        text += more_text(["events", *_filters(ctx.args, "card", "limit")], "--since", cursor)
        return Outcome({"events": found, "next_since": int(cursor) if cursor else None}, 0, text)
    token = None
    try:
        while True:
            current = store.change_token()
            if current != token or token is None:
                token = current
                with store.read():
                    new = events.since(seq, card=card)
                for event in new:
                    sys.stdout.write(json.dumps(event.to_json()) + "\n")
                    seq = event.seq
                sys.stdout.flush()
            time.sleep(0.2)
    except KeyboardInterrupt:
        return None


# -- the agent's turn ---------------------------------------------------------

NEXT_CODES = {"work": 0, "accept": 0, "wait": errors.WAITING, "paused": errors.PAUSED, "idle": errors.NOTHING}


def _next_text(r: dict) -> str:
    card = r["card"]
    action = r["action"]
    if action == "work":
        key = card["id"]
        head = f"work on {key} \"{card['title']}\" ({render.lease_text(r['lease'])})"
        if card["next"]:
            head += f"\nnext: {card['next']}"
        if r.get("workspace"):
            head += f"\nworkspace: {r['workspace']['path']} (branch {r['workspace']['branch']}) — work and commit there"
        return head + f"\n→ `loopx context {key}` for the continuation; then `loopx writeback {key} --summary …`"
    if action == "wait":
        g = r["gate"]
        if g is None:  # a card row that waits on no gate: say so, do not guess one
            return f"wait: {card['id']} is waiting ({r['reason']})\n→ stop for now; a person can check the board with `loopx verify`"
        return f"wait: {g['id']} on {card['id']} is pending ({g['question']})\n→ `loopx gate status {g['id']}` until a human answers"
    if action == "accept":
        return f"accept: {card['id']} was handed to you\n→ `loopx context {card['id']}`, then `loopx accept {card['id']}`"
    if action == "paused":
        if card is None:
            return f"paused: your window is spent; it reopens at {r['wake_at']}"
        if r["wake_at"]:
            return f"paused: {card['id']} ({r['reason']}) — its window refills at {r['wake_at']} and it resumes by itself; stop for now"
        return f"paused: {card['id']} ({r['reason']}) — a human must raise its budget; stop for now"
    wake = f"; a monitored card is due at {r['wake_at']}" if r["wake_at"] else ""
    g = r["gate"]
    if g and g["status"] in ("rejected", "expired"):
        note = f": {g['note']}" if g["note"] else ""
        then = "no ready card to take either" if r["reason"].endswith("no ready card") else "take other work with `loopx next --claim`"
        return (
            f"idle: {g['id']} on {card['id']} was {g['status']} by {g['answered_by']}{note}\n"
            f"→ do not do it; {card['id']} is blocked until a person moves it; {then}{wake}"
        )
    return f"idle: {r['reason']}{wake}"


def cmd_next(ctx: Context) -> Outcome:
    from ..ops.claims import next_turn
    from ..ops.idempotence import once

    data = validate("next", {"agent": ctx.agent(), "lease": ctx.args.lease, "claim": ctx.args.claim})

    def run():
        result = next_turn(ctx.store, data["agent"], claim=data["claim"], lease_seconds=data["lease"])
        return result.to_json(), NEXT_CODES[result.action]

    result, code = once(ctx.store, ctx.args.op_id, "next", data, run)
    warnings = _workspace_of(ctx, result, data["agent"], ctx.args.in_project)
    return Outcome(result, code, _next_text(result), warnings)


def cmd_claim(ctx: Context) -> Outcome:
    from ..ops.claims import claim
    from ..ops.idempotence import once

    data = validate("next", {"agent": ctx.agent(), "lease": ctx.args.lease})
    cid = card_id(ctx.args.card)
    from ..ops.workspaces import before_claim

    early = before_claim(ctx.store, cid, data["agent"], ctx.args.in_project)  # refused with nothing written, or made

    def run():
        result = claim(ctx.store, cid, data["agent"], data["lease"])
        return result.to_json(), NEXT_CODES[result.action]

    result, code = once(ctx.store, ctx.args.op_id, "claim", {"card": cid, **data}, run)
    warnings = early or _workspace_of(ctx, result, data["agent"], ctx.args.in_project)
    return Outcome(result, code, "claimed: " + _next_text(result), warnings)


def _workspace_of(ctx: Context, result: dict, agent: str, in_project: bool) -> list[str]:
    from ..ops.workspaces import name_in

    return name_in(ctx.store, result, agent, in_project)


def _agent_card_op(ctx: Context, op: str, payload: dict, fn: Callable[[str, int], tuple[dict, int, str]], atomic: bool = True) -> Outcome:
    from ..ops.idempotence import once

    agent = ctx.agent()
    cid = card_id(ctx.args.card)
    texts: list[str] = []

    def run():
        data, code, text = fn(agent, cid)
        texts.append(text)
        return data, code

    result, code = once(ctx.store, ctx.args.op_id, op, {"agent": agent, "card": cid, **payload}, run, atomic=atomic)
    return Outcome(result, code, texts[0] if texts else "(replayed) " + json.dumps(result)[:300])


def cmd_heartbeat(ctx: Context) -> Outcome:
    from ..ops.claims import heartbeat

    def fn(agent, cid):
        card = heartbeat(ctx.store, cid, agent, ctx.args.lease_token).to_json()
        return {"card": card}, 0, f"{card['id']}: {render.lease_text(card['lease'])}"

    return _agent_card_op(ctx, "heartbeat", {}, fn)


def _read_input(source: str) -> dict:
    from .reading import EVIDENCE_MAX, read_text

    raw = read_text(source, EVIDENCE_MAX, "--input", "pass a readable UTF-8 JSON file (at most 1 MiB), or - for stdin")
    try:
        doc = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise InvalidInput(f"--input is not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}", "an evidence document is one JSON object") from None
    except (ValueError, RecursionError) as exc:  # an integer of thousands of digits, nesting too deep
        raise InvalidInput(f"--input is not a usable JSON document: {str(exc)[:120]}", "an evidence document is one flat JSON object") from None
    if not isinstance(doc, dict):
        raise InvalidInput("--input must be a JSON object", "e.g. {\"summary\": \"…\", \"artifacts\": [\"out/report.md\"]}")
    return doc


def evidence_from_args(ctx: Context, agent: str, cid: int) -> dict:
    a = ctx.args
    if a.input:
        doc = _read_input(a.input)
        for key, mine in (("card", ids.key(ids.CARD, cid)), ("agent", agent)):
            if key in doc:
                theirs = doc.pop(key)
                if str(theirs).upper() != mine.upper():
                    raise InvalidInput(f"--input names {key} {theirs!r} but the command is for {mine}", f"drop {key!r} from the document or fix it")
        if a.release:
            doc.setdefault("release", True)
        if a.turn_id:
            doc.setdefault("turn_id", a.turn_id)
        return validate("evidence", doc)
    if a.summary is None:
        raise UsageError("--summary is required (or --input FILE)", "e.g. `loopx writeback LX-3 --summary \"what this turn did\"`")
    todo_done = []
    for ref in a.todo_done:
        todo_done.append(int(ref) if ref.isascii() and ref.isdigit() and len(ref) <= 18 else ref)
    return validate("evidence", _drop_none({
        "summary": a.summary, "artifacts": a.artifact, "next": a.next, "todos_added": a.todo_add, "todos_done": todo_done,
        "tokens": a.tokens, "usd": a.usd, "turn_id": a.turn_id, "release": a.release,
    }))


def cmd_writeback(ctx: Context) -> Outcome:
    from ..ops.turn_report import record
    from ..ops.workspaces import capture

    agent = ctx.agent()
    cid = card_id(ctx.args.card)
    data = evidence_from_args(ctx, agent, cid)
    code_state = capture(ctx.store, cid)  # before --op-id's transaction: git never runs under the write lock
    result, code, replayed = record(ctx.store, cid, agent, data, lease_token=ctx.args.lease_token, op_id=ctx.args.op_id, source="cli", code=code_state)
    if replayed:
        return Outcome(result, code, "(replayed) " + json.dumps(result)[:300], result.get("warnings"))
    ev, cj = result["evidence"], result["card"]
    text = f"{'recorded' if result['created'] else 'already recorded'} {ev['id']} on {cj['id']}"
    if ev["artifacts"]:
        text += f" with {len(ev['artifacts'])} artifact(s)"
    if cj["status"] == "paused" and cj["wake_at"]:
        text += f"\n{cj['id']} is now paused ({cj['paused_reason']}): stop here; it resumes by itself at {cj['wake_at']}"
    elif cj["status"] == "paused":
        text += f"\n{cj['id']} is now paused ({cj['paused_reason']}): stop here; a human must raise its budget"
    elif cj["status"] == "ready":
        text += f"\nreleased {cj['id']}"
    else:
        q = render.quota_line(cj["quota"])
        text += (f" · {q}" if q else "") + f"\nnext: keep going, or `loopx done {cj['id']} --summary …`"
    return Outcome(result, code, text, result["warnings"])


def _gate_code(g: dict) -> int:
    return {"approved": 0, "pending": errors.WAITING}.get(g["status"], errors.REJECTED)


def _wait_for(store, gid: int, seconds: float) -> dict:
    from ..ops.gates import status

    deadline = time.monotonic() + seconds
    gate = status(store, gid).to_json()
    while gate["status"] == "pending" and time.monotonic() < deadline:
        time.sleep(min(0.25, max(0.0, deadline - time.monotonic())))
        gate = status(store, gid).to_json()
    return gate


def cmd_gate_ask(ctx: Context) -> Outcome:
    from ..ops.gates import ask

    a = ctx.args
    data = validate("gate_ask", _drop_none({"question": a.question, "scope": a.scope, "options": a.option, "deadline": a.deadline, "wait": a.wait}))

    def fn(agent, cid):
        gate, card, created = ask(ctx.store, cid, agent, data, a.lease_token)
        g = gate.to_json()
        return {"gate": g, "card": card.to_json()}, _gate_code(g), ""

    out = _agent_card_op(ctx, "gate_ask", {"data": data}, fn)
    g = out.data["gate"]
    if data.get("wait") and g["status"] == "pending":
        g = _wait_for(ctx.store, ids.parse(ids.GATE, g["id"]), data["wait"])
        out.data["gate"], out.code = g, _gate_code(g)
    if g["status"] == "approved":
        out.text = f"{g['id']} approved by {g['answered_by']} → go ahead"
    elif g["status"] == "pending":
        out.text = f"{g['id']} pending: a human must answer it\n→ wait with `loopx gate status {g['id']}` (exit 6 while pending) or `loopx gate ask … --wait`"
    else:
        out.text = f"{g['id']} {g['status']} by {g['answered_by']}" + (f": {g['note']}" if g["note"] else "") + "\n→ do not proceed; `loopx next` says what to do"
    return out


def cmd_gate_status(ctx: Context) -> Outcome:
    gid = gate_id(ctx.args.gate)
    g = None
    if ctx._store is None and ctx.location.backend == "sqlite":  # an agent polling its gate: no peewee (plainread.py)
        from ..store.plainread import gate_status as plain_status

        g = plain_status(ctx.location.path, gid)
    if g is None:
        from ..ops.gates import status

        g = status(ctx.store, gid).to_json()
    out = Outcome({"gate": g}, _gate_code(g), render.gate_line(g))
    if g.get("kind") == "merge" and g.get("status") == "pending":
        _merge_facts(ctx, gid, out)
    return out


def _merge_facts(ctx: Context, gid: int, out: Outcome) -> None:
    """A pending merge gate: the commits it pinned and its files, the ground ones first and marked."""
    from ..ops.merges import gate_diff, plan_of
    from ..store.records import Gate
    from ..workspace.git import GitError

    with ctx.store.read():
        row = Gate.get(gid)
        assert row is not None  # (its status was just read)
        plan = plan_of(row)
    try:
        diff = gate_diff(ctx.store, row)
    except GitError as err:
        out.text += f"\ncannot read its diff: {err.message}"
        diff = None
    out.data["merge"] = {
        "base": plan.base, "branch": plan.branch, "head": plan.head, "base_commit": plan.base_commit, "ground": list(plan.ground),
        "files": [{"path": f.path, "added": f.added, "removed": f.removed, "ground": f.path in plan.ground} for f in (diff.files if diff else ())],
        "more": diff.more if diff else 0,
    }
    lines = [f"merges {plan.branch} at {plan.head[:12]} into {plan.base} at {(plan.base_commit or '?')[:12]}"]
    if plan.ground:
        lines.append(f"! changes the repository's ground ({len(plan.ground)} file(s)): approving takes the second key, --confirm-ground")
    for f in diff.files if diff else ():
        mark = "! ground " if f.path in plan.ground else "  "
        counts = "binary" if f.added is None else f"+{f.added} -{f.removed}"
        lines.append(f"{mark}{render.one_line(f.path)}  {counts}")
    if diff is not None and diff.more:
        lines.append(f"… and {diff.more} more file(s) not listed")
    out.text += "\n" + "\n".join(lines)


def cmd_gate_list(ctx: Context) -> Outcome:
    from ..ops.gates import gate_page

    cid = card_id(ctx.args.card) if ctx.args.card else None
    after = gate_id(ctx.args.after) if ctx.args.after is not None else 0
    views, last = gate_page(ctx.store, ctx.args.pending, cid, limit=page_limit(ctx.args.limit), after=after)
    gates = [g.to_json() for g in views]
    cursor = ids.fmt(ids.GATE, last)
    text = "\n".join(render.gate_line(g) for g in gates) or "no gates"
    text += more_text(["gate", "list", *_filters(ctx.args, "pending", "card", "limit")], "--after", cursor)
    return Outcome({"gates": gates, "next_after": cursor}, 0, text)


def cmd_gate_answer(ctx: Context) -> Outcome:
    from ..ops.gates import answer
    from ..ops.idempotence import once

    a = ctx.args
    ctx.refuse_agent("answer a gate")
    gid = gate_id(a.gate)
    decision = a.decision or ("approve" if a.choose is not None or a.text is not None else None)
    if decision is None:
        raise InvalidInput(f"say how you answer {a.gate}", f"`loopx gate answer {a.gate} approve`, `reject --note WHY`, `--choose OPTION` or `--text ANSWER`")
    data = validate("gate_answer", _drop_none({"decision": decision, "note": a.note, "remember": a.remember, "for_seconds": a.for_, "choice": a.choose, "text": a.text}))
    actor = ctx.person("answer a gate")

    def run():
        gate, card = answer(
            ctx.store, gid, data["decision"], actor, data.get("note"), data.get("remember"), data.get("for_seconds"), data.get("choice"), data.get("text"),
            second_key=bool(a.confirm_ground),
        )
        return {"gate": gate.to_json(), "card": card.to_json()}, 0

    result, code = once(ctx.store, a.op_id, "gate_answer", {"gate": gid, **data, **({"second_key": True} if a.confirm_ground else {})}, run)
    g, c = result["gate"], result["card"]
    said = f" ({g['answer']})" if g["answer"] not in (g["status"], None) else ""
    text = f"{g['id']} {g['status']}{said} by {g['answered_by']}; {c['id']} is now {c['status']}"
    if g["kind"] == "merge" and g["status"] == "approved":
        text += " (merged)" if c["status"] == "done" else f"\n{render.one_line(c['next'] or '')}"
    return Outcome(result, code, text)


def cmd_monitor(ctx: Context) -> Outcome:
    from ..ops.claims import monitor

    every = validate("monitor", {"every": ctx.args.every})["every"]

    def fn(agent, cid):
        card = monitor(ctx.store, cid, agent, every, ctx.args.lease_token).to_json()
        return {"card": card}, 0, f"{card['id']} monitoring; `loopx next` returns it at {card['monitor_due']}"

    return _agent_card_op(ctx, "monitor", {"every": every}, fn)


def cmd_handoff(ctx: Context) -> Outcome:
    from ..ops.handoffs import handoff
    from ..ops.workspaces import capture

    a = ctx.args
    data = validate("handoff", {"to": a.to, "summary": a.summary, "done": a.done, "pending": a.pending})
    code = capture(ctx.store, card_id(a.card))  # before --op-id's transaction: git never runs under the write lock

    def fn(agent, cid):
        h, card = handoff(ctx.store, cid, agent, data, a.lease_token, code=code)
        hj = h.to_json()
        return {"handoff": hj, "card": card.to_json()}, 0, f"{hj['id']}: {hj['card']} handed to {hj['to']} (digest {hj['digest'][:12]}…)\n→ {hj['to']} runs `loopx accept {hj['card']}`"

    return _agent_card_op(ctx, "handoff", {"data": data}, fn)


def cmd_accept(ctx: Context) -> Outcome:
    from ..ops.handoffs import accept

    def fn(agent, cid):
        h, card = accept(ctx.store, cid, agent, ctx.args.digest)
        cj = card.to_json()
        then = f"it is paused ({cj['paused_reason']}): stop here; a human must raise its budget" if cj["status"] == "paused" else f"`loopx context {cj['id']}`"
        return {"handoff": h.to_json(), "card": cj}, 0, f"accepted {cj['id']} ({render.lease_text(cj['lease'])})\n→ {then}"

    return _agent_card_op(ctx, "accept", {"digest": ctx.args.digest}, fn)


def cmd_release(ctx: Context) -> Outcome:
    from ..ops.claims import release

    def fn(agent, cid):
        card = release(ctx.store, cid, agent, ctx.args.lease_token).to_json()
        return {"card": card}, 0, f"released {card['id']} → ready"

    return _agent_card_op(ctx, "release", {}, fn)


def cmd_done(ctx: Context) -> Outcome:
    from ..ops.done import done

    data = validate("done", _drop_none({"summary": ctx.args.summary, "verify_timeout": ctx.args.verify_timeout}))

    def fn(agent, cid):
        from ..adapters.hooks import vet_verify

        card, evidence = done(ctx.store, cid, agent, data["summary"], ctx.args.lease_token, data.get("verify_timeout"), vet=lambda command: vet_verify(ctx.store, agent, command))
        cj = card.to_json()
        verified = " (verify passed)" if evidence.source == "verify" else ""
        text = f"done {cj['id']}{verified}"
        asked = ctx.store.query("SELECT kind FROM gate WHERE id = ?", (card.pending_gate,)) if cj["status"] == "waiting" and card.pending_gate else []
        if asked and asked[0][0] == "vanished":
            text = (  # commits recorded on the card are on neither its base nor its branch (authority/work.py)
                f"{cj['id']} is not finished: commits recorded on it are on neither its base nor its branch; a person decides whether it "
                f"finishes without them (gate {cj['pending_gate']}). Once they approve, run `loopx done {cj['id']}` again"
            )
        elif cj["status"] == "waiting":  # its branch is the person's to merge (ops/merges)
            text = f"{cj['id']} finished{verified}; its branch waits for a person to merge it (gate {cj.get('pending_gate') or 'pending'}); you cannot merge it yourself"
        still_open = [t for t in cj["todos"] if not t["done"]]
        if still_open:
            text += f"\nnote: {len(still_open)} todo{'s' if len(still_open) != 1 else ''} still open: " + "; ".join(f"{t['id']}. {render.one_line(t['text'])}" for t in still_open[:5])
            text += "\n  (close them with `writeback --todo-done ID` next time, or add follow-up cards)"
        return {"card": cj, "evidence": evidence.to_json()}, 0, text + "\n→ `loopx next --claim` for the next card"

    return _agent_card_op(ctx, "done", {"summary": data["summary"]}, fn, atomic=False)


def cmd_context(ctx: Context) -> Outcome:
    from ..ops.context import build, to_markdown

    built = build(ctx.store, card_id(ctx.args.card))
    if ctx.args.format == "json":
        return Outcome({"context": built}, 0, json.dumps(built, indent=2))
    return Outcome({"context": built, "markdown": to_markdown(built)}, 0, to_markdown(built))
