"""What a shell command needs before it may run: the hooks' command checker.

Input: the text a shell tool will run (POSIX shell, or PowerShell), read by
``shellwords`` / ``pwshwords`` into simple commands. Output: ``Need`` s — a
scope the agent must hold (or a human must grant through a gate), or, with
``scope=None``, a refusal no scope can lift (LoopX's own ground, a person's
command, a command too large to check).

The rule for what it cannot resolve: **a command word it cannot know needs
authority.** Decided per construct (DESIGN §10 "Shell commands the hook
cannot read"):

- looked through, then checked as the command they run: ``env``/``sudo``/
  ``doas``/``nice``/``nohup``/``timeout``/``stdbuf``/``setsid``/``command``/
  ``builtin``/``exec``/``time``/``npx``… wrappers (an option LoopX does not
  know makes it check both readings), ``sh -c CODE`` / ``bash -c CODE`` with
  literal code, ``eval`` of literal words, here-documents and here-strings fed
  to a shell, ``source``/``.`` and shell scripts run by name or by a shell (read
  from the file: regular files up to 256 KB), ``find -exec``, ``watch``,
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

import base64
import os
import re
import shlex
import stat
from collections import namedtuple

from ..human_verbs import is_human_verb
from . import builtin_rules, pwshwords, shellwords
from .shellwords import Word

# collections.namedtuple, not typing.NamedTuple: importing typing costs a few
# milliseconds this path does not need.
Need = namedtuple("Need", "scope what why", defaults=("",))  # scope None: refused, never grantable

OPAQUE = "shell:opaque"
INTERACTIVE = "shell:interactive"
MAX_DEPTH = 8  # shells inside shells (sh -c "sh -c …"), aliases, scripts sourcing scripts
MAX_FILES = 16  # scripts and config files read in one check
MAX_FILE = 256 * 1024
MAX_PATHS = 2000  # distinct paths followed through symbolic links in one check
MAX_BRANCHES = 16  # readings tried for wrappers with options LoopX does not know

_DEV_OK = ("/dev/null", "/dev/stdout", "/dev/stderr", "/dev/stdin", "/dev/tty", "/dev/fd/", "/proc/self/fd/")
_ASSIGN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\[[^\]]*\])?\+?=")
_PYTHON = re.compile(r"(?:python|pypy)(?:\d+(?:\.\d+)?)?[mtw]?")
_KEYWORDS = frozenset(("if", "then", "else", "elif", "fi", "do", "done", "while", "until", "esac", "{", "}", "!", "time", "coproc", "]]"))
_NOT_COMMANDS = frozenset(("for", "select", "case", "in", "let"))  # their words are data, checked as paths
_TESTS = frozenset(("[[", "test", "["))  # look at files, never open them
_PURE = frozenset(("echo", "printf", "true", "false", ":", "test", "[", "[[", "type", "which", "hash", "help", "write-output", "write-host", "echo.exe"))

# Setting one of these makes the next program run code LoopX does not see.
_INJECTING = re.compile(
    r"(?:BASH_ENV|ENV|PROMPT_COMMAND|PS4|LD_PRELOAD|LD_AUDIT|DYLD_INSERT_LIBRARIES|PYTHONSTARTUP|NODE_OPTIONS|PERL5OPT|RUBYOPT"
    r"|GIT_SSH(?:_COMMAND)?|GIT_(?:PAGER|EDITOR|SEQUENCE_EDITOR|ASKPASS|EXEC_PATH|PROXY_COMMAND|TEMPLATE_DIR|CONFIG\w*|EXTERNAL_DIFF)"
    r"|SSH_ASKPASS|PAGER|MANPAGER|EDITOR|VISUAL|LESSOPEN|LESSCLOSE|SUDO_ASKPASS)"
)
_IDENTITY = frozenset(("LOOPX_AGENT", "LOOPX_HUMAN", "LOOPX_NOW"))
_GIT_COMMAND_KEYS = re.compile(r"(?i)^(?:alias\..*|core\.(?:pager|editor|sshcommand|fsmonitor|hookspath|askpass|gitproxy)|.*\.(?:command|cmd|helper|program|driver|textconv|clean|smudge|process)|sequence\.editor|pager\..*|credential\..*|gpg\..*|include\..*|includeif\..*|protocol\..*|uploadpack\..*|remote\..*\.(?:uploadpack|receivepack|vcs))$")

SHELLS = frozenset(("sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "yash", "posh", "fish", "csh", "tcsh", "rbash"))
POWERSHELLS = frozenset(("pwsh", "powershell", "pwsh-preview"))
EDITORS = frozenset(("vi", "vim", "nvim", "view", "vimdiff", "emacs", "nano", "pico", "ed", "ex", "less", "more", "most", "man", "ftp", "sftp", "telnet", "irb", "ipython", "bpython", "ptpython", "jshell", "ghci", "R", "gdb", "lldb", "pdb", "mysql", "mariadb", "redis-cli", "mongo", "mongosh", "sqlite", "sqlite3", "litecli", "psql", "pgcli", "tmux", "screen", "top", "htop", "watch"))

# Interpreter code that starts programs, or builds code or names at run time.
_CODE_RUNS = {
    "python": re.compile(r"subprocess|\bos\s*\.\s*(?:system|popen|exec\w*|spawn\w*|posix_spawn\w*|fork\w*|startfile)|\b(?:pty|commands|ctypes|cffi|importlib|multiprocessing|asyncio\.create_subprocess\w*)\b|__import__|\b(?:exec|eval|compile|getattr|globals|vars|breakpoint)\s*\(|__builtins__|\bbuiltins\b|sys\s*\.\s*modules|\bfcntl\b|\bioctl\b|TIOCSTI|from\s+os\s+import|\bcode\s*\.\s*interact"),
    "node": re.compile(r"child_process|\b(?:exec|execSync|execFile\w*|spawn\w*|fork|eval)\s*\(|\bFunction\s*\(|\bvm\b|worker_threads|process\s*\.\s*(?:binding|dlopen)|require\s*\(\s*(?!['\"][^'\"]*['\"]\s*\))|import\s*\(\s*(?!['\"][^'\"]*['\"]\s*\))|Deno\s*\.\s*(?:run|Command)|Bun\s*\.\s*(?:spawn\w*|\$)|\$`"),
    "perl": re.compile(r"\b(?:system|exec|qx|eval|fork|syscall|do|require)\b|`|\bopen\b[^;]*\||\|\s*['\"]|-\|"),
    "ruby": re.compile(r"\b(?:system|exec|spawn|fork|eval|instance_eval|class_eval|send|public_send|syscall|load|require|Open3|PTY|Kernel|IO\s*\.\s*popen|Process\s*\.\s*spawn)\b|`|%x"),
    "php": re.compile(r"\b(?:system|exec|shell_exec|passthru|proc_open|popen|pcntl_exec|eval|assert|create_function|call_user_func\w*|include|require\w*)\b|`|\$\w+\s*\("),
    "lua": re.compile(r"\b(?:os\s*\.\s*execute|io\s*\.\s*popen|load|loadstring|loadfile|dofile|require|package)\b"),
}
_INTERPRETERS = {
    # name: (language for _CODE_RUNS (None: any code is opaque), options that take code, options that take an argument)
    "node": ("node", {"-e", "--eval", "-p", "--print"}, {"-r", "--require", "--import", "--loader", "--experimental-loader", "-C", "--conditions", "--inspect-port", "--title"}),
    "nodejs": ("node", {"-e", "--eval", "-p", "--print"}, {"-r", "--require", "--import", "--loader", "--experimental-loader"}),
    "perl": ("perl", {"-e", "-E"}, {"-I", "-M", "-m", "-x", "-C"}),
    "ruby": ("ruby", {"-e"}, {"-r", "-I", "-C", "-E", "-x"}),
    "php": ("php", {"-r", "-B", "-R", "-E"}, {"-c", "-d", "-f", "-z"}),
    "lua": ("lua", {"-e"}, {"-l"}),
    "luajit": ("lua", {"-e"}, {"-l", "-j", "-O"}),
    "osascript": (None, {"-e"}, {"-l", "-s"}),
    "Rscript": (None, {"-e"}, set()),
    "julia": (None, {"-e", "--eval", "-E", "--print"}, {"-L", "--load", "-J", "--sysimage", "-p", "--procs", "-t", "--threads", "--project"}),
    "elixir": (None, {"-e", "--eval"}, {"-r", "-pr", "-pa", "-pz"}),
    "tclsh": (None, set(), set()),
    "guile": (None, {"-c"}, {"-l", "-L", "-e", "-x"}),
    "racket": (None, {"-e", "--eval"}, {"-l", "-t", "-r"}),
    "sbcl": (None, {"--eval"}, {"--load"}),
    "groovy": (None, {"-e"}, set()),
    "deno": ("node", set(), set()),
    "bun": ("node", {"-e", "--eval", "-p", "--print"}, set()),
}
_AWKS = frozenset(("awk", "gawk", "mawk", "nawk", "busybox-awk"))
_AWK_RUNS = re.compile(r"\bsystem\s*\(|\|(?!\|)|\bgetline\b|@load|\bextension\s*\(")

_PS_OPAQUE = re.compile(
    r"(?i)diagnostics\.process|processstartinfo|\[scriptblock\]|scriptblock\]::create|\.invoke(?:returnasis)?\s*\(|invokescript|"
    r"executioncontext|\[powershell\]|runspace|add-type|reflection\.assembly|activator\]|invoke-wmimethod|invoke-cimmethod|"
    r"win32_process|new-object\s+-comobject|wscript\.shell|shell\.application|system\.management\.automation"
)
_PS_ALIASES = {"iex": "invoke-expression", "saps": "start-process", "start": "start-process", "icm": "invoke-command",
               "ii": "invoke-item", "rm": "remove-item", "ri": "remove-item", "del": "remove-item", "erase": "remove-item",
               "rd": "remove-item", "rmdir": "remove-item", "sal": "set-alias", "nal": "new-alias", "sl": "set-location",
               "cd": "set-location", "chdir": "set-location", "pushd": "push-location", "popd": "pop-location",
               "sc": "set-content", "ac": "add-content", "ni": "new-item", "cp": "copy-item", "copy": "copy-item",
               "cpi": "copy-item", "mv": "move-item", "move": "move-item", "mi": "move-item", "rni": "rename-item",
               "ren": "rename-item", "%": "foreach-object", "foreach": "foreach-object", "?": "where-object", "where": "where-object"}
_PS_WRITES = frozenset(("set-content", "add-content", "out-file", "new-item", "copy-item", "move-item", "rename-item", "clear-content", "tee-object", "export-csv", "export-clixml", "set-itemproperty", "new-itemproperty"))


class Ctx(namedtuple("Ctx", "stdin piped from_file powershell")):
    """How a command gets its input: here-document/here-string bodies (text,
    literal), a pipe, a file redirect; and the language it was written in."""


_NO_INPUT = Ctx((), False, False, False)


def clip(text: str, n: int = 200) -> str:
    text = text.replace("\n", " ⏎ ")
    return text if len(text) <= n else text[: n - 1] + "…"


class Checker:
    """Checks one tool call's shell text. ``rules``: the board's compiled
    ``command`` rules; ``allow``: regexes that exempt a simple command from the
    built-in rules (only from a signed policy file); ``outside_ok``: folders
    that count as inside the project; ``agent``: the hook's agent (``--agent``
    and ``LOOPX_AGENT`` naming another are refused)."""

    def __init__(self, root: str, ground, *, rules=(), allow=(), outside_ok=(), agent: str | None = None):
        self.root = root
        self.ground = ground
        self.rules = rules
        self.allow = allow
        self.outside_ok = outside_ok
        self.agent = agent
        self.found: list[Need] = []
        self.aliases: dict[str, str] = {}
        self.files_read = 0
        self.paths_followed: set = set()
        self.branches = 0
        self._seen: set = set()

    # -- results -------------------------------------------------------------------------------
    def need(self, scope: str | None, what: str, why: str = "") -> None:
        key = (scope, why if scope is None else "")
        if key in self._seen:
            return
        self._seen.add(key)
        self.found.append(Need(scope, clip(what), why))

    def opaque(self, what: str, why: str) -> None:
        self.need(OPAQUE, what, why)

    def forbid(self, what: str, why: str) -> None:
        self.need(None, what, why)

    # -- entry points --------------------------------------------------------------------------
    def shell(self, text: str, cwd: str | None, *, powershell: bool = False, depth: int = 0) -> str | None:
        """Check ``text`` as a shell would run it from ``cwd``; returns the
        folder it ends in (``cd``), None when unknown."""
        if depth > MAX_DEPTH:
            self.opaque(text, f"it nests shells, scripts or aliases more than {MAX_DEPTH} deep")
            return cwd
        script = pwshwords.parse(text) if powershell else shellwords.parse(text)
        if script.limits:
            self.forbid(text, f"it is too large for LoopX to check ({script.limits[0]}); split it into smaller commands or a script file")
        if powershell and _PS_OPAQUE.search(text):
            self.opaque(text, "it calls .NET or script blocks that can start programs LoopX cannot see")
        for word in script.loose:
            self.ground_word(word, cwd)
        for command in script.commands:
            cwd = self.command(command, cwd, depth, powershell)
        return cwd

    # -- one simple command ------------------------------------------------------------------------
    def command(self, cmd, cwd: str | None, depth: int, powershell: bool) -> str | None:
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
                if _ASSIGN.match(w.text) and not w.text.startswith("="):
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
            expanded = shellwords.expand_braces(head.text) if len(head.text) <= 256 else None
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
        base = _base(name, ctx.powershell)
        if base in self.aliases:
            alias = self.aliases.pop(base)  # an alias does not expand inside itself
            try:
                return self.shell(alias + " " + " ".join(shlex.quote(w.text) for w in words[1:]), cwd, depth=depth + 1, powershell=ctx.powershell)
            finally:
                self.aliases[base] = alias
        args = list(words[1:])
        self.ground_word(head, cwd)
        if base not in _PURE:
            for w in args:
                self.ground_word(w, cwd)
        if ctx.powershell:
            base = _PS_ALIASES.get(base, base)
            handler = _PS_HANDLERS.get(base) or _HANDLERS.get(base)
        else:
            handler = _HANDLERS.get(base)
        if handler is None:
            if _PYTHON.fullmatch(base):
                handler = Checker._python
            elif base in _INTERPRETERS:
                handler = Checker._interpreter
            elif base in EDITORS:
                handler = Checker._editor
        if handler is not None:
            out = handler(self, base, head, args, ctx, cwd, depth)
            return cwd if out is _SAME else out
        if "/" in name or (ctx.powershell and "\\" in name):
            self.run_file(name, args, ctx, cwd, depth)
        self.plain(base, head, args, cwd)
        return cwd

    # -- the built-in and the board's rules ---------------------------------------------------------------
    def plain(self, base: str, head: Word, args: list, cwd: str | None) -> None:
        strs = [w.text for w in args]
        text = " ".join([head.text, *strs])
        for rule in self.rules:
            if rule.command is not None and rule.command.search(text):
                self.need(rule.scope, text)
        if base == "git":
            self._git_rules(text, strs, cwd)
        if any(p.search(text) for p in self.allow):
            return
        if base in builtin_rules.RULED and base != "rm":
            sub = next((w for w in args if not w.text.startswith("-")), None)
            if sub is not None and sub.dynamic:
                self.opaque(text, f"what `{base}` does depends on `{clip(sub.text, 40)}`, only known when the shell runs")
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
            if not self.inside(None if w.dynamic else w.text, cwd, strict=True):
                self.need("fs:delete-outside", text)
                return

    def _git_rules(self, text: str, args: list[str], cwd: str | None) -> None:
        i = builtin_rules.git_subcommand_index(args)
        for j, a in enumerate(args[: i if i is not None else len(args)]):
            if a == "-c" and j + 1 < len(args):
                key = args[j + 1].split("=", 1)[0]
                if _GIT_COMMAND_KEYS.match(key):
                    self.opaque(text, f"`git -c {clip(key, 40)}=…` makes git run a command LoopX cannot see")
            elif a.startswith("--config-env"):
                self.opaque(text, "`git --config-env` sets git settings LoopX cannot see")
        if i is None:
            return
        sub = args[i]
        rest = args[i + 1 :]
        if sub == "clean" and not any(a in ("-n", "--dry-run") for a in rest) and any(a.startswith("-") and not a.startswith("--") and ("d" in a or "x" in a or "X" in a) for a in rest):
            self.forbid(text, "`git clean` with -d or -x deletes untracked folders, LoopX's board folder (.loopx) among them")
        elif sub == "config" and any(_GIT_COMMAND_KEYS.match(a) for a in rest if not a.startswith("-")):
            self.opaque(text, "it sets a git setting that makes git run a command LoopX cannot see")
        elif sub not in builtin_rules.GIT_COMMANDS:
            alias = git_alias(sub, cwd, self)
            if alias is _UNKNOWN:
                self.opaque(text, f"`git {clip(sub, 40)}` may be an alias in git's configuration that LoopX cannot read")
            elif alias is not None:
                expansion = alias[1:] if alias.startswith("!") else "git " + alias
                self.shell(expansion + " " + " ".join(shlex.quote(a) for a in rest), cwd, depth=MAX_DEPTH - 1)

    # -- paths ---------------------------------------------------------------------------------------------
    def ground_word(self, word: Word, cwd: str | None) -> None:
        """Refuse a word that names LoopX's ground (by its text, or through a symbolic link)."""
        text = word.text
        if not text:
            return
        why = self.ground.text(text) if not word.braces else self._ground_braces(text)
        if why is None and cwd is not None and not word.dynamic and not os.path.isabs(text) and "\n" not in text:
            why = self.ground.path(text, cwd)  # relative to a folder inside the ground
        if why is None and not word.dynamic and "\n" not in text and len(text) < 4096 and not text.startswith("-"):
            why = self._follow(text, cwd)
        if why:
            self.forbid(text, why)

    def _ground_braces(self, text: str) -> str | None:
        expanded = shellwords.expand_braces(text) if len(text) <= 256 else None
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
        target = word.text
        if not word.dynamic and (target.startswith(_DEV_OK) or target == "-"):
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
        elif _INJECTING.fullmatch(name):
            self.opaque(word.text, f"setting {name} makes programs run code LoopX cannot see")

    def inside(self, path: str | None, cwd: str | None, *, strict: bool) -> bool:
        """Is ``path`` inside the project? Unknown paths are not (fail closed).
        ``strict``: the project folder itself does not count (deleting it)."""
        resolved = _resolve(path, cwd) if path is not None else None
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

    # -- reading files the command will run -------------------------------------------------------------
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

    def run_file(self, name: str, args: list, ctx: Ctx, cwd: str | None, depth: int) -> None:
        """A program run by its path (``./deploy.sh``): read what it is."""
        text = self.read_file(name, cwd)
        if text is None:
            full = name if os.path.isabs(name) else os.path.join(cwd or "", name)
            if os.path.isfile(full) and os.path.getsize(full) > MAX_FILE:
                self.opaque(name, f"it runs `{clip(name, 60)}`, a file larger than LoopX reads")
            return
        if "\x00" in text[:4096] or text.startswith("\x7fELF"):
            return  # a compiled program: not followed (see the module docstring)
        first = text.split("\n", 1)[0]
        interpreter = _shebang(first)
        if interpreter is None or interpreter in SHELLS:
            self.shell(text, cwd, depth=depth + 1)
        elif interpreter in POWERSHELLS:
            self.shell(text, cwd, depth=depth + 1, powershell=True)
        else:
            self.code(_language(interpreter), text, name, cwd)

    def code(self, language: str | None, code: str, what: str, cwd: str | None) -> None:
        """Interpreter code: opaque when it starts programs or builds code at run time."""
        pattern = _CODE_RUNS.get(language) if language else None
        if pattern is None or pattern.search(code):
            self.opaque(what, "its code can start programs or run code built at run time, which LoopX cannot follow")
        why = self.ground.text(code)
        if why:
            self.forbid(what, why)
        if re.search(r"\bloopx_(?:core|tui)\b", code):
            self.opaque(what, "its code calls LoopX's own modules directly instead of the loopx command")

    # -- handlers ----------------------------------------------------------------------------------------
    def _cd(self, base, head, args, ctx, cwd, depth):
        words = [w for w in args if not w.text.startswith("-") or w.text == "-"]
        if ctx.powershell:
            words = [w for w in args if not w.text.startswith("-")]
        if base == "popd" or base == "pop-location":
            return None
        if not words:
            return os.path.expanduser("~")
        target = words[0]
        if target.dynamic or target.text == "-":
            return None
        return _resolve(target.text, cwd)

    def _shell(self, base, head, args, ctx, cwd, depth):
        """sh/bash/zsh…: ``-c CODE``, a script file, or a program from stdin."""
        code = script = None
        stdin_flag = interactive = False
        i = 0
        while i < len(args):
            a = args[i].text
            if a == "--" or a == "-":
                i += 1
                break
            if a in ("-o", "+o", "-O", "+O", "--rcfile", "--init-file"):
                if a in ("--rcfile", "--init-file") and i + 1 < len(args):
                    interactive = True
                i += 2
                continue
            if a.startswith("--"):
                i += 1
                continue
            if (a.startswith("-") or a.startswith("+")) and len(a) > 1:
                if "c" in a[1:] and a[0] == "-":
                    code = args[i + 1] if i + 1 < len(args) else Word("")
                    i += 2
                    break
                stdin_flag = stdin_flag or "s" in a[1:]
                interactive = interactive or "i" in a[1:]
                i += 1
                continue
            break
        if code is not None:
            if code.dynamic:
                self.opaque(f"{base} -c {code.text}", f"the code given to `{base} -c` is only known when the shell runs it")
            else:
                self.shell(code.text, cwd, depth=depth + 1)
            return _SAME
        if not stdin_flag and i < len(args):
            script = args[i]
            self._script_file(base, script, cwd, depth)
            return _SAME
        if interactive and not ctx.stdin:
            self.need(INTERACTIVE, base, f"`{base} -i` waits for input: text typed into it later (Codex's write_stdin) is never checked")
            return _SAME
        self._stdin_program(base, ctx, cwd, depth, lambda text: self.shell(text, cwd, depth=depth + 1))
        return _SAME

    def _script_file(self, base, script: Word, cwd, depth, powershell=False) -> None:
        if script.dynamic:
            self.opaque(f"{base} {script.text}", f"the script `{base}` runs is only known when the shell runs")
            return
        text = self.read_file(script.text, cwd)
        if text is None:
            full = script.text if os.path.isabs(script.text) else os.path.join(cwd or "", script.text)
            if os.path.exists(full):
                self.opaque(f"{base} {script.text}", f"LoopX cannot read the script `{clip(script.text, 60)}` (not a regular file, or larger than {MAX_FILE // 1024} KB)")
            return
        self.shell(text, cwd, depth=depth + 1, powershell=powershell)

    def _stdin_program(self, base, ctx: Ctx, cwd, depth, check) -> None:
        """A shell or interpreter that reads its program from stdin."""
        if ctx.stdin:
            for body, _literal in ctx.stdin:
                check(body)
            return
        if ctx.piped or ctx.from_file:
            self.opaque(base, f"`{base}` runs a program read from its input, which LoopX cannot see")
            return
        self.need(INTERACTIVE, base, f"`{base}` waits for input: text typed into it later (Codex's write_stdin) is never checked")

    def _powershell(self, base, head, args, ctx, cwd, depth):
        i = 0
        while i < len(args):
            a = args[i].text.lower()
            if a in ("-c", "/c", "/command") or (len(a) >= 4 and "-command".startswith(a)):
                rest = args[i + 1 :]
                if any(w.dynamic for w in rest):
                    self.opaque(" ".join(w.text for w in rest), "the PowerShell code is only known when it runs")
                elif rest:
                    self.shell(" ".join(w.text for w in rest), cwd, powershell=True, depth=depth + 1)
                else:
                    self._stdin_program(base, ctx, cwd, depth, lambda text: self.shell(text, cwd, powershell=True, depth=depth + 1))
                return _SAME
            if a in ("-e", "-ec") or (len(a) >= 3 and a.startswith("-en") and "-encodedcommand".startswith(a)):
                if i + 1 < len(args) and not args[i + 1].dynamic:
                    try:
                        decoded = base64.b64decode(args[i + 1].text, validate=False).decode("utf-16-le")
                    except (ValueError, UnicodeDecodeError):
                        self.opaque(args[i + 1].text, "its -EncodedCommand does not decode")
                        return _SAME
                    self.shell(decoded, cwd, powershell=True, depth=depth + 1)
                else:
                    self.opaque(base, "its -EncodedCommand is only known when it runs")
                return _SAME
            if a in ("-file", "-f"):
                if i + 1 < len(args):
                    self._script_file(base, args[i + 1], cwd, depth, powershell=True)
                return _SAME
            if a in ("-noprofile", "-nop", "-noninteractive", "-noni", "-nologo", "-mta", "-sta", "-nol"):
                i += 1
                continue
            if a in ("-executionpolicy", "-ep", "-ex", "-workingdirectory", "-wd", "-windowstyle", "-w", "-inputformat", "-if", "-outputformat", "-of", "-configurationname", "-settingsfile"):
                i += 2
                continue
            if a.startswith("-"):
                i += 1
                continue
            # pwsh SCRIPT.ps1 args, or (powershell.exe) the rest as a command
            if a.endswith(".ps1"):
                self._script_file(base, args[i], cwd, depth, powershell=True)
            else:
                self.shell(" ".join(w.text for w in args[i:]), cwd, powershell=True, depth=depth + 1)
            return _SAME
        self._stdin_program(base, ctx, cwd, depth, lambda text: self.shell(text, cwd, powershell=True, depth=depth + 1))
        return _SAME

    def _cmd(self, base, head, args, ctx, cwd, depth):
        for i, w in enumerate(args):
            if w.text.lower() in ("/c", "/k", "/r"):
                rest = args[i + 1 :]
                if any(x.dynamic for x in rest):
                    self.opaque("cmd " + " ".join(x.text for x in rest), "the cmd.exe command is only known when it runs")
                else:
                    self.shell(" ".join(x.text for x in rest), cwd, depth=depth + 1)
                return _SAME
        self._stdin_program(base, ctx, cwd, depth, lambda text: self.shell(text, cwd, depth=depth + 1))
        return _SAME

    def _python(self, base, head, args, ctx, cwd, depth):
        i = 0
        interactive = False
        while i < len(args):
            w = args[i]
            a = w.text
            if a == "-" or a == "--":
                break
            if a.startswith("--"):
                i += 2 if a == "--check-hash-based-pycs" else 1
                continue
            if a.startswith("-") and len(a) > 1:
                j = 1
                while j < len(a):
                    flag = a[j]
                    if flag in "cmWX":
                        value = a[j + 1 :] if j + 1 < len(a) else (args[i + 1].text if i + 1 < len(args) else "")
                        value_word = Word(value) if j + 1 < len(a) else (args[i + 1] if i + 1 < len(args) else Word(""))
                        consumed = 1 if j + 1 < len(a) else 2
                        if flag == "c":
                            if value_word.dynamic:
                                self.opaque(f"{base} -c {value}", "its code is only known when the shell runs")
                            else:
                                self.code("python", value, f"{base} -c {value}", cwd)
                            return _SAME
                        if flag == "m":
                            module = value.split(".", 1)[0]
                            if module in ("loopx_core", "loopx"):
                                self.loopx_verb([w2.text for w2 in args[i + consumed :]], f"{base} -m {value}", [])
                                return _SAME
                            if value_word.dynamic:
                                self.opaque(f"{base} -m {value}", "the module it runs is only known when the shell runs")
                                return _SAME
                            rest = [Word(value, value_word.dynamic)] + list(args[i + consumed :])
                            return self.argv(rest, ctx, cwd, depth + 1)
                        i += consumed
                        break
                    interactive = interactive or flag == "i"
                    j += 1
                else:
                    i += 1
                continue
            # a script file
            self._interpreted_file(base, "python", w, cwd)
            if interactive:
                self.need(INTERACTIVE, base, f"`{base} -i` waits for input after the script")
            return _SAME
        if interactive and not ctx.stdin:
            self.need(INTERACTIVE, base, f"`{base} -i` waits for input: text typed into it later (Codex's write_stdin) is never checked")
            return _SAME
        self._stdin_program(base, ctx, cwd, depth, lambda text: self.code("python", text, base, cwd))
        return _SAME

    def _interpreted_file(self, base, language, word: Word, cwd) -> None:
        if word.dynamic:
            self.opaque(f"{base} {word.text}", f"the script `{base}` runs is only known when the shell runs")
            return
        text = self.read_file(word.text, cwd)
        if text is None:
            full = word.text if os.path.isabs(word.text) else os.path.join(cwd or "", word.text)
            if os.path.exists(full):
                self.opaque(f"{base} {word.text}", f"LoopX cannot read the script `{clip(word.text, 60)}` (not a regular file, or larger than {MAX_FILE // 1024} KB)")
            return
        self.code(language, text, f"{base} {word.text}", cwd)

    def _interpreter(self, base, head, args, ctx, cwd, depth):
        language, code_opts, arg_opts = _INTERPRETERS[base]
        if base == "deno":
            sub = args[0].text if args else ""
            if sub == "eval" and len(args) > 1:
                self.code(language, args[-1].text, f"deno eval {args[-1].text}", cwd)
            elif sub in ("run", "test", "bench", "serve", "task") and len(args) > 1:
                self._interpreted_file(base, language, next((w for w in args[1:] if not w.text.startswith("-")), args[-1]), cwd)
            elif sub in ("", "repl"):
                self.need(INTERACTIVE, base, "`deno repl` waits for input")
            return _SAME
        i = 0
        while i < len(args):
            w = args[i]
            a = w.text
            if a == "--":
                i += 1
                break
            key, eq, inline = a.partition("=")
            if key in code_opts or (base in ("perl", "ruby") and a.startswith("-") and not a.startswith("--") and "e" in a[1:].lower() and len(a) <= 6):
                code = inline if eq else (args[i + 1] if i + 1 < len(args) else Word(""))
                code_word = Word(code) if isinstance(code, str) else code
                if code_word.dynamic:
                    self.opaque(f"{base} {a} {code_word.text}", "its code is only known when the shell runs")
                else:
                    self.code(language, code_word.text, f"{base} {a} {code_word.text}", cwd)
                return _SAME
            if key in arg_opts:
                if key in ("-r", "--require", "--import", "--loader", "--experimental-loader") and base in ("node", "nodejs", "bun"):
                    target = inline if eq else (args[i + 1].text if i + 1 < len(args) else "")
                    if target.startswith((".", "/")):
                        self._interpreted_file(base, language, Word(target), cwd)
                i += 1 if eq else 2
                continue
            if a.startswith("-") and a != "-":
                i += 1
                continue
            if a == "-":
                break
            if base == "bun" and a in ("run", "x", "build", "test", "install", "add", "remove", "publish", "pm", "create", "init", "upgrade", "link", "unlink", "outdated", "update"):
                if a == "x":
                    return self.argv(list(args[i + 1 :]), ctx, cwd, depth + 1) if len(args) > i + 1 else _SAME
                if a == "publish":
                    self.need("publish:npm", "bun publish")
                if a == "run" and i + 1 < len(args) and os.path.splitext(args[i + 1].text)[1] in (".js", ".ts", ".mjs", ".cjs", ".tsx", ".jsx"):
                    self._interpreted_file(base, language, args[i + 1], cwd)
                return _SAME
            self._interpreted_file(base, language, w, cwd)
            return _SAME
        self._stdin_program(base, ctx, cwd, depth, lambda text: self.code(language, text, base, cwd))
        return _SAME

    def _awk(self, base, head, args, ctx, cwd, depth):
        i = 0
        while i < len(args):
            a = args[i].text
            if a in ("-f", "--file") and i + 1 < len(args):
                self._interpreted_file(base, None, args[i + 1], cwd)
                return _SAME
            if a in ("-F", "-v", "--assign", "--field-separator"):
                i += 2
                continue
            if a == "--":
                i += 1
                break
            if a.startswith("-") and len(a) > 1:
                i += 1
                continue
            break
        if i < len(args):
            program = args[i]
            if program.dynamic or _AWK_RUNS.search(program.text):
                self.opaque(f"{base} {program.text}", "its program can start other programs (system, pipes, getline)")
            why = self.ground.text(program.text)
            if why:
                self.forbid(program.text, why)
        return _SAME

    def _sed(self, base, head, args, ctx, cwd, depth):
        scripts = []
        i = 0
        explicit = False
        while i < len(args):
            a = args[i].text
            if a in ("-e", "--expression") and i + 1 < len(args):
                scripts.append(args[i + 1])
                explicit = True
                i += 2
                continue
            if a in ("-f", "--file"):
                self.opaque(f"sed {a}", "its script comes from a file")
                return _SAME
            if a.startswith("-"):
                i += 1
                continue
            if not explicit:
                scripts.append(args[i])
            break
        for script in scripts:
            if script.dynamic or _sed_runs(script.text):
                self.opaque(f"sed {script.text}", "its script can run commands (sed's e command or flag)")
        return _SAME

    def _eval(self, base, head, args, ctx, cwd, depth):
        if any(w.dynamic for w in args):
            self.opaque("eval " + " ".join(w.text for w in args), "`eval` runs text that is only known when the shell runs")
        elif args:
            self.shell(" ".join(w.text for w in args), cwd, depth=depth + 1)
        return _SAME

    def _source(self, base, head, args, ctx, cwd, depth):
        if not args:
            return _SAME
        self._script_file(base, args[0], cwd, depth)
        return _SAME

    def _alias(self, base, head, args, ctx, cwd, depth):
        for w in args:
            name, eq, value = w.text.partition("=")
            if not eq:
                continue
            if w.dynamic:
                self.opaque(f"alias {w.text}", "the alias's command is only known when the shell runs")
                continue
            self.aliases[name] = value
            self.shell(value, cwd, depth=depth + 1)  # what the alias runs, checked once here too
        return _SAME

    def _export(self, base, head, args, ctx, cwd, depth):
        for w in args:
            if _ASSIGN.match(w.text):
                self.assignment(w, cwd)
        return _SAME

    def _trap(self, base, head, args, ctx, cwd, depth):
        words = [w for w in args if not w.text.startswith("-")]
        if words:
            if words[0].dynamic:
                self.opaque(f"trap {words[0].text}", "the trap's command is only known when the shell runs")
            else:
                self.shell(words[0].text, cwd, depth=depth + 1)
        return _SAME

    def _xargs(self, base, head, args, ctx, cwd, depth):
        replace = None
        i = 0
        with_arg = {"-I", "-i", "-n", "-P", "-L", "-l", "-s", "-d", "-E", "-e", "-a", "--max-args", "--max-procs", "--delimiter", "--arg-file", "--replace", "--max-lines", "--eof", "--max-chars", "--process-slot-var"}
        while i < len(args):
            a = args[i].text
            if a == "--":
                i += 1
                break
            if a in ("-I", "--replace") and i + 1 < len(args):
                replace = args[i + 1].text
            elif a.startswith("-I") and len(a) > 2:
                replace = a[2:]
            elif a.startswith("--replace="):
                replace = a.split("=", 1)[1]
            if a in with_arg:
                i += 2
                continue
            if a.startswith("-"):
                i += 1
                continue
            break
        inner = list(args[i:]) or [Word("echo")]
        if replace:
            inner = [Word(w.text, True) if replace in w.text else w for w in inner]
        return self._fed(base, inner, cwd, depth)

    def _fed(self, base, inner: list, cwd, depth):
        """``inner`` runs with arguments LoopX cannot see (from stdin)."""
        name = inner[0]
        inner_base = _base(name.text, False)
        if name.dynamic or inner_base in SHELLS or inner_base in _INTERPRETERS or _PYTHON.fullmatch(inner_base) or (inner_base in _HANDLERS and inner_base not in ("sed", "gsed")) or (inner_base in builtin_rules.RULED and inner_base != "rm"):
            self.opaque(f"{base} {' '.join(w.text for w in inner)}", f"`{base}` gives `{clip(name.text, 40)}` arguments LoopX cannot see")
            return _SAME
        self.argv(inner + [Word("", True)], _NO_INPUT, cwd, depth + 1)
        return _SAME

    def _parallel(self, base, head, args, ctx, cwd, depth):
        self.opaque("parallel " + " ".join(w.text for w in args), "`parallel` builds the commands it runs from its input")
        return _SAME

    def _find(self, base, head, args, ctx, cwd, depth):
        starts = []
        i = 0
        while i < len(args) and not args[i].text.startswith(("-", "(", "!")):
            starts.append(args[i])
            i += 1
        starts = starts or [Word(".")]
        text = "find " + " ".join(w.text for w in args)
        while i < len(args):
            a = args[i].text
            if a in ("-exec", "-execdir", "-ok", "-okdir"):
                j = i + 1
                inner = []
                while j < len(args) and args[j].text not in (";", "+"):
                    inner.append(args[j])
                    j += 1
                if inner:
                    start = starts[0]
                    place = Word(os.path.join(start.text, "x"), start.dynamic)
                    inner = [place if w.text == "{}" else (Word(w.text, True) if "{}" in w.text else w) for w in inner]
                    self.argv(inner, _NO_INPUT, cwd, depth + 1)
                i = j + 1
                continue
            if a == "-delete":
                self.deletes(text, starts, cwd)
            elif a in ("-fprint", "-fprint0", "-fprintf", "-fls") and i + 1 < len(args):
                self.redirect(">", args[i + 1], cwd)
            i += 1
        return _SAME

    def _wrapper(self, base, head, args, ctx, cwd, depth):
        spec = _WRAPPERS[base]
        with_arg, positional, interactive, code_opts = spec
        readings = self._unwrap(args, with_arg, positional, code_opts, base, cwd, depth)
        if readings is None:
            return _SAME
        if not readings:
            if interactive is not None:
                self.need(INTERACTIVE, base, f"`{base}` with no command starts a shell that waits for input")
            return _SAME
        for start in readings:
            self.argv(list(args[start:]), ctx, cwd, depth + 1)
        return _SAME

    def _unwrap(self, args, with_arg, positional, code_opts, base, cwd, depth):
        """Where the wrapped command starts: a list of candidate indexes (two
        when an option LoopX does not know might take a value), [] when there
        is none, None when handled here (a code option)."""
        i = 0
        uncertain = []
        left = positional
        while i < len(args):
            w = args[i]
            a = w.text
            if a == "--":
                i += 1
                break
            if base == "env" and _ASSIGN.match(a):
                self.assignment(w, cwd)
                i += 1
                continue
            if a.startswith("-") and len(a) > 1 and not w.dynamic:
                key = a.split("=", 1)[0]
                if key in code_opts:
                    code = a.split("=", 1)[1] if "=" in a else (args[i + 1].text if i + 1 < len(args) else "")
                    dynamic = ("=" not in a and i + 1 < len(args) and args[i + 1].dynamic)
                    if dynamic:
                        self.opaque(f"{base} {a} {code}", f"the command `{base}` runs is only known when the shell runs")
                    else:
                        self.shell(code, cwd, depth=depth + 1)
                    return None
                if key in with_arg and "=" not in a:
                    i += 2
                    continue
                if key not in with_arg and key not in _KNOWN_FLAGS.get(base, ()):
                    short_cluster = not a.startswith("--") and any(("-" + c) in with_arg for c in a[1:])
                    if short_cluster:
                        i += 2
                        continue
                    uncertain.append(i + 1)
                i += 1
                continue
            if left > 0:
                left -= 1
                i += 1
                continue
            break
        if i >= len(args):
            return []
        readings = [i]
        for u in uncertain:
            if u == i and u + 1 < len(args) and self.branches < MAX_BRANCHES:
                self.branches += 1
                readings.append(u + 1)
        if self.branches >= MAX_BRANCHES and uncertain:
            self.opaque(base, f"`{base}` has options LoopX does not know, so it cannot tell which command it runs")
        return readings

    def _sudo(self, base, head, args, ctx, cwd, depth):
        if any(w.text in ("-s", "-i", "--shell", "--login") for w in args):
            rest = [w for w in args if not w.text.startswith("-")]
            if not rest or all(w.text in ("root",) for w in rest):
                self.need(INTERACTIVE, base, f"`{base} -s`/`-i` starts a shell that waits for input")
                return _SAME
        return self._wrapper(base, head, args, ctx, cwd, depth)

    def _command_builtin(self, base, head, args, ctx, cwd, depth):
        if any(w.text in ("-v", "-V") for w in args):
            return _SAME  # command -v NAME: only says where NAME is
        return self._wrapper(base, head, args, ctx, cwd, depth)

    def _watch(self, base, head, args, ctx, cwd, depth):
        i = 0
        exec_mode = False
        while i < len(args) and args[i].text.startswith("-"):
            a = args[i].text
            exec_mode = exec_mode or a in ("-x", "--exec")
            i += 2 if a in ("-n", "--interval", "-q", "--equexit") else 1
        rest = args[i:]
        if not rest:
            return _SAME
        if exec_mode:
            return self.argv(list(rest), ctx, cwd, depth + 1)
        if any(w.dynamic for w in rest):
            self.opaque("watch " + " ".join(w.text for w in rest), "the command `watch` runs is only known when the shell runs")
        else:
            self.shell(" ".join(w.text for w in rest), cwd, depth=depth + 1)
        return _SAME

    def _ssh(self, base, head, args, ctx, cwd, depth):
        with_arg = {"-b", "-c", "-D", "-E", "-e", "-F", "-I", "-i", "-J", "-L", "-l", "-m", "-O", "-o", "-p", "-Q", "-R", "-S", "-W", "-w", "-B", "-P"}
        i = 0
        host = None
        while i < len(args):
            a = args[i].text
            if a in with_arg:
                i += 2
                continue
            if a.startswith("-"):
                i += 1
                continue
            host = i
            break
        if host is None:
            return _SAME
        rest = args[host + 1 :]
        if not rest:
            self._stdin_program(base, ctx, cwd, depth, lambda text: self.shell(text, None, depth=depth + 1))
        elif any(w.dynamic for w in rest):
            self.opaque("ssh " + " ".join(w.text for w in args), "the remote command is only known when the shell runs")
        else:
            self.shell(" ".join(w.text for w in rest), None, depth=depth + 1)
        return _SAME

    def _su(self, base, head, args, ctx, cwd, depth):
        for i, w in enumerate(args):
            if w.text in ("-c", "--command", "--session-command") and i + 1 < len(args):
                code = args[i + 1]
                if code.dynamic:
                    self.opaque(f"{base} -c {code.text}", f"the command `{base}` runs is only known when the shell runs")
                else:
                    self.shell(code.text, cwd, depth=depth + 1)
                return _SAME
        if base == "runuser":
            for i, w in enumerate(args):
                if w.text == "--" and i + 1 < len(args):
                    return self.argv(list(args[i + 1 :]), ctx, cwd, depth + 1)
        self.need(INTERACTIVE, base, f"`{base}` without -c starts a shell that waits for input")
        return _SAME

    def _script_cmd(self, base, head, args, ctx, cwd, depth):
        for i, w in enumerate(args):
            if w.text in ("-c", "--command") and i + 1 < len(args):
                code = args[i + 1]
                if code.dynamic:
                    self.opaque(f"script -c {code.text}", "the command `script` runs is only known when the shell runs")
                else:
                    self.shell(code.text, cwd, depth=depth + 1)
                return _SAME
        self.need(INTERACTIVE, base, "`script` without -c starts a shell that waits for input")
        return _SAME

    def _busybox(self, base, head, args, ctx, cwd, depth):
        return self.argv(list(args), ctx, cwd, depth + 1) if args else _SAME

    def _runner(self, base, head, args, ctx, cwd, depth):
        """Package managers' "run this command" verbs: ``poetry run``, ``uv run``,
        ``npm exec``, ``pnpm dlx``, ``bundle exec`` …; anything else is a plain
        command (``npm publish``)."""
        verbs = _RUNNER_VERBS.get(base, ())
        for i, w in enumerate(args):
            if w.text.startswith("-"):
                continue
            if w.text in verbs:
                rest = list(args[i + 1 :])
                with_arg = _RUNNER_ARGS.get(base, frozenset())
                j = 0
                while j < len(rest) and rest[j].text.startswith("-"):
                    if rest[j].text == "--":
                        j += 1
                        break
                    j += 2 if rest[j].text in with_arg else 1
                if j < len(rest):
                    return self.argv(rest[j:], ctx, cwd, depth + 1)
                return _SAME
            break
        self.plain(base, head, args, cwd)
        return _SAME

    def _loopx(self, base, head, args, ctx, cwd, depth):
        self.loopx_verb([w.text for w in args], "loopx " + " ".join(w.text for w in args), args)
        return _SAME

    def loopx_verb(self, argv: list[str], text: str, words: list) -> None:
        verb, sub, agent = _loopx_verb(argv)
        if any(w.dynamic for w in words[:4]):
            self.opaque(text, "which loopx command it runs is only known when the shell runs")
            return
        if verb is None or verb == "board":
            self.forbid(text, "the LoopX board is a person's screen: its keys answer gates")
        elif is_human_verb(verb, sub):
            self.forbid(text, f"`loopx {verb}{' ' + sub if sub else ''}` is a person's command: agents ask with `loopx gate ask` and wait")
        elif verb == "init":
            self.forbid(text, "`loopx init` rewrites the runtimes' settings and LoopX's hooks: a person runs it")
        elif agent is not None and self.agent and agent != self.agent:
            self.forbid(text, f"`--agent {agent}` speaks for another agent; you are {self.agent}")

    def _terminal(self, base, head, args, ctx, cwd, depth):
        words = [w.text for w in args]
        if base == "tmux":
            sub = next((a for a in words if not a.startswith("-")), None)
            if "-V" in words or sub in _TMUX_READ or (sub in ("display-message", "display") and "-p" in words):
                return _SAME
        elif base == "screen":
            if not any(a in ("-X", "-x", "-r", "-R", "-D", "-d", "-p") or a.startswith(("-X", "-x", "-r", "-R")) for a in words):
                if any(a in ("-ls", "-list", "-v", "--version", "-h", "--help") for a in words):
                    return _SAME
        self.forbid(f"{base} {' '.join(words)}", TERMINAL_WHY)
        return _SAME

    def _apply_patch(self, base, head, args, ctx, cwd, depth):
        for body, _ in ctx.stdin:
            for need in patch_needs(body, cwd, self):
                self.need(need.scope, need.what, need.why)
        for w in args:
            if "*** Begin Patch" in w.text:
                for need in patch_needs(w.text, cwd, self):
                    self.need(need.scope, need.what, need.why)
        return _SAME

    def _sqlite(self, base, head, args, ctx, cwd, depth):
        operands = [w for w in args if not w.text.startswith("-")]
        for w in args:
            if w.text.startswith(".") and re.match(r"\.(?:shell|system|load|output|once|import|read|excel)\b", w.text):
                self.opaque(f"{base} {w.text}", "its dot-command runs programs or reads or writes files LoopX cannot see")
            if w.text == "-cmd":
                self.opaque(f"{base} -cmd", "its -cmd option runs commands before the SQL")
        if len(operands) < 2 and not ctx.stdin and not ctx.piped and not ctx.from_file:
            self.need(INTERACTIVE, base, f"`{base}` without SQL waits for input (its dot-commands can run programs)")
        elif ctx.stdin or ctx.piped or ctx.from_file:
            for body, _ in ctx.stdin:
                if re.search(r"(?m)^\s*\.(?:shell|system|load|output|once|import|read)\b", body):
                    self.opaque(base, "its input runs dot-commands that start programs or touch files")
                why = self.ground.text(body)
                if why:
                    self.forbid(base, why)
            if ctx.piped or ctx.from_file:
                self.opaque(base, f"`{base}` runs SQL and dot-commands read from its input, which LoopX cannot see")
        return _SAME

    def _postgres(self, base, head, args, ctx, cwd, depth):
        url = self.ground.board_url
        if url:
            text = " ".join(w.text for w in args)
            name = _pg_database(url)
            named = [w.text for w in args]
            if url in text or (name and (name in named or any(a.endswith("=" + name) or a.endswith("/" + name) or f"dbname={name}" in a for a in named))):
                self.forbid(f"{base} {text}", "it opens LoopX's board database")
        if base in ("psql", "pgcli") and not any(w.text in ("-c", "--command", "-f", "--file") or w.text.startswith(("-c", "--command=")) for w in args) and not ctx.stdin and not ctx.piped and not ctx.from_file:
            self.need(INTERACTIVE, base, f"`{base}` without -c waits for input (its \\! runs programs)")
        return _SAME

    def _editor(self, base, head, args, ctx, cwd, depth):
        words = [w.text for w in args]
        if base in ("vi", "vim", "nvim", "view", "vimdiff", "ex") and any(a in ("-c", "-S", "--cmd", "-s") or a.startswith("+") for a in words):
            self.opaque(f"{base} {' '.join(words)}", f"`{base}` runs editor commands, which can start programs")
        elif base in ("gdb", "lldb") and any(a in ("-ex", "-x", "--command", "-iex", "-batch", "-o", "-s") for a in words):
            self.opaque(f"{base} {' '.join(words)}", f"`{base}` runs debugger commands, which can start programs")
        elif base == "emacs" and any(a.startswith(("--eval", "-l", "--load", "-f", "--funcall", "--batch", "--script")) for a in words):
            self.opaque(f"{base} {' '.join(words)}", "`emacs` runs Lisp, which can start programs")
        elif base in ("less", "more", "most", "man") and (ctx.piped or ctx.stdin or words):
            return _SAME  # a pager in a tool call: no terminal, it prints and ends
        elif base in ("sqlite", "sqlite3", "litecli"):
            return self._sqlite(base, head, args, ctx, cwd, depth)
        elif base in ("psql", "pgcli"):
            return self._postgres(base, head, args, ctx, cwd, depth)
        elif base in ("tmux", "screen"):
            return self._terminal(base, head, args, ctx, cwd, depth)
        elif base == "watch":
            return self._watch(base, head, args, ctx, cwd, depth)
        elif base in ("mysql", "mariadb", "redis-cli", "mongo", "mongosh") and (words and any(a in ("-e", "--execute", "--eval") for a in words) or ctx.stdin or ctx.piped or ctx.from_file or len(words) > 2):
            return _SAME
        elif base in ("ftp", "sftp", "telnet") and (ctx.stdin or ctx.piped or ctx.from_file):
            self.opaque(base, f"`{base}` runs commands read from its input")
            return _SAME
        else:
            self.need(INTERACTIVE, base, f"`{base}` waits for input: text typed into it later (Codex's write_stdin) is never checked")
        return _SAME

    # PowerShell commands
    def _ps_invoke_expression(self, base, head, args, ctx, cwd, depth):
        code = [w for w in args if not w.text.lower().startswith("-command")]
        if not code:
            self.opaque("Invoke-Expression", "`Invoke-Expression` runs text from its input, which LoopX cannot see")
        elif any(w.dynamic for w in code):
            self.opaque("Invoke-Expression " + " ".join(w.text for w in code), "`Invoke-Expression` runs text that is only known when it runs")
        else:
            self.shell(" ".join(w.text for w in code), cwd, powershell=True, depth=depth + 1)
        return _SAME

    def _ps_start_process(self, base, head, args, ctx, cwd, depth):
        program = None
        arglist: list = []
        i = 0
        while i < len(args):
            a = args[i].text.lower()
            if a in ("-filepath", "-file", "-path", "-fp", "-pspath", "-lp") and i + 1 < len(args):
                program = args[i + 1]
                i += 2
                continue
            if a in ("-argumentlist", "-args", "-arguments", "-al") and i + 1 < len(args):
                j = i + 1
                while j < len(args) and not args[j].text.startswith("-"):
                    arglist.append(args[j])
                    j += 1
                i = j
                continue
            if a.startswith("-"):
                i += 2 if a in ("-workingdirectory", "-wd", "-redirectstandardoutput", "-redirectstandardinput", "-redirectstandarderror", "-rso", "-rsi", "-rse", "-credential", "-verb", "-windowstyle", "-environment") else 1
                continue
            if program is None:
                program = args[i]
            else:
                arglist.append(args[i])
            i += 1
        if program is None:
            return _SAME
        if program.dynamic or any(w.dynamic for w in arglist):
            self.opaque("Start-Process " + program.text, "the program or its arguments are only known when it runs")
            return _SAME
        split = []
        for w in arglist:
            split.extend(Word(t) for t in w.text.split())
        self.argv([program, *split], _NO_INPUT, cwd, depth + 1)
        return _SAME

    def _ps_invoke_command(self, base, head, args, ctx, cwd, depth):
        for i, w in enumerate(args):
            if w.text.lower() in ("-filepath", "-fp") and i + 1 < len(args):
                self._script_file(base, args[i + 1], cwd, depth, powershell=True)
        return _SAME  # a -ScriptBlock { … } was read with the statement

    def _ps_remove_item(self, base, head, args, ctx, cwd, depth):
        words = [w for w in args if not w.text.startswith("-")]
        if any(w.text.lower().startswith("-r") and "-recurse".startswith(w.text.lower()) for w in args):
            self.deletes("Remove-Item " + " ".join(w.text for w in args), words, cwd)
        return _SAME

    def _ps_writes(self, base, head, args, ctx, cwd, depth):
        text = f"{base} " + " ".join(w.text for w in args)
        targets = [w for w in args if not w.text.startswith("-") and w.text != "{…}"]
        if base in ("copy-item", "move-item"):
            targets = targets[1:] if len(targets) > 1 else targets
        for w in targets[:1] if base in ("set-content", "add-content", "out-file", "new-item", "tee-object") else targets:
            if not self.inside(None if w.dynamic else w.text, cwd, strict=False):
                self.need("fs:write-outside", text)
                break
        return _SAME

    def _ps_alias(self, base, head, args, ctx, cwd, depth):
        words = [w for w in args if not w.text.startswith("-")]
        if len(words) >= 2:
            if words[1].dynamic:
                self.opaque(f"{base} {words[0].text} {words[1].text}", "the alias's command is only known when it runs")
            else:
                self.aliases[words[0].text.lower()] = words[1].text
        return _SAME

    def _ps_dot(self, base, head, args, ctx, cwd, depth):
        if args:
            self._script_file(".", args[0], cwd, depth, powershell=ctx.powershell)
        return _SAME

    def _ps_invoke_item(self, base, head, args, ctx, cwd, depth):
        self.opaque("Invoke-Item " + " ".join(w.text for w in args), "`Invoke-Item` opens a file with whatever program the system picks")
        return _SAME


TERMINAL_WHY = "it reaches another terminal, where a person may be answering LoopX's gates"
_SAME = object()  # a handler's answer: the working folder did not change
_UNKNOWN = object()
_TMUX_READ = frozenset(("ls", "list-sessions", "list-windows", "lsw", "list-panes", "lsp", "list-clients", "lsc", "list-commands", "lscm", "list-keys", "lsk", "has-session", "has", "show-options", "show", "show-environment", "showenv", "info", "server-info", "start-server", "start"))

# wrapper: (options that take a value, how many operands come before the command,
#           set when running it bare starts a shell (None: it does not), options whose value is shell code)
_WRAPPERS = {
    "sudo": ({"-u", "-g", "-h", "-p", "-C", "-D", "-r", "-t", "-U", "-T", "-R", "--user", "--group", "--host", "--prompt", "--close-from", "--chdir", "--role", "--type", "--other-user", "--command-timeout", "--chroot"}, 0, True, set()),
    "doas": ({"-u", "-C"}, 0, True, set()),
    "env": ({"-u", "-C", "--unset", "--chdir", "-P"}, 0, None, {"-S", "--split-string"}),
    "nice": ({"-n", "--adjustment"}, 0, None, set()),
    "ionice": ({"-c", "-n", "-p", "-P", "-u", "--class", "--classdata", "--pid", "--pgid", "--uid"}, 0, None, set()),
    "timeout": ({"-s", "-k", "--signal", "--kill-after"}, 1, None, set()),
    "stdbuf": ({"-i", "-o", "-e", "--input", "--output", "--error"}, 0, None, set()),
    "nohup": (set(), 0, None, set()),
    "time": ({"-f", "-o", "--format", "--output"}, 0, None, set()),
    "command": (set(), 0, None, set()),
    "builtin": (set(), 0, None, set()),
    "exec": ({"-a"}, 0, None, set()),
    "setsid": (set(), 0, None, set()),
    "chronic": (set(), 0, None, set()),
    "unbuffer": (set(), 0, None, set()),
    "caffeinate": ({"-t", "-w"}, 0, None, set()),
    "eatmydata": (set(), 0, None, set()),
    "fakeroot": ({"-l", "-s", "-i", "--lib", "--faked"}, 0, True, set()),
    "proxychains": ({"-f"}, 0, None, set()),
    "proxychains4": ({"-f"}, 0, None, set()),
    "torsocks": ({"-u", "-p", "-a", "-P", "-d"}, 0, None, set()),
    "flock": ({"-w", "-E", "--timeout", "--conflict-exit-code"}, 1, None, {"-c", "--command"}),
    "chroot": ({"--userspec", "--groups", "--skip-chdir"}, 1, True, set()),
    "taskset": ({"-p", "--pid"}, 1, None, set()),
    "chrt": (set(), 1, None, set()),
    "nsenter": ({"-t", "--target", "-S", "-G", "--setuid", "--setgid", "-r", "-w"}, 0, True, set()),
    "unshare": ({"--propagation", "--setgroups", "--map-user", "--map-group", "-S", "-G", "--setuid", "--setgid", "-R", "--root", "-w", "--wd"}, 0, True, set()),
    "xvfb-run": ({"-n", "-s", "-e", "-f", "-p", "--server-num", "--server-args", "--error-file", "--auth-file"}, 0, None, set()),
    "dbus-launch": (set(), 0, None, set()),
    "catchsegv": (set(), 0, None, set()),
    "strace": ({"-e", "-o", "-p", "-s", "-u", "-E", "-I", "-a", "-b", "-O", "-P", "-S", "-X"}, 0, None, set()),
    "ltrace": ({"-e", "-o", "-p", "-s", "-u", "-n", "-a", "-A", "-D", "-F", "-l", "-x"}, 0, None, set()),
    "valgrind": (set(), 0, None, set()),
    "firejail": (set(), 0, True, set()),
    "systemd-run": ({"-p", "--property", "-u", "--unit", "-E", "--setenv", "--description", "--slice", "--uid", "--gid", "--nice", "-M", "--machine", "-H", "--host", "--working-directory"}, 0, None, set()),
    "npx": ({"-p", "--package", "--prefix"}, 0, None, {"-c", "--call"}),
    "pnpx": ({"-p", "--package"}, 0, None, {"-c"}),
    "bunx": ({"-p", "--package"}, 0, None, set()),
    "uvx": ({"--from", "--with", "--python", "-p", "--index", "--index-url", "--extra-index-url", "--with-requirements"}, 0, None, set()),
    "dotenv": ({"-e", "-f", "-c", "-v"}, 0, None, set()),
    "sg": (set(), 1, True, {"-c"}),
    "doppler": (set(), 0, None, {"--command"}),
}
_KNOWN_FLAGS = {
    "sudo": {"-A", "-b", "-E", "-H", "-K", "-k", "-n", "-P", "-S", "-B", "-N", "--askpass", "--background", "--preserve-env", "--set-home", "--non-interactive", "--preserve-groups", "--stdin", "--bell", "--reset-timestamp", "--remove-timestamp", "--no-update"},
    "env": {"-i", "-0", "--ignore-environment", "--null", "-v", "--debug", "--default-signal", "--ignore-signal", "--block-signal", "--list-signal-handling"},
    "nohup": set(), "time": {"-p", "-v", "-a", "--portability", "--verbose", "--append", "-q", "--quiet"},
    "command": {"-p"}, "exec": {"-c", "-l"}, "setsid": {"-c", "-f", "-w", "--ctty", "--fork", "--wait"},
    "timeout": {"--foreground", "--preserve-status", "-v", "--verbose"}, "nice": set(), "stdbuf": set(),
    "flock": {"-s", "-x", "-e", "-n", "-u", "-o", "-F", "--shared", "--exclusive", "--nonblock", "--unlock", "--close", "--no-fork", "--verbose"},
    "npx": {"-y", "--yes", "--no", "-q", "--quiet", "--no-install", "--ignore-existing"},
    "uvx": {"--isolated", "--no-cache", "-q", "--quiet", "-v", "--verbose", "--offline", "--refresh"},
    "strace": {"-f", "-ff", "-c", "-C", "-d", "-D", "-F", "-h", "-i", "-k", "-q", "-qq", "-r", "-t", "-tt", "-ttt", "-T", "-v", "-V", "-x", "-xx", "-y", "-yy", "-z", "-Z", "-w"},
}
_RUNNER_VERBS = {
    "poetry": ("run",), "uv": ("run",), "pdm": ("run",), "hatch": ("run",), "pipenv": ("run",), "conda": ("run",),
    "mamba": ("run",), "micromamba": ("run",), "bundle": ("exec",), "rbenv": ("exec",), "pyenv": ("exec",),
    "mise": ("exec", "x"), "rtx": ("exec", "x"), "asdf": ("exec",), "npm": ("exec", "x"), "pnpm": ("exec", "dlx"),
    "yarn": ("exec", "dlx"), "pipx": ("run",), "direnv": ("exec",),
    "cargo": (), "rye": ("run",), "pixi": ("run", "exec"),
}
_RUNNER_ARGS = {
    "uv": frozenset({"--with", "--python", "-p", "--from", "--package", "--project", "--directory", "--env-file", "--index", "--group", "--extra"}),
    "conda": frozenset({"-n", "--name", "-p", "--prefix", "--cwd"}), "mamba": frozenset({"-n", "--name", "-p", "--prefix"}),
    "micromamba": frozenset({"-n", "--name", "-p", "--prefix"}), "pnpm": frozenset({"--filter", "-F", "-C", "--dir"}),
    "npm": frozenset({"--package", "-p", "-w", "--workspace", "--prefix"}), "pipx": frozenset({"--spec", "--python", "--index-url"}),
    "hatch": frozenset({"-e", "--env"}), "pixi": frozenset({"-e", "--environment", "--manifest-path"}),
}


def _handlers() -> dict:
    c = Checker
    table = {
        "cd": c._cd, "pushd": c._cd, "popd": c._cd,
        "eval": c._eval, "source": c._source, ".": c._source, "alias": c._alias,
        "export": c._export, "declare": c._export, "typeset": c._export, "local": c._export, "readonly": c._export,
        "trap": c._trap, "xargs": c._xargs, "parallel": c._parallel, "find": c._find,
        "sudo": c._sudo, "doas": c._sudo, "command": c._command_builtin, "builtin": c._command_builtin,
        "watch": c._watch, "ssh": c._ssh, "su": c._su, "runuser": c._su, "script": c._script_cmd,
        "busybox": c._busybox, "loopx": c._loopx, "tmux": c._terminal, "screen": c._terminal,
        "xdotool": c._terminal, "ydotool": c._terminal, "wtype": c._terminal, "xte": c._terminal,
        "write": c._terminal, "wall": c._terminal, "reptyr": c._terminal, "ttyecho": c._terminal,
        "apply_patch": c._apply_patch, "applypatch": c._apply_patch,
        "sqlite3": c._sqlite, "sqlite": c._sqlite, "litecli": c._sqlite,
        "psql": c._postgres, "pgcli": c._postgres, "pg_dump": c._postgres, "pg_dumpall": c._postgres,
        "pg_restore": c._postgres, "dropdb": c._postgres, "createdb": c._postgres, "vacuumdb": c._postgres,
        "reindexdb": c._postgres, "clusterdb": c._postgres, "pg_amcheck": c._postgres,
        "sed": c._sed, "gsed": c._sed, "cmd": c._cmd, "cmd.exe": c._cmd,
    }
    for name in SHELLS:
        table[name] = c._shell
    for name in POWERSHELLS:
        table[name] = c._powershell
    for name in _AWKS:
        table[name] = c._awk
    for name in _WRAPPERS:
        table.setdefault(name, c._wrapper)
    for name in _RUNNER_VERBS:
        table.setdefault(name, c._runner)
    return table


_HANDLERS = _handlers()
_PS_HANDLERS = {
    "invoke-expression": Checker._ps_invoke_expression, "start-process": Checker._ps_start_process,
    "invoke-command": Checker._ps_invoke_command, "remove-item": Checker._ps_remove_item,
    "set-alias": Checker._ps_alias, "new-alias": Checker._ps_alias, "set-location": Checker._cd,
    "push-location": Checker._cd, "pop-location": Checker._cd, ".": Checker._ps_dot, "invoke-item": Checker._ps_invoke_item,
    **{name: Checker._ps_writes for name in _PS_WRITES},
}


# -- helpers ------------------------------------------------------------------------------------------

def _base(name: str, powershell: bool) -> str:
    base = name.rsplit("/", 1)[-1]
    if powershell:
        base = base.rsplit("\\", 1)[-1].lower()
        if base.endswith(".exe"):
            base = base[:-4]
    return base


def _resolve(word: str, cwd: str | None) -> str | None:
    """A literal path as an absolute one, its folder resolved through symbolic
    links; None when it cannot be known (relative to an unknown folder)."""
    if not word:
        return None
    cut = min((word.find(c) for c in "*?[" if c in word), default=-1)
    if cut != -1:  # a glob: the folder part before it is what it reaches
        word = word[:cut]
        word = word[: word.rfind("/") + 1] if "/" in word else ""
        if not word:
            return os.path.realpath(cwd) if cwd else None
    if not os.path.isabs(word):
        if cwd is None:
            return None
        word = os.path.join(cwd, word)
    word = os.path.normpath(word)
    head, tail = os.path.split(word)
    return os.path.join(os.path.realpath(head), tail) if tail else os.path.realpath(head)


def _shebang(line: str) -> str | None:
    if not line.startswith("#!"):
        return None
    parts = line[2:].strip().split()
    if not parts:
        return None
    prog = parts[0].rsplit("/", 1)[-1]
    if prog == "env":
        rest = [p for p in parts[1:] if not p.startswith("-")]
        prog = rest[0].rsplit("/", 1)[-1] if rest else "env"
    return prog


def _language(interpreter: str) -> str | None:
    if _PYTHON.fullmatch(interpreter):
        return "python"
    spec = _INTERPRETERS.get(interpreter)
    return spec[0] if spec else None


def _sed_runs(script: str) -> bool:
    """Does a sed script use the ``e`` command, or ``s///e``, or write files (``w``)?"""
    i, n = 0, len(script)
    while i < n:
        while i < n and script[i] in " \t\n;{}!":
            i += 1
        # an address: numbers, $, /regex/, \cregexc, ranges and steps
        while i < n and (script[i].isdigit() or script[i] in "$,~+"):
            i += 1
        if i < n and script[i] in "/\\":
            delim = script[i] if script[i] == "/" else (script[i + 1] if i + 1 < n else "/")
            i += 1 if script[i] == "/" else 2
            while i < n and script[i] != delim:
                i += 2 if script[i] == "\\" else 1
            i += 1
            continue
        if i >= n:
            break
        cmd = script[i]
        if cmd in "eWw":
            return True
        if cmd in "sy" and i + 1 < n:
            delim = script[i + 1]
            i += 2
            for _ in range(2 if cmd == "s" else 2):
                while i < n and script[i] != delim:
                    i += 2 if script[i] == "\\" else 1
                i += 1
            flags = ""
            while i < n and script[i] not in ";\n}":
                flags += script[i]
                i += 1
            if cmd == "s" and ("e" in flags or "w" in flags):
                return True
            continue
        if cmd in "aicrRbtTvlLqQ:#":
            end = script.find("\n", i)
            i = n if end == -1 else end + 1
            continue
        i += 1
    return False


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
            if a in ("-h", "--help", "--version", "--v", "--ve", "--ver", "--vers", "--versi", "--versio") and verb is None:
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


def git_alias(sub: str, cwd: str | None, checker: Checker):
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
        text = checker.read_file(path, None)
        if text is None:
            return _UNKNOWN
        section = None
        for raw in text.splitlines():
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


def patch_needs(patch: str, cwd: str | None, checker: Checker) -> list[Need]:
    """Codex ``apply_patch``: the files its ``*** Add/Update/Delete File:`` and
    ``*** Move to:`` headers name."""
    found: list[Need] = []
    for line in patch.splitlines():
        for prefix, scope in (("*** Add File: ", "fs:write-outside"), ("*** Update File: ", "fs:write-outside"), ("*** Move to: ", "fs:write-outside"), ("*** Delete File: ", "fs:delete-outside")):
            if line.startswith(prefix):
                path = line[len(prefix) :].strip()
                if not path:
                    continue
                what = f"apply_patch {line[4:].strip()}"
                why = checker.ground.path(path, cwd) or checker.ground.resolved(path, cwd)
                if why:
                    found.append(Need(None, clip(what), why))
                elif not checker.inside(path, cwd, strict=scope == "fs:delete-outside"):
                    found.append(Need(scope, clip(what), ""))
    return found
