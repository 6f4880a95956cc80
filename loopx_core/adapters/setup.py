"""``loopx init --for RUNTIME`` (a hooked runtime: ``runtimes.HOOKED``): register the agent and write the
runtime's configuration, merged into what the project already has.

What each runtime gets, and why each setting, is in its module
(``runtimes/claude_code.write_settings``, ``runtimes/codex.write_settings``). Every hook command and MCP entry names the *absolute* path of
the installed ``loopx`` (a runtime's PATH may not have it; a hook that cannot
start fails open on older runtimes). Unless ``sandbox=False``, the runtime's
own OS sandbox is turned on so the agent's shell cannot write the board, read
the person's LoopX folder or change the runtimes' settings; the agent's LoopX
calls then go through the hooks and the ``loopx`` MCP server, which the
runtime runs outside its sandbox.

The agent's instructions (``runtimes/base.instructions``, every hooked
runtime's) go into its instructions file as a Markdown section between
``<!-- loopx:begin -->`` and ``<!-- loopx:end -->``, replaced in place. Running init twice changes
nothing; ``dry_run`` returns unified diffs and writes nothing.
"""

from __future__ import annotations

import difflib
import os
import re
import shlex
import sys
from pathlib import Path

from ..rules.spawn import loopx_argv
from ..runtimes import base

TYPE_CHECKING = False  # (annotations only: typing is not imported on the cold path; checkers read this as typing's)
if TYPE_CHECKING:
    from ..authority import keys
    from ..store.backends import Store
    from ..store.discovery import BoardLocation

MD_BEGIN, MD_END = "<!-- loopx:begin -->", "<!-- loopx:end -->"

SetupError = base.SettingsConflict
Malformed = base.SettingsMalformed  # not JSON/TOML at all: exit 3, not a conflict


class FileChange:
    def __init__(
        self,
        path: Path,
        root: Path,
        before: str | None,
        after: str | None,
        problem: str | None = None,
        malformed: bool = False,
    ):
        self.path, self.before, self.after, self.problem = path, before, after, problem
        self.malformed = malformed
        try:
            self.rel = str(path.relative_to(root))
        except ValueError:
            self.rel = str(path)

    @property
    def action(self) -> str:
        if self.problem:
            return "conflict"
        if self.before is None:
            return "create"
        return "unchanged" if self.after is None or self.after == self.before else "update"

    def diff(self) -> str:
        if self.action not in ("create", "update"):
            return ""
        lines = difflib.unified_diff(
            (self.before or "").splitlines(keepends=True),
            (self.after or "").splitlines(keepends=True),
            fromfile="/dev/null" if self.before is None else f"a/{self.rel}",
            tofile=f"b/{self.rel}",
        )
        return "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines)


class SetupResult:
    def __init__(
        self,
        runtime: str,
        agent: str,
        capabilities: list[str],
        agent_action: str,
        files: list[FileChange],
        notes: list[str],
        dry_run: bool,
    ):
        self.runtime, self.agent, self.capabilities, self.agent_action = runtime, agent, capabilities, agent_action
        self.files, self.notes, self.dry_run = files, notes, dry_run

    @property
    def changed(self) -> bool:
        return self.agent_action not in ("unchanged",) or any(f.action in ("create", "update") for f in self.files)

    def to_json(self) -> dict:
        return {
            "runtime": self.runtime,
            "agent": {"id": self.agent, "capabilities": self.capabilities, "action": self.agent_action},
            "files": [
                {"path": f.rel, "action": f.action, **({"problem": f.problem} if f.problem else {})} for f in self.files
            ],
            "dry_run": self.dry_run,
            "changed": self.changed,
            "diff": "".join(f.diff() for f in self.files) if self.dry_run else "",
            "notes": self.notes,
        }

    @property
    def text(self) -> str:
        verb = (
            {"create": "would create", "update": "would update"}
            if self.dry_run
            else {"create": "created", "update": "updated"}
        )
        caps = ", ".join(self.capabilities) or "no scopes"
        lines = [f"{self.runtime}: agent {self.agent} ({caps}) {self.agent_action}"]
        for f in self.files:
            if f.problem:
                lines.append(f"  ! {f.rel}: {f.problem}")
            else:
                lines.append(f"  {verb.get(f.action, f.action)} {f.rel}")
        if self.dry_run:
            diff = "".join(f.diff() for f in self.files)
            lines.append(diff.rstrip("\n") if diff else "(no file changes)")
            lines.append("dry run: nothing was written")
        lines += [f"note: {n}" for n in self.notes]
        return "\n".join(lines)


# -- the agent -------------------------------------------------------------------


def default_agent_id(runtime: str) -> str:
    try:
        import getpass

        user = getpass.getuser()
    except Exception:
        user = "user"
    user = re.sub(r"[^A-Za-z0-9._-]+", "-", user).strip("-._") or "user"
    return f"{runtime}-{user}"[:64]


def _ask(prompt: str, default: str) -> str:
    sys.stderr.write(f"{prompt} [{default}]: ")
    sys.stderr.flush()
    line = sys.stdin.readline()
    return line.strip() or default


# -- file merging ---------------------------------------------------------------------


def hook_command(runtime: str, event: str, agent: str | None, exe: str, db: str | None) -> str:
    """The hook's command line; with ``agent`` when the runtime has no
    per-checkout settings to name it in (its ``write_settings`` says)."""
    env = f"LOOPX_AGENT={shlex.quote(agent)} " if agent else ""
    if db:
        env += f"LOOPX_DB={shlex.quote(db)} "
    return f"{env}{exe} hook {runtime} {event}"


def merge_markdown(before: str | None, body: str) -> str:
    block = f"{MD_BEGIN}\n{body.strip()}\n{MD_END}\n"
    text = before or ""
    start = text.find(MD_BEGIN)
    end = text.find(MD_END, start + 1) if start != -1 else -1
    if start != -1 and end != -1:
        tail = text[end + len(MD_END) :]
        if tail.startswith("\n"):
            tail = tail[1:]
        return text[:start] + block + tail
    if not text:
        return block
    return text.rstrip("\n") + "\n\n" + block


# -- init ----------------------------------------------------------------------------


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.loopx-tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def _executable() -> list[str]:
    """How the runtime should call us: this installation's interpreter by
    absolute path, isolated (``rules/spawn``: a runtime starts hooks and the
    MCP server in the project, which its agent writes)."""
    return loopx_argv()


def init_runtime(
    store: Store | None,
    runtime: str,
    *,
    agent: str | None = None,
    can: list[str] | None = None,
    dry_run: bool = False,
    root: Path | None = None,
    location: BoardLocation | None = None,
    sandbox: bool = True,
    person: keys.Person | None = None,
) -> SetupResult:
    """Plan (and unless ``dry_run``, apply) a runtime's setup. ``store`` is None
    only for a dry run on a board that does not exist yet (``location`` says where)."""
    from ..ops.agents import add_agent, find_agent
    from ..shapes.errors import Conflict, InvalidInput
    from ..shapes.inputs import validate

    can = list(can or [])
    if agent is None and sys.stdin.isatty():
        agent = _ask(f"agent id for {runtime}", default_agent_id(runtime))
        if not can:
            asked = _ask("its capabilities (scopes, space-separated, e.g. git:push)", "")
            can = asked.replace(",", " ").split()
    agent = agent or default_agent_id(runtime)
    data = validate("agent", {"id": agent, "runtime": runtime, "can": can})
    existing, existing_caps, existing_runtime = None, [], None
    if store is not None:
        existing = find_agent(store, data["id"])
        existing_caps = list(existing.capabilities) if existing else []
        existing_runtime = existing.runtime if existing else None
        if existing is not None:  # keep its watch folders and token window
            data.update(watch=list(existing.watch), tokens=existing.token_limit, window=existing.window_seconds)
    if existing is not None and not can:
        data["can"] = existing_caps  # keep what it may do unless told otherwise
    caps = sorted(set(data["can"]))
    if store is not None:
        location = store.location
    if location is None:
        raise TypeError("init_runtime needs a board, or the location of the one a dry run plans for")
    root = (
        root or location.project_root or location.checkout or Path.cwd()
    ).absolute()  # (a team board: this machine's checkout)
    db = location.url if location.source in ("flag", "env") else None
    exe = _executable()
    exe_text = " ".join(shlex.quote(e) for e in exe)
    key_dir = base.key_folder()
    files: list[FileChange] = []
    notes: list[str] = []

    def plan(path: Path, make: base.Edit) -> FileChange:
        before = _read(path)
        try:
            after = make(before)
        except SetupError as exc:
            change = FileChange(path, root, before, None, str(exc), malformed=isinstance(exc, Malformed))
        else:
            change = FileChange(path, root, before, after)
        files.append(change)
        return change

    from .. import runtimes

    if runtime not in runtimes.HOOKED:  # pragma: no cover - the parser offers only these
        raise InvalidInput(f"unknown runtime {runtime!r}", "use --for " + " or --for ".join(runtimes.HOOKED))
    runtimes.module(runtime).write_settings(
        plan,
        root,
        data["id"],
        exe,
        lambda event, named: hook_command(runtime, event, named, exe_text, db),
        db,
        key_dir,
        sandbox,
        lambda before: merge_markdown(before, base.instructions(data["id"], sandbox)),
        notes,
    )
    conflicts = [f for f in files if f.problem]
    if conflicts:
        unreadable = [f for f in conflicts if f.malformed]  # not JSON/TOML at all: exit 3, else a conflict (5)
        refusal, code = (InvalidInput, "setup_malformed") if unreadable else (Conflict, "setup_conflict")
        raise refusal(
            "; ".join(f"{f.rel} {f.problem}" for f in unreadable or conflicts),
            "nothing was changed; fix the file and run `loopx init --for " + runtime + "` again",
            code=code,
            data={"setup": SetupResult(runtime, data["id"], caps, "unchanged", files, notes, dry_run).to_json()},
        )
    if existing is None:
        action = "would be registered" if dry_run else "registered"
    elif caps != sorted(existing_caps) or existing_runtime != runtime:
        action = "would be updated" if dry_run else "updated"
    else:
        action = "unchanged"
    if not dry_run and action != "unchanged":
        assert store is not None  # (only a dry run plans without a board)
        add_agent(
            store, {**data, "can": caps}, person
        )  # a person's signed decision (agents.add_agent refuses anything else)

    if not dry_run:
        for change in files:
            if change.action in ("create", "update") and change.after is not None:
                _write(change.path, change.after)
    return SetupResult(runtime, data["id"], caps, action, files, notes, dry_run)
