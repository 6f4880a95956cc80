"""The one source of "now". Tests and snapshots freeze it; the CLI and the
hooks honour ``LOOPX_NOW`` (epoch seconds or ISO-8601) so subprocess tests can
freeze it too. Standard library and cheap: the PreToolUse hook asks it on
every call."""

from __future__ import annotations

import math
import os
import time

TYPE_CHECKING = False  # (annotations only: typing is not imported on the cold path; checkers read this as typing's)
if TYPE_CHECKING:
    from collections.abc import Callable

_override: Callable[[], float] | None = None

# What LoopX records: 2000-01-01 … 2100-01-01. A time outside is refused before
# anything is written (one such event once made every later read fail).
EARLIEST, LATEST = 946_684_800.0, 4_102_444_800.0


def in_range(ts: float) -> bool:
    return EARLIEST <= ts <= LATEST


def frozen_by_env() -> bool:
    """``LOOPX_NOW`` is set: ``Store.open`` honours it only on a test board."""
    return bool(os.environ.get("LOOPX_NOW"))


def _from_env() -> float | None:
    raw = os.environ.get("LOOPX_NOW")
    if not raw:
        return None
    try:
        value = float(raw)
    except ValueError:
        try:
            value = parse_iso(raw)
        except (ValueError, OverflowError):
            value = float("nan")
    if not in_range(value):
        from ..shapes.errors import UsageError

        raise UsageError(
            f"LOOPX_NOW={raw[:40]!r} is not a time LoopX can record",
            "give epoch seconds or ISO-8601 between 2000 and 2100",
            code="bad_time",
        )
    return value


def now() -> float:
    """Epoch seconds (UTC)."""
    if _override is not None:
        return _override()
    frozen = _from_env()
    return frozen if frozen is not None else time.time()


def set_clock(fn: Callable[[], float] | None) -> None:
    """Install a clock (``None`` restores the real one)."""
    global _override
    _override = fn


def freeze(at: float) -> None:
    set_clock(lambda: at)


def iso(ts: float | None) -> str | None:
    if ts is None:
        return None
    try:
        # datetime.fromtimestamp(ts, timezone.utc) to the second, without importing
        # datetime on the cold path: the fraction rounds half-even to the microsecond.
        frac, whole = math.modf(ts)
        micro = round(frac * 1e6)
        second = int(whole) + (1 if micro >= 1_000_000 else -1 if micro < 0 else 0)
        return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(second))
    except (OverflowError, OSError, ValueError):  # a stored time out of range: show it, never fail the read
        return f"invalid-time:{ts!r}"


def parse_iso(text: str) -> float:
    from datetime import UTC, datetime  # (here: the hook reads "now" on every call)

    value = text.strip()
    if value.endswith("Z"):
        value = value[:-1] + "+00:00"
    dt = datetime.fromisoformat(value)
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=UTC)
    return dt.timestamp()


def human_delta(seconds: float) -> str:
    """``95`` -> ``1m35s``; compact enough for a card face."""
    seconds = int(max(0, seconds))
    if seconds < 60:
        return f"{seconds}s"
    minutes, sec = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes}m{sec:02d}s" if sec and minutes < 10 else f"{minutes}m"
    hours, minutes = divmod(minutes, 60)
    if hours < 48:
        return f"{hours}h{minutes:02d}m" if minutes else f"{hours}h"
    return f"{hours // 24}d"
