"""A reader of PowerShell text for the hooks' policy (Claude Code's
``PowerShell`` tool, skill commands run by it, ``pwsh -Command …``).

Same contract as ``posix_words`` — linear time, an explicit stack, bounded work,
never raises — and the same result: a ``posix_words.Script`` of simple
commands. PowerShell decides per statement whether it is a command or an
expression: a statement that starts with a bare word (``git``,
``Remove-Item``), with the call operator ``&`` or with dot-sourcing ``.`` is a
command; one that starts with a value (``$x``, ``'text'``, ``[Type]::Call()``)
is an expression. Parentheses, ``$( … )``, ``@( … )``, script blocks
``{ … }``, the right side of ``=`` and ``return``/``throw`` start new
statements, so a command can hide in any of them and is found there.

Words: quotes removed (``'it''s'``, ``"a`tb"``), the backtick escape resolved
(``g`it`` is ``git``); a word holding ``$var``, ``${var}``, ``$( … )`` or
``@splat`` is dynamic. Words of expressions are kept as ``Script.loose``.
Names of the language (``about_Parsing``, ``about_Quoting_Rules``,
``about_Special_Characters``, ``about_Operators``) from Microsoft's PowerShell
documentation.
"""

from __future__ import annotations

import re

from .posix_words import MAX_DEPTH, MAX_TOKENS, Command, Script, Word

_TOKENS = re.compile(
    r"""
     ([ \t\r\f\v\u00a0]+)                        # 1 blanks
    |(`\r?\n)                                    # 2 line continuation
    |(<\#)                                       # 3 block comment
    |(\#[^\n]*)                                  # 4 comment (at the start of a word)
    |(@'\r?\n)                                   # 5 literal here-string
    |(@"\r?\n)                                   # 6 expandable here-string
    |('(?:[^']|'')*'?)                           # 7 single-quoted
    |(")                                         # 8 double-quoted
    |(\$\()                                      # 9 subexpression
    |(@\()                                       # 10 array subexpression
    |(@\{)                                       # 11 hashtable
    |(\$\{[^}]*\}?)                              # 12 ${name}
    |(\$[A-Za-z_][\w]*(?::[\w]+)?|\$[$?^_])      # 13 variable, $env:NAME
    |(@[A-Za-z_]\w*)                             # 14 splatting
    |(\{)                                        # 15 script block
    |(\})                                        # 16
    |(\()                                        # 17
    |(\))                                        # 18
    |(\n)                                        # 19 newline
    |(&&|\|\||;|\|)                              # 20 separators
    |((?:[1-6*])?>>|(?:[1-6*])?>(?:&[12])?|<)    # 21 redirection
    |(&)                                         # 22 call operator (or a background job at the end)
    |(,)                                         # 23 array separator
    |([-+*/%]?=)                                 # 24 assignment
    |(`.?)                                       # 25 escape
    |([^\s'"$@{}()\n;|&<>,`\#=][^\s'"$@{}()\n;|&<>,`\#]*)  # 26 bare text (= inside it is text)
    |(.)                                         # 27 anything else: $ @ # = inside a word
    """,
    re.VERBOSE | re.DOTALL,
)
_DQ_TOKENS = re.compile(
    r'([^"`$]+)|("")|(")|(`.?)|(\$\()|(\$\{[^}]*\}?)|(\$[A-Za-z_][\w]*(?::[\w]+)?|\$[$?^_])|(\$)', re.DOTALL
)
_ESCAPES = {"0": "\0", "a": "\a", "b": "\b", "e": "\x1b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v"}
_KEYWORDS = frozenset(
    "if elseif else switch foreach for while until do try catch finally trap begin process end dynamicparam "
    "param data break continue".split()
)
_STATEMENT_KEYWORDS = frozenset(("return", "throw", "exit"))  # their argument is a pipeline: a command may follow
_NAMING_KEYWORDS = frozenset(("function", "filter", "class", "enum", "configuration", "workflow"))  # a name follows
_ALL_KEYWORDS = _KEYWORDS | _STATEMENT_KEYWORDS | _NAMING_KEYWORDS

_CODE, _DQ = 0, 1


class _Frame:
    __slots__ = (
        "kind",
        "closer",
        "command",
        "parts",
        "started",
        "dynamic",
        "quoted",
        "expect",
        "call",
        "skip_name",
        "redirect",
        "piped",
        "level",
        "owner",
        "here",
    )

    def __init__(self, kind: int, level: int, closer: str = "", owner: _Frame | None = None):
        self.kind = kind
        self.closer = closer  # ")" or "}" (or "" for the top)
        self.level = level
        self.owner = owner  # _DQ: the _CODE frame whose word this string extends
        self.here = False  # _DQ: an expandable here-string (ends at a line "@)
        self.command: Command | None = None
        self.parts: list[str] = []
        self.started = self.dynamic = self.quoted = False
        self.expect = True  # the next word starts a command
        self.call = False  # after the call operator &: the next word is the command, whatever it is
        self.skip_name = False
        self.redirect: str | None = None
        self.piped = False


class _TooMuch(Exception):
    pass


def parse(text: str, level: int = 0) -> Script:
    script = Script(powershell=True)
    try:
        _Lexer(text, script, level).run()
    except _TooMuch as exc:
        script.limits.append(str(exc))
    return script


class _Lexer:
    def __init__(self, text: str, script: Script, level: int):
        self.text = text
        self.script = script
        self.level = level

    def _end_word(self, frame: _Frame) -> None:
        if not frame.started:
            return
        word = Word("".join(frame.parts), frame.dynamic, quoted=frame.quoted)
        frame.parts = []
        frame.started = frame.dynamic = frame.quoted = False
        if frame.redirect is not None:
            self._command(frame).redirects.append((frame.redirect, word))
            frame.redirect = None
            return
        if frame.command is not None:
            frame.command.words.append(word)
            return
        lowered = word.text.lower()
        if frame.skip_name:
            frame.skip_name = False
            self.script.loose.append(word)
            return
        if frame.expect and not word.quoted and not word.dynamic and lowered in _ALL_KEYWORDS:
            frame.expect = lowered in _STATEMENT_KEYWORDS
            frame.skip_name = lowered in _NAMING_KEYWORDS
            return
        if frame.call or (frame.expect and not word.quoted and not word.dynamic and not word.text.startswith("[")):
            self._command(frame).words.append(word)
            frame.expect = frame.call = False
            return
        self.script.loose.append(word)  # an expression's value: '…', $x, [Type]::Member
        frame.expect = False

    def _command(self, frame: _Frame) -> Command:
        if frame.command is None:
            frame.command = Command(frame.level, frame.piped)
            frame.piped = False
        return frame.command

    def _end_statement(self, frame: _Frame, piped: bool = False) -> None:
        self._end_word(frame)
        if frame.command is not None and (frame.command.words or frame.command.redirects):
            self.script.commands.append(frame.command)
        frame.command = None
        frame.redirect = None
        frame.expect = True
        frame.call = frame.skip_name = False
        frame.piped = piped

    def _push(self, stack: list, frame: _Frame) -> None:
        stack.append(frame)
        if len(stack) > MAX_DEPTH:
            raise _TooMuch(f"contexts nested more than {MAX_DEPTH} deep")

    def run(self) -> None:
        top = _Frame(_CODE, self.level)
        stack = [top]
        self._loop(stack)
        while stack:
            frame = stack.pop()
            if frame.kind == _CODE:
                self._end_statement(frame)

    def _loop(self, stack: list) -> None:
        text, n = self.text, len(self.text)
        pos = 0
        match, dq_match = _TOKENS.match, _DQ_TOKENS.match
        script = self.script
        while pos < n:
            script.size += 1
            if script.size > MAX_TOKENS:
                raise _TooMuch(f"more than {MAX_TOKENS:,} words and operators")
            frame = stack[-1]
            if frame.kind == _DQ:
                pos = self._dq(stack, frame, dq_match(text, pos))
                continue
            m = match(text, pos)
            assert m is not None and m.lastindex is not None  # the patterns match every character, each in a group
            g = m.lastindex
            tok = m.group()
            pos = m.end()
            if g == 26:
                frame.parts.append(tok)
                frame.started = True
            elif g == 1 or g == 2:
                self._end_word(frame)
            elif g == 3:
                end = text.find("#>", pos)
                pos = n if end == -1 else end + 2
            elif g == 4:
                if frame.started:
                    frame.parts.append("#")
                    pos = m.start() + 1
            elif g == 5:
                end = text.find("\n'@", pos)
                frame.parts.append(text[pos : n if end == -1 else end])
                frame.started = frame.quoted = True
                pos = n if end == -1 else end + 3
            elif g == 6:
                dq = _Frame(_DQ, frame.level, owner=frame)
                dq.here = True
                frame.started = frame.quoted = True
                self._push(stack, dq)
            elif g == 7:
                body = (
                    tok[1:-1]
                    if len(tok) > 1 and tok.endswith("'") and not tok.endswith("''") or tok == "''"
                    else tok[1:]
                )
                frame.parts.append(body.replace("''", "'"))
                frame.started = frame.quoted = True
            elif g == 8:
                frame.started = frame.quoted = True
                self._push(stack, _Frame(_DQ, frame.level, owner=frame))
            elif g == 9 or g == 10 or g == 11:
                frame.started = frame.dynamic = True
                self._push(stack, _Frame(_CODE, frame.level + 1, closer="}" if g == 11 else ")"))
            elif g == 12 or g == 13 or g == 14:
                frame.parts.append(tok)
                frame.started = frame.dynamic = True
            elif g == 15:
                self._end_word(frame)
                if frame.command is not None:  # a script block given to a command: it may run it
                    frame.command.words.append(Word("{…}", dynamic=True))
                frame.expect = frame.call = False
                self._push(stack, _Frame(_CODE, frame.level + 1, closer="}"))
            elif g == 17:
                self._end_word(frame)
                self._push(stack, _Frame(_CODE, frame.level + 1, closer=")"))
            elif g == 16 or g == 18:
                self._end_statement(frame)
                if len(stack) > 1 and frame.closer == tok:
                    stack.pop()
            elif g == 19:
                self._end_statement(frame)
            elif g == 20:
                self._end_statement(frame, piped=tok == "|")
            elif g == 21:
                self._end_word(frame)
                self._command(frame)
                if "&" not in tok:  # 2>&1 names no file
                    frame.redirect = tok
            elif g == 22:
                self._end_word(frame)
                if frame.expect or frame.command is None:
                    frame.call = True  # & NAME: call NAME (a string or a variable is the command)
                else:
                    self._end_statement(frame)  # cmd &: a background job, then the next statement
            elif g == 23:
                self._end_word(frame)
            elif g == 24:
                self._end_word(frame)
                if frame.command is None:
                    frame.expect = True  # $x = <pipeline>
                else:
                    frame.command.words.append(Word(tok))
            elif g == 25:
                if tok == "`" or tok == "`\n":
                    continue
                frame.parts.append(tok[1])
                frame.started = True
            else:  # 27: a lone $ or @, or = / # inside a word
                frame.parts.append(tok)
                frame.started = True

    def _dq(self, stack: list, frame: _Frame, m: re.Match[str] | None) -> int:
        assert m is not None and m.lastindex is not None  # the patterns match every character, each in a group
        g = m.lastindex
        tok = m.group()
        owner = frame.owner
        assert owner is not None  # a double-quoted string extends the word of the command around it
        pos = m.end()
        if g == 1:
            if frame.here:
                end = tok.find('\n"@')
                if end != -1:
                    owner.parts.append(tok[:end])
                    stack.pop()
                    return m.start() + end + 3
            owner.parts.append(tok)
        elif g == 2:
            owner.parts.append('"' if not frame.here else '""')
        elif g == 3:
            if frame.here:
                owner.parts.append('"')
            else:
                stack.pop()
        elif g == 4:
            owner.parts.append(_ESCAPES.get(tok[1:], tok[1:]))
        elif g == 5:
            owner.dynamic = True
            self._push(stack, _Frame(_CODE, owner.level + 1, closer=")"))
        elif g == 6 or g == 7:
            owner.parts.append(tok)
            owner.dynamic = True
        else:
            owner.parts.append("$")
        return pos
