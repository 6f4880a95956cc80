"""Durations as people type them: ``90s``, ``30m``, ``2h``, ``1h30m``, ``1d``, or plain seconds."""

from __future__ import annotations

import re

_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}
_PART = re.compile(r"(\d+(?:\.\d+)?)([smhdw])")


def parse_duration(text: str) -> float:
    """Seconds in ``text``; raises ``ValueError`` with a message that shows the format."""
    raw = str(text).strip().lower()
    if not raw:
        raise ValueError("empty duration; use e.g. 90s, 30m, 2h, 1h30m or 1d")
    if re.fullmatch(r"\d+(?:\.\d+)?", raw):
        value = float(raw)
    else:
        pos, value = 0, 0.0
        for match in _PART.finditer(raw):
            if match.start() != pos:
                break
            value += float(match.group(1)) * _UNITS[match.group(2)]
            pos = match.end()
        if pos != len(raw) or pos == 0:
            raise ValueError(f"not a duration: {text!r}; use e.g. 90s, 30m, 2h, 1h30m or 1d")
    if value <= 0:
        raise ValueError(f"duration must be positive: {text!r}")
    if value > 366 * 86400:
        raise ValueError(f"duration too long: {text!r} (at most a year)")
    return value
