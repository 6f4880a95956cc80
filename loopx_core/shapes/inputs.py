"""The single entry point for validating input: ``validate(kind, data)``.

The pydantic models in ``schemas.py`` are the definition. Importing pydantic
and building the models costs 90–370 ms, more than the rest of a cold per-turn
verb, so for the inputs agents send every turn (next, evidence, card, done,
gate_ask, handoff, monitor, text) a pre-check accepts the plain, obviously valid
shapes and returns exactly what pydantic would (a property test holds the two
together, tests/kernel/test_properties.py). Anything the pre-check is not sure about goes to pydantic, which
also writes every error message."""

from __future__ import annotations

import math

from ..rules import ids, limits
from ..rules.durations import parse_duration
from . import evidence, verbs
from .errors import InvalidInput

TYPE_CHECKING = False  # (annotations only: typing is not imported on the cold path; checkers read this as typing's)
if TYPE_CHECKING:
    import re
    from collections.abc import Callable

    from pydantic import ValidationError

    # A field's pre-check: the value an agent sent, as JSON decoded it, to the
    # value the model would make of it (or _Unsure).
    Check = Callable[[object], object]
    FastCheck = Callable[[dict[str, object]], "dict[str, object] | None"]

# What a refusal of each shape says: declared with the verb that owns the shape (shapes/verbs.py).
HINTS = {verb.shape: verbs.hint_of(verb) for verb in verbs.VERBS.values() if verb.shape}


def _text_ok(value: object, max_len: int, multiline: bool = True) -> bool:
    return isinstance(value, str) and limits.text_problem(value, max_len=max_len, multiline=multiline) is None


def _fast_next(data: dict) -> dict | None:
    if set(data) - {"agent", "lease", "claim"}:
        return None
    agent, lease, claim = data.get("agent"), data.get("lease"), data.get("claim", False)
    if not isinstance(agent, str) or not limits.AGENT_ID.fullmatch(agent) or not isinstance(claim, bool):
        return None
    if lease is not None:
        if not isinstance(lease, str):
            return None
        try:
            lease = parse_duration(lease)
        except ValueError:
            return None
    return {"agent": agent, "lease": lease, "claim": claim}


def _fast_evidence(data: dict) -> dict | None:
    if set(data) - evidence.NAMES:
        return None
    out = evidence.with_defaults(data)
    if not _text_ok(out["summary"], limits.SUMMARY_MAX):
        return None
    if out["next"] is not None and not _text_ok(out["next"], limits.NEXT_MAX):
        return None
    for key, max_len, max_items in (
        ("artifacts", limits.PATH_MAX, limits.ARTIFACTS_MAX),
        ("todos_added", limits.TODO_MAX, limits.LIST_MAX),
    ):
        items = out[key]
        if (
            not isinstance(items, list)
            or len(items) > max_items
            or not all(_text_ok(v, max_len, multiline=False) for v in items)
        ):
            return None
        out[key] = [v.strip() for v in items]
    done = out["todos_done"]
    if not isinstance(done, list) or len(done) > limits.LIST_MAX:
        return None
    if not all(type(v) is int and 1 <= v <= 10**9 for v in done):
        return None
    for key in ("tokens", "tokens_in", "tokens_out"):
        v = out[key]
        if v is not None and not (type(v) is int and 0 <= v <= limits.TOKENS_MAX):
            return None
    usd = out["usd"]
    if usd is not None:
        if type(usd) is int:
            if not 0 <= usd <= limits.USD_MAX:  # float() of a huge int would overflow
                return None
            usd = float(usd)
        if type(usd) is not float or not math.isfinite(usd) or not 0 <= usd <= limits.USD_MAX:
            return None
        out["usd"] = usd
    turn = out["turn_id"]
    if turn is not None and not (isinstance(turn, str) and limits.TOKEN_ID.fullmatch(turn)):
        return None
    if not isinstance(out["release"], bool):
        return None
    return out


class _Unsure(Exception):
    """The pre-check cannot vouch for a value: pydantic decides (and words the error)."""


def _text(max_len: int, *, allow_empty: bool = False, multiline: bool = True) -> Check:
    def check(value: object) -> str:
        if type(value) is not str or limits.text_problem(
            value, max_len=max_len, allow_empty=allow_empty, multiline=multiline
        ):
            raise _Unsure
        return value if multiline else value.strip()

    return check


def _pattern(regex: re.Pattern[str], max_len: int = 128) -> Check:
    def check(value: object) -> str:
        if type(value) is not str or len(value) > max_len or not regex.fullmatch(value):
            raise _Unsure
        return value

    return check


def _whole(low: int, high: int) -> Check:
    def check(value: object) -> int:
        if type(value) is not int or not low <= value <= high:
            raise _Unsure
        return value

    return check


def _money(value: object) -> float:
    """A positive, finite amount up to USD_MAX (``gt=0``: zero is pydantic's to refuse)."""
    if type(value) is int and 0 < value <= limits.USD_MAX:
        return float(value)
    if type(value) is float and math.isfinite(value) and 0 < value <= limits.USD_MAX:
        return value
    raise _Unsure


def _duration(value: object) -> float:
    if type(value) is not str:
        raise _Unsure
    try:
        return parse_duration(value)
    except ValueError:
        raise _Unsure from None


def _card_ref(value: object) -> int:
    if type(value) is not str:
        raise _Unsure
    try:
        return ids.parse(ids.CARD, value)
    except ValueError:
        raise _Unsure from None


def _flag(value: object) -> bool:
    if type(value) is not bool:
        raise _Unsure
    return value


def _list_of(check: Check, max_items: int) -> Check:
    def checks(value: object) -> list[object]:
        if type(value) is not list or len(value) > max_items:
            raise _Unsure
        return [check(v) for v in value]

    return checks


_REQUIRED = object()


def _fields(spec: dict[str, tuple[Check, object]]) -> FastCheck:
    """A pre-check for one pydantic model: ``spec`` maps each field, in the
    model's order, to (check, default or _REQUIRED) — the same limits table."""

    def fast(data: dict[str, object]) -> dict[str, object] | None:
        if type(data) is not dict or set(data) - spec.keys():
            return None
        out: dict[str, object] = {}
        try:
            for name, (check, default) in spec.items():
                if name in data and not (data[name] is None and default is None):
                    out[name] = check(data[name])
                elif default is _REQUIRED:
                    return None
                else:
                    out[name] = list(default) if type(default) is list else default
        except _Unsure:
            return None
        return out

    return fast


_todos = _list_of(_text(limits.TODO_MAX, multiline=False), limits.LIST_MAX)

FAST = {
    "next": _fast_next,
    "evidence": _fast_evidence,
    "card": _fields(
        {
            "title": (_text(limits.TITLE_MAX, multiline=False), _REQUIRED),
            "body": (_text(limits.BODY_MAX, allow_empty=True), ""),
            "needs": (_list_of(_pattern(limits.SCOPE, limits.SCOPE_MAX), limits.LIST_MAX), []),
            "after": (_list_of(_card_ref, limits.LIST_MAX), []),
            "priority": (_whole(limits.PRIORITY_MIN, limits.PRIORITY_MAX), 2),
            "owner": (_pattern(limits.AGENT_ID), None),
            "next": (_text(limits.NEXT_MAX), None),
            "verify": (_text(limits.VERIFY_MAX), None),
            "max_turns": (_whole(1, limits.TURNS_MAX), None),
            "max_tokens": (_whole(1, limits.TOKENS_MAX), None),
            "max_usd": (_money, None),
            "backlog": (_flag, False),
        }
    ),
    "done": _fields({"summary": (_text(limits.SUMMARY_MAX), _REQUIRED), "verify_timeout": (_duration, None)}),
    "gate_ask": _fields(
        {
            "question": (_text(limits.QUESTION_MAX), _REQUIRED),
            "scope": (_pattern(limits.SCOPE, limits.SCOPE_MAX), None),
            "options": (_list_of(_text(limits.OPTION_MAX, multiline=False), limits.OPTIONS_MAX), []),
            "deadline": (_duration, None),
            "wait": (_duration, None),
        }
    ),
    "handoff": _fields(
        {
            "to": (_pattern(limits.AGENT_ID), _REQUIRED),
            "summary": (_text(limits.SUMMARY_MAX), _REQUIRED),
            "done": (_todos, []),
            "pending": (_todos, []),
        }
    ),
    "monitor": _fields({"every": (_duration, _REQUIRED)}),
    "text": _fields({"text": (_text(limits.BODY_MAX, allow_empty=True), _REQUIRED)}),
}


def page_limit(limit: int | None, default: int | None = None, low: int = 1) -> int:
    """A list's page size (``--limit``, the MCP ``limit``): the default when absent, refused outside 1..PAGE_MAX."""
    if limit is None:
        return default or limits.PAGE_DEFAULT
    if not low <= limit <= limits.PAGE_MAX:
        raise InvalidInput(
            f"--limit {limit}: a page holds {low} to {limits.PAGE_MAX} rows",
            f"e.g. --limit {limits.PAGE_DEFAULT}; the next page starts where the JSON's next_after (events: next_since) points",
        )
    return limit


def _describe(exc: ValidationError) -> str:
    parts = []
    for err in exc.errors():
        where = ".".join(str(p) for p in err.get("loc", ())) or "input"
        msg = err.get("msg", "invalid")
        msg = msg.removeprefix("Value error, ")
        if err.get("type") == "extra_forbidden":
            msg = "is not a known field"
        elif err.get("type") == "missing":
            msg = "is required"
        parts.append(f"{where}: {msg}")
    return "; ".join(parts[:6])


def validate(kind: str, data: dict, *, hint: str | None = None, fast: bool = True) -> dict:
    """Validated, normalised ``data`` or ``InvalidInput`` (exit 3) saying what to fix."""
    if fast and kind in FAST:
        result = FAST[kind](data)
        if result is not None:
            return result
    from pydantic import ValidationError

    from .schemas import MODELS

    if not isinstance(data, dict):
        raise InvalidInput("expected a JSON object", hint or HINTS.get(kind, ""))
    try:
        model = MODELS[kind].model_validate(data)
    except ValidationError as exc:
        raise InvalidInput(_describe(exc), hint or HINTS.get(kind, "")) from None
    return model.model_dump()
