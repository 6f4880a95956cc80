"""A runtime's session transcript, as LoopX reads it: the model calls of a
turn (``Call``), where the turn began (``Turn``), which calls no charge covered
yet. What an entry of a transcript means is the runtime's own
(``read_transcript`` of its module: ``claude_code``, ``codex``); the lines,
the boundaries and the growth of a call are shared here."""

from __future__ import annotations

import json
from typing import NamedTuple

MAX_BYTES = 64 * 1024 * 1024  # a transcript larger than this is read from its tail


class Call(NamedTuple):
    """One model call's usage."""

    identity: str
    tokens_in: int
    tokens_out: int
    detail: dict
    model: str | None  # None when the transcript does not name it
    parts: dict  # tokens by price kind: input, output, cache_read, cache_write


class Turn(NamedTuple):
    started_at: float | None  # the last user prompt (epoch seconds), if the transcript has one
    prompt_index: int | None  # its position among the entries
    markers: list[str]  # a stable id per entry (uuid, else line number), in order
    calls: list[tuple[int, Call]]  # (entry position, call) for every usage record
    last_text: str | None = None  # the text of the last assistant message (Claude Code)


def parse_time(text: object) -> float | None:
    if not isinstance(text, str) or not text:
        return None
    from datetime import datetime

    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def lines(path: str) -> list[dict]:
    """The JSON objects of a transcript, one a line (its tail past MAX_BYTES);
    a line still being written, or damaged, is skipped."""
    with open(path, "rb") as fh:
        fh.seek(0, 2)
        size = fh.tell()
        fh.seek(max(0, size - MAX_BYTES))
        data = fh.read()
    if size > MAX_BYTES:
        data = data[data.find(b"\n") + 1 :]
    out = []
    for line in data.split(b"\n"):
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except ValueError:
            continue  # a line still being written, or damage: skip it
        if isinstance(value, dict):
            out.append(value)
    return out


def count(usage: dict, key: str) -> int:
    """A usage's token count under ``key`` (0 unless a whole number >= 0)."""
    value = usage.get(key)
    return value if type(value) is int and value >= 0 else 0


def read(runtime: str, path: str) -> Turn:
    """The transcript at ``path`` of ``runtime`` (its module's ``read_transcript``)."""
    from . import module

    return module(runtime).read_transcript(path)


def before_last_call(turn: Turn) -> Turn:
    """``turn`` as it read before its last model call's first entry was written
    (what a Stop hook sees when the transcript lags: ``LOOPX_FAULT=transcript-lag``)."""
    if not turn.calls:
        return turn
    cut = max(pos for pos, _ in turn.calls)
    kept = turn.prompt_index is not None and turn.prompt_index < cut
    return Turn(
        turn.started_at if kept else None,
        turn.prompt_index if kept else None,
        turn.markers[:cut],
        [(p, c) for p, c in turn.calls if p < cut],
        None,
    )


def uncharged(turn: Turn, through: str | None, counted: dict[str, dict] | None = None) -> tuple[list[Call], str | None]:
    """The calls after ``through`` (the last entry a previous charge covered), or
    after the turn's prompt when ``through`` is unknown here; and the marker the
    new charge will cover up to. Calls already seen before the boundary (a split
    API response) are not charged again — except by what their usage grew past
    what ``counted`` (call id -> usage by kind an earlier charge covered) says
    was charged: that difference is a call of its own (same id)."""
    counted = counted or {}
    start = -1
    if through is not None and through in turn.markers:
        start = len(turn.markers) - 1 - turn.markers[::-1].index(through)
    elif turn.prompt_index is not None:
        start = turn.prompt_index
    elif through is not None:
        start = len(turn.markers) - 1  # the previous charge's entry is gone: charge nothing twice
    seen = {call.identity for pos, call in turn.calls if pos <= start}
    new = []
    for pos, call in turn.calls:
        if call.identity in counted:
            grown = growth(call, counted[call.identity])
            if grown is not None:
                new.append(grown)
        elif pos > start and call.identity not in seen:
            new.append(call)
    last = turn.markers[-1] if turn.markers else None
    return new, last


def growth(call: Call, before: dict) -> Call | None:
    """What ``call`` used beyond ``before`` (its usage by kind, as charged), or None."""
    parts = {k: max(0, v - before.get(k, 0)) for k, v in call.parts.items()}
    if not any(parts.values()):
        return None
    scale = {k: parts[k] for k in parts}
    detail = dict(call.detail)
    for key, kind in DETAIL_PARTS.items():
        if key in detail and kind in scale:
            detail[key] = scale[kind]
    tokens_in = parts.get("input", 0) + parts.get("cache_write", 0) + parts.get("cache_read", 0)
    return Call(call.identity, tokens_in, parts.get("output", 0), detail, call.model, parts)


# A Claude Code call's detail, by the part of its usage each key is (a Codex call never grows: one line per call).
DETAIL_PARTS = {
    "input_tokens": "input",
    "cache_creation_input_tokens": "cache_write",
    "cache_read_input_tokens": "cache_read",
    "output_tokens": "output",
}
