"""The words the shell reader's modules share: what a check answers (``Need``,
the two scopes of what cannot be read), its bounds, how a command gets its
input (``Ctx``), the programs LoopX reads and which module reads each (names
only: ``checker`` imports the module when a command needs it).

The bottom of the package: it imports nothing of LoopX's, so every reader
(``guarded``, ``interpreters``, ``wrappers``, ``pwsh_commands``) takes its
terms from here and the checker on top calls them — no reader imports the
checker.
"""

from __future__ import annotations

import enum
import re
from collections import namedtuple

TYPE_CHECKING = False  # (annotations only: the hook imports this cold; checkers read this as typing's)
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Final, Protocol

    from ..rules.workspace_bounds import Bounds
    from .posix_words import Word

    class CommandRule(Protocol):
        """A board's ``command`` rule (``adapters.policy.Rule``): text it matches needs ``scope``."""

        @property
        def scope(self) -> str: ...
        @property
        def command(self) -> re.Pattern[str] | None: ...

    class GroundReader(Protocol):
        """What is LoopX's own on this machine (``adapters.ground.Ground``, which the shell reader does not import)."""

        TERMINAL: str
        board_url: str | None

        def may_name(self, text: str) -> bool: ...
        def cwd_inside(self, cwd: str) -> bool: ...
        def text(self, text: str) -> str | None: ...
        def path(self, path: str, cwd: str | None) -> str | None: ...
        def holds(self, path: str, cwd: str | None) -> str | None: ...
        def under(self, folder: str, cwd: str | None) -> list[tuple[str, bool]]: ...
        def searches(self, folder: str, cwd: str | None) -> str | None: ...
        def installed(self, path: str, cwd: str | None) -> str | None: ...
        def installed_text(self, text: str, cwd: str | None) -> str | None: ...
        def resolved(self, path: str, cwd: str | None) -> str | None: ...

    class Reader(Protocol):
        """The checker as the readers call it back (``checker.Checker``: no reader imports it)."""

        ground: GroundReader
        agent: str | None
        aliases: dict[str, str]
        branches: int
        workspace: Bounds | None

        def need(self, scope: str | None, what: str, why: str = "") -> None: ...
        def opaque(self, what: str, why: str) -> None: ...
        def forbid(self, what: str, why: str) -> None: ...
        def workspace_write(self, what: str, path: str | None, cwd: str | None) -> bool: ...
        def shell(self, text: str, cwd: str | None, *, powershell: bool = False, depth: int = 0) -> str | None: ...
        def vouch(self, what: str, script: str, cwd: str | None) -> bool: ...
        def run_text(
            self, base: str, words: list[Word], cwd: str | None, depth: int, *, powershell: bool = False
        ) -> None: ...
        def argv(self, words: list[Word], ctx: Ctx, cwd: str | None, depth: int) -> str | None: ...
        def plain(self, base: str, head: Word, args: list[Word], cwd: str | None) -> None: ...
        def deletes(self, text: str, targets: list[Word], cwd: str | None) -> None: ...
        def _follow(self, text: str, cwd: str | None) -> str | None: ...
        def redirect(self, op: str, word: Word, cwd: str | None) -> None: ...
        def assignment(self, word: Word, cwd: str | None) -> None: ...
        def inside(self, path: str | None, cwd: str | None, *, strict: bool) -> bool: ...
        def read_file(self, path: str, cwd: str | None) -> str | None: ...

    # A command's reader: (checker, base name, command word, its arguments, its
    # input, the working folder, the depth) -> the working folder after it
    # (None: unknown), or SAME.
    Handler = Callable[[Reader, str, Word, list[Word], "Ctx", "str | None", int], "str | None | Same"]

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
PYTHON = r"(?:python|pypy)(?:\d+(?:\.\d+)?)?[mtw]?"
ASSIGN = r"[A-Za-z_][A-Za-z0-9_]*(?:\[[^\]]*\])?\+?="

# Which module reads which command (imported on first use: the safe path —
# `ls`, `pytest` — pays for none of them). Names, not behaviour: the modules
# hold the rules.
SHELLS = frozenset(("sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "yash", "posh", "fish", "csh", "tcsh", "rbash"))
POWERSHELLS = frozenset(("pwsh", "powershell", "pwsh-preview"))
INTERPRETERS = frozenset(
    (
        "node",
        "nodejs",
        "perl",
        "ruby",
        "php",
        "lua",
        "luajit",
        "osascript",
        "Rscript",
        "julia",
        "elixir",
        "tclsh",
        "guile",
        "racket",
        "sbcl",
        "groovy",
        "deno",
        "bun",
    )
)
EDITORS = frozenset(
    (
        "vi",
        "vim",
        "nvim",
        "view",
        "vimdiff",
        "emacs",
        "nano",
        "pico",
        "ed",
        "ex",
        "less",
        "more",
        "most",
        "man",
        "ftp",
        "sftp",
        "telnet",
        "irb",
        "ipython",
        "bpython",
        "ptpython",
        "jshell",
        "ghci",
        "R",
        "gdb",
        "lldb",
        "pdb",
        "mysql",
        "mariadb",
        "redis-cli",
        "mongo",
        "mongosh",
    )
)
WRAPPERS = frozenset(
    (
        "sudo",
        "doas",
        "env",
        "nice",
        "ionice",
        "timeout",
        "stdbuf",
        "nohup",
        "time",
        "command",
        "builtin",
        "exec",
        "setsid",
        "chronic",
        "unbuffer",
        "caffeinate",
        "eatmydata",
        "fakeroot",
        "proxychains",
        "proxychains4",
        "torsocks",
        "flock",
        "chroot",
        "taskset",
        "chrt",
        "nsenter",
        "unshare",
        "xvfb-run",
        "dbus-launch",
        "catchsegv",
        "strace",
        "ltrace",
        "valgrind",
        "firejail",
        "systemd-run",
        "npx",
        "pnpx",
        "bunx",
        "uvx",
        "dotenv",
        "sg",
        "doppler",
    )
)
RUNNERS = frozenset(
    (
        "poetry",
        "uv",
        "pdm",
        "hatch",
        "pipenv",
        "conda",
        "mamba",
        "micromamba",
        "bundle",
        "rbenv",
        "pyenv",
        "mise",
        "rtx",
        "asdf",
        "npm",
        "pnpm",
        "yarn",
        "pipx",
        "direnv",
        "cargo",
        "rye",
        "pixi",
    )
)
ROUTES = {
    **{n: "interpreters:shell" for n in SHELLS},
    **{n: "interpreters:powershell" for n in POWERSHELLS},
    **{n: "interpreters:interpreter" for n in INTERPRETERS},
    **{n: "interpreters:editor" for n in EDITORS},
    **{n: "interpreters:awk" for n in ("awk", "gawk", "mawk", "nawk")},
    "sed": "interpreters:sed",
    "gsed": "interpreters:sed",
    "cmd": "interpreters:cmd_exe",
    "cmd.exe": "interpreters:cmd_exe",
    "eval": "interpreters:eval_words",
    "source": "interpreters:source",
    ".": "interpreters:source",
    "alias": "interpreters:alias",
    "trap": "interpreters:trap",
    **{n: "interpreters:export" for n in ("export", "declare", "typeset", "local", "readonly")},
    **{n: "wrappers:wrapper" for n in WRAPPERS},
    **{n: "wrappers:runner" for n in RUNNERS},
    "sudo": "wrappers:sudo",
    "doas": "wrappers:sudo",
    "command": "wrappers:command_builtin",
    "builtin": "wrappers:command_builtin",
    "xargs": "wrappers:xargs",
    "parallel": "wrappers:parallel",
    "find": "wrappers:find",
    "watch": "wrappers:watch",
    "ssh": "wrappers:ssh",
    "su": "wrappers:su",
    "runuser": "wrappers:su",
    "script": "wrappers:script_cmd",
    "busybox": "wrappers:busybox",
    "loopx": "guarded:loopx",
    **{
        n: "guarded:terminal"
        for n in ("tmux", "screen", "xdotool", "ydotool", "wtype", "xte", "write", "wall", "reptyr", "ttyecho")
    },
    "apply_patch": "guarded:apply_patch",
    "applypatch": "guarded:apply_patch",
    **{n: "guarded:sqlite" for n in ("sqlite3", "sqlite", "litecli")},
    **{
        n: "guarded:postgres"
        for n in (
            "psql",
            "pgcli",
            "pg_dump",
            "pg_dumpall",
            "pg_restore",
            "dropdb",
            "createdb",
            "vacuumdb",
            "reindexdb",
            "clusterdb",
            "pg_amcheck",
        )
    },
    "cd": "checker:cd",
    "pushd": "checker:cd",
    "popd": "checker:cd",
    "shopt": "checker:glob_options",
    "setopt": "checker:glob_options",
    "unsetopt": "checker:glob_options",
}
# PowerShell's own commands (lower case), and the aliases it ships for them.
PS_ROUTES = {
    "invoke-expression": "pwsh_commands:invoke_expression",
    "start-process": "pwsh_commands:start_process",
    "invoke-command": "pwsh_commands:invoke_command",
    "remove-item": "pwsh_commands:remove_item",
    "set-alias": "pwsh_commands:set_alias",
    "new-alias": "pwsh_commands:set_alias",
    ".": "pwsh_commands:dot_source",
    "invoke-item": "pwsh_commands:invoke_item",
    "set-location": "checker:cd",
    "push-location": "checker:cd",
    "pop-location": "checker:cd",
    **{
        n: "pwsh_commands:writes"
        for n in (
            "set-content",
            "add-content",
            "out-file",
            "new-item",
            "copy-item",
            "move-item",
            "rename-item",
            "clear-content",
            "tee-object",
            "export-csv",
            "export-clixml",
            "set-itemproperty",
            "new-itemproperty",
        )
    },
}
PS_ALIASES = {
    "iex": "invoke-expression",
    "saps": "start-process",
    "start": "start-process",
    "icm": "invoke-command",
    "ii": "invoke-item",
    "rm": "remove-item",
    "ri": "remove-item",
    "del": "remove-item",
    "erase": "remove-item",
    "rd": "remove-item",
    "rmdir": "remove-item",
    "sal": "set-alias",
    "nal": "new-alias",
    "sl": "set-location",
    "cd": "set-location",
    "chdir": "set-location",
    "pushd": "push-location",
    "popd": "pop-location",
    "sc": "set-content",
    "ac": "add-content",
    "ni": "new-item",
    "cp": "copy-item",
    "copy": "copy-item",
    "cpi": "copy-item",
    "mv": "move-item",
    "move": "move-item",
    "mi": "move-item",
    "rni": "rename-item",
    "ren": "rename-item",
}


class Same(enum.Enum):
    """A handler's answer ``SAME``: the working folder did not change (an enum:
    checkers tell it from a folder; ``re`` has imported enum already)."""

    SAME = "same"


SAME: Final = Same.SAME


class Ctx(namedtuple("Ctx", "stdin piped from_file powershell")):
    """How a command gets its input: here-document/here-string bodies (text,
    literal), a pipe, a file redirect; and the language it was written in."""


NO_INPUT = Ctx((), False, False, False)


def clip(text: str, n: int = 200) -> str:
    text = text.replace("\n", " ⏎ ")
    return text if len(text) <= n else text[: n - 1] + "…"


def route(base: str, powershell: bool) -> str | None:
    """Which reader reads command ``base`` (``"module:function"``), or None for a plain command."""
    found = (PS_ROUTES.get(base) if powershell else None) or ROUTES.get(base)
    if found is None and base.startswith(("python", "pypy")) and matches(PYTHON, base):
        found = "interpreters:python"
    return found


def base_name(name: str, powershell: bool) -> str:
    """The program a command word names: its last path part (PowerShell: without case or ``.exe``)."""
    base = name.rsplit("/", 1)[-1]
    if powershell:
        base = base.rsplit("\\", 1)[-1].lower()
        if base.endswith(".exe"):
            base = base[:-4]
    return base


def matches(pattern: str, text: str) -> bool:
    return re.fullmatch(pattern, text) is not None
