"""Commands that reach LoopX itself, other terminals, or settings that make
programs run commands: the hooks' readers for ``loopx`` (a person's verbs and
screen), ``tmux``/``screen``/``xdotool``/``write`` (other terminals), SQLite
and PostgreSQL clients (the board's database), git (``-c`` settings, aliases,
what takes untracked files away or writes a commit over them), and Codex's ``apply_patch`` run through the shell. Part of the
shell reader: ``checker`` calls these, imported only when needed (the
terminal refusal's reason is the ground's: ``checker.ground.TERMINAL``).
"""

from __future__ import annotations

import enum
import os
import re

from ..rules import workspace_bounds
from ..workspace import git_settings
from . import builtin_rules
from .posix_words import Lazy
from .vocabulary import INTERACTIVE, MAX_DEPTH, SAME, Need, clip

TYPE_CHECKING = False  # (annotations only: typing is not imported on the cold path; checkers read this as typing's)
if TYPE_CHECKING:
    from typing import Final, TypeGuard

    from ..rules.workspace_bounds import Bounds
    from .posix_words import Word
    from .vocabulary import Ctx, Reader, Same

_GIT_COMMAND_KEYS = Lazy(git_settings.RUNS_A_PROGRAM)
_GIT_INERT_KEYS = Lazy(git_settings.INERT)
_TMUX_READ = frozenset(
    (
        "ls",
        "list-sessions",
        "list-windows",
        "lsw",
        "list-panes",
        "lsp",
        "list-clients",
        "lsc",
        "list-commands",
        "lscm",
        "list-keys",
        "lsk",
        "has-session",
        "has",
        "show-options",
        "show",
        "show-environment",
        "showenv",
        "info",
        "server-info",
    )
)


class _Unknown(enum.Enum):
    """``git_alias``'s answer when a config file LoopX cannot follow might define
    the alias (an enum: checkers tell it from a value; ``re`` imported enum)."""

    UNKNOWN = "unknown"


_UNKNOWN: Final = _Unknown.UNKNOWN


def _inert(key: str, value: str | None) -> bool:
    """A git setting that runs nothing and points nowhere (``workspace/git_settings``)."""
    return bool(_GIT_INERT_KEYS.match(key)) or (
        key.lower() in git_settings.INERT_WHEN_OFF and (value or "").lower() in git_settings.OFF
    )


def git_rules(checker: Reader, text: str, args: list[str], cwd: str | None) -> None:
    i = builtin_rules.git_subcommand_index(args)
    for j, a in enumerate(args[: i if i is not None else len(args)]):
        if (a == "-c" and j + 1 < len(args)) or (a.startswith("-c") and len(a) > 2):
            key, _, value = (args[j + 1] if a == "-c" else a[2:]).partition("=")
            if not _inert(key, value):
                why = (
                    "makes git run a command"
                    if _GIT_COMMAND_KEYS.match(key)
                    else "changes where git reads, writes or sends"
                )
                checker.opaque(text, f"`git -c {clip(key, 40)}=…` {why}, which LoopX cannot see")
        elif a.startswith(("--config-env", "--exec-path", "--namespace", "--attr-source")):
            checker.opaque(text, f"`git {a.split('=')[0]}` points git at settings, programs or refs LoopX cannot see")
    if i is None:
        return
    sub = args[i]
    rest = args[i + 1 :]
    if checker.workspace is not None:
        _git_in_workspace(checker, checker.workspace, text, args[:i], sub, rest, cwd)
    if sub in _GIT_TREE_WRITERS:
        _git_over_untracked(checker, text, sub, rest, _git_folder(args[:i], cwd))
    elif sub == "config":
        _git_config(checker, text, rest, _git_folder(args[:i], cwd))
    elif sub == "replace" and not _git_reads_only(rest, ("-l", "--list")):
        checker.opaque(
            text, "`git replace` makes git show other objects in place of commits, in everything the person later reads"
        )
    elif sub not in builtin_rules.GIT_COMMANDS:
        alias = git_alias(sub, cwd, checker)
        if alias is _UNKNOWN:
            checker.opaque(text, f"`git {clip(sub, 40)}` may be an alias in git's configuration that LoopX cannot read")
        elif alias is not None:
            expansion = alias[1:] if alias.startswith("!") else "git " + alias
            import shlex

            checker.shell(expansion + " " + " ".join(shlex.quote(a) for a in rest), cwd, depth=MAX_DEPTH - 1)


# `git config` that writes (the old option forms and the 2.46 subcommands).
_CONFIG_READS = frozenset(
    ("--get", "--get-all", "--get-regexp", "--get-urlmatch", "-l", "--list", "--get-color", "--get-colorbool")
)
_CONFIG_ACTIONS = frozenset(("get", "set", "unset", "list", "edit", "rename-section", "remove-section"))
_CONFIG_VALUES = {"-f", "--file", "--blob", "-t", "--type", "--default", "--comment", "--value"}
_CONFIG_ELSEWHERE = frozenset(("--global", "--system", "-f", "--file"))


def _git_reads_only(rest: list[str], reads: tuple[str, ...]) -> bool:
    flags = [a for a in rest if a.startswith("-")]
    return not rest or any(f in reads for f in flags)


def _git_config(checker: Reader, text: str, rest: list[str], cwd: str | None) -> None:
    """A write of git's settings is the class, whatever the key or the file: a
    setting that runs nothing and points nowhere (identity, colours, output —
    ``workspace/git_settings.INERT``) in the repository's own config is free; any
    other key, any write of a file outside the repository's own config
    (``--global``, ``--system``, ``--file``: the person's settings, a template
    folder's, another checkout's ``.git/config``) and ``--edit`` need a
    person's gate; from a card's workspace, ``--file`` into the main checkout or
    another workspace is refused."""
    flags, words = _git_split(rest, _CONFIG_VALUES)
    files = [rest[k + 1] for k, a in enumerate(rest[:-1]) if a in ("-f", "--file")] + [
        a.split("=", 1)[1] for a in rest if a.startswith("--file=")
    ]
    action = words[0] if words and words[0] in _CONFIG_ACTIONS else None
    if action is not None:
        words = words[1:]
    reading = action in ("get", "list") or any(
        f.split("=")[0] in _CONFIG_READS or f in ("--show-origin", "--show-scope", "--name-only") and len(words) < 2
        for f in flags
    )
    reading = reading or (
        action is None
        and len([w for w in words if w != "--"]) < 2
        and not any(
            f.startswith(("--unset", "--remove-section", "--rename-section", "--add", "--replace-all", "-e", "--edit"))
            for f in flags
        )
    )
    if reading:
        return
    if checker.workspace is not None:
        for path in files:
            if checker.workspace_write(text, path, cwd):
                return
    key = next((w for w in words if w != "--"), "")
    if action == "edit" or any(f in ("-e", "--edit") for f in flags):
        checker.opaque(text, "`git config --edit` opens git's settings in an editor: any setting may be written")
    elif any(f.split("=")[0] in _CONFIG_ELSEWHERE for f in flags):
        checker.opaque(
            text,
            "it writes a git config file outside this repository's own (the person's settings, a template's, another checkout's): git reads it later, as the person",
        )
    elif any(f.startswith(("--rename-section", "--remove-section")) for f in flags) or action in (
        "rename-section",
        "remove-section",
    ):
        checker.opaque(text, "it renames or removes a whole section of git's settings")
    elif not _inert(key, next((w for w in words[words.index(key) + 1 :] if w != "--"), None) if key in words else None):
        why = (
            "makes git run a command"
            if _GIT_COMMAND_KEYS.match(key)
            else "changes where git reads, writes or sends, or what it trusts"
        )
        checker.opaque(text, f"the git setting `{clip(key, 60)}` {why}, which LoopX cannot see")


# git commands that take untracked files away or write a commit's files over
# them: LoopX's ground is untracked (.claude/settings.json, .mcp.json, .codex/,
# .loopx/ — `loopx init` writes them, git never had them).
_GIT_TREE_WRITERS = frozenset(("stash", "clean", "reset", "checkout", "switch", "restore", "read-tree"))
_UNTRACKED_GONE = "it takes untracked files away — LoopX's hooks (.claude/settings.json, .mcp.json, .codex/) and board (.loopx/) are untracked"
_OVERWRITTEN = "it writes a commit's files over untracked ones, and LoopX cannot tell whether that commit holds LoopX's hooks settings (.claude/settings.json, .mcp.json, .codex/)"


def _git_over_untracked(checker: Reader, text: str, sub: str, rest: list[str], cwd: str | None) -> None:
    """``git stash -u/-a`` and ``git clean`` remove untracked (and ignored) files:
    refused unless each path given to it holds none of LoopX's ground. ``reset
    --hard COMMIT``, ``checkout -f COMMIT``, ``checkout COMMIT -- PATH``,
    ``switch --discard-changes``, ``restore --source``, ``read-tree -u`` write
    a commit's files over untracked ones (git refuses that otherwise): they need
    ``shell:opaque``."""
    flags, words = _git_split(rest, {"-m", "--message", "-e", "--exclude", "-s", "--source", "--pathspec-from-file"})
    short = "".join(f[1:] for f in flags if not f.startswith("--"))
    if sub == "stash":
        action = (
            words[0]
            if words
            and words[0]
            in ("push", "save", "list", "show", "drop", "pop", "apply", "branch", "clear", "create", "store")
            else None
        )
        takes = "u" in short or "a" in short or any(f in ("--include-untracked", "--all") for f in flags)
        paths = [p for p in (words[1:] if action == "push" else [] if action == "save" else words) if p != "--"]
        if (
            action in (None, "push", "save")
            and takes
            and (not paths or any(checker.ground.holds(p, cwd) for p in paths))
        ):
            checker.forbid(text, _UNTRACKED_GONE)
    elif sub == "clean":
        paths = [p for p in words if p != "--"]
        if (
            "n" not in short
            and "--dry-run" not in flags
            and (not paths or any(checker.ground.holds(p, cwd) for p in paths))
        ):
            checker.forbid(text, _UNTRACKED_GONE)
    elif sub == "reset":
        if words and words[0] != "--" and any(f in ("--hard", "--merge", "--keep") for f in flags):
            checker.opaque(text, _OVERWRITTEN)
    elif sub in ("checkout", "switch"):
        forced = "f" in short or any(f in ("--force", "--discard-changes", "--overwrite-ignore") for f in flags)
        tree, paths = (
            (words[: words.index("--")], words[words.index("--") + 1 :]) if "--" in words else (words[:1], words[1:])
        )
        if (forced and tree) or (tree and any(checker.ground.holds(p, cwd) for p in paths)):
            checker.opaque(text, _OVERWRITTEN)
    elif sub == "restore":
        if any(f.startswith(("-s", "--source")) for f in flags) and any(
            checker.ground.holds(p, cwd) for p in words if p != "--"
        ):
            checker.opaque(text, _OVERWRITTEN)
    elif sub == "read-tree" and ("u" in short or "--reset" in flags):
        checker.opaque(text, _OVERWRITTEN)


# -- in a card's workspace (issue #26) ----------------------------------------------------------
# An agent there owns one branch (its workspace's). Git run there can move any ref
# of the repository — the worktrees share them — so what would move the base
# branch, another card's branch, LoopX's refs (refs/loopx/…), another worktree, or
# drop commits LoopX recorded, is refused; so is git pointed at the main checkout
# or another workspace. The runtime's sandbox holds the same line for programs
# the hook cannot read (rules/workspace_bounds).
_GIT_READS = frozenset(
    (
        "log",
        "show",
        "diff",
        "status",
        "rev-parse",
        "rev-list",
        "ls-files",
        "ls-tree",
        "cat-file",
        "blame",
        "grep",
        "describe",
        "shortlog",
        "for-each-ref",
        "show-ref",
        "name-rev",
        "merge-base",
        "diff-tree",
        "diff-files",
        "diff-index",
        "cherry",
        "annotate",
        "whatchanged",
        "count-objects",
        "var",
        "help",
        "version",
        "check-ignore",
        "check-attr",
        "verify-commit",
        "verify-tag",
        "fsck",
    )
)
_GIT_DROPS = {
    "prune": "it deletes unreachable objects, which may be commits LoopX recorded",
    "pack-refs": "it packs the repository's refs, which the sandbox then cannot keep apart",
    "filter-branch": "it rewrites branches and refs wholesale",
    "replace": "it makes git show other objects in place of recorded commits",
}
_GIT_VALUES = {  # a subcommand's options that take the next word as their value
    "branch": {"-u", "--set-upstream-to", "--format", "--sort", "--points-at"},
    "checkout": {"-b", "-B", "-c", "-C", "--force-create", "--orphan", "--conflict"},
    "switch": {"-b", "-B", "-c", "-C", "--force-create", "--orphan", "--conflict"},
    "rebase": {"--onto", "-s", "--strategy", "-X", "--strategy-option", "--exec", "-x"},
    "update-ref": {"-m"},
    "symbolic-ref": {"-m"},
    "fetch": {
        "--depth",
        "--deepen",
        "--shallow-since",
        "--shallow-exclude",
        "-j",
        "--jobs",
        "--upload-pack",
        "-o",
        "--server-option",
        "--negotiation-tip",
    },
    "push": {"--repo", "-o", "--push-option", "--receive-pack", "--exec"},
    "worktree": {"-b", "-B", "--reason"},
    "reflog": {"--expire", "--expire-unreachable"},
    "tag": {"-m", "--message", "-F", "--file", "-u", "--local-user"},
    "notes": {"-m", "--message", "-F", "--file", "-C", "--reuse-message", "-c", "--reedit-message", "--ref"},
    "stash": {"-m", "--message", "--pathspec-from-file"},
}
_CARD_ONLY = "an agent in a card's workspace moves only its own branch"
_BRANCH_LISTS = (
    "-l",
    "--list",
    "-a",
    "--all",
    "-r",
    "--remotes",
    "-v",
    "-vv",
    "--verbose",
    "--contains",
    "--no-contains",
    "--merged",
    "--no-merged",
    "--points-at",
    "--show-current",
    "--format",
    "--sort",
    "--column",
    "--no-column",
)


def _git_in_workspace(
    checker: Reader, bounds: Bounds, text: str, before: list[str], sub: str, rest: list[str], cwd: str | None
) -> None:
    own = bounds.branch
    for j, a in enumerate(before):
        if a in ("--git-dir", "--work-tree", "--namespace") or a.startswith(
            ("--git-dir=", "--work-tree=", "--namespace=")
        ):
            if sub not in _GIT_READS:
                checker.forbid(
                    text,
                    f"`git {a.split('=')[0]}` points git at another repository or work tree; {_CARD_ONLY}, in its workspace",
                )
            return
    folder = _git_folder(before, cwd)
    if folder != cwd and sub not in _GIT_READS and checker.workspace_write(text, folder, None):
        return
    flags, words = _git_split(rest, _GIT_VALUES.get(sub, {"-m", "--message", "-F", "--file"}))
    short = "".join(f[1:] for f in flags if not f.startswith("--"))

    def other(name: str | None) -> TypeGuard[str]:
        """A branch of the repository that is not this workspace's own."""
        if not name or name.startswith("-"):
            return False
        bare = name[len("refs/heads/") :] if name.startswith("refs/heads/") else name
        return bare != own and workspace_bounds.is_branch(bounds, bare)

    def refuse(why: str) -> None:
        checker.forbid(text, f"{why}; {_CARD_ONLY} ({own or 'none: HEAD is detached'})")

    if sub in _GIT_DROPS:
        refuse(_GIT_DROPS[sub])
    elif sub == "update-ref":
        if "--stdin" in flags:
            refuse("`git update-ref --stdin` moves refs LoopX cannot see")
        elif words and words[0] not in ("HEAD", f"refs/heads/{own}"):
            refuse(f"it moves `{clip(words[0], 60)}`")
        elif "-d" in flags or "--delete" in flags:
            refuse(f"it deletes `{clip(words[0] if words else '', 60)}`, the branch whose commits LoopX recorded")
    elif sub == "symbolic-ref":
        if "-d" in flags or "--delete" in flags or (len(words) >= 2 and words[0] != "HEAD"):
            refuse(f"it writes the symbolic ref `{clip(words[0] if words else '', 60)}`")
        elif len(words) >= 2 and words[1] != f"refs/heads/{own}":
            refuse(f"it points HEAD at `{clip(words[1], 60)}`")
    elif sub == "branch":
        moving = any(
            f in ("-f", "--force", "-d", "-D", "--delete", "-m", "-M", "--move", "-c", "-C", "--copy") for f in flags
        ) or any(c in short for c in "fdDmMcC")
        deleting = any(f in ("-d", "-D", "--delete", "-m", "-M", "--move") for f in flags) or any(
            c in short for c in "dDmM"
        )
        listing = any(f in _BRANCH_LISTS or f.startswith(tuple(k + "=" for k in _BRANCH_LISTS)) for f in flags) or any(
            c in short for c in "lavr"
        )
        upstream = any(
            f.startswith(("-u", "--set-upstream-to", "--unset-upstream", "--edit-description")) for f in flags
        )
        if moving and any(other(w) for w in words):
            refuse(f"it moves, renames or deletes `{clip(next(w for w in words if other(w)), 60)}`")
        elif deleting and own in words:
            refuse(f"it deletes or renames `{own}`, the branch whose commits LoopX recorded")
        elif (
            (any(f in ("-c", "-C", "--copy", "-f", "--force") for f in flags) or any(c in short for c in "cCf"))
            and words
            and words[-1 if len(words) > 1 and not ("f" in short or "-f" in flags or "--force" in flags) else 0] != own
        ):
            refuse(f"it makes the branch `{clip(words[-1], 60)}`, a ref every checkout of the repository shares")
        elif not listing and not upstream and not deleting and not moving and words and words[0] != own:
            refuse(f"it makes the branch `{clip(words[0], 60)}`, a ref every checkout of the repository shares")
    elif sub in ("checkout", "switch"):
        reset = next((rest[k + 1] for k, a in enumerate(rest[:-1]) if a in ("-B", "-C", "--force-create")), None)
        made = next((rest[k + 1] for k, a in enumerate(rest[:-1]) if a in ("-b", "-c", "--create", "--orphan")), None)
        target = words[0] if words and words[0] != "--" else None
        if reset is not None and reset != own:
            refuse(f"it resets the branch `{clip(reset, 60)}`")
        elif made is not None:
            refuse(f"it makes the branch `{clip(made, 60)}` and moves the workspace onto it")
        elif reset is None and other(target):
            refuse(f"it switches the workspace to `{clip(target, 60)}`, so that its commits would move that branch")
    elif sub == "rebase":
        branch = words[1] if len(words) > 1 else None
        if other(branch):
            refuse(f"`git rebase` checks out and rewrites `{clip(branch, 60)}`")
    elif sub in ("push", "fetch"):
        remote = words[0] if words else None
        local = remote in (".", "./") or (remote is not None and checker.workspace_write(text, remote, cwd))
        if remote is not None and local and sub == "push":
            refuse("it pushes into this repository itself, which moves its branches")
        elif sub == "fetch" or local:
            for spec in words[1:]:
                dst = spec.lstrip("+").split(":", 1)[1] if ":" in spec else None
                if dst and (other(dst) or dst.startswith("refs/loopx/")):
                    refuse(f"it writes the ref `{clip(dst, 60)}`")
    elif sub == "worktree":
        action = words[0] if words else None
        if action in ("remove", "move", "prune", "repair", "lock", "unlock"):
            refuse(f"`git worktree {action}` changes the repository's other workspaces")
        elif action == "add" and (any(f in ("-B", "-f", "--force") for f in flags) or "B" in short):
            refuse("`git worktree add -B/--force` resets or takes over a branch")
        elif action == "add" and any(f in ("-b", "--orphan") for f in flags):
            refuse("`git worktree add -b` makes a branch every checkout of the repository shares")
    elif sub == "reflog" and words and words[0] in ("expire", "delete"):
        refuse(f"`git reflog {words[0]}` drops the record of where branches were, which keeps commits LoopX recorded")
    elif sub == "gc" and any(
        f.startswith("--prune") and f not in ("--prune", "--no-prune") or f == "--aggressive" for f in flags
    ):
        refuse("`git gc --prune=…` deletes unreachable objects, which may be commits LoopX recorded")
    elif sub == "repack" and ("d" in short or "-d" in flags) and ("a" in short or "A" in short):
        refuse("`git repack -a -d` may drop unreachable objects, which may be commits LoopX recorded")
    elif sub == "stash" and (not words or words[0] not in ("list", "show", "create", "apply")):
        refuse(
            "`refs/stash` is shared by every workspace and the person's checkout (what an agent stores there, the person's `git stash pop` applies)"
        )
    elif sub == "notes" and not (words and words[0] in ("list", "show", "get-ref")) and not (not words and not flags):
        refuse("notes are refs every checkout of the repository shares, and `git log` shows them")
    elif (
        sub == "tag"
        and not any(
            f
            in (
                "-l",
                "--list",
                "-v",
                "--verify",
                "-n",
                "--contains",
                "--no-contains",
                "--merged",
                "--no-merged",
                "--points-at",
            )
            or f.startswith(("--sort", "--format", "--contains=", "--points-at=", "--merged=", "-n"))
            for f in flags
        )
        and (words or "d" in short)
    ):
        refuse("tags are shared by every checkout of the repository")


def writes_elsewhere(checker: Reader, base: str, text: str, args: list[Word], cwd: str | None) -> None:
    """``cp``, ``mv``, ``tee``, ``touch``, ``rm``… from a card's workspace: refused
    when a path they write is in the main checkout or another workspace."""
    words = [w for w in args if not w.dynamic]
    paths = [w.text for w in words if not w.text.startswith("-")]
    if base == "dd":
        paths = [w.text[3:] for w in words if w.text.startswith("of=")]
    elif base == "sed":
        if not any(w.text.startswith(("-i", "--in-place")) for w in words):
            return
        paths = paths[1:]
    elif base in ("cp", "mv", "ln", "install", "rsync"):
        target = next(
            (w.text[len("--target-directory=") :] for w in words if w.text.startswith("--target-directory=")), None
        )
        for j, w in enumerate(words[:-1]):
            if w.text == "-t":
                target = words[j + 1].text
        paths = [target] if target else paths[-1:]
    for path in paths:
        if checker.workspace_write(text, path, cwd):
            return


def _git_split(rest: list[str], with_value: set) -> tuple[list[str], list[str]]:
    """A git subcommand's options and its other words (``--`` kept among the words)."""
    flags, words, skip, options = [], [], False, True
    for a in rest:
        if skip:
            skip = False
            continue
        if options and a == "--":
            options = False
            words.append(a)
        elif options and a.startswith("-") and a != "-":
            flags.append(a)
            skip = a in with_value
        else:
            words.append(a)
    return flags, words


def _git_folder(before: list[str], cwd: str | None) -> str | None:
    """The folder git works in: ``-C DIR`` (each relative to the one before)."""
    for j, a in enumerate(before):
        if a == "-C" and j + 1 < len(before):
            cwd = os.path.join(cwd, before[j + 1]) if cwd else (before[j + 1] if os.path.isabs(before[j + 1]) else None)
    return cwd


def loopx(
    checker: Reader, base: str, head: Word, args: list[Word], ctx: Ctx, cwd: str | None, depth: int
) -> str | None | Same:
    loopx_verb(checker, [w.text for w in args], "loopx " + " ".join(w.text for w in args), args)
    return SAME


def loopx_verb(checker: Reader, argv: list[str], text: str, words: list[Word]) -> None:
    from ..shapes.human_verbs import (
        is_human_verb,  # (the verbs' declarations: only a loopx command needs them)
    )

    verb, sub, agent = _loopx_verb(argv)
    who = [w for i, w in enumerate(words) if w.text.startswith("--agent") or (i and words[i - 1].text == "--agent")]
    if any(w.dynamic or w.glob for w in words[:4] + who):
        checker.opaque(
            text, "which loopx command it runs (and for whom) is only known when the shell runs or expands its patterns"
        )
        return
    if verb is None or verb == "board":
        checker.forbid(text, "the LoopX board is a person's screen: its keys answer gates")
    elif is_human_verb(verb, sub):
        checker.forbid(
            text,
            f"`loopx {verb}{' ' + sub if sub else ''}` is a person's command: agents ask with `loopx gate ask` and wait",
        )
    elif verb == "init":
        checker.forbid(text, "`loopx init` rewrites the runtimes' settings and LoopX's hooks: a person runs it")
    elif agent is not None and checker.agent and agent != checker.agent:
        checker.forbid(text, f"`--agent {agent}` speaks for another agent; you are {checker.agent}")


def terminal(
    checker: Reader, base: str, head: Word, args: list[Word], ctx: Ctx, cwd: str | None, depth: int
) -> str | None | Same:
    words = [w.text for w in args]
    if base == "tmux" and _tmux_only_reads(args):
        return SAME
    elif base == "screen":
        if not any(
            a in ("-X", "-x", "-r", "-R", "-D", "-d", "-p") or a.startswith(("-X", "-x", "-r", "-R")) for a in words
        ):
            if any(a in ("-ls", "-list", "-v", "--version", "-h", "--help") for a in words):
                return SAME
    checker.forbid(f"{base} {' '.join(words)}", checker.ground.TERMINAL)
    return SAME


def _tmux_only_reads(args: list[Word]) -> bool:
    """A tmux call that only lists: one listing command, no `;` (tmux runs
    the next command after an argument `;` — `\\;` or `';'` to the shell),
    no format (`-F`, where `#(…)` runs a program; `display -p` prints one), no
    configuration file (`-f`, whose commands a new server runs)."""
    words = [w.text for w in args]
    if any(w.dynamic or w.glob for w in args) or any(
        ";" in a or "#(" in a or a.startswith(("-F", "-f")) for a in words
    ):
        return False
    sub = next((a for a in words if not a.startswith("-")), None)
    return sub in _TMUX_READ or (sub is None and words == ["-V"])


def apply_patch(
    checker: Reader, base: str, head: Word, args: list[Word], ctx: Ctx, cwd: str | None, depth: int
) -> str | None | Same:
    for body, _ in ctx.stdin:
        for need in patch_needs(body, cwd, checker):
            checker.need(need.scope, need.what, need.why)
    for w in args:
        if "*** Begin Patch" in w.text:
            for need in patch_needs(w.text, cwd, checker):
                checker.need(need.scope, need.what, need.why)
    return SAME


def sqlite(
    checker: Reader, base: str, head: Word, args: list[Word], ctx: Ctx, cwd: str | None, depth: int
) -> str | None | Same:
    operands = [w for w in args if not w.text.startswith("-")]
    if operands and operands[0].dynamic:
        checker.opaque(
            f"{base} {operands[0].text}",
            f"`{base}` opens a database named only when the shell runs it (LoopX's board may be the one)",
        )
    for w in args:
        if w.text.startswith(".") and re.match(r"\.(?:shell|system|load|output|once|import|read|excel)\b", w.text):
            checker.opaque(
                f"{base} {w.text}", "its dot-command runs programs or reads or writes files LoopX cannot see"
            )
        if w.text == "-cmd":
            checker.opaque(f"{base} -cmd", "its -cmd option runs commands before the SQL")
    if len(operands) < 2 and not ctx.stdin and not ctx.piped and not ctx.from_file:
        checker.need(INTERACTIVE, base, f"`{base}` without SQL waits for input (its dot-commands can run programs)")
    elif ctx.stdin or ctx.piped or ctx.from_file:
        for body, _ in ctx.stdin:
            if re.search(r"(?m)^\s*\.(?:shell|system|load|output|once|import|read)\b", body):
                checker.opaque(base, "its input runs dot-commands that start programs or touch files")
            why = checker.ground.text(body)
            if why:
                checker.forbid(base, why)
        if ctx.piped or ctx.from_file:
            checker.opaque(base, f"`{base}` runs SQL and dot-commands read from its input, which LoopX cannot see")
    return SAME


def postgres(
    checker: Reader, base: str, head: Word, args: list[Word], ctx: Ctx, cwd: str | None, depth: int
) -> str | None | Same:
    url = checker.ground.board_url
    if url:
        text = " ".join(w.text for w in args)
        name = _pg_database(url)
        named = [w.text for w in args]
        if url in text or (
            name
            and (
                name in named
                or any(a.endswith("=" + name) or a.endswith("/" + name) or f"dbname={name}" in a for a in named)
            )
        ):
            checker.forbid(f"{base} {text}", "it opens LoopX's board database")
    if (
        base in ("psql", "pgcli")
        and not any(
            w.text in ("-c", "--command", "-f", "--file") or w.text.startswith(("-c", "--command=")) for w in args
        )
        and not ctx.stdin
        and not ctx.piped
        and not ctx.from_file
    ):
        checker.need(INTERACTIVE, base, f"`{base}` without -c waits for input (its \\! runs programs)")
    return SAME


def _loopx_verb(argv: list[str]) -> tuple[str | None, str | None, str | None]:
    """(verb, subcommand, --agent value) of a loopx command line."""
    verb = sub = agent = None
    i = 0
    while i < len(argv):
        a = argv[i]
        if a.startswith("--agent"):
            if "=" in a:
                agent = a.split("=", 1)[1]
            elif i + 1 < len(argv):
                agent = argv[i + 1]
                i += 1
        elif a in ("--db", "--d") and verb is None:
            i += 1
        elif a.startswith("-"):
            if (
                a in ("-h", "--help", "--version", "--v", "--ve", "--ver", "--vers", "--versi", "--versio")
                and verb is None
            ):
                return "help", None, None
        elif verb is None:
            verb = a
        elif sub is None:
            sub = a
        i += 1
    return verb, sub, agent


def _pg_database(url: str) -> str | None:
    rest = url.split("://", 1)[-1]
    path = rest.split("/", 1)[1] if "/" in rest else ""
    name = path.split("?", 1)[0]
    return name or None


def git_alias(sub: str, cwd: str | None, checker: Reader) -> str | _Unknown | None:
    """``git SUB``'s alias value from git's config files, None when SUB is no
    alias, ``_UNKNOWN`` when a config file LoopX cannot follow might define it."""
    files = []
    here = cwd
    while here:
        dot = os.path.join(here, ".git")
        if os.path.isdir(dot):
            files.append(os.path.join(dot, "config"))
            break
        if os.path.isfile(dot):
            text = checker.read_file(dot, None) or ""
            if text.startswith("gitdir:"):
                gitdir = text[7:].strip()
                gitdir = gitdir if os.path.isabs(gitdir) else os.path.join(here, gitdir)
                files.append(os.path.join(gitdir, "config"))
                common = checker.read_file(os.path.join(gitdir, "commondir"), None)
                if common:
                    base = common.strip()
                    files.append(os.path.join(gitdir if not os.path.isabs(base) else "", base, "config"))
            break
        parent = os.path.dirname(here)
        if parent == here:
            break
        here = parent
    home = os.path.expanduser("~")
    xdg = os.environ.get("XDG_CONFIG_HOME") or os.path.join(home, ".config")
    files += [os.path.join(home, ".gitconfig"), os.path.join(xdg, "git", "config"), "/etc/gitconfig"]
    for path in files:
        if not os.path.exists(path):
            continue
        config = checker.read_file(path, None)
        if config is None:
            return _UNKNOWN
        section = None
        for raw in config.splitlines():
            line = raw.strip()
            if line.startswith("["):
                section = line.strip("[]").strip().lower()
                if section.startswith(("include", "includeif")):
                    return _UNKNOWN
                continue
            if section == "alias" and "=" in line:
                key, value = line.split("=", 1)
                if key.strip().lower() == sub.lower():
                    return value.strip().strip('"')
    return None


def patch_needs(patch: str, cwd: str | None, checker: Reader) -> list[Need]:
    """Codex ``apply_patch``: the files its ``*** Add/Update/Delete File:`` and
    ``*** Move to:`` headers name."""
    found: list[Need] = []
    seen: set = set()
    for line in patch.splitlines():
        if not line.startswith("*** ") or line in seen:
            continue
        seen.add(line)
        for prefix, scope in (
            ("*** Add File: ", "fs:write-outside"),
            ("*** Update File: ", "fs:write-outside"),
            ("*** Move to: ", "fs:write-outside"),
            ("*** Delete File: ", "fs:delete-outside"),
        ):
            if line.startswith(prefix):
                path = line[len(prefix) :].strip()
                if not path:
                    continue
                what = f"apply_patch {line[4:].strip()}"
                why = (
                    checker.ground.path(path, cwd) or checker._follow(path, cwd) or checker.ground.installed(path, cwd)
                )
                if why:
                    found.append(Need(None, clip(what), why))
                elif not checker.inside(path, cwd, strict=scope == "fs:delete-outside"):
                    found.append(Need(scope, clip(what), ""))
    return found
