"""Short, typable ids: cards ``LX-12``, gates ``G-7``, handoffs ``H-3``, evidence ``E-40``."""

from __future__ import annotations

import re

CARD, GATE, HANDOFF, EVIDENCE = "LX", "G", "H", "E"
_ID = re.compile(r"^\s*(?:([A-Za-z]+)-)?(\d+)\s*$")


def key(prefix: str, number: int) -> str:
    """An id's text: ``key(CARD, 12)`` is ``"LX-12"``."""
    return f"{prefix}-{number}"


def fmt(prefix: str, number: int | None) -> str | None:
    """``key``, or None for no id."""
    return None if number is None else key(prefix, number)


def parse(prefix: str, text: object) -> int:
    """``"LX-12"``, ``"lx-12"`` or ``"12"`` -> 12. ``ValueError`` for anything else."""
    if isinstance(text, int) and not isinstance(text, bool):
        if text <= 0:
            raise ValueError(f"not a valid id: {text}")
        return text
    match = _ID.match(str(text))
    if not match or (match.group(1) and match.group(1).upper() != prefix):
        raise ValueError(f"not a {prefix}- id: {text!r} (expected e.g. {prefix}-3)")
    number = int(match.group(2))
    if number <= 0 or number > 2**62:
        raise ValueError(f"not a valid id: {text!r}")
    return number
