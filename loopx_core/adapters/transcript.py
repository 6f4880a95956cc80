"""Reading a runtime's session transcript: where the turn began, what it used.

Claude Code (``transcript_path`` of every hook payload: a JSONL file, one entry a
line). A user prompt is ``{"type": "user", "message": {"role": "user",
"content": <str | blocks>}, "uuid", "timestamp", …}``; tool results come back as
``user`` entries whose content is only ``tool_result`` blocks, hook feedback
as ``isMeta`` entries, and (2.1.197 and 2.1.335 alike) a background task's
notice as a ``user`` entry with ``origin.kind: "task-notification"`` and
content ``<task-notification>…`` — none of them starts a turn. Model calls are
``{"type": "assistant", "requestId", "message": {"id", "usage":
{"input_tokens", "output_tokens", "cache_creation_input_tokens",
"cache_read_input_tokens"}}, "uuid", …}``. Claude Code writes one line per
content block and streams partial usage first, so the same ``message.id`` +
``requestId`` repeats: each API call counts once, with its largest usage.
Sources: Claude Code hooks reference, "Common input fields"
(https://code.claude.com/docs/en/hooks: the transcript is written
asynchronously and may lag); transcript shape as documented in
github.com/DRMacIver/claude-reliability notes/transcript-format.md; the
duplicate-usage rule from ccusage/ccusage#888 and Owloops/claude-powerline#108.

Codex (``transcript_path``: the rollout JSONL under ``~/.codex/sessions``, may be
null). Lines are ``{"timestamp", "type", "payload"}``; a user prompt is an
``event_msg`` with ``payload.type == "user_message"`` before 0.171, and from
0.171 on an ``event_msg`` ``item_completed`` whose ``item.type`` is
``"UserMessage"`` (``response_item`` messages with role ``user`` also carry
AGENTS.md and hook feedback, so they are not prompts); every model call reports an ``event_msg`` of
``payload.type == "token_count"`` with ``info.last_token_usage``
(``input_tokens`` — cached included —, ``cached_input_tokens``,
``output_tokens``, ``reasoning_output_tokens``). Source: ``codex-rs/rollout``
and ``codex-rs/protocol`` in github.com/openai/codex.
"""

from __future__ import annotations

import json
from datetime import datetime
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


def parse_time(text) -> float | None:
    if not isinstance(text, str) or not text:
        return None
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def _lines(path: str) -> list[dict]:
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


def _int(usage: dict, key: str) -> int:
    value = usage.get(key)
    return value if type(value) is int and value >= 0 else 0


def _is_prompt_claude(entry: dict) -> bool:
    if entry.get("type") != "user" or entry.get("isMeta") or entry.get("isSidechain"):
        return False
    origin = entry.get("origin")
    if isinstance(origin, dict) and origin.get("kind") not in (None, "user", "human"):
        return False  # a background task's notice (2.1.x: kind "task-notification"), not a person
    message = entry.get("message")
    if not isinstance(message, dict):
        return False
    content = message.get("content")
    if isinstance(content, str):
        return bool(content.strip()) and not content.lstrip().startswith("<task-notification>")
    if isinstance(content, list):
        kinds = {block.get("type") for block in content if isinstance(block, dict)}
        return "tool_result" not in kinds and bool(kinds & {"text", "image"})
    return False


def read_claude(path: str) -> Turn:
    entries = _lines(path)
    markers: list[str] = []
    calls: list[tuple[int, Call]] = []
    best: dict[str, tuple[int, Call]] = {}
    prompt_index = started = last_text = None
    for i, entry in enumerate(entries):
        markers.append(str(entry.get("uuid") or f"line:{i}"))
        if _is_prompt_claude(entry):
            prompt_index, started = i, parse_time(entry.get("timestamp"))
            continue
        if entry.get("type") != "assistant":
            continue
        message = entry.get("message")
        text = _text(message)
        if text:
            last_text = text
        usage = message.get("usage") if isinstance(message, dict) else None
        if not isinstance(usage, dict):
            continue
        identity = f"{message.get('id') or ''}:{entry.get('requestId') or ''}"
        if identity == ":":
            identity = markers[-1]
        call = claude_call(message, usage, identity)
        earlier = best.get(identity)
        if earlier is None or (call.tokens_out, call.tokens_in) > (earlier[1].tokens_out, earlier[1].tokens_in):
            best[identity] = (earlier[0] if earlier else i, call)
    calls = sorted(best.values(), key=lambda pc: pc[0])
    return Turn(started, prompt_index, markers, calls, last_text)


def _text(message) -> str | None:
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, str):
        return content.strip() or None
    if isinstance(content, list):
        text = "".join(b.get("text", "") for b in content if isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str))
        return text.strip() or None
    return None


def _is_prompt_codex(entry: dict) -> bool:
    payload = entry.get("payload")
    if not isinstance(payload, dict) or entry.get("type") != "event_msg":
        return False
    if payload.get("type") == "user_message":  # before 0.171
        return True
    item = payload.get("item")
    # 0.171: the prompt is an item_completed UserMessage (a Stop hook's feedback is a HookPrompt)
    return payload.get("type") == "item_completed" and isinstance(item, dict) and item.get("type") == "UserMessage"


def read_codex(path: str) -> Turn:
    entries = _lines(path)
    markers: list[str] = []
    calls: list[tuple[int, Call]] = []
    prompt_index = started = None
    model = None  # from the latest turn_context: token_count events do not name it
    for i, entry in enumerate(entries):
        markers.append(f"line:{i}")
        if _is_prompt_codex(entry):
            prompt_index, started = i, parse_time(entry.get("timestamp"))
            continue
        payload = entry.get("payload")
        if entry.get("type") == "turn_context" and isinstance(payload, dict) and isinstance(payload.get("model"), str):
            model = payload["model"]
            continue
        if entry.get("type") != "event_msg" or not isinstance(payload, dict) or payload.get("type") != "token_count":
            continue
        info = payload.get("info")
        usage = info.get("last_token_usage") if isinstance(info, dict) else None
        if not isinstance(usage, dict):
            continue
        calls.append((i, codex_call(usage, model, f"line:{i}")))
    return Turn(started, prompt_index, markers, calls)


def claude_call(message: dict, usage: dict, identity: str) -> Call:
    """One Claude Code model call from its Messages-API ``usage`` (a transcript
    entry's, or a ``stream-json`` assistant event's: the same message shape)."""
    detail = {k: _int(usage, k) for k in ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens", "output_tokens")}
    parts = {
        "input": detail["input_tokens"],
        "cache_write": detail["cache_creation_input_tokens"],
        "cache_read": detail["cache_read_input_tokens"],
        "output": detail["output_tokens"],
    }
    model = message.get("model") if isinstance(message.get("model"), str) else None
    return Call(identity, parts["input"] + parts["cache_write"] + parts["cache_read"], detail["output_tokens"], detail, model, parts)


def codex_call(usage: dict, model: str | None, identity: str) -> Call:
    """One Codex model call from a ``token_count`` event's ``last_token_usage``."""
    detail = {k: _int(usage, k) for k in ("input_tokens", "cached_input_tokens", "output_tokens", "reasoning_output_tokens")}
    # OpenAI counts cached input inside input_tokens, and reasoning inside output_tokens.
    cached = min(detail["cached_input_tokens"], detail["input_tokens"])
    parts = {"input": detail["input_tokens"] - cached, "cache_read": cached, "output": detail["output_tokens"]}
    return Call(identity, detail["input_tokens"], detail["output_tokens"], detail, model, parts)


READERS = {"claude-code": read_claude, "codex": read_codex}


def read(runtime: str, path: str) -> Turn:
    return READERS[runtime](path)


def before_last_call(turn: Turn) -> Turn:
    """``turn`` as it read before its last model call's first entry was written
    (what a Stop hook sees when the transcript lags: ``LOOPX_FAULT=transcript-lag``)."""
    if not turn.calls:
        return turn
    cut = max(pos for pos, _ in turn.calls)
    kept = turn.prompt_index is not None and turn.prompt_index < cut
    return Turn(turn.started_at if kept else None, turn.prompt_index if kept else None, turn.markers[:cut], [(p, c) for p, c in turn.calls if p < cut], None)


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
DETAIL_PARTS = {"input_tokens": "input", "cache_creation_input_tokens": "cache_write", "cache_read_input_tokens": "cache_read", "output_tokens": "output"}
