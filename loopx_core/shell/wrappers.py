"""Commands that run other commands: the hooks' readers for wrappers
(``sudo``, ``env``, ``timeout``, ``nice``, ``nohup``, ``npx`` …), package
runners (``poetry run``, ``uv run``, ``npm exec`` …), ``xargs``,
``parallel``, ``find -exec``, ``watch``, ``ssh``, ``su -c``, ``script -c``,
``busybox``. The wrapped command is checked as if it ran on its own; an
option LoopX does not know might take a value, so both readings are checked.
Part of the shell reader: ``checker`` calls these, imported only when needed.
"""

from __future__ import annotations

import os

from . import builtin_rules, interpreters
from .posix_words import Word
from .vocabulary import (
    ASSIGN,
    INTERACTIVE,
    MAX_BRANCHES,
    NO_INPUT,
    SAME,
    base_name,
    clip,
    matches,
    route,
)

TYPE_CHECKING = False  # (annotations only: typing is not imported on the cold path; checkers read this as typing's)
if TYPE_CHECKING:
    from collections.abc import Container

    from .vocabulary import Ctx, Reader, Same

# wrapper: (options that take a value, how many operands come before the command,
#           set when running it bare starts a shell (None: it does not), options whose value is shell code)
_WRAPPERS = {
    "sudo": (
        {
            "-u",
            "-g",
            "-h",
            "-p",
            "-C",
            "-D",
            "-r",
            "-t",
            "-U",
            "-T",
            "-R",
            "--user",
            "--group",
            "--host",
            "--prompt",
            "--close-from",
            "--chdir",
            "--role",
            "--type",
            "--other-user",
            "--command-timeout",
            "--chroot",
        },
        0,
        True,
        set(),
    ),
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
    "unshare": (
        {
            "--propagation",
            "--setgroups",
            "--map-user",
            "--map-group",
            "-S",
            "-G",
            "--setuid",
            "--setgid",
            "-R",
            "--root",
            "-w",
            "--wd",
        },
        0,
        True,
        set(),
    ),
    "xvfb-run": (
        {"-n", "-s", "-e", "-f", "-p", "--server-num", "--server-args", "--error-file", "--auth-file"},
        0,
        None,
        set(),
    ),
    "dbus-launch": (set(), 0, None, set()),
    "catchsegv": (set(), 0, None, set()),
    "strace": ({"-e", "-o", "-p", "-s", "-u", "-E", "-I", "-a", "-b", "-O", "-P", "-S", "-X"}, 0, None, set()),
    "ltrace": ({"-e", "-o", "-p", "-s", "-u", "-n", "-a", "-A", "-D", "-F", "-l", "-x"}, 0, None, set()),
    "valgrind": (set(), 0, None, set()),
    "firejail": (set(), 0, True, set()),
    "systemd-run": (
        {
            "-p",
            "--property",
            "-u",
            "--unit",
            "-E",
            "--setenv",
            "--description",
            "--slice",
            "--uid",
            "--gid",
            "--nice",
            "-M",
            "--machine",
            "-H",
            "--host",
            "--working-directory",
        },
        0,
        None,
        set(),
    ),
    "npx": ({"-p", "--package", "--prefix"}, 0, None, {"-c", "--call"}),
    "pnpx": ({"-p", "--package"}, 0, None, {"-c"}),
    "bunx": ({"-p", "--package"}, 0, None, set()),
    "uvx": (
        {"--from", "--with", "--python", "-p", "--index", "--index-url", "--extra-index-url", "--with-requirements"},
        0,
        None,
        set(),
    ),
    "dotenv": ({"-e", "-f", "-c", "-v"}, 0, None, set()),
    "sg": (set(), 1, True, {"-c"}),
    "doppler": (set(), 0, None, {"--command"}),
}
_KNOWN_FLAGS = {
    "sudo": {
        "-A",
        "-b",
        "-E",
        "-H",
        "-K",
        "-k",
        "-n",
        "-P",
        "-S",
        "-B",
        "-N",
        "--askpass",
        "--background",
        "--preserve-env",
        "--set-home",
        "--non-interactive",
        "--preserve-groups",
        "--stdin",
        "--bell",
        "--reset-timestamp",
        "--remove-timestamp",
        "--no-update",
    },
    "env": {
        "-i",
        "-0",
        "--ignore-environment",
        "--null",
        "-v",
        "--debug",
        "--default-signal",
        "--ignore-signal",
        "--block-signal",
        "--list-signal-handling",
    },
    "nohup": set(),
    "time": {"-p", "-v", "-a", "--portability", "--verbose", "--append", "-q", "--quiet"},
    "command": {"-p"},
    "exec": {"-c", "-l"},
    "setsid": {"-c", "-f", "-w", "--ctty", "--fork", "--wait"},
    "timeout": {"--foreground", "--preserve-status", "-v", "--verbose"},
    "nice": set(),
    "stdbuf": set(),
    "flock": {
        "-s",
        "-x",
        "-e",
        "-n",
        "-u",
        "-o",
        "-F",
        "--shared",
        "--exclusive",
        "--nonblock",
        "--unlock",
        "--close",
        "--no-fork",
        "--verbose",
    },
    "npx": {"-y", "--yes", "--no", "-q", "--quiet", "--no-install", "--ignore-existing"},
    "uvx": {"--isolated", "--no-cache", "-q", "--quiet", "-v", "--verbose", "--offline", "--refresh"},
    "strace": {
        "-f",
        "-ff",
        "-c",
        "-C",
        "-d",
        "-D",
        "-F",
        "-h",
        "-i",
        "-k",
        "-q",
        "-qq",
        "-r",
        "-t",
        "-tt",
        "-ttt",
        "-T",
        "-v",
        "-V",
        "-x",
        "-xx",
        "-y",
        "-yy",
        "-z",
        "-Z",
        "-w",
    },
}
_RUNNER_VERBS = {
    "poetry": ("run",),
    "uv": ("run",),
    "pdm": ("run",),
    "hatch": ("run",),
    "pipenv": ("run",),
    "conda": ("run",),
    "mamba": ("run",),
    "micromamba": ("run",),
    "bundle": ("exec",),
    "rbenv": ("exec",),
    "pyenv": ("exec",),
    "mise": ("exec", "x"),
    "rtx": ("exec", "x"),
    "asdf": ("exec",),
    "npm": ("exec", "x"),
    "pnpm": ("exec", "dlx"),
    "yarn": ("exec", "dlx"),
    "pipx": ("run",),
    "direnv": ("exec",),
    "cargo": (),
    "rye": ("run",),
    "pixi": ("run", "exec"),
}
_RUNNER_ARGS = {
    "uv": frozenset(
        {
            "--with",
            "--python",
            "-p",
            "--from",
            "--package",
            "--project",
            "--directory",
            "--env-file",
            "--index",
            "--group",
            "--extra",
        }
    ),
    "conda": frozenset({"-n", "--name", "-p", "--prefix", "--cwd"}),
    "mamba": frozenset({"-n", "--name", "-p", "--prefix"}),
    "micromamba": frozenset({"-n", "--name", "-p", "--prefix"}),
    "pnpm": frozenset({"--filter", "-F", "-C", "--dir"}),
    "npm": frozenset({"--package", "-p", "-w", "--workspace", "--prefix"}),
    "pipx": frozenset({"--spec", "--python", "--index-url"}),
    "hatch": frozenset({"-e", "--env"}),
    "pixi": frozenset({"-e", "--environment", "--manifest-path"}),
}


def first_operand(args: list[Word], with_arg: Container[str]) -> int:
    """Where the operands start: after the options (those in ``with_arg`` take
    a value) and an optional ``--``; ``len(args)`` when there are none."""
    i = 0
    while i < len(args):
        a = args[i].text
        if a == "--":
            return i + 1
        if a in with_arg:
            i += 2
        elif a.startswith("-") and a != "-":
            i += 1
        else:
            return i
    return len(args)


_XARGS_WITH_ARG = frozenset(
    {
        "-I",
        "-i",
        "-n",
        "-P",
        "-L",
        "-l",
        "-s",
        "-d",
        "-E",
        "-e",
        "-a",
        "--max-args",
        "--max-procs",
        "--delimiter",
        "--arg-file",
        "--replace",
        "--max-lines",
        "--eof",
        "--max-chars",
        "--process-slot-var",
    }
)
_SSH_WITH_ARG = frozenset(
    {
        "-b",
        "-c",
        "-D",
        "-E",
        "-e",
        "-F",
        "-I",
        "-i",
        "-J",
        "-L",
        "-l",
        "-m",
        "-O",
        "-o",
        "-p",
        "-Q",
        "-R",
        "-S",
        "-W",
        "-w",
        "-B",
        "-P",
    }
)


def xargs(
    checker: Reader, base: str, head: Word, args: list[Word], ctx: Ctx, cwd: str | None, depth: int
) -> str | None | Same:
    start = first_operand(args, _XARGS_WITH_ARG)
    replace = None
    for i, w in enumerate(args[:start]):
        if w.text in ("-I", "--replace") and i + 1 < len(args):
            replace = args[i + 1].text
        elif w.text.startswith("-I") and len(w.text) > 2:
            replace = w.text[2:]
        elif w.text.startswith("--replace="):
            replace = w.text.split("=", 1)[1]
    inner = list(args[start:]) or [Word("echo")]
    if replace:
        inner = [Word(w.text, True) if replace in w.text else w for w in inner]
    return fed(checker, base, inner, cwd, depth)


def fed(checker: Reader, base: str, inner: list[Word], cwd: str | None, depth: int) -> Same:
    """``inner`` runs with arguments LoopX cannot see (from stdin)."""
    name = inner[0]
    inner_base = base_name(name.text, False)
    reads_code = route(inner_base, False) is not None and inner_base not in ("sed", "gsed", "cd")
    if name.dynamic or reads_code or (inner_base in builtin_rules.RULED and inner_base != "rm"):
        checker.opaque(
            f"{base} {' '.join(w.text for w in inner)}",
            f"`{base}` gives `{clip(name.text, 40)}` arguments LoopX cannot see",
        )
        return SAME
    checker.argv(inner + [Word("", True)], NO_INPUT, cwd, depth + 1)
    return SAME


def parallel(
    checker: Reader, base: str, head: Word, args: list[Word], ctx: Ctx, cwd: str | None, depth: int
) -> str | None | Same:
    checker.opaque(
        "parallel " + " ".join(w.text for w in args), "`parallel` builds the commands it runs from its input"
    )
    return SAME


def find(
    checker: Reader, base: str, head: Word, args: list[Word], ctx: Ctx, cwd: str | None, depth: int
) -> str | None | Same:
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
                for found in _found(checker, starts, args, cwd):
                    checker.argv(
                        [found if w.text == "{}" else (Word(w.text, True) if "{}" in w.text else w) for w in inner],
                        NO_INPUT,
                        cwd,
                        depth + 1,
                    )
            i = j + 1
            continue
        if a == "-delete":
            checker.deletes(text, starts, cwd)
        elif a in ("-fprint", "-fprint0", "-fprintf", "-fls") and i + 1 < len(args):
            checker.redirect(">", args[i + 1], cwd)
        i += 1
    return SAME


_FIND_NAMES = frozenset(("-name", "-iname"))
_FIND_PATHS = frozenset(("-path", "-ipath", "-wholename", "-iwholename", "-regex", "-iregex", "-lname", "-ilname"))


def _found(checker: Reader, starts: list[Word], args: list[Word], cwd: str | None) -> list[Word]:
    """What ``{}`` of ``find STARTS … -exec CMD {}`` stands for, as words to check
    the command with: a file under each start, and each piece of LoopX's ground
    under it that find's name tests could match (``find . -name board.db -exec
    sqlite3 {} …`` hands sqlite3 the board). A start known only at run time: a
    word known only then."""
    from fnmatch import fnmatchcase

    names = [(args[k + 1].text, args[k].text == "-iname") for k in range(len(args) - 1) if args[k].text in _FIND_NAMES]
    by_path = any(a.text in _FIND_PATHS for a in args) or any(w.dynamic for w in args)
    out = []
    for start in starts:
        if start.dynamic:
            out.append(Word(start.text, True))
            continue
        out.append(Word(os.path.join(start.text, "x")))
        for place, folder in checker.ground.under(start.text, cwd):
            if not names or by_path:
                out.append(Word(os.path.join(place, "x") if folder else place))
                continue
            inside = _files_in(place) if folder else []
            for pattern, nocase in names:
                fold = (lambda t: t.lower()) if nocase else (lambda t: t)
                out += [Word(p) for p in (place, *inside) if fnmatchcase(fold(os.path.basename(p)), fold(pattern))]
    return list({w.text: w for w in out}.values())


def _files_in(folder: str, limit: int = 512) -> list[str]:
    """The paths below ``folder`` (a piece of the ground: a few files), at most ``limit``."""
    out: list[str] = []
    for here, dirs, files in os.walk(folder):
        out += [os.path.join(here, n) for n in dirs + files]
        if len(out) >= limit:
            break
    return out[:limit]


def wrapper(
    checker: Reader, base: str, head: Word, args: list[Word], ctx: Ctx, cwd: str | None, depth: int
) -> str | None | Same:
    spec = _WRAPPERS[base]
    with_arg, positional, interactive, code_opts = spec
    readings = unwrap(checker, args, with_arg, positional, code_opts, base, cwd, depth)
    if readings is None:
        return SAME
    if not readings:
        if interactive is not None:
            checker.need(INTERACTIVE, base, f"`{base}` with no command starts a shell that waits for input")
        return SAME
    for start in readings:
        checker.argv(list(args[start:]), ctx, cwd, depth + 1)
    return SAME


def unwrap(
    checker: Reader,
    args: list[Word],
    with_arg: Container[str],
    positional: int,
    code_opts: Container[str],
    base: str,
    cwd: str | None,
    depth: int,
) -> list[int] | None:
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
        if base == "env" and matches(ASSIGN + ".*", a):
            checker.assignment(w, cwd)
            i += 1
            continue
        if a.startswith("-") and len(a) > 1 and not w.dynamic:
            key = a.split("=", 1)[0]
            if key in code_opts:
                code = [Word(a.split("=", 1)[1])] if "=" in a else list(args[i + 1 : i + 2])
                checker.run_text(base, code, cwd, depth)
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
        if u == i and u + 1 < len(args) and checker.branches < MAX_BRANCHES:
            checker.branches += 1
            readings.append(u + 1)
    if checker.branches >= MAX_BRANCHES and uncertain:
        checker.opaque(base, f"`{base}` has options LoopX does not know, so it cannot tell which command it runs")
    return readings


def sudo(
    checker: Reader, base: str, head: Word, args: list[Word], ctx: Ctx, cwd: str | None, depth: int
) -> str | None | Same:
    if any(w.text in ("-s", "-i", "--shell", "--login") for w in args):
        rest = [w for w in args if not w.text.startswith("-")]
        if not rest or all(w.text in ("root",) for w in rest):
            checker.need(INTERACTIVE, base, f"`{base} -s`/`-i` starts a shell that waits for input")
            return SAME
    return wrapper(checker, base, head, args, ctx, cwd, depth)


def command_builtin(
    checker: Reader, base: str, head: Word, args: list[Word], ctx: Ctx, cwd: str | None, depth: int
) -> str | None | Same:
    if any(w.text in ("-v", "-V") for w in args):
        return SAME  # command -v NAME: only says where NAME is
    return wrapper(checker, base, head, args, ctx, cwd, depth)


def watch(
    checker: Reader, base: str, head: Word, args: list[Word], ctx: Ctx, cwd: str | None, depth: int
) -> str | None | Same:
    i = 0
    exec_mode = False
    while i < len(args) and args[i].text.startswith("-"):
        a = args[i].text
        exec_mode = exec_mode or a in ("-x", "--exec")
        i += 2 if a in ("-n", "--interval", "-q", "--equexit") else 1
    rest = args[i:]
    if not rest:
        return SAME
    if exec_mode:
        return checker.argv(list(rest), ctx, cwd, depth + 1)
    checker.run_text(base, rest, cwd, depth)
    return SAME


def ssh(
    checker: Reader, base: str, head: Word, args: list[Word], ctx: Ctx, cwd: str | None, depth: int
) -> str | None | Same:
    host = first_operand(args, _SSH_WITH_ARG)
    if host >= len(args):
        return SAME
    rest = args[host + 1 :]
    if not rest:
        interpreters.stdin_program(
            checker, base, ctx, cwd, depth, lambda text: checker.shell(text, None, depth=depth + 1)
        )
    else:
        checker.run_text(base, rest, None, depth)  # it runs in the remote user's home
    return SAME


def su(
    checker: Reader, base: str, head: Word, args: list[Word], ctx: Ctx, cwd: str | None, depth: int
) -> str | None | Same:
    for i, w in enumerate(args):
        if w.text in ("-c", "--command", "--session-command") and i + 1 < len(args):
            checker.run_text(base, [args[i + 1]], cwd, depth)
            return SAME
    if base == "runuser":
        for i, w in enumerate(args):
            if w.text == "--" and i + 1 < len(args):
                return checker.argv(list(args[i + 1 :]), ctx, cwd, depth + 1)
    checker.need(INTERACTIVE, base, f"`{base}` without -c starts a shell that waits for input")
    return SAME


def script_cmd(
    checker: Reader, base: str, head: Word, args: list[Word], ctx: Ctx, cwd: str | None, depth: int
) -> str | None | Same:
    for i, w in enumerate(args):
        if w.text in ("-c", "--command") and i + 1 < len(args):
            checker.run_text(base, [args[i + 1]], cwd, depth)
            return SAME
    checker.need(INTERACTIVE, base, "`script` without -c starts a shell that waits for input")
    return SAME


def busybox(
    checker: Reader, base: str, head: Word, args: list[Word], ctx: Ctx, cwd: str | None, depth: int
) -> str | None | Same:
    return checker.argv(list(args), ctx, cwd, depth + 1) if args else SAME


def runner(
    checker: Reader, base: str, head: Word, args: list[Word], ctx: Ctx, cwd: str | None, depth: int
) -> str | None | Same:
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
                return checker.argv(rest[j:], ctx, cwd, depth + 1)
            return SAME
        break
    checker.plain(base, head, args, cwd)
    return SAME
