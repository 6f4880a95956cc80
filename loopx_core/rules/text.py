"""Text from agents, made safe to show on a terminal.

Anything an agent writes (a card title, a summary, a gate question, a note,
a file it produced) is stored exactly as given, and passes through
``terminal_safe`` on its way to a person's terminal — the CLI's text output
and the board alike — so it can neither drive the terminal nor move what is
drawn around it:

- escape sequences (CSI, OSC, DCS, …) are removed whole, and every other
  control character is dropped (colours, bells, title changes, cursor moves,
  clipboard writes, backspace and carriage-return overwrites);
- bidirectional overrides and isolates are dropped (text that reads
  differently from what it is);
- characters whose width a terminal and the board's layout may disagree on
  are dropped: zero-width and other invisible format characters, variation
  selectors, emoji modifiers and joiners, regional indicators, Hangul
  fillers, private-use and unassigned code points (shown as U+FFFD); more
  than two combining marks on one character are cut back to two.

Only the standard library: the per-turn CLI imports this on its cold path.
JSON output never goes through here (``json.dumps`` escapes control
characters, and agents read JSON exactly).
"""

from __future__ import annotations

import re

TYPE_CHECKING = False  # (annotations only: typing is not imported on the cold path; checkers read this as typing's)
if TYPE_CHECKING:
    from typing import Any, TypeVar

    T = TypeVar("T")

REPLACEMENT = "\ufffd"

# An escape sequence, removed whole: CSI, then OSC / DCS / SOS / PM / APC
# (up to their terminator, or to the end of the text when unterminated),
# then any other ESC-introduced sequence, then a lone ESC.
_ESCAPES = (
    r"\x1b\[[0-?]*[ -/]*[@-~]?"
    r"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?"
    r"|\x1b[PX^_][^\x1b]*(?:\x1b\\)?"
    r"|\x1b[ -/]*[0-~]?"
)
# Anything outside printable ASCII (plus tab and newline) needs the slow path.
_UNSAFE_ASCII = r"[\x00-\x08\x0b-\x1f\x7f]"
_INVISIBLE = frozenset("\u115f\u1160\u3164\uffa0")  # Hangul fillers: blank, but not zero-width everywhere
_DROP_CATEGORIES = frozenset({"Cc", "Cf", "Cs"})  # controls, format characters (bidi, zero-width, tags), surrogates
MAX_MARKS = 2  # combining marks kept on one character (stacked marks overflow the line)


def _dropped(ch: str, category: str) -> bool:
    code = ord(ch)
    return (
        category in _DROP_CATEGORIES
        or ch in _INVISIBLE
        or 0xFE00 <= code <= 0xFE0F  # variation selectors (text ⇄ emoji presentation changes the width)
        or 0xE0100 <= code <= 0xE01EF
        or 0x1F3FB <= code <= 0x1F3FF  # emoji skin-tone modifiers
        or 0x1F1E6 <= code <= 0x1F1FF  # regional indicators (flags)
    )


def terminal_safe(text: str, *, multiline: bool = False) -> str:
    """``text`` without anything that could drive or disturb a terminal.

    ``multiline=False`` (titles, ids, one-line fields): newlines and tabs
    become spaces. ``multiline=True`` (summaries, files): newlines and tabs
    stay; ``\\r\\n`` and a lone ``\\r`` become ``\\n``."""
    if not isinstance(text, str):
        text = str(text)
    if text.isascii():
        if not re.search(_UNSAFE_ASCII, text) and (multiline or ("\n" not in text and "\t" not in text)):
            return text  # the common case: plain printable ASCII
    if "\x1b" in text:
        text = re.sub(_ESCAPES, "", text)  # (re caches the compiled pattern; compiled only when needed)
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    if not text.isascii():
        import unicodedata  # only for text that needs it: the common case never loads it

        text = unicodedata.normalize("NFC", text)
        category_of = unicodedata.category
    else:
        category_of = _ascii_has_no_category
    out: list[str] = []
    marks = 0
    for ch in text:
        if ch == "\n" or ch == "\t":
            out.append(ch if multiline else " ")
            marks = 0
            continue
        if ch < " " or ch == "\x7f":
            continue
        if ch.isascii():
            out.append(ch)
            marks = 0
            continue
        category = category_of(ch)
        if category in ("Zl", "Zp"):  # line / paragraph separators
            out.append("\n" if multiline else " ")
            marks = 0
        elif _dropped(ch, category):
            continue
        elif category in ("Co", "Cn"):  # private use, unassigned: width unknown
            out.append(REPLACEMENT)
            marks = 0
        elif category in ("Mn", "Me"):
            if out and out[-1] not in ("\n", " ", "\t") and marks < MAX_MARKS:
                out.append(ch)
                marks += 1
        else:
            out.append(ch)
            marks = 0
    return "".join(out)


def _ascii_has_no_category(ch: str) -> str:
    raise AssertionError(f"only a non-ASCII character asks its category: {ch!r}")


def terminal_safe_value(value: T) -> T:
    """``value`` with every string inside it made ``terminal_safe``: plain
    values (NamedTuples, tuples, lists, dicts) as the kernel returns them.
    Summaries, bodies and notes keep their newlines; every other string is one line."""
    return _made_safe(value)  # (the same shape of value back)


def _made_safe(value: Any) -> Any:  # (any plain value, read as its type at run time)
    if isinstance(value, str):
        return terminal_safe(value)
    if isinstance(value, tuple):
        fields = getattr(value, "_fields", None)
        if fields is not None:
            return type(value)._make(  # type: ignore[attr-defined]  # (a named tuple: it has _fields)
                terminal_safe(v, multiline=name in MULTILINE_FIELDS) if isinstance(v, str) else _made_safe(v)
                for name, v in zip(fields, value)
            )
        return tuple(_made_safe(v) for v in value)
    if isinstance(value, list):
        return [_made_safe(v) for v in value]
    if isinstance(value, dict):
        return {terminal_safe(k) if isinstance(k, str) else k: _made_safe(v) for k, v in value.items()}
    return value


# Fields of the kernel's values whose text may span lines.
MULTILINE_FIELDS = frozenset({"body", "summary", "note", "patch"})
