"""The board as a whole: ``loopx init``, ``where``, ``board``, ``export``,
``migrate``, ``log`` (a card's evidence) and ``events`` (the event log)."""

from __future__ import annotations

import json
import sys
import time

from ..rules import clock, turn_env
from ..shapes.errors import Forbidden, UsageError
from . import (
    Context,
    Outcome,
    card_id,
    flag_words,
    more_text,
    page_limit,
    render,
    validate,
)

TYPE_CHECKING = False  # (annotations only; checkers read this as typing's)
if TYPE_CHECKING:
    from ..store.discovery import BoardLocation


def cmd_init(ctx: Context) -> Outcome:
    from ..ops.board import init_board
    from ..store.discovery import init_target

    args = ctx.args
    if turn_env.agent():  # (init's own --agent names the agent to register)
        raise Forbidden(
            "an agent cannot create or set up a board",
            "only a person does this, in their own terminal with their key",
            code="person_only",
        )
    objective = None
    if args.objective is not None:
        objective = validate("text", {"text": args.objective})["text"]
    location = init_target(getattr(args, "db", None))
    if clock.frozen_by_env() and not args.test_board and not location.exists:
        raise UsageError(
            "LOOPX_NOW is set, but only a test board lets it move the clock",
            "unset LOOPX_NOW, or make a board for tests and demos: `loopx init --test-board`",
            code="clock_refused",
        )
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
        from ..store.known_boards import remember

        remember(store.location)  # one of the person's boards from now on (`loopx boards`, `B` on the board)
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

        result = init_runtime(
            store,
            args.runtime,
            agent=args.agent,
            can=args.can,
            dry_run=args.dry_run,
            location=store.location if store is not None else location,
            sandbox=args.sandbox,
            person=ctx._person,
        )
        data["setup"] = result.to_json()
        text += "\n" + result.text + _in_a_workspace(args.runtime, args.agent)
    elif args.dry_run:
        text += "\ndry run: nothing was written; run it again without --dry-run"
    else:
        text += '\nnext: register an agent (`loopx agent add claude-1`) and add a card (`loopx card add "TITLE"`)'
    return Outcome(data, 0, text)


def cmd_boards(ctx: Context) -> Outcome:
    """The person's boards and what needs them on each (issue #42); ``forget PATH`` removes one from the list."""
    from ..shapes.errors import InvalidInput, NotFound
    from ..store import known_boards

    args = ctx.args
    if args.action is None and args.path is not None:
        raise UsageError(
            f"unknown words after `loopx boards`: {args.path[:80]!r}",
            "`loopx boards` lists your boards; `loopx boards forget PATH` removes one",
        )
    if args.action == "forget":
        if not args.path:
            raise UsageError(
                "forget which board?", "`loopx boards forget PATH` (its file, project folder, URL or name)"
            )
        gone = known_boards.forget(args.path)
        if gone is None:
            raise NotFound(
                f"no board {args.path[:200]!r} in your list",
                "`loopx boards` lists them (a board is named by its file, project folder, URL or name)",
                code="unknown_board",
            )
        return Outcome(
            {"forgotten": gone.to_json()},
            0,
            f"forgot {gone.name} ({gone.target}); the board itself is untouched — opening it remembers it again",
        )
    wait = args.wait
    if not (0 < wait <= 30):
        raise InvalidInput(f"--wait {wait:g} is out of range", "seconds, more than 0 and at most 30")
    from ..ops.my_boards import survey

    boards = known_boards.known()
    here = _here_target()
    standings = survey(boards, wait)
    total = sum(s.total for s in standings)
    data = {
        "boards": [dict(s.to_json(), here=s.board.target == here) for s in standings],
        "needs_you": total,
        "list": str(known_boards.list_path()),
    }
    if not boards:
        return Outcome(data, 0, "no boards yet: `loopx init` in a project makes one (and remembers it here)")
    lines = []
    for s in standings:
        mark = "*" if s.board.target == here else " "
        what = (
            f"{s.total} need{'s' if s.total == 1 else ''} you ({s.needs.words()})"
            if s.needs is not None and s.total
            else ("nothing needs you" if s.needs is not None else f"{s.state}: {s.why}")
        )
        where = (
            f"{s.board.checkout} · {s.board.target}" if s.board.kind == "team" and s.board.checkout else s.board.target
        )
        lines.append(
            f"{mark} {render.one_line(s.board.name):<20} {s.board.kind:<5} {what}\n    {render.one_line(where)}"
        )
        lines.extend(f"    ⚑ {render.one_line(waiting)}" for waiting in s.first)
    plural = "s" if len(boards) != 1 else ""
    lines.append(f"{total} need{'s' if total == 1 else ''} you across {len(boards)} board{plural} (* this folder's)")
    return Outcome(data, 0, "\n".join(lines))


def _here_target() -> str | None:
    """The list's entry for the board this folder uses (None: none here, or not one the list could hold)."""
    from ..store.discovery import discover
    from ..store.known_boards import entry_for

    try:
        location = discover()
    except Exception:  # (a malformed LOOPX_DB: no board here)
        return None
    if location.source == "none":
        return None
    return entry_for(location).target


def _in_a_workspace(runtime: str, agent: str | None) -> str:
    """Run in a card's workspace, ``init --for`` sets up the main checkout (where
    the board and the runtimes' settings are): say how to work in the workspace."""
    import os

    from ..rules import workspace_bounds

    bounds = workspace_bounds.find(os.getcwd())
    if bounds is None or bounds.main is None:
        return ""
    card = (bounds.branch or "").removeprefix("loopx/") or "CARD"
    return (
        f"\nthis folder is a card's workspace: the settings above are the main checkout's ({bounds.main}); "
        f"start {runtime} here with them, bounded to this workspace: `loopx workspace start {card} --runtime {runtime} --agent {agent or 'ID'}` "
        f"(started any other way it reads this folder's own settings, which its agent can write)"
    )


def cmd_where(ctx: Context) -> Outcome:
    loc = ctx.location
    data = {
        "board": {
            "path": loc.describe(),
            "url": loc.url,
            "source": loc.source,
            "exists": loc.exists,
            "backend": loc.backend,
        }
    }
    pointer, pointer_text = None, ""
    if loc.checkout is not None:  # a team board: the checkout this folder belongs to (issue #26)
        data["board"]["checkout"] = str(loc.checkout)
        pointer, pointer_text = _pointer_names(loc)
        data["board"]["pointer"] = pointer
    if loc.source == "none":
        from ..store.discovery import NO_BOARD

        return Outcome(data, 0, f"{NO_BOARD}\n→ `loopx init` creates {loc.describe()}")
    why = {
        "flag": "from --db",
        "env": "from LOOPX_DB",
        "nearest": "nearest .loopx/ board",
        "user": "your user board (no .loopx/ found)",
        "worktree": "this folder is a git worktree of the project; the board of its main checkout",
    }[loc.source]
    text = f"{loc.describe()}  ({why}{'' if loc.exists else ', not created yet — run `loopx init`'})"
    if loc.checkout is not None:
        text += f"\nthis machine's checkout of it: {loc.checkout} (its .loopx/team.json{pointer_text})"
    return Outcome(data, 0, text)


def _pointer_names(loc: BoardLocation) -> tuple[str, str]:
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
    return "another address", (
        f", written for {render.one_line(named)} — not this board's address: "
        f"`loopx init` here points this checkout at this board, or use that board"
    )


def cmd_board(ctx: Context) -> Outcome | None:
    if (
        not getattr(ctx.args, "text", False)
        and not getattr(ctx.args, "json", False)
        and sys.stdout.isatty()
        and sys.stdin.isatty()
    ):
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


def cmd_log(ctx: Context) -> Outcome:
    from ..ops.cards import card_detail

    d = card_detail(ctx.store, card_id(ctx.args.card), event_limit=0, evidence_limit=10**9)
    data: dict = {
        "card": d.card.to_json(),
        "evidence": [e.to_json() for e in d.evidence],
        "observed": [o.to_json() for o in d.observed],
    }
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

        limit = page_limit(ctx.args.limit, PAGE_MAX, low=0)  # --limit 0: no events (DESIGN §13 "Bad input")
        with store.read():
            found = [e.to_json() for e in events.since(seq, card=card, limit=limit + 1)]
        cursor = str(found[limit - 1]["seq"]) if len(found) > limit and limit else None
        found = found[:limit]
        text = (
            "\n".join(f"{e['seq']:>6} {e['at']} {e['actor']:<20} {e['card'] or '':<7} {e['kind']}" for e in found)
            or "no events"
        )
        text += more_text(["events", *flag_words(ctx.args, "card", "limit")], "--since", cursor)
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
