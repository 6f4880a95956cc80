"""PowerShell's own commands, for the hooks' command checker: the call
operator and ``Invoke-Expression`` (``iex``) of a literal string are read as
PowerShell; ``Start-Process`` as the program it starts; ``Remove-Item
-Recurse`` as a recursive delete; ``Set-Content``/``Out-File``/``Copy-Item`` …
as writes; ``Set-Alias`` as an alias; .NET process and script-block calls
(``[Diagnostics.Process]::Start``, ``[scriptblock]::Create``, ``Add-Type`` …)
as ``shell:opaque``. Imported only for PowerShell text.
"""

from __future__ import annotations

import re

from . import interpreters
from .posix_words import Word
from .vocabulary import NO_INPUT, SAME

TYPE_CHECKING = False  # (annotations only: typing is not imported on the cold path; checkers read this as typing's)
if TYPE_CHECKING:
    from .vocabulary import Ctx, Reader, Same

_PS_OPAQUE = re.compile(
    r"(?i)diagnostics\.process|processstartinfo|\[scriptblock\]|scriptblock\]::create|\.invoke(?:returnasis)?\s*\(|invokescript|"
    r"executioncontext|\[powershell\]|runspace|add-type|reflection\.assembly|activator\]|invoke-wmimethod|invoke-cimmethod|"
    r"win32_process|new-object\s+-comobject|wscript\.shell|shell\.application|system\.management\.automation"
)


def opaque_calls(checker: Reader, text: str) -> None:
    if _PS_OPAQUE.search(text):
        checker.opaque(text, "it calls .NET or script blocks that can start programs LoopX cannot see")


def invoke_expression(
    checker: Reader, base: str, head: Word, args: list[Word], ctx: Ctx, cwd: str | None, depth: int
) -> str | None | Same:
    code = [w for w in args if not w.text.lower().startswith("-command")]
    if not code:
        checker.opaque("Invoke-Expression", "`Invoke-Expression` runs text from its input, which LoopX cannot see")
    else:
        checker.run_text("Invoke-Expression", code, cwd, depth, powershell=True)
    return SAME


def start_process(
    checker: Reader, base: str, head: Word, args: list[Word], ctx: Ctx, cwd: str | None, depth: int
) -> str | None | Same:
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
            i += (
                2
                if a
                in (
                    "-workingdirectory",
                    "-wd",
                    "-redirectstandardoutput",
                    "-redirectstandardinput",
                    "-redirectstandarderror",
                    "-rso",
                    "-rsi",
                    "-rse",
                    "-credential",
                    "-verb",
                    "-windowstyle",
                    "-environment",
                )
                else 1
            )
            continue
        if program is None:
            program = args[i]
        else:
            arglist.append(args[i])
        i += 1
    if program is None:
        return SAME
    if program.dynamic or any(w.dynamic for w in arglist):
        checker.opaque("Start-Process " + program.text, "the program or its arguments are only known when it runs")
        return SAME
    split: list[Word] = []
    for w in arglist:
        split.extend(Word(t) for t in w.text.split())
    checker.argv([program, *split], NO_INPUT, cwd, depth + 1)
    return SAME


def invoke_command(
    checker: Reader, base: str, head: Word, args: list[Word], ctx: Ctx, cwd: str | None, depth: int
) -> str | None | Same:
    for i, w in enumerate(args):
        if w.text.lower() in ("-filepath", "-fp") and i + 1 < len(args):
            interpreters.script_file(checker, base, args[i + 1], cwd, depth, powershell=True)
    return SAME  # a -ScriptBlock { … } was read with the statement


def remove_item(
    checker: Reader, base: str, head: Word, args: list[Word], ctx: Ctx, cwd: str | None, depth: int
) -> str | None | Same:
    words = [w for w in args if not w.text.startswith("-")]
    if any(w.text.lower().startswith("-r") and "-recurse".startswith(w.text.lower()) for w in args):
        checker.deletes("Remove-Item " + " ".join(w.text for w in args), words, cwd)
    return SAME


def writes(
    checker: Reader, base: str, head: Word, args: list[Word], ctx: Ctx, cwd: str | None, depth: int
) -> str | None | Same:
    text = f"{base} " + " ".join(w.text for w in args)
    targets = [w for w in args if not w.text.startswith("-") and w.text != "{…}"]
    if base in ("copy-item", "move-item"):
        targets = targets[1:] if len(targets) > 1 else targets
    for w in targets[:1] if base in ("set-content", "add-content", "out-file", "new-item", "tee-object") else targets:
        if not checker.inside(None if w.dynamic else w.text, cwd, strict=False):
            checker.need("fs:write-outside", text)
            break
    return SAME


def set_alias(
    checker: Reader, base: str, head: Word, args: list[Word], ctx: Ctx, cwd: str | None, depth: int
) -> str | None | Same:
    words = [w for w in args if not w.text.startswith("-")]
    if len(words) >= 2:
        if words[1].dynamic:
            checker.opaque(f"{base} {words[0].text} {words[1].text}", "the alias's command is only known when it runs")
        else:
            checker.aliases[words[0].text.lower()] = words[1].text
    return SAME


def dot_source(
    checker: Reader, base: str, head: Word, args: list[Word], ctx: Ctx, cwd: str | None, depth: int
) -> str | None | Same:
    if args:
        interpreters.script_file(checker, ".", args[0], cwd, depth, powershell=ctx.powershell)
    return SAME


def invoke_item(
    checker: Reader, base: str, head: Word, args: list[Word], ctx: Ctx, cwd: str | None, depth: int
) -> str | None | Same:
    checker.opaque(
        "Invoke-Item " + " ".join(w.text for w in args),
        "`Invoke-Item` opens a file with whatever program the system picks",
    )
    return SAME
