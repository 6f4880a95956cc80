"""How shells, interpreters and editors run code: the hooks' readers for
``sh -c``, scripts, here-documents into a shell, ``python -c``, ``node -e``,
``perl -e`` … , ``awk`` programs, ``sed`` scripts, ``eval``, ``source``,
``alias``, ``trap``, and programs left waiting for input. Part of the command
reader (``checker`` calls these); imported only when a command needs it.

Interpreter code is not parsed: it is searched for what starts programs or
builds code at run time (``_CODE_RUNS``); finding any of it makes the command
``shell:opaque``. Code that only computes, reads files or prints is left alone.
"""

from __future__ import annotations

import os
import re

from . import guarded
from .posix_words import Word
from .vocabulary import (
    ASSIGN,
    INTERACTIVE,
    MAX_FILE,
    POWERSHELLS,
    SAME,
    SHELLS,
    clip,
    matches,
)

TYPE_CHECKING = False  # (annotations only: typing is not imported on the cold path; checkers read this as typing's)
if TYPE_CHECKING:
    from collections.abc import Callable

    from .vocabulary import Ctx, Reader, Same

_PYTHON = re.compile(r"(?:python|pypy)(?:\d+(?:\.\d+)?)?[mtw]?")

# Interpreter code that starts programs, or builds code or names at run time.
_CODE_RUNS = {
    "python": re.compile(
        r"subprocess|\bos\s*\.\s*(?:system|popen|exec\w*|spawn\w*|posix_spawn\w*|fork\w*|startfile)|\b(?:pty|commands|ctypes|cffi|importlib|multiprocessing|asyncio\.create_subprocess\w*)\b|__import__|\b(?:exec|eval|compile|getattr|globals|vars|breakpoint)\s*\(|__builtins__|\bbuiltins\b|sys\s*\.\s*modules|\bfcntl\b|\bioctl\b|TIOCSTI|from\s+os\s+import|\bcode\s*\.\s*interact"
    ),
    "node": re.compile(
        r"child_process|\b(?:exec|execSync|execFile\w*|spawn\w*|fork|eval)\s*\(|\bFunction\s*\(|\bvm\b|worker_threads|process\s*\.\s*(?:binding|dlopen)|require\s*\(\s*(?!['\"][^'\"]*['\"]\s*\))|import\s*\(\s*(?!['\"][^'\"]*['\"]\s*\))|Deno\s*\.\s*(?:run|Command)|Bun\s*\.\s*(?:spawn\w*|\$)|\$`"
    ),
    "perl": re.compile(r"\b(?:system|exec|qx|eval|fork|syscall|do|require)\b|`|\bopen\b[^;]*\||\|\s*['\"]|-\|"),
    "ruby": re.compile(
        r"\b(?:system|exec|spawn|fork|eval|instance_eval|class_eval|send|public_send|syscall|load|require|Open3|PTY|Kernel|IO\s*\.\s*popen|Process\s*\.\s*spawn)\b|`|%x"
    ),
    "php": re.compile(
        r"\b(?:system|exec|shell_exec|passthru|proc_open|popen|pcntl_exec|eval|assert|create_function|call_user_func\w*|include|require\w*)\b|`|\$\w+\s*\("
    ),
    "lua": re.compile(r"\b(?:os\s*\.\s*execute|io\s*\.\s*popen|load|loadstring|loadfile|dofile|require|package)\b"),
}
_INTERPRETERS = {
    # name: (language for _CODE_RUNS (None: any code is opaque), options that take code, options that take an argument)
    "node": (
        "node",
        {"-e", "--eval", "-p", "--print"},
        {
            "-r",
            "--require",
            "--import",
            "--loader",
            "--experimental-loader",
            "-C",
            "--conditions",
            "--inspect-port",
            "--title",
        },
    ),
    "nodejs": (
        "node",
        {"-e", "--eval", "-p", "--print"},
        {"-r", "--require", "--import", "--loader", "--experimental-loader"},
    ),
    "perl": ("perl", {"-e", "-E"}, {"-I", "-M", "-m", "-x", "-C"}),
    "ruby": ("ruby", {"-e"}, {"-r", "-I", "-C", "-E", "-x"}),
    "php": ("php", {"-r", "-B", "-R", "-E"}, {"-c", "-d", "-f", "-z"}),
    "lua": ("lua", {"-e"}, {"-l"}),
    "luajit": ("lua", {"-e"}, {"-l", "-j", "-O"}),
    "osascript": (None, {"-e"}, {"-l", "-s"}),
    "Rscript": (None, {"-e"}, set()),
    "julia": (
        None,
        {"-e", "--eval", "-E", "--print"},
        {"-L", "--load", "-J", "--sysimage", "-p", "--procs", "-t", "--threads", "--project"},
    ),
    "elixir": (None, {"-e", "--eval"}, {"-r", "-pr", "-pa", "-pz"}),
    "tclsh": (None, set(), set()),
    "guile": (None, {"-c"}, {"-l", "-L", "-e", "-x"}),
    "racket": (None, {"-e", "--eval"}, {"-l", "-t", "-r"}),
    "sbcl": (None, {"--eval"}, {"--load"}),
    "groovy": (None, {"-e"}, set()),
    "deno": ("node", set(), set()),
    "bun": ("node", {"-e", "--eval", "-p", "--print"}, set()),
}
_AWK_RUNS = re.compile(r"\bsystem\s*\(|\|(?!\|)|\bgetline\b|@load|\bextension\s*\(")


def run_file(checker: Reader, name: str, args: list[Word], ctx: Ctx, cwd: str | None, depth: int) -> None:
    """A program run by its path (``./deploy.sh``): read what it is."""
    if not checker.vouch(name, name, cwd):
        return
    text = checker.read_file(name, cwd)
    if text is None:
        full = name if os.path.isabs(name) else os.path.join(cwd or "", name)
        if os.path.isfile(full) and os.path.getsize(full) > MAX_FILE:
            checker.opaque(name, f"it runs `{clip(name, 60)}`, a file larger than LoopX reads")
        return
    if "\x00" in text[:4096] or text.startswith("\x7fELF"):
        return  # a compiled program: not followed (see the module docstring)
    first = text.split("\n", 1)[0]
    interpreter = _shebang(first)
    if interpreter is None or interpreter in SHELLS:
        checker.shell(text, cwd, depth=depth + 1)
    elif interpreter in POWERSHELLS:
        checker.shell(text, cwd, depth=depth + 1, powershell=True)
    else:
        code(checker, _language(interpreter), text, name, cwd)


def code(checker: Reader, language: str | None, code: str, what: str, cwd: str | None) -> None:
    """Interpreter code: opaque when it starts programs or builds code at run time."""
    pattern = _CODE_RUNS.get(language) if language else None
    if pattern is None or pattern.search(code):
        checker.opaque(what, "its code can start programs or run code built at run time, which LoopX cannot follow")
    why = checker.ground.text(code) or checker.ground.installed_text(code, cwd)
    if why:
        checker.forbid(what, why)
    if re.search(r"\bloopx_(?:core|tui)\b", code):
        checker.opaque(what, "its code calls LoopX's own modules directly instead of the loopx command")


def shell(
    checker: Reader, base: str, head: Word, args: list[Word], ctx: Ctx, cwd: str | None, depth: int
) -> str | None | Same:
    """sh/bash/zsh…: ``-c CODE``, a script file, or a program from stdin."""
    if _asks_only_about_itself(args):
        return SAME
    program = script = None
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
                program = args[i + 1] if i + 1 < len(args) else Word("")
                i += 2
                break
            stdin_flag = stdin_flag or "s" in a[1:]
            interactive = interactive or "i" in a[1:]
            i += 1
            continue
        break
    if program is not None:
        checker.run_text(base, [program], cwd, depth)
        return SAME
    if not stdin_flag and i < len(args):
        script = args[i]
        script_file(checker, base, script, cwd, depth)
        return SAME
    if interactive and not ctx.stdin:
        checker.need(
            INTERACTIVE,
            base,
            f"`{base} -i` waits for input: text typed into it later (Codex's write_stdin) is never checked",
        )
        return SAME
    stdin_program(checker, base, ctx, cwd, depth, lambda text: checker.shell(text, cwd, depth=depth + 1))
    return SAME


def read_script(checker: Reader, base: str, script: Word, cwd: str | None) -> str | None:
    """The text of the script ``base`` runs; None — after saying what it
    needs — when it is only known at run time or cannot be read. A script that
    does not exist runs nothing."""
    if script.dynamic:
        checker.opaque(f"{base} {script.text}", f"the script `{base}` runs is only known when the shell runs")
        return None
    if not checker.vouch(f"{base} {script.text}", script.text, cwd):
        return None
    text = checker.read_file(script.text, cwd)
    if text is None:
        full = script.text if os.path.isabs(script.text) else os.path.join(cwd or "", script.text)
        if os.path.exists(full):
            checker.opaque(
                f"{base} {script.text}",
                f"LoopX cannot read the script `{clip(script.text, 60)}` (not a regular file, or larger than {MAX_FILE // 1024} KB)",
            )
    return text


def script_file(
    checker: Reader, base: str, script: Word, cwd: str | None, depth: int, powershell: bool = False
) -> None:
    text = read_script(checker, base, script, cwd)
    if text is not None:
        checker.shell(text, cwd, depth=depth + 1, powershell=powershell)


def stdin_program(
    checker: Reader, base: str, ctx: Ctx, cwd: str | None, depth: int, check: Callable[[str], object]
) -> None:  # (``check``: what it answers is not used)
    """A shell or interpreter that reads its program from stdin."""
    if ctx.stdin:
        for body, _literal in ctx.stdin:
            check(body)
        return
    if ctx.piped or ctx.from_file:
        checker.opaque(base, f"`{base}` runs a program read from its input, which LoopX cannot see")
        return
    checker.need(
        INTERACTIVE, base, f"`{base}` waits for input: text typed into it later (Codex's write_stdin) is never checked"
    )


def powershell(
    checker: Reader, base: str, head: Word, args: list[Word], ctx: Ctx, cwd: str | None, depth: int
) -> str | None | Same:
    i = 0
    while i < len(args):
        a = args[i].text.lower()
        if a in ("-c", "/c", "/command") or (len(a) >= 4 and "-command".startswith(a)):
            rest = args[i + 1 :]
            if rest:
                checker.run_text(base, rest, cwd, depth, powershell=True)
            else:
                stdin_program(
                    checker,
                    base,
                    ctx,
                    cwd,
                    depth,
                    lambda text: checker.shell(text, cwd, powershell=True, depth=depth + 1),
                )
            return SAME
        if a in ("-e", "-ec") or (len(a) >= 3 and a.startswith("-en") and "-encodedcommand".startswith(a)):
            if i + 1 < len(args) and not args[i + 1].dynamic:
                import base64

                try:
                    encoded = "".join(args[i + 1].text.split())
                    decoded = base64.b64decode(encoded + "=" * (-len(encoded) % 4), validate=False).decode("utf-16-le")
                except (ValueError, UnicodeDecodeError):
                    checker.opaque(args[i + 1].text, "its -EncodedCommand does not decode")
                    return SAME
                checker.shell(decoded, cwd, powershell=True, depth=depth + 1)
            else:
                checker.opaque(base, "its -EncodedCommand is only known when it runs")
            return SAME
        if a in ("-file", "-f"):
            if i + 1 < len(args):
                script_file(checker, base, args[i + 1], cwd, depth, powershell=True)
            return SAME
        if a in ("-noprofile", "-nop", "-noninteractive", "-noni", "-nologo", "-mta", "-sta", "-nol"):
            i += 1
            continue
        if a in (
            "-executionpolicy",
            "-ep",
            "-ex",
            "-workingdirectory",
            "-wd",
            "-windowstyle",
            "-w",
            "-inputformat",
            "-if",
            "-outputformat",
            "-of",
            "-configurationname",
            "-settingsfile",
        ):
            i += 2
            continue
        if a.startswith("-"):
            i += 1
            continue
        # pwsh SCRIPT.ps1 args, or (powershell.exe) the rest as a command
        if a.endswith(".ps1"):
            script_file(checker, base, args[i], cwd, depth, powershell=True)
        else:
            checker.shell(" ".join(w.text for w in args[i:]), cwd, powershell=True, depth=depth + 1)
        return SAME
    stdin_program(
        checker, base, ctx, cwd, depth, lambda text: checker.shell(text, cwd, powershell=True, depth=depth + 1)
    )
    return SAME


def cmd_exe(
    checker: Reader, base: str, head: Word, args: list[Word], ctx: Ctx, cwd: str | None, depth: int
) -> str | None | Same:
    for i, w in enumerate(args):
        if w.text.lower() in ("/c", "/k", "/r"):
            checker.run_text(base, args[i + 1 :], cwd, depth)
            return SAME
    stdin_program(checker, base, ctx, cwd, depth, lambda text: checker.shell(text, cwd, depth=depth + 1))
    return SAME


def python(
    checker: Reader, base: str, head: Word, args: list[Word], ctx: Ctx, cwd: str | None, depth: int
) -> str | None | Same:
    if _asks_only_about_itself(args):
        return SAME
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
                            checker.opaque(f"{base} -c {value}", "its code is only known when the shell runs")
                        else:
                            code(checker, "python", value, f"{base} -c {value}", cwd)
                        return SAME
                    if flag == "m":
                        module = value.split(".", 1)[0]
                        if module in ("loopx_core", "loopx"):
                            guarded.loopx_verb(
                                checker, [w2.text for w2 in args[i + consumed :]], f"{base} -m {value}", []
                            )
                            return SAME
                        if value_word.dynamic:
                            checker.opaque(f"{base} -m {value}", "the module it runs is only known when the shell runs")
                            return SAME
                        rest = [Word(value, value_word.dynamic)] + list(args[i + consumed :])
                        return checker.argv(rest, ctx, cwd, depth + 1)
                    i += consumed
                    break
                interactive = interactive or flag == "i"
                j += 1
            else:
                i += 1
            continue
        # a script file
        interpreted_file(checker, base, "python", w, cwd)
        if interactive:
            checker.need(INTERACTIVE, base, f"`{base} -i` waits for input after the script")
        return SAME
    if interactive and not ctx.stdin:
        checker.need(
            INTERACTIVE,
            base,
            f"`{base} -i` waits for input: text typed into it later (Codex's write_stdin) is never checked",
        )
        return SAME
    stdin_program(checker, base, ctx, cwd, depth, lambda text: code(checker, "python", text, base, cwd))
    return SAME


def interpreted_file(checker: Reader, base: str, language: str | None, word: Word, cwd: str | None) -> None:
    text = read_script(checker, base, word, cwd)
    if text is not None:
        code(checker, language, text, f"{base} {word.text}", cwd)


def interpreter(
    checker: Reader, base: str, head: Word, args: list[Word], ctx: Ctx, cwd: str | None, depth: int
) -> str | None | Same:
    if _asks_only_about_itself(args):
        return SAME
    language, code_opts, arg_opts = _INTERPRETERS[base]
    if base == "deno":
        sub = args[0].text if args else ""
        if sub == "eval" and len(args) > 1:
            code(checker, language, args[-1].text, f"deno eval {args[-1].text}", cwd)
        elif sub in ("run", "test", "bench", "serve", "task") and len(args) > 1:
            interpreted_file(
                checker, base, language, next((w for w in args[1:] if not w.text.startswith("-")), args[-1]), cwd
            )
        elif sub in ("", "repl"):
            checker.need(INTERACTIVE, base, "`deno repl` waits for input")
        return SAME
    i = 0
    while i < len(args):
        w = args[i]
        a = w.text
        if a == "--":
            i += 1
            break
        key, eq, inline = a.partition("=")
        if key in code_opts or (
            base in ("perl", "ruby")
            and a.startswith("-")
            and not a.startswith("--")
            and "e" in a[1:].lower()
            and len(a) <= 6
        ):
            given = inline if eq else (args[i + 1] if i + 1 < len(args) else Word(""))
            code_word = Word(given) if isinstance(given, str) else given
            if code_word.dynamic:
                checker.opaque(f"{base} {a} {code_word.text}", "its code is only known when the shell runs")
            else:
                code(checker, language, code_word.text, f"{base} {a} {code_word.text}", cwd)
            return SAME
        if key in arg_opts:
            if key in ("-r", "--require", "--import", "--loader", "--experimental-loader") and base in (
                "node",
                "nodejs",
                "bun",
            ):
                target = inline if eq else (args[i + 1].text if i + 1 < len(args) else "")
                if target.startswith((".", "/")):
                    interpreted_file(checker, base, language, Word(target), cwd)
            i += 1 if eq else 2
            continue
        if a.startswith("-") and a != "-":
            i += 1
            continue
        if a == "-":
            break
        if base == "bun" and a in (
            "run",
            "x",
            "build",
            "test",
            "install",
            "add",
            "remove",
            "publish",
            "pm",
            "create",
            "init",
            "upgrade",
            "link",
            "unlink",
            "outdated",
            "update",
        ):
            if a == "x":
                return checker.argv(list(args[i + 1 :]), ctx, cwd, depth + 1) if len(args) > i + 1 else SAME
            if a == "publish":
                checker.need("publish:npm", "bun publish")
            if (
                a == "run"
                and i + 1 < len(args)
                and os.path.splitext(args[i + 1].text)[1] in (".js", ".ts", ".mjs", ".cjs", ".tsx", ".jsx")
            ):
                interpreted_file(checker, base, language, args[i + 1], cwd)
            return SAME
        interpreted_file(checker, base, language, w, cwd)
        return SAME
    stdin_program(checker, base, ctx, cwd, depth, lambda text: code(checker, language, text, base, cwd))
    return SAME


def awk(
    checker: Reader, base: str, head: Word, args: list[Word], ctx: Ctx, cwd: str | None, depth: int
) -> str | None | Same:
    i = 0
    while i < len(args):
        a = args[i].text
        if a in ("-f", "--file") and i + 1 < len(args):
            interpreted_file(checker, base, None, args[i + 1], cwd)
            return SAME
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
            checker.opaque(f"{base} {program.text}", "its program can start other programs (system, pipes, getline)")
        why = checker.ground.text(program.text)
        if why:
            checker.forbid(program.text, why)
    return SAME


def sed(
    checker: Reader, base: str, head: Word, args: list[Word], ctx: Ctx, cwd: str | None, depth: int
) -> str | None | Same:
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
            checker.opaque(f"sed {a}", "its script comes from a file")
            return SAME
        if a.startswith("-"):
            i += 1
            continue
        if not explicit:
            scripts.append(args[i])
        break
    for script in scripts:
        if script.dynamic or _sed_runs(script.text):
            checker.opaque(f"sed {script.text}", "its script can run commands (sed's e command or flag)")
    if checker.workspace is not None:  # sed -i in a card's workspace: not the main checkout's files
        from .guarded import writes_elsewhere

        writes_elsewhere(checker, "sed", " ".join(["sed", *(a.text for a in args)]), args, cwd)
    return SAME


def eval_words(
    checker: Reader, base: str, head: Word, args: list[Word], ctx: Ctx, cwd: str | None, depth: int
) -> str | None | Same:
    checker.run_text(base, args, cwd, depth)
    return SAME


def source(
    checker: Reader, base: str, head: Word, args: list[Word], ctx: Ctx, cwd: str | None, depth: int
) -> str | None | Same:
    if not args:
        return SAME
    script_file(checker, base, args[0], cwd, depth)
    return SAME


def alias(
    checker: Reader, base: str, head: Word, args: list[Word], ctx: Ctx, cwd: str | None, depth: int
) -> str | None | Same:
    for w in args:
        name, eq, value = w.text.partition("=")
        if not eq:
            continue
        if w.dynamic:
            checker.opaque(f"alias {w.text}", "the alias's command is only known when the shell runs")
            continue
        checker.aliases[name] = value
        checker.shell(value, cwd, depth=depth + 1)  # what the alias runs, checked once here too
    return SAME


def export(
    checker: Reader, base: str, head: Word, args: list[Word], ctx: Ctx, cwd: str | None, depth: int
) -> str | None | Same:
    for w in args:
        if "=" in w.text and matches(ASSIGN + ".*", w.text):
            checker.assignment(w, cwd)
    return SAME


def trap(
    checker: Reader, base: str, head: Word, args: list[Word], ctx: Ctx, cwd: str | None, depth: int
) -> str | None | Same:
    words = [w for w in args if not w.text.startswith("-")]
    checker.run_text(base, words[:1], cwd, depth)
    return SAME


def editor(
    checker: Reader, base: str, head: Word, args: list[Word], ctx: Ctx, cwd: str | None, depth: int
) -> str | None | Same:
    if _asks_only_about_itself(args):
        return SAME
    words = [w.text for w in args]
    if base in ("vi", "vim", "nvim", "view", "vimdiff", "ex") and any(
        a in ("-c", "-S", "--cmd", "-s") or a.startswith("+") for a in words
    ):
        checker.opaque(f"{base} {' '.join(words)}", f"`{base}` runs editor commands, which can start programs")
    elif base in ("gdb", "lldb") and any(a in ("-ex", "-x", "--command", "-iex", "-batch", "-o", "-s") for a in words):
        checker.opaque(f"{base} {' '.join(words)}", f"`{base}` runs debugger commands, which can start programs")
    elif base == "emacs" and any(
        a.startswith(("--eval", "-l", "--load", "-f", "--funcall", "--batch", "--script")) for a in words
    ):
        checker.opaque(f"{base} {' '.join(words)}", "`emacs` runs Lisp, which can start programs")
    elif base in ("less", "more", "most", "man") and (ctx.piped or ctx.stdin or words):
        return SAME  # a pager in a tool call: no terminal, it prints and ends
    elif base in ("mysql", "mariadb", "redis-cli", "mongo", "mongosh") and (
        words
        and any(a in ("-e", "--execute", "--eval") for a in words)
        or ctx.stdin
        or ctx.piped
        or ctx.from_file
        or len(words) > 2
    ):
        return SAME
    elif base in ("ftp", "sftp", "telnet") and (ctx.stdin or ctx.piped or ctx.from_file):
        checker.opaque(base, f"`{base}` runs commands read from its input")
        return SAME
    else:
        checker.need(
            INTERACTIVE,
            base,
            f"`{base}` waits for input: text typed into it later (Codex's write_stdin) is never checked",
        )
    return SAME


def _asks_only_about_itself(args: list[Word]) -> bool:
    """``python3 --version``, ``bash --help``: prints and ends, reads nothing."""
    return len(args) == 1 and args[0].text in (
        "--version",
        "-V",
        "--help",
        "-h",
        "-version",
        "-help",
        "version",
        "help",
    )


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
