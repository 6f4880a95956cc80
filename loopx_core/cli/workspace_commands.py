"""``loopx workspace open|list|archive|gc`` (issue #26: a git worktree per card)."""

from __future__ import annotations

import os

from ..rules import clock
from . import Context, Outcome, card_id

TYPE_CHECKING = False  # (annotations only: typing is not imported on the cold path; checkers read this as typing's)
if TYPE_CHECKING:
    from ..store.backends import Store


def _size_text(size: int | None) -> str:
    from ..ops.workspace_cap import human_size

    return human_size(size)


def cmd_open(ctx: Context) -> Outcome:
    from ..ops.workspace_open import open_workspace

    cid = card_id(ctx.args.card)
    said: list[str] = []
    ws = open_workspace(ctx.store, cid, ctx.caller("open a workspace"), ctx.args.base, said=said).to_json()
    return Outcome(
        {"workspace": ws},
        0,
        "".join(line + "\n" for line in said) + f"{ws['card']}: {ws['path']} on {ws['branch']} (from {ws['base']})\n"
        f"→ a runner starts the card's turns there; to work there yourself with an agent, `loopx workspace start {ws['card']} --runtime claude-code|codex --agent ID` "
        f"(a runtime started there any other way reads the workspace's own settings, which its agent can write)",
    )


def cmd_start(ctx: Context) -> Outcome | int:
    """``loopx workspace start CARD --runtime claude-code|codex --agent ID [-- ARG…]``:
    the card's workspace (made if need be, as the agent's first claim would), then
    the runtime started there the way the runner starts a turn (``runtimes/``:
    ``by_hand`` and ``environ``), replacing this process. A runtime started there
    any other way reads the workspace's own settings, which its agent can write."""
    import shlex

    from .. import runtimes
    from ..ops.workspace_open import open_workspace
    from ..shapes.errors import UsageError
    from ..store.rows import agent_row
    from . import agent_id
    from .runner_commands import given_bin

    a, store = ctx.args, ctx.store
    agent = agent_id(a.drive)
    with store.read():
        agent_row(agent)  # an unknown agent: exit 4 with the command that registers it
    rest = list(a.rest)[1:] if list(a.rest)[:1] == ["--"] else list(a.rest)
    given_bin(a.bin)
    runtime = runtimes.make(a.runtime, rest, a.bin, agent)
    runtime.project = str(store.project_root())
    problem = runtime.identity_problem(store.project_root())
    if problem:
        raise UsageError(
            problem,
            f"set the project up for it first: `loopx init --for {a.runtime} --agent {agent}` in {store.project_root()}",
        )
    if not _set_up(a.runtime, store.project_root()):
        raise UsageError(
            f"the project is not set up for {a.runtime}: its main checkout has no LoopX hooks to start it with",
            f"`loopx init --for {a.runtime} --agent {agent}` in {store.project_root()}, then start it again",
            code="not_set_up",
        )
    ws = open_workspace(store, card_id(a.card), f"agent:{agent}").to_json()
    argv = runtime.by_hand(ws["path"])
    location = store.location
    from ..runtimes.base import SettingsConflict

    try:
        own = runtime.environ(ws["path"])
    except (OSError, SettingsConflict) as exc:
        raise UsageError(
            f"cannot prepare {a.runtime}'s settings for the workspace: {getattr(exc, 'strerror', None) or exc}",
            "fix what it names, then start it again",
        ) from None
    env = {
        "LOOPX_AGENT": agent,
        "LOOPX_DB": str(location.path) if location.path is not None else location.url,
        "LOOPX_WORKSPACE": ws["path"],
        **own,
    }
    if a.print_only or getattr(a, "json", False):
        text = (
            f"cd {shlex.quote(ws['path'])} && "
            + " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items())
            + " "
            + shlex.join(argv)
        )
        return Outcome(
            {"workspace": ws, "command": argv, "cwd": ws["path"], "env": env},
            0,
            text + "\n→ run it, or `loopx workspace start` without --print starts it",
        )
    ctx.close()  # (the board is the runtime's hooks' now)
    full = {
        k: v for k, v in os.environ.items() if k not in ("LOOPX_KEY", "LOOPX_HUMAN")
    }  # the person's key is not the agent's
    full.update(env)
    os.chdir(ws["path"])
    _record_git_folder(ws["path"])
    try:
        os.execvpe(argv[0], argv, full)
    except OSError as exc:
        raise UsageError(
            f"cannot start {argv[0]}: {exc.strerror or exc}", "give its executable with --bin PATH"
        ) from None


def _record_git_folder(workspace: str) -> None:
    """What the repository's shared git folder holds as the session starts
    (``workspace/sweep.py``): its Stop hook moves out what a turn created there.
    This process becomes the runtime (``exec``), so the record names its pid."""
    from ..rules import workspace_bounds
    from ..workspace import sweep

    bounds = workspace_bounds.find(workspace)
    if bounds is not None and bounds.main is not None:
        sweep.begin(bounds)


def _set_up(runtime: str, root: str | os.PathLike[str]) -> bool:
    """Does the main checkout carry LoopX's PreToolUse hook for ``runtime`` (``init --for``)?"""
    from .. import runtimes

    name = runtimes.module(runtime).SETTINGS_FILE
    try:
        with open(os.path.join(str(root), name), encoding="utf-8") as fh:
            return f"hook {runtime} pre-tool-use" in fh.read()
    except OSError:
        return False


def cmd_list(ctx: Context) -> Outcome:
    from ..ops.workspaces import here as mine
    from ..ops.workspaces import list_workspaces, removable
    from ..workspace import git

    rows = []
    now = clock.now()
    for ws, status in list_workspaces(ctx.store):
        item = ws.to_json()
        item["here"] = mine(ctx.store, ws)  # (a team board: another checkout's workspace is listed, not measured)
        here = item["here"] and ws.state != "removed" and os.path.isdir(ws.path)
        item["card_status"] = status
        item["size"] = git.size_on_disk(ws.path) if here else None
        item["age_seconds"] = round(now - ws.opened_at, 1)
        try:
            item["removable"] = removable(ws, ctx.store) if here else None
        except git.GitError as exc:
            item["removable"], item["problem"] = None, exc.message
        item["merged"] = item["removable"] == "merged"
        rows.append(item)
    lines = [
        f"{w['card']:<7} {w['state']:<8} {w['card_status'] or '—':<10} {w['branch']:<14} {_size_text(w['size']):>9} "
        f"{clock.human_delta(w['age_seconds']):>8}  {'merged' if w['merged'] else (w['removable'] or '')}  {w['path']}"
        + ("" if w["here"] else f"  (in checkout {w['checkout']})")
        for w in rows
    ]
    text = (
        "\n".join(lines)
        if lines
        else "no workspaces (a card gets one at its first turn when the project is a git repository)"
    )
    from ..ops.workspace_cap import cap

    total, limit = sum(w["size"] or 0 for w in rows), cap(ctx.store)
    text += f"\ntotal {_size_text(total)}" + (
        f" of a {_size_text(limit)} cap" if limit else " (no cap: `loopx workspace cap 20G` sets one)"
    )
    if any(w["removable"] for w in rows):
        text += "\n→ `loopx workspace gc` removes the merged and archived ones (their commits and refs stay)"
    return Outcome({"workspaces": rows, "total": total, "cap": limit}, 0, text)


def cmd_archive(ctx: Context) -> Outcome:
    from ..ops.workspaces import archive

    cid = card_id(ctx.args.card)
    ws = archive(ctx.store, cid, ctx.person("archive a workspace")).to_json()
    return Outcome(
        {"workspace": ws},
        0,
        f"{ws['card']}: its work is kept under {ws['archive_ref']}\n→ `loopx workspace gc` may now remove its folder",
    )


def cmd_gc(ctx: Context) -> Outcome:
    from ..ops.workspaces import here, list_workspaces, removable, remove
    from ..shapes.errors import LoopxError

    actor = None if ctx.args.dry_run else ctx.person("remove workspaces")
    removed, kept = [], []
    for ws, _ in list_workspaces(ctx.store):
        if ws.state == "removed" or not here(ctx.store, ws):
            continue  # (a team board: another checkout's are its own to clean)
        why = removable(ws, ctx.store)
        key = ws.to_json()["card"]
        if why is None:
            from ..ops.workspaces import unkept, work_text

            lost = unkept(ctx.store, ws) if os.path.isdir(ws.path) else []
            kept.append(
                {
                    "card": key,
                    "path": ws.path,
                    "why": f"its recorded commits {work_text(lost)} are on neither {ws.base} nor a LoopX ref"
                    if lost
                    else "neither merged nor archived",
                }
            )
            continue
        if ctx.args.dry_run:
            removed.append({"card": key, "path": ws.path, "reason": why})
            continue
        assert actor is not None  # (a dry run goes no further)
        try:
            remove(ctx.store, ws.card, actor)
            removed.append({"card": key, "path": ws.path, "reason": why})
        except LoopxError as err:
            kept.append({"card": key, "path": ws.path, "why": err.message})
    verb = "would remove" if ctx.args.dry_run else "removed"
    homes = _gc_codex_homes(ctx.store, bool(ctx.args.dry_run))
    text = "\n".join(
        [f"{verb} {r['card']} ({r['reason']}): {r['path']}" for r in removed]
        + [f"kept {k['card']}: {k['why']}" for k in kept]
        + [
            f"{verb} the Codex home of {h['agent']} (no open workspace or live runner of its here): {h['path']}"
            for h in homes
            if h["removed"]
        ]
        + [f"kept the Codex home {h['path']}: {h['why']}" for h in homes if not h["removed"]]
    )
    return Outcome(
        {"removed": removed, "kept": kept, "codex_homes": homes, "dry_run": bool(ctx.args.dry_run)},
        0,
        text or "no workspaces",
    )


def _gc_codex_homes(store: Store, dry_run: bool) -> list[dict]:
    """LoopX's Codex homes for this project of agents with no open workspace here
    and no live runner: removed (``runtimes/codex.gc_homes``)."""
    from ..ops.workspaces import agents_at_work, repository
    from ..runtimes import codex

    main = repository(store)
    return codex.gc_homes(str(main), lambda: agents_at_work(store), dry_run) if main is not None else []


def cmd_cap(ctx: Context) -> Outcome:
    from ..ops.workspace_cap import parse_size, set_cap

    size = set_cap(ctx.store, parse_size(ctx.args.size), ctx.person("cap the workspaces"))
    text = f"workspaces capped at {_size_text(size)} in total" if size else "no cap on the workspaces"
    return Outcome(
        {"cap": size},
        0,
        text + "\n→ past it, merged and archived folders are removed first, then new workspaces are refused",
    )


def _setup_text(current: dict | None) -> str:
    return (
        f"new workspaces run: {current['command']} (at most {clock.human_delta(current['timeout'])})"
        if current
        else "no setup command"
    )


def cmd_setup(ctx: Context) -> Outcome:
    from ..ops.workspace_open import set_setup, setup_of
    from ..rules.durations import parse_duration
    from ..shapes.errors import InvalidInput, UsageError

    a = ctx.args
    if a.setup_command is None and not a.clear:
        current = setup_of(ctx.store)
        return Outcome({"setup": current}, 0, _setup_text(current))
    if a.setup_command is not None and a.clear:
        raise UsageError("a command and --clear together", "pass a command, or --clear alone")
    if a.setup_command is not None and not a.setup_command.strip():
        raise InvalidInput("an empty setup command", "e.g. `loopx workspace setup 'npm ci'`, or --clear")
    try:
        timeout = parse_duration(a.timeout)
    except ValueError as exc:
        raise InvalidInput(f"--timeout: {exc}", "e.g. 30s, 10m") from None
    current = set_setup(
        ctx.store, None if a.clear else a.setup_command, timeout, ctx.person("set the workspace setup command")
    )
    return Outcome(
        {"setup": current},
        0,
        _setup_text(current) + "\n→ its output is recorded in each new workspace's workspace_opened event",
    )
