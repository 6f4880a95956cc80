"""A reader of POSIX shell text (bash, sh, zsh) for the hooks' policy.

It splits a command line into the simple commands it would run — words,
redirections, here-documents — the way the shell would, without running
anything. Built for a hook that runs before every tool call on text an agent
wrote, so:

- **Linear time.** One pass over the text with an explicit stack of contexts
  (quotes, ``$( … )``, ``${ … }``); no regular expression that can backtrack,
  no splitting and re-joining, no recursion (nesting 100,000 ``$(`` deep costs
  what 100,000 characters cost). Only backquotes and here-document bodies are
  read a second time, as separate pieces of work, at most ``MAX_NESTING``
  levels deep.
- **It never raises** on any input: unbalanced quotes end at the end of the
  text, a stray ``)`` is a separator.
- **It says what it cannot know.** A word built from ``$var``, ``$( … )`` or
  backquotes is *dynamic*: its value exists only when the shell runs it.

What it keeps: each simple command's words with their quoting removed (so
``'gi''t'`` is ``git`` and ``$'\\x67it'`` is ``git``), output and input
redirections, here-document and here-string bodies (the program a shell reads
from stdin), whether the command's stdin is a pipe, and the commands inside
command substitutions, process substitutions, backquotes and unquoted
here-documents — those run too.
"""

from __future__ import annotations

import os
import re

TYPE_CHECKING = False  # (annotations only: typing is not imported on the cold path; checkers read this as typing's)
if TYPE_CHECKING:
    from typing import Any


class Lazy:
    """A regular expression compiled on first use: the hook's cold start pays
    only for the ones the text in front of it needs."""

    __slots__ = ("_args", "_compiled")

    def __init__(self, pattern: str, flags: int = 0):
        self._args = (pattern, flags)
        self._compiled: re.Pattern[str] | None = None

    def __getattr__(self, name: str) -> Any:  # (the compiled pattern's attribute: its method, its flags)
        if self._compiled is None:
            self._compiled = re.compile(*self._args)
        return getattr(self._compiled, name)


MAX_NESTING = 16  # backquotes / here-documents read inside each other, at most

_NAME = Lazy(r"[A-Za-z_][A-Za-z0-9_]*")
_HOME = os.path.expanduser("~")


class Word:
    """One shell word after quote removal.

    ``dynamic``: part of it comes from an expansion whose value is unknown here
    (``$x``, ``${x}``, ``$( … )``, backquotes, ``$1``). ``glob``: it has an
    unquoted ``*``, ``?`` or ``[``. ``braces``: an unquoted ``{``…``}``, which
    the shell may expand into several words. ``quoted``: some of it was quoted.
    """

    __slots__ = ("text", "dynamic", "glob", "braces", "quoted")

    def __init__(
        self, text: str, dynamic: bool = False, glob: bool = False, braces: bool = False, quoted: bool = False
    ):
        self.text, self.dynamic, self.glob, self.braces, self.quoted = text, dynamic, glob, braces, quoted

    def __repr__(self) -> str:  # pragma: no cover - debugging aid
        flags = "".join(f for f, on in (("$", self.dynamic), ("*", self.glob), ("{", self.braces)) if on)
        return f"Word({self.text!r}{', ' + flags if flags else ''})"


class Command:
    """A simple command: ``words`` (assignments and keywords included, in
    order), ``redirects`` as (operator, Word) pairs (``>``, ``>>``, ``<``, ``&>``…;
    file-descriptor numbers dropped), ``stdin`` the here-document / here-string
    bodies fed to it (text, literal: no expansion happened in it), ``piped``
    when its stdin is the previous command's output, ``level`` how deeply it is
    nested in substitutions."""

    __slots__ = ("words", "redirects", "stdin", "piped", "level")

    def __init__(self, level: int, piped: bool):
        self.words: list[Word] = []
        self.redirects: list[tuple[str, Word]] = []
        self.stdin: list[tuple[str, bool]] = []
        self.piped = piped
        self.level = level

    def __repr__(self) -> str:  # pragma: no cover - debugging aid
        return f"Command({[w.text for w in self.words]}, redirects={[(o, w.text) for o, w in self.redirects]}, piped={self.piped})"


class Script:
    """What a piece of shell text runs: its ``commands``; ``loose`` — words that
    are no command's (PowerShell expressions: ``[IO.File]::Delete('x')``), still
    worth checking as paths; ``limits`` — why the text could not be read to the
    end (too many tokens, nesting too deep). ``powershell``: command names are
    case-insensitive."""

    __slots__ = ("commands", "loose", "limits", "size", "powershell")

    def __init__(self, powershell: bool = False):
        self.commands: list[Command] = []
        self.loose: list[Word] = []
        self.limits: list[str] = []
        self.size = 0  # tokens read so far (MAX_TOKENS bounds the work)
        self.powershell = powershell


def parse(text: str, level: int = 0) -> Script:
    """Every simple command ``text`` would run (see the module docstring)."""
    script = Script()
    work = [(text, False, level)]  # (text, read as a double-quoted here-document body, level)
    while work and not script.limits:
        piece, heredoc, lvl = work.pop()
        if lvl - level > MAX_NESTING:
            script.limits.append(f"backquotes or here-documents nested more than {MAX_NESTING} deep")
            break
        _Lexer(piece, script, work, lvl).run(heredoc)
    return script


# -- the lexer -----------------------------------------------------------------------------

_CMD, _DQ, _PARAM = 0, 1, 2

# One token per match, in the order the shell would see them; every character
# matches some branch, and no branch can backtrack more than one character.
_CMD_TOKENS = re.compile(
    r"""
     ([ \t\r]+)                                      # 1 blanks
    |([^\t\n\r '"\\$`;&|()<>*?\[\]{}\#~]+)           # 2 plain text
    |('[^']*'?)                                      # 3 single-quoted
    |(")                                             # 4 a double-quoted part begins
    |(\\\n|\\.|\\$)                                  # 5 backslash
    |(\$')                                           # 6 $'…' (ANSI-C quoting)
    |(\$")                                           # 7 $"…" (translated string)
    |(\$\()                                          # 8 $( … ) and $(( … ))
    |(\$\{)                                          # 9 ${ … }
    |(\$(?:[A-Za-z_][A-Za-z0-9_]*|[@*\#?$!0-9-]))    # 10 $name, $1, $@ …
    |(\$)                                            # 11 a lone $
    |(`)                                             # 12 backquote
    |(\n)                                            # 13 newline
    |(\#[^\n]*)                                      # 14 # (a comment at the start of a word)
    |([<>]\()                                        # 15 <( … ) / >( … )
    |(<<<|<<-|&>>|>>|<<|<>|>\||<&|>&|&>|[<>])        # 16 redirection
    |(&&|\|\||;;&|;;|;&|\|&|[;&|])                   # 17 separators
    |(\()                                            # 18
    |(\))                                            # 19
    |([*?\[])                                        # 20 glob characters
    |(\{)                                            # 21
    |(~)                                             # 22
    |([\]}])                                         # 23
    """,
    re.VERBOSE,
)
_DQ_TOKENS = re.compile(
    r'([^"\\$`]+)|(")|(\\[\\$`"\n])|(\\)|(\$\()|(\$\{)|(\$(?:[A-Za-z_][A-Za-z0-9_]*|[@*#?$!0-9-]))|(\$)|(`)'
)
_PARAM_TOKENS = Lazy(r"""([^}$'"\\`]+)|(\})|(\$\{)|(\$\()|('[^']*'?)|(")|(\\.?)|(`)|(\$)""", re.DOTALL)
_REDIRECT_OPS = frozenset(("<<<", "<<-", "&>>", ">>", "<<", "<>", ">|", "<&", ">&", "&>", "<", ">"))

MAX_TOKENS = 100_000  # tokens read in one call (words, operators, quotes …): more is refused, not read
MAX_DEPTH = 200  # contexts open inside each other ($( "…" ${ …)


class _Frame:
    """One context on the lexer's stack. A command context (``_CMD``) owns the
    word being built and the command being collected; quote and parameter
    contexts add to the word of the command context under them."""

    __slots__ = (
        "kind",
        "closer",
        "parens",
        "command",
        "parts",
        "started",
        "dynamic",
        "glob",
        "braces",
        "quoted",
        "redirect",
        "piped",
        "level",
        "owner",
        "depth",
        "literal_quote",
    )

    def __init__(self, kind: int, level: int, closer: bool = False, owner: _Frame | None = None):
        self.kind = kind
        self.closer = closer  # a $( … ) / <( … ) context, closed by its ")"
        self.parens = 0  # subshell parentheses opened inside this command context
        self.level = level
        self.owner = owner  # for _DQ / _PARAM: the _CMD frame whose word this extends
        self.depth = 0  # for _PARAM: nested ${ inside it
        self.literal_quote = False  # for the _DQ frame of a here-document body: " is text
        self.command: Command | None = None
        self.parts: list[str] = []
        self.started = False
        self.dynamic = self.glob = self.braces = self.quoted = False
        self.redirect: str | None = None  # a redirection operator waiting for its target word
        self.piped = False


class _TooMuch(Exception):
    pass


class _Lexer:
    def __init__(self, text: str, script: Script, work: list, level: int):
        self.text = text
        self.script = script
        self.work = work
        self.level = level
        self.heredocs: list[tuple[str, bool, bool, Command]] = []  # (delimiter, strip tabs, literal, command)

    # -- words and commands --------------------------------------------------------------
    def _command(self, frame: _Frame) -> Command:
        if frame.command is None:
            frame.command = Command(frame.level, frame.piped)
            frame.piped = False
        return frame.command

    def _end_word(self, frame: _Frame) -> None:
        word = Word("".join(frame.parts), frame.dynamic, frame.glob, frame.braces, frame.quoted)
        frame.parts = []
        frame.started = frame.dynamic = frame.glob = frame.braces = frame.quoted = False
        command = frame.command
        if command is None:
            command = self._command(frame)
        if frame.redirect is not None:
            command.redirects.append((frame.redirect, word))
            if frame.redirect.startswith("<<"):
                if frame.redirect == "<<<":
                    command.stdin.append((word.text, not word.dynamic))
                else:
                    self.heredocs.append((word.text, frame.redirect == "<<-", word.quoted, command))
            frame.redirect = None
        else:
            command.words.append(word)

    def _end_command(self, frame: _Frame, piped_next: bool = False) -> None:
        if frame.started:
            self._end_word(frame)
        command = frame.command
        if command is not None and (command.words or command.redirects or command.stdin):
            self.script.commands.append(command)
        frame.command = None
        frame.redirect = None
        frame.piped = piped_next

    def _push(self, stack: list, frame: _Frame) -> None:
        stack.append(frame)
        if len(stack) > MAX_DEPTH:
            raise _TooMuch(f"contexts nested more than {MAX_DEPTH} deep")

    # -- the main loop -------------------------------------------------------------------
    def run(self, heredoc_body: bool) -> None:
        top = _Frame(_CMD, self.level)
        stack = [top]
        if heredoc_body:  # expansions run in an unquoted here-document's body; its words do not matter
            body = _Frame(_DQ, self.level, owner=top)
            body.literal_quote = True
            stack.append(body)
        try:
            self._loop(stack)
        except _TooMuch as exc:
            self.script.limits.append(str(exc))
            return
        # End of text: close every open context (unbalanced quotes end here).
        while stack:
            frame = stack.pop()
            if frame.kind == _CMD and not (heredoc_body and frame is top):  # a body's own text is data
                self._end_command(frame)
        for _, _, literal, command in self.heredocs:
            command.stdin.append(("", literal))  # no body before the end: an empty program
        self.heredocs = []

    def _loop(self, stack: list) -> None:
        text = self.text
        n = len(text)
        pos = 0
        cmd_match, dq_match, param_match = _CMD_TOKENS.match, _DQ_TOKENS.match, _PARAM_TOKENS.match
        script = self.script
        while pos < n:
            script.size += 1
            if script.size > MAX_TOKENS:
                raise _TooMuch(f"more than {MAX_TOKENS:,} words and operators")
            frame = stack[-1]
            kind = frame.kind
            if kind == _CMD:
                m = cmd_match(text, pos)
                assert m is not None and m.lastindex is not None  # the patterns match every character, each in a group
                g = m.lastindex
                pos = m.end()
                if g == 2:
                    frame.parts.append(m.group())
                    frame.started = True
                elif g == 1:
                    if frame.started:
                        self._end_word(frame)
                elif g == 3:
                    frame.parts.append(
                        m.group()[1:-1] if m.group().endswith("'") and len(m.group()) > 1 else m.group()[1:]
                    )
                    frame.started = frame.quoted = True
                elif g == 4:
                    frame.started = frame.quoted = True
                    self._push(stack, _Frame(_DQ, frame.level, owner=frame))
                elif g == 5:
                    tok = m.group()
                    if tok != "\\\n" and len(tok) == 2:
                        frame.parts.append(tok[1])
                        frame.started = frame.quoted = True
                elif 6 <= g <= 11:
                    pos = self._dollar(stack, frame, m, quoted=False)
                elif g == 12:
                    pos = self._backquote(frame, pos)
                elif g == 13:
                    self._end_command(frame)
                    if self.heredocs:
                        pos = self._read_heredocs(pos)
                elif g == 14:
                    if frame.started:  # not a comment: a # inside a word
                        frame.parts.append("#")
                        pos = m.start() + 1
                elif g == 15:
                    frame.started = frame.dynamic = True
                    frame.parts.append("/dev/fd/63")
                    self._push(stack, _Frame(_CMD, frame.level + 1, closer=True))
                elif g == 16:
                    self._redirect(frame, m.group())
                elif g == 17:
                    tok = m.group()
                    self._end_command(frame, piped_next=tok == "|" or tok == "|&")
                elif g == 18:
                    self._end_command(frame)
                    frame.parens += 1
                elif g == 19:
                    self._end_command(frame)
                    if frame.parens > 0:
                        frame.parens -= 1
                    elif frame.closer:
                        stack.pop()
                    # else: a stray ")" (a case pattern): a separator
                elif g == 20:
                    frame.parts.append(m.group())
                    frame.started = frame.glob = True
                elif g == 21:
                    frame.parts.append("{")
                    frame.started = frame.braces = True
                elif g == 22:
                    if not frame.started and (pos >= n or text[pos] in "/ \t\n;&|)<>"):
                        frame.parts.append(_HOME)
                    else:
                        if not frame.started:
                            frame.dynamic = True  # ~user: another user's home
                        frame.parts.append("~")
                    frame.started = True
                else:  # 23: ] }
                    frame.parts.append(m.group())
                    frame.started = True
            elif kind == _DQ:
                m = dq_match(text, pos)
                assert m is not None and m.lastindex is not None  # the patterns match every character, each in a group
                g = m.lastindex
                pos = m.end()
                owner = frame.owner
                if g == 1:
                    owner.parts.append(m.group())
                elif g == 2:
                    if frame.literal_quote:
                        owner.parts.append('"')
                    else:
                        stack.pop()
                elif g == 3:
                    if m.group() != "\\\n":
                        owner.parts.append(m.group()[1])
                elif g == 4:
                    owner.parts.append("\\")
                elif g <= 8:
                    pos = self._dollar(stack, owner, m, quoted=True, dq_group=g)
                else:
                    pos = self._backquote(owner, pos)
            else:
                m = param_match(text, pos)
                assert m is not None and m.lastindex is not None  # the patterns match every character, each in a group
                g = m.lastindex
                pos = m.end()
                if g == 2:
                    if frame.depth == 0:
                        stack.pop()
                    else:
                        frame.depth -= 1
                elif g == 3:
                    frame.depth += 1
                elif g == 4:
                    self._push(stack, _Frame(_CMD, frame.level + 1, closer=True))
                elif g == 6:
                    self._push(stack, _Frame(_DQ, frame.level, owner=frame.owner))
                elif g == 8:
                    pos = self._backquote(frame.owner, pos)
                # 1, 5, 7, 9: text of an unknown value

    def _redirect(self, frame: _Frame, op: str) -> None:
        # a file-descriptor number written right before the operator is not a word
        if frame.started and not frame.quoted and not frame.dynamic:
            word = "".join(frame.parts)
            if word.isdigit() or _is_fd_var(word):
                frame.parts = []
                frame.started = False
        if frame.started:
            self._end_word(frame)
        self._command(frame)
        frame.redirect = op

    def _dollar(self, stack: list[_Frame], owner: _Frame, m: re.Match[str], *, quoted: bool, dq_group: int = 0) -> int:
        """``$…`` in a command context (``m`` from _CMD_TOKENS) or in double
        quotes (``m`` from _DQ_TOKENS, ``dq_group`` its group)."""
        tok = m.group()
        pos = m.end()
        owner.started = True
        if tok == "$(":
            owner.dynamic = True
            self._push(stack, _Frame(_CMD, owner.level + 1, closer=True))
            return pos
        if tok == "${":
            if self.text.startswith("HOME}", pos):  # ${HOME} is known
                owner.parts.append(_HOME)
                return pos + 5
            owner.dynamic = True
            self._push(stack, _Frame(_PARAM, owner.level, owner=owner))
            return pos
        if tok == "$'" and not quoted:
            self.script.size += self.text.count("\\", pos, _ANSI_BODY.match(self.text, pos).end())
            if self.script.size > MAX_TOKENS:
                raise _TooMuch(f"more than {MAX_TOKENS:,} words and operators")
            value, end = _ansi_c(self.text, pos)
            owner.parts.append(value)
            owner.quoted = True
            return end
        if tok == '$"' and not quoted:  # a translated string: otherwise "…"
            owner.quoted = True
            self._push(stack, _Frame(_DQ, owner.level, owner=owner))
            return pos
        if tok == "$HOME":
            owner.parts.append(_HOME)
            return pos
        if len(tok) > 1:
            owner.dynamic = True
            owner.parts.append(tok)
            return pos
        owner.parts.append("$")  # a lone $ is literal
        return pos

    def _backquote(self, owner: _Frame, i: int) -> int:
        """`` `…` `` starting just after the opening backquote at ``i - 1``: find
        the closing one (``\\``` escapes one) and read the inside as a script of
        its own, one level deeper."""
        text, n = self.text, len(self.text)
        j = i
        pieces = []
        start = j
        script = self.script
        while j < n:
            j = _next_of(text, "`\\", j)
            if j >= n:
                break
            script.size += 1
            if script.size > MAX_TOKENS:
                raise _TooMuch(f"more than {MAX_TOKENS:,} words and operators")
            if text[j] == "\\":
                if j + 1 < n and text[j + 1] in "`$\\":
                    pieces.append(text[start:j])
                    pieces.append(text[j + 1])
                    j += 2
                    start = j
                else:
                    j += 2
                continue
            break
        pieces.append(text[start : min(j, n)])
        self.work.append(("".join(pieces), False, owner.level + 1))
        owner.started = owner.dynamic = True
        return j + 1

    def _read_heredocs(self, i: int) -> int:
        """After a newline: the bodies of the here-documents opened on that line."""
        text, n = self.text, len(self.text)
        for delimiter, strip_tabs, literal, command in self.heredocs:
            start = i
            m = _delimiter_line(delimiter, strip_tabs).search(text, i)
            if m is None:
                body_end = i = n
            else:
                body_end, i = m.start(), m.end()
            body = text[start:body_end]
            command.stdin.append((body, literal))
            if not literal and body:
                self.work.append((body, True, command.level + 1))
        self.heredocs = []
        return i


_DELIMITERS: dict[tuple[str, bool], re.Pattern[str]] = {}


def _delimiter_line(delimiter: str, strip_tabs: bool) -> re.Pattern[str]:
    """The line that ends a here-document (``<<-``: leading tabs allowed)."""
    key = (delimiter, strip_tabs)
    pattern = _DELIMITERS.get(key)
    if pattern is None:
        if len(_DELIMITERS) > 256:
            _DELIMITERS.clear()
        pattern = re.compile(("^\t*" if strip_tabs else "^") + re.escape(delimiter) + r"\r?(?:\n|\Z)", re.M)
        _DELIMITERS[key] = pattern
    return pattern


def _next_of(text: str, chars: str, i: int) -> int:
    """The index of the first of ``chars`` at or after ``i`` (len(text) if none)."""
    best = len(text)
    for c in chars:
        j = text.find(c, i, best)
        if j != -1:
            best = j
    return best


def _is_fd_var(word: str) -> bool:
    """``{fd}>file``: bash's named file-descriptor form."""
    return len(word) > 2 and word[0] == "{" and word[-1] == "}" and _NAME.fullmatch(word[1:-1]) is not None


_ESCAPES = {
    "a": "\a",
    "b": "\b",
    "e": "\x1b",
    "E": "\x1b",
    "f": "\f",
    "n": "\n",
    "r": "\r",
    "t": "\t",
    "v": "\v",
    "\\": "\\",
    "'": "'",
    '"': '"',
    "?": "?",
}


_ANSI_BODY = Lazy(r"(?:[^\\']|\\.|\\\Z)*", re.DOTALL)
_ANSI_ESCAPE = Lazy(r"\\(x[0-9a-fA-F]{1,2}|u[0-9a-fA-F]{1,4}|U[0-9a-fA-F]{1,8}|[0-7]{1,3}|c.|.)", re.DOTALL)


def _ansi_escape(m: re.Match[str]) -> str:
    e = m.group(1)
    head = e[0]
    if head in "xuU":
        code = int(e[1:], 16)
        return chr(code) if code <= 0x10FFFF else "\ufffd"
    if head in "01234567":
        return chr(int(e, 8) & 0xFF)
    if head == "c" and len(e) == 2:
        return chr(ord(e[1]) & 0x1F)
    return _ESCAPES.get(e, "\\" + e)


def _ansi_c(text: str, i: int) -> tuple[str, int]:
    """The value of ``$'…'`` whose body starts at ``i``, and the index after it."""
    end = _ANSI_BODY.match(text, i).end()
    body = text[i:end]
    value = _ANSI_ESCAPE.sub(_ansi_escape, body) if "\\" in body else body
    return value, min(end + 1, len(text))


# -- brace expansion -------------------------------------------------------------------------


def expand_braces(text: str, limit: int = 64) -> list[str] | None:
    """The words ``{a,b}c`` and ``{1..3}`` expand to, or None when there would
    be more than ``limit`` of them. Text without a brace pattern is itself."""
    out: list[str] = []
    todo = [text]
    while todo:
        item = todo.pop()
        found = _first_brace(item)
        if found is None:
            out.append(item)
        else:
            start, end, alternatives = found
            if len(alternatives) > limit:
                return None
            for alt in reversed(alternatives):
                todo.append(item[:start] + alt + item[end + 1 :])
        if len(out) + len(todo) > limit:
            return None
    return out


_SEQ = Lazy(r"(-?\d+|[A-Za-z])\.\.(-?\d+|[A-Za-z])(?:\.\.-?\d+)?")


def _first_brace(text: str) -> tuple[int, int, list[str]] | None:
    """(start, end, alternatives) of the first ``{…,…}`` or ``{x..y}`` in ``text``."""
    i = text.find("{")
    while i != -1:
        depth, j, commas = 0, i, []
        while j < len(text):
            c = text[j]
            if c == "{":
                depth += 1
            elif c == "}":
                depth -= 1
                if depth == 0:
                    break
            elif c == "," and depth == 1:
                commas.append(j)
            j += 1
        if j < len(text):
            inner = text[i + 1 : j]
            if commas:
                cuts = [i] + commas + [j]
                return i, j, [text[cuts[k] + 1 : cuts[k + 1]] for k in range(len(cuts) - 1)]
            m = _SEQ.fullmatch(inner)
            if m is not None:
                a, b = m.group(1), m.group(2)
                if a.lstrip("-").isdigit() and b.lstrip("-").isdigit():
                    lo, hi = int(a), int(b)
                    count = abs(hi - lo) + 1
                    if count > 4096:
                        return i, j, [""] * 4097
                    step = 1 if hi >= lo else -1
                    return i, j, [str(v) for v in range(lo, hi + step, step)]
                if a.isalpha() and b.isalpha():
                    step = 1 if ord(b) >= ord(a) else -1
                    return i, j, [chr(v) for v in range(ord(a), ord(b) + step, step)]
        i = text.find("{", i + 1)
    return None
