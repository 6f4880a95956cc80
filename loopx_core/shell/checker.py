"""What a shell command needs before it may run: the hooks' command checker.

Input: the text a shell tool will run (POSIX shell, or PowerShell), read by
``posix_words`` / ``pwsh_words`` into simple commands. Output: ``Need`` s — a
scope the agent must hold (or a human must grant through a gate), or, with
``scope=None``, a refusal no scope can lift (LoopX's own ground, a person's
command, a command too large to check).

The rule for what it cannot resolve: **a command word it cannot know needs
authority.** Decided per construct (DESIGN §8 "What the hook reads"; "Shell commands the hook
cannot read"):

- looked through, then checked as the command they run: ``env``/``sudo``/
  ``doas``/``nice``/``nohup``/``timeout``/``stdbuf``/``setsid``/``command``/
  ``builtin``/``exec``/``time``/``npx``… wrappers (an option LoopX does not
  know makes it check both readings), ``sh -c CODE`` / ``bash -c CODE`` with
  literal code, ``eval`` of literal words, here-documents and here-strings fed
  to a shell, ``source``/``.`` and shell scripts run by name or by a shell (read
  from the file: regular files up to 256 KB — opaque when missing, or when
  another command of the line could write it first, ``vouch``), ``find -exec``, ``watch``,
  ``script -c``, ``su -c``, ``ssh HOST CMD``, ``alias`` definitions, git
  aliases (from git's config files), PowerShell's ``&``, ``Invoke-Expression``/
  ``iex`` of a literal string, ``Start-Process``, ``cmd /c``, ``pwsh -Command``
  and ``-EncodedCommand``;
- ``shell:opaque`` — LoopX cannot tell what will run: a command word built from
  ``$var``, ``${…}``, ``$(…)`` or backquotes; ``eval`` or ``sh -c`` of such
  words; a shell or interpreter reading its program from a pipe or a file
  redirect (``… | sh``); ``xargs`` or ``parallel`` feeding a shell, an
  interpreter or a command LoopX has rules for; interpreter code (``python
  -c``, ``node -e``, ``perl -e``, ``ruby -e``, ``php -r``, ``awk``'s
  ``system()``, ``sed``'s ``e``, scripts given to an interpreter) that starts
  programs or builds code at run time (``subprocess``, ``os.system``,
  ``child_process``, ``eval``, ``__import__``…); environment variables that
  make programs run other code (``BASH_ENV``, ``LD_PRELOAD``, ``NODE_OPTIONS``,
  ``GIT_SSH_COMMAND``, ``PAGER``…); ``git -c`` settings that name a command;
  PowerShell's .NET process and script-block calls;
- ``shell:interactive`` — a shell, interpreter or editor left waiting for
  input (``bash``, ``python``, ``node``, ``sqlite3``, ``vim`` with no program).
  Codex's ``write_stdin`` types into such a session with no PreToolUse check
  (it has no hook: ``codex-rs/core/src/tools/handlers/unified_exec/
  write_stdin.rs``), and the hook cannot see whether ``exec_command`` asked
  for a terminal, so any such start needs the scope.

Not followed (the runtime's sandbox is the wall for these): programs the
agent wrote and runs by a name found on ``$PATH``, compiled binaries, code
that other programs load (Makefiles, ``package.json`` scripts, git hooks, test
files, modules a script imports), and values only the running shell knows.
"""

from __future__ import annotations

import os
import stat
import sys

from ..workspace import git_settings
from . import builtin_rules, posix_words
from .posix_words import Lazy, Word
from .vocabulary import (
    ASSIGN,
    MAX_DEPTH,
    MAX_FILE,
    MAX_FILES,
    MAX_PATHS,
    OPAQUE,
    PS_ALIASES,
    PYTHON,
    SAME,
    Ctx,
    Need,
    base_name,
    clip,
    matches,
    route,
)

TYPE_CHECKING = False  # (annotations only: typing is not imported on the cold path; checkers read this as typing's)
if TYPE_CHECKING:
    import re
    from collections.abc import Sequence

    from ..rules.workspace_bounds import Bounds
    from .posix_words import Command
    from .vocabulary import CommandRule, GroundReader, Handler, Same

_DEV_OK = ("/dev/null", "/dev/stdout", "/dev/stderr", "/dev/stdin", "/dev/tty", "/dev/fd/", "/proc/self/fd/")
_KEYWORDS = frozenset(
    ("if", "then", "else", "elif", "fi", "do", "done", "while", "until", "esac", "{", "}", "!", "time", "coproc", "]]")
)
_NOT_COMMANDS = frozenset(("for", "select", "case", "in", "let"))  # their words are data, checked as paths
_TESTS = frozenset(("[[", "test", "["))  # look at files, never open them
_PURE = frozenset(
    (
        "echo",
        "printf",
        "true",
        "false",
        ":",
        "test",
        "[",
        "[[",
        "type",
        "which",
        "hash",
        "help",
        "write-output",
        "write-host",
    )
)
_IDENTITY = frozenset(("LOOPX_AGENT", "LOOPX_HUMAN", "LOOPX_NOW"))
# Setting one of these makes the next program run code LoopX does not see.
_INJECTING = (
    r"(?:BASH_ENV|ENV|PROMPT_COMMAND|PS4|LD_PRELOAD|LD_AUDIT|DYLD_INSERT_LIBRARIES|PYTHONSTARTUP|NODE_OPTIONS|PERL5OPT|RUBYOPT"
    r"|GIT_SSH(?:_COMMAND)?|GIT_(?:PAGER|EDITOR|SEQUENCE_EDITOR|ASKPASS|EXEC_PATH|PROXY_COMMAND|TEMPLATE_DIR|CONFIG\w*|EXTERNAL_DIFF)"
    r"|SSH_ASKPASS|PAGER|MANPAGER|EDITOR|VISUAL|LESSOPEN|LESSCLOSE|SUDO_ASKPASS)"
)


def handler(base: str, powershell: bool) -> Handler | None:
    """The function that reads command ``base``, or None for a plain command."""
    found = route(base, powershell)
    if found is None:
        return None
    module, name = found.split(":")
    if module == "checker":
        return globals()[name]
    full = f"{__package__}.{module}"
    __import__(full)  # (not importlib: the hook pays for it before every call)
    return getattr(sys.modules[full], name)


# Programs that write the paths they are given (the last one for cp/mv/ln/install/rsync):
# in a card's workspace, none of them may write the main checkout or another workspace.
_WRITES_ITS_ARGUMENTS = frozenset(
    (
        "cp",
        "mv",
        "ln",
        "install",
        "rsync",
        "tee",
        "touch",
        "mkdir",
        "rm",
        "rmdir",
        "truncate",
        "sed",
        "dd",
        "chmod",
        "unlink",
        "shred",
    )
)


class Checker:
    """Checks one tool call's shell text. ``rules``: the board's compiled
    ``command`` rules; ``allow``: regexes that exempt a simple command from the
    built-in rules (only from a signed policy file); ``outside_ok``: folders
    that count as inside the project; ``agent``: the hook's agent (``--agent``
    and ``LOOPX_AGENT`` naming another are refused)."""

    def __init__(
        self,
        root: str,
        ground: GroundReader,
        *,
        rules: Sequence[CommandRule] = (),
        allow: Sequence[re.Pattern[str]] = (),
        outside_ok: Sequence[str] = (),
        agent: str | None = None,
    ):
        self.root = root
        self.ground = ground
        self.rules = rules
        self.allow = allow
        self.outside_ok = outside_ok
        self.agent = agent
        self.workspace: Bounds | None = (
            None  # rules/workspace_bounds.Bounds when the call runs in a card's workspace (``in_workspace``)
        )
        self.elsewhere: list[str] = []  # then: the main checkout and the other workspaces
        self.found: list[Need] = []
        self.aliases: dict[str, str] = {}
        self.files_read = 0
        self.paths_followed: set = set()
        self.branches = 0
        self._seen: set = set()
        self._commands: dict = {}
        self._real_dirs: dict = {}
        self._lines: list[list] = []  # the shell texts being read, outermost first (``shell``)

    def need(self, scope: str | None, what: str, why: str = "") -> None:
        key = (scope, why if scope is None else "")
        if key in self._seen:
            return
        self._seen.add(key)
        self.found.append(Need(scope, clip(what), why))

    def opaque(self, what: str, why: str) -> None:
        self.need(OPAQUE, what, why)

    def in_workspace(self, cwd: str | None) -> None:
        """The call runs in a card's workspace (a linked git worktree): that is the
        project it may write; the main checkout and the other workspaces are not
        (``workspace_write``), nor are the refs it does not own (``guarded.git_rules``)."""
        from ..rules import workspace_bounds

        bounds = workspace_bounds.find(cwd) if cwd else None
        if bounds is not None and bounds.main is not None:
            self.workspace = bounds
            self.root = os.path.realpath(bounds.workspace)
            self.elsewhere = workspace_bounds.others(bounds)

    def workspace_write(self, what: str, path: str | None, cwd: str | None) -> bool:
        """Refuse a write into the main checkout or another card's workspace from
        a workspace (True when refused). Unknown paths are left to the other rules."""
        if self.workspace is None or path is None:
            return False
        resolved = self.resolve(path, cwd)
        if resolved is None:
            return False
        for place in self.elsewhere:
            if resolved == place or resolved.startswith(place.rstrip(os.sep) + os.sep):
                kind = (
                    "the main checkout"
                    if place == self.elsewhere[0] and self.workspace.main
                    else "another card's workspace"
                )
                self.forbid(
                    what,
                    f"it writes {kind} ({place}); an agent works only in its card's workspace ({self.workspace.workspace})",
                )
                return True
        return False

    def forbid(self, what: str, why: str) -> None:
        self.need(None, what, why)

    def shell(self, text: str, cwd: str | None, *, powershell: bool = False, depth: int = 0) -> str | None:
        """Check ``text`` as a shell would run it from ``cwd``; returns the
        folder it ends in (``cd``), None when unknown."""
        if depth > MAX_DEPTH:
            self.opaque(text, f"it nests shells, scripts or aliases more than {MAX_DEPTH} deep")
            return cwd
        if powershell:
            from . import pwsh_words

            script = pwsh_words.parse(text)
        else:
            script = posix_words.parse(text)
        if script.limits:
            self.forbid(
                text,
                f"it is too large for LoopX to check ({script.limits[0]}); split it into smaller commands or a script file",
            )
        if powershell:
            from .pwsh_commands import opaque_calls

            opaque_calls(self, text)
        for word in script.loose:
            self.ground_word(word, cwd)
        # (the commands, which one runs now, whether some run at the same time: `&`, `|`)
        frame = [script.commands, 0, _CONCURRENT.search(text) is not None]
        self._lines.append(frame)
        try:
            for i, command in enumerate(script.commands):
                frame[1] = i
                cwd = self.command(command, cwd, depth, powershell)
        finally:
            self._lines.pop()
        return cwd

    def vouch(self, what: str, script: str, cwd: str | None) -> bool:
        """May the script file ``script`` be read now and checked as what will
        run? Not when it does not exist yet, nor when another command of the
        same line (or of a line around it) could write it first — the hook
        would read the old file (or none) and the shell run the new one: then
        ``shell:opaque``."""
        if any(_may_write_first(commands, now, concurrent, script) for commands, now, concurrent in self._lines):
            self.opaque(
                what,
                f"another command of the same line could write `{clip(script, 60)}` before it runs, so LoopX cannot read what it will run: run the script in a call of its own",
            )
            return False
        if any(_makes_activate(c, script) for commands, now, _ in self._lines for c in commands[:now]):
            return True  # the virtual environment's own script, written just before
        full = script if os.path.isabs(script) else os.path.join(cwd, script) if cwd else None
        if full is None or not os.path.exists(full):
            self.opaque(what, f"`{clip(script, 60)}` does not exist yet, so LoopX cannot read what it will run")
            return False
        return True

    def run_text(self, base: str, words: list, cwd: str | None, depth: int, *, powershell: bool = False) -> None:
        """Shell text a command runs, given as words (``sh -c CODE``, ``eval …``,
        ``watch CMD``, ``ssh HOST CMD``): read as a script one level deeper, or,
        when any of it is only known at run time, ``shell:opaque``."""
        what = f"{base} " + " ".join(w.text for w in words)
        if any(w.dynamic for w in words):
            self.opaque(what, f"the command `{base}` runs is only known when the shell runs it")
        elif words:
            self.shell(" ".join(w.text for w in words), cwd, depth=depth + 1, powershell=powershell)

    # -- one simple command --------------------------------------------------------------------
    def command(self, cmd: Command, cwd: str | None, depth: int, powershell: bool) -> str | None:
        # The same simple command from the same folder needs the same: check it once.
        key = (
            tuple((w.text, w.dynamic, w.glob, w.braces) for w in cmd.words),
            tuple((o, w.text, w.dynamic) for o, w in cmd.redirects),
            tuple(cmd.stdin),
            cmd.piped,
            cwd,
            powershell,
            depth,
        )
        if key in self._commands:
            return self._commands[key]
        after = self._command(cmd, cwd, depth, powershell)
        self._commands[key] = after
        return after

    def _command(self, cmd: Command, cwd: str | None, depth: int, powershell: bool) -> str | None:
        from_file = False
        for op, word in cmd.redirects:
            self.redirect(op, word, cwd)
            if op in ("<", "<>"):
                from_file = True
        words = cmd.words
        i = 0
        if not powershell:
            while i < len(words):
                w = words[i]
                if not w.quoted and not w.dynamic and w.text in _KEYWORDS:
                    i += 1
                    continue
                if not w.quoted and w.text == "function":
                    i += 2  # function NAME { …: the body's commands follow
                    continue
                if not w.quoted and w.text in _NOT_COMMANDS:
                    for rest in words[i + 1 :]:
                        self.ground_word(rest, cwd)
                    return cwd
                if not w.quoted and w.text in _TESTS:
                    return cwd
                if "=" in w.text and not w.text.startswith("=") and matches(ASSIGN + ".*", w.text):
                    self.assignment(w, cwd)
                    i += 1
                    continue
                break
        argv = words[i:]
        if not argv:
            return cwd
        return self.argv(argv, Ctx(tuple(cmd.stdin), cmd.piped, from_file, powershell), cwd, depth)

    def argv(self, words: list, ctx: Ctx, cwd: str | None, depth: int) -> str | None:
        """Check the command ``words`` run (the first is its name)."""
        head = words[0]
        if head.braces and not head.dynamic:
            expanded = posix_words.expand_braces(head.text) if len(head.text) <= 256 else None
            if expanded is None:
                self.opaque(head.text, "its command name is a brace expansion too large to read")
                return cwd
            if expanded != [head.text]:
                words = [Word(t) for t in expanded if t] + list(words[1:])
                if not words:
                    return cwd
                head = words[0]
        text = " ".join(w.text for w in words)
        if head.dynamic:
            for w in words:
                self.ground_word(w, cwd)
            self.opaque(text, f"its command word `{clip(head.text, 60)}` is only known when the shell runs it")
            return cwd
        if head.glob:
            self.opaque(text, f"its command name `{clip(head.text, 60)}` is a pattern")
            return cwd
        name = head.text
        base = base_name(name, ctx.powershell)
        if base in self.aliases:
            alias = self.aliases.pop(base)  # an alias does not expand inside itself
            try:
                import shlex

                return self.shell(
                    alias + " " + " ".join(shlex.quote(w.text) for w in words[1:]),
                    cwd,
                    depth=depth + 1,
                    powershell=ctx.powershell,
                )
            finally:
                self.aliases[base] = alias
        args = list(words[1:])
        self.ground_word(head, cwd)
        if base not in _PURE:
            for w in args:
                self.ground_word(w, cwd)
        if base not in _LEAVES_FILES:
            self.installed_words(base, head, args, cwd)
        if ctx.powershell:
            base = PS_ALIASES.get(base, base)
        read = handler(base, ctx.powershell)
        if read is not None:
            out = read(self, base, head, args, ctx, cwd, depth)
            return cwd if out is SAME else out
        if "/" in name or (ctx.powershell and "\\" in name):
            from .interpreters import run_file

            run_file(self, name, args, ctx, cwd, depth)
        self.plain(base, head, args, cwd)
        return cwd

    def plain(self, base: str, head: Word, args: list, cwd: str | None) -> None:
        strs = [w.text for w in args]
        text = " ".join([head.text, *strs])
        for rule in self.rules:
            if rule.command is not None and rule.command.search(text):
                self.need(rule.scope, text)
        if base == "git":
            from .guarded import git_rules

            git_rules(self, text, strs, cwd)
        elif self.workspace is not None and base in _WRITES_ITS_ARGUMENTS:
            from .guarded import writes_elsewhere

            writes_elsewhere(self, base, text, args, cwd)
        if any(p.search(text) for p in self.allow):
            return
        if base in builtin_rules.RULED and base != "rm":
            sub = next((w for w in args if not w.text.startswith("-")), None)
            if sub is not None and (sub.dynamic or sub.glob):
                self.opaque(
                    text,
                    f"what `{base}` does depends on `{clip(sub.text, 40)}`, only known when the shell runs or expands it",
                )
                return
        scope = builtin_rules.builtin_scope(base, strs)
        if scope:
            self.need(scope, text)
        if base == "rm" and builtin_rules.recursive(strs):
            self.deletes(text, [w for w in args if not w.text.startswith("-") or w.text == "-"], cwd)

    def deletes(self, text: str, targets: list, cwd: str | None) -> None:
        """A recursive delete of ``targets``: never LoopX's ground or a folder
        holding it; outside the project only with ``fs:delete-outside``."""
        for w in targets:
            why = None if w.dynamic else self.ground.holds(w.text, cwd)
            if why:
                self.forbid(text, f"it deletes a folder holding LoopX's ground: {why}")
                return
        for w in targets:
            if not w.dynamic and self.workspace_write(text, w.text, cwd):
                return
        for w in targets:
            if not self.inside(None if w.dynamic else w.text, cwd, strict=True):
                self.need("fs:delete-outside", text)
                return

    def ground_word(self, word: Word, cwd: str | None) -> None:
        """Refuse a word that names LoopX's ground (by its text, or through a symbolic link)."""
        text = word.text
        if not text:
            return
        ground = self.ground
        why = None
        if word.braces:
            why = self._ground_braces(text)
        elif ground.may_name(text):
            why = ground.text(text)
        if (
            why is None
            and cwd is not None
            and not word.dynamic
            and not os.path.isabs(text)
            and "\n" not in text
            and (".." in text or ground.cwd_inside(cwd))
        ):
            why = ground.path(text, cwd)  # relative to a folder inside the ground
        if why is None and not word.dynamic and "\n" not in text and len(text) < 4096 and not text.startswith("-"):
            why = self._follow(text, cwd)
        if why:
            self.forbid(text, why)

    def installed_words(self, base: str, head: Word, args: list, cwd: str | None) -> None:
        """A command that may write files, given a path in the installed LoopX
        (or run from its environment, whose ``pip`` and ``python`` rewrite it):
        refused, except ``loopx`` itself and ``python -m loopx_core``."""
        ground = self.ground
        program = head.text
        if "/" not in program and (
            matches(_PIP, base) or (matches(PYTHON, base) and "pip" in (w.text for w in args[:3]))
        ):
            program = (
                _on_path(program) or program
            )  # the installer the shell finds: LoopX's own when its environment is active
        why = ground.installed(program, cwd)
        if (
            why
            and base != "loopx"
            and not (
                matches(PYTHON, base)
                and any(
                    w.text in ("loopx_core", "loopx") or w.text.startswith(("-mloopx", "-m loopx")) for w in args[:4]
                )
            )
        ):
            self.forbid(" ".join([head.text, *(w.text for w in args)]), why)
            return
        for w in args:
            if not w.dynamic and not (w.text.startswith("-") and "=" not in w.text):
                why = ground.installed(
                    w.text.split("=", 1)[1] if "=" in w.text else w.text, cwd
                )  # `--target=DIR`, dd's `of=FILE`
                if why:
                    self.forbid(" ".join([head.text, *(a.text for a in args)]), why)
                    return

    def _ground_braces(self, text: str) -> str | None:
        expanded = posix_words.expand_braces(text) if len(text) <= 256 else None
        for piece in expanded or [text.replace("{", "").replace("}", "").replace(",", "")]:
            why = self.ground.text(piece)
            if why:
                return why
        return None

    def _follow(self, text: str, cwd: str | None) -> str | None:
        key = (text, cwd)
        if key in self.paths_followed:
            return None
        if len(self.paths_followed) >= MAX_PATHS:
            self.opaque(text, f"it names more than {MAX_PATHS:,} paths; LoopX follows that many at most")
            return None
        self.paths_followed.add(key)
        try:
            return self.ground.resolved(text, cwd)
        except (OSError, ValueError):
            return None

    def redirect(self, op: str, word: Word, cwd: str | None) -> None:
        if op in ("<<", "<<-", "<<<"):
            return  # a here-document's delimiter, a here-string's text: not files
        if op in (">&", "<&") and (word.text.isdigit() or word.text == "-"):
            return
        self.ground_word(word, cwd)
        if op == "<":
            return
        why = None if word.dynamic else self.ground.installed(word.text, cwd)
        if why:
            self.forbid(f"> {word.text}", why)
            return
        target = word.text
        if not word.dynamic and (target.startswith(_DEV_OK) or target == "-"):
            return
        if not word.dynamic and self.workspace_write(f"> {target}", target, cwd):
            return
        if not self.inside(None if word.dynamic else target, cwd, strict=False):
            self.need("fs:write-outside", f"> {target}")

    def assignment(self, word: Word, cwd: str | None) -> None:
        name, _, value = word.text.partition("=")
        name = name.rstrip("+").split("[", 1)[0]
        if value:
            self.ground_word(Word(value, word.dynamic), cwd)
        if name in _IDENTITY and (name != "LOOPX_AGENT" or value != self.agent):
            self.forbid(word.text, f"it sets {name}, which says who or when LoopX records an act")
        elif matches(_INJECTING, name):
            self.opaque(word.text, f"setting {name} makes programs run code LoopX cannot see")
        elif (
            name.startswith("GIT_")
            and name not in git_settings.INERT_ENV
            and not (name.startswith("GIT_TRACE") and value in git_settings.TRACE_OFF_OR_STDERR)
        ):
            # GIT_DIR, GIT_INDEX_FILE, GIT_OBJECT_DIRECTORY, GIT_NAMESPACE, GIT_TRACE=<file>,
            # GIT_REPLACE_REF_BASE…: the class, not a list — git then reads or writes other files
            self.opaque(word.text, f"setting {name} points git at other files, settings or programs than LoopX reads")
        elif name == "GLOBIGNORE":
            self.opaque(
                word.text,
                "setting GLOBIGNORE lets the shell's patterns match dotfiles (`*` matches `.claude`), which LoopX reads as the shell does by default",
            )

    def inside(self, path: str | None, cwd: str | None, *, strict: bool) -> bool:
        """Is ``path`` inside the project? Unknown paths are not (fail closed).
        ``strict``: the project folder itself does not count (deleting it)."""
        resolved = self.resolve(path, cwd) if path is not None else None
        if resolved is None:
            return False
        for base in (self.root, *self.outside_ok):
            if not base:
                continue
            if resolved.startswith(base.rstrip(os.sep) + os.sep):
                return True
            if resolved == base and not (strict and base == self.root):
                return True
        return False

    def resolve(self, path: str, cwd: str | None) -> str | None:
        return _resolve(path, cwd, self._real_dirs)

    def read_file(self, path: str, cwd: str | None) -> str | None:
        """The text of a script the command runs, or None (missing, not a
        regular file, larger than MAX_FILE, or too many files already)."""
        if self.files_read >= MAX_FILES:
            return None
        full = path if os.path.isabs(path) else (os.path.join(cwd, path) if cwd else None)
        if full is None:
            return None
        self.files_read += 1
        try:
            fd = os.open(full, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
        except OSError:
            return None
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode) or st.st_size > MAX_FILE:
                return None
            data = os.read(fd, MAX_FILE + 1)
        except OSError:
            return None
        finally:
            os.close(fd)
        if len(data) > MAX_FILE:
            return None
        return data.decode("utf-8", "replace")


# Commands that write no file (when their output goes to no file): a script run
# on the same line as only these is the file the hook reads, and these may name
# the installed LoopX.
_LEAVES_FILES = frozenset(
    (
        "cd",
        "pushd",
        "popd",
        "true",
        "false",
        ":",
        "echo",
        "printf",
        "test",
        "[",
        "[[",
        "pwd",
        "ls",
        "cat",
        "head",
        "tail",
        "wc",
        "grep",
        "rg",
        "diff",
        "cmp",
        "stat",
        "file",
        "basename",
        "dirname",
        "realpath",
        "readlink",
        "date",
        "whoami",
        "id",
        "uname",
        "sleep",
        "wait",
        "exit",
        "return",
        "set",
        "unset",
        "export",
        "type",
        "which",
        "hash",
        "help",
        "read",
        "od",
        "xxd",
        "hexdump",
        "strings",
        "nl",
        "du",
        "tree",
        "md5sum",
        "sha1sum",
        "sha256sum",
        "loopx",
    )
)


_PIP = r"pip\d*(?:\.\d+)?|easy_install"


def _on_path(name: str) -> str | None:
    """The program ``name`` the shell would run (the first on PATH)."""
    for folder in os.environ.get("PATH", "").split(os.pathsep):
        full = os.path.join(folder, name)
        if folder and os.path.isfile(full) and os.access(full, os.X_OK):
            return full
    return None


_CONCURRENT = Lazy(r"(?<![&>|])&(?![&>])|(?<!\|)\|(?!\|)")  # `&` to the background, `|` a pipe


def _may_write_first(commands: list, now: int, concurrent: bool, script: str) -> bool:
    """Could a command of this line write ``script`` before command ``now`` reads it?"""
    return any(
        not _leaves_files(c) and not _makes_activate(c, script)
        for i, c in enumerate(commands)
        if i < now or (concurrent and i != now)
    )


def _makes_activate(cmd: Command, script: str) -> bool:
    """``python -m venv DIR`` (``virtualenv DIR``, ``uv venv DIR``) writes
    ``DIR/bin/activate`` from its own template: sourcing it next runs no text
    of the agent's."""
    words = [w.text for w in cmd.words]
    if cmd.redirects or any(w.dynamic for w in cmd.words) or script.split("/")[-2:-1] != ["bin"]:
        return False
    if words[:1] and matches(PYTHON, words[0].rsplit("/", 1)[-1]) and words[1:3] == ["-m", "venv"]:
        rest = words[3:]
    elif words[:1] == ["virtualenv"]:
        rest = words[1:]
    elif words[:2] == ["uv", "venv"]:
        rest = words[2:]
    else:
        return False
    folders = [w for w in rest if not w.startswith("-")] or [".venv"]
    return any(os.path.normpath(script).startswith(os.path.normpath(f) + "/bin/activate") for f in folders)


def _leaves_files(cmd: Command) -> bool:
    words = [
        w
        for w in cmd.words
        if not (not w.quoted and w.text in _KEYWORDS) and not ("=" in w.text and matches(ASSIGN + ".*", w.text))
    ]
    if any(
        op not in ("<", "<<", "<<-", "<<<")
        and not (op in (">&", "<&") and word.text.isdigit())
        and word.text != "/dev/null"
        for op, word in cmd.redirects
    ):
        return False
    return not words or (not words[0].dynamic and words[0].text in _LEAVES_FILES)


def cd(
    checker: Checker, base: str, head: Word, args: list[Word], ctx: Ctx, cwd: str | None, depth: int
) -> str | None | Same:
    """``cd``/``pushd``/``popd`` (and PowerShell's Set-Location): the folder that follows."""
    words = [w for w in args if not w.text.startswith("-") or (w.text == "-" and not ctx.powershell)]
    if base in ("popd", "pop-location"):
        return None
    if not words:
        return os.path.expanduser("~")
    target = words[0]
    if target.dynamic or target.text == "-":
        return None
    return checker.resolve(target.text, cwd)


# Shell options that change which names a pattern matches (bash's dotglob lets
# `*` match `.claude`): the ground's patterns assume the defaults.
_GLOB_OPTIONS = frozenset(("dotglob", "nocaseglob", "extglob", "globasciiranges", "nocasematch"))


def glob_options(
    checker: Checker, base: str, head: Word, args: list[Word], ctx: Ctx, cwd: str | None, depth: int
) -> str | None | Same:
    """``shopt -s dotglob``, zsh's ``setopt``: LoopX reads patterns as the shell
    does by default, so a line that changes how they match is opaque."""
    names = [w.text.lower().replace("_", "") for w in args if not w.text.startswith(("-", "+"))]
    if any(w.dynamic for w in args) or base != "shopt" and names or any(n in _GLOB_OPTIONS for n in names):
        checker.opaque(
            " ".join([base, *(w.text for w in args)]),
            "it changes which files the shell's patterns match, which LoopX reads as the shell does by default",
        )
    return SAME


def _resolve(word: str, cwd: str | None, real_dirs: dict | None = None) -> str | None:
    """A literal path as an absolute one, its folder resolved through symbolic
    links; None when it cannot be known (relative to an unknown folder)."""
    if not word:
        return None
    if word[1:3] in (":\\", ":/") or word.startswith(
        "\\\\"
    ):  # C:\x, \\server\share: a Windows path, never under a POSIX project
        return os.path.normpath(word) if os.sep == "\\" else word
    cut = min((word.find(c) for c in "*?[" if c in word), default=-1)
    if cut != -1:  # a glob: what it matches lies in the folder before it
        word = word[:cut]
        word = (word[: word.rfind("/") + 1] if "/" in word else "") + "*"
    if not os.path.isabs(word):
        if cwd is None:
            return None
        word = os.path.join(cwd, word)
    word = os.path.normpath(word)
    head, tail = os.path.split(word)
    real = real_dirs.get(head) if real_dirs is not None else None
    if real is None:
        real = os.path.realpath(head)
        if real_dirs is not None and len(real_dirs) < 4096:
            real_dirs[head] = real
    return os.path.join(real, tail) if tail else real
