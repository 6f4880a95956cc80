"""Pydantic models of every input LoopX accepts (each a ``kind``: the shape a verb
declares in shapes/verbs.py) — CLI flags, ``--input`` JSON
documents, evidence files and MCP tool calls all validate here."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Annotated, ClassVar, Literal

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field

from ..rules import ids, limits
from ..rules.durations import parse_duration

if TYPE_CHECKING:
    import re
    from collections.abc import Collection

# Each helper below makes the validator of an ``Annotated`` field (spelled out at
# each use, so a type checker reads the field's type: ``Annotated[str, _text(…)]``).


def _text(max_len: int, *, allow_empty: bool = False, multiline: bool = True) -> AfterValidator:
    def check(value: str) -> str:
        problem = limits.text_problem(value, max_len=max_len, allow_empty=allow_empty, multiline=multiline)
        if problem:
            raise ValueError(problem)
        return value.strip() if not multiline else value

    return AfterValidator(check)


def _pattern(regex: re.Pattern[str], what: str, example: str, max_len: int = 128) -> AfterValidator:
    def check(value: str) -> str:
        if len(value) > max_len or not regex.fullmatch(value):
            raise ValueError(f"not a valid {what}: {value[:80]!r} (e.g. {example})")
        return value

    return AfterValidator(check)


def _id_of(prefix: str) -> BeforeValidator:
    def parse(value: object) -> int:
        if isinstance(value, bool):
            raise ValueError(f"expected a {prefix}- id")
        try:
            return ids.parse(prefix, value)
        except ValueError as exc:
            raise ValueError(str(exc)) from None

    return BeforeValidator(parse)


def _duration(value: object) -> float:
    if isinstance(value, bool):
        raise ValueError("expected a duration such as 30m")
    if isinstance(value, int) and not 0 < value <= 366 * 86400:  # before float(): a huge int overflows
        raise ValueError("duration must be between 1s and a year")
    if isinstance(value, (int, float)):
        if not math.isfinite(value) or value <= 0 or value > 366 * 86400:
            raise ValueError("duration must be between 1s and a year")
        return float(value)
    return parse_duration(str(value))


def _todo_ref(value: object) -> object:  # (a number, else what pydantic then refuses)
    if isinstance(value, bool):
        raise ValueError("expected a todo number such as 3")
    if isinstance(value, str):
        value = value.strip().lstrip("#").removeprefix("T").removeprefix("t")
        if not value.isdigit():
            raise ValueError("expected a todo number such as 3 (see `loopx context CARD`)")
        value = int(value)
    return value


def _finite(value: float) -> float:
    if not math.isfinite(value):
        raise ValueError("must be a finite number")
    return value


def _near_miss(value: str, known: Collection[str], what: str) -> None:
    """A value that is not one of ``known`` but close to one: a typo, refused
    with the one it was probably meant to be."""
    import difflib

    close = difflib.get_close_matches(value, known, n=1, cutoff=0.75)
    if close and value not in known:
        raise ValueError(f"unknown {what} {value[:80]!r}: did you mean {close[0]!r}?")


def _known_runtime(value: str) -> str:
    from ..runtimes import NAMES  # (the registry imports nothing)

    _near_miss(value, NAMES, "runtime")
    return value


def _capability(value: str) -> str:
    if ":" not in value:  # (a family and an action: git:push; `gitpush` is git:push mistyped)
        _near_miss(value, limits.WELL_KNOWN_SCOPES, "scope")
    return value


AgentId = Annotated[str, _pattern(limits.AGENT_ID, "agent id", "claude-1")]
Scope = Annotated[str, _pattern(limits.SCOPE, "scope", "git:push", limits.SCOPE_MAX)]
TokenId = Annotated[str, _pattern(limits.TOKEN_ID, "id", "turn-42")]
Runtime = Annotated[str, _pattern(limits.RUNTIME, "runtime", "claude-code")]
CardRef = Annotated[int, _id_of(ids.CARD)]
GateRef = Annotated[int, _id_of(ids.GATE)]
Duration = Annotated[float, BeforeValidator(_duration)]
TodoRef = Annotated[int, BeforeValidator(_todo_ref), Field(ge=1, le=10**9)]
Tokens = Annotated[int, Field(ge=0, le=limits.TOKENS_MAX, strict=False)]
Usd = Annotated[float, Field(ge=0, le=limits.USD_MAX), AfterValidator(_finite)]
Path = Annotated[str, _text(limits.PATH_MAX, multiline=False)]
Todo = Annotated[str, _text(limits.TODO_MAX, multiline=False)]


class Input(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, strict=False)
    kind: ClassVar[str]  # each shape's name, as a verb declares it (shapes/verbs.py)


class EvidenceInput(Input):
    """A writeback: flags of ``loopx writeback`` or its ``--input`` document."""

    kind: ClassVar[str] = "evidence"

    summary: Annotated[str, _text(limits.SUMMARY_MAX)]
    artifacts: list[Path] = Field(default_factory=list, max_length=limits.ARTIFACTS_MAX)
    next: Annotated[str, _text(limits.NEXT_MAX)] | None = None
    todos_added: list[Todo] = Field(default_factory=list, max_length=limits.LIST_MAX)
    todos_done: list[TodoRef] = Field(default_factory=list, max_length=limits.LIST_MAX)
    tokens: Tokens | None = None
    tokens_in: Tokens | None = None
    tokens_out: Tokens | None = None
    usd: Usd | None = None
    turn_id: TokenId | None = None
    release: bool = False


class EvidenceDocument(EvidenceInput):
    """A ``*.loopx.json`` file or one ``*.loopx.jsonl`` line (DESIGN §7)."""

    kind: ClassVar[str] = "document"

    card: CardRef
    agent: AgentId


class NextInput(Input):
    kind: ClassVar[str] = "next"
    agent: AgentId
    lease: Duration | None = None
    claim: bool = False


class AgentInput(Input):
    kind: ClassVar[str] = "agent"
    id: AgentId
    runtime: Annotated[Runtime, AfterValidator(_known_runtime)] | None = None
    can: list[Annotated[Scope, AfterValidator(_capability)]] = Field(default_factory=list, max_length=limits.LIST_MAX)
    watch: list[Path] = Field(default_factory=list, max_length=limits.LIST_MAX)
    tokens: Annotated[int, Field(ge=1, le=limits.TOKENS_MAX)] | None = None
    usd: Annotated[float, Field(gt=0, le=limits.USD_MAX), AfterValidator(_finite)] | None = None
    turns: Annotated[int, Field(ge=1, le=limits.TURNS_MAX)] | None = None
    window: Duration | None = None


class WindowInput(Input):
    """``loopx card window``: so much per so long (or ``clear``)."""

    kind: ClassVar[str] = "window"

    every: Duration | None = None
    tokens: Annotated[int, Field(ge=1, le=limits.TOKENS_MAX)] | None = None
    usd: Annotated[float, Field(gt=0, le=limits.USD_MAX), AfterValidator(_finite)] | None = None
    turns: Annotated[int, Field(ge=1, le=limits.TURNS_MAX)] | None = None
    clear: bool = False


class CardInput(Input):
    kind: ClassVar[str] = "card"
    title: Annotated[str, _text(limits.TITLE_MAX, multiline=False)]
    body: Annotated[str, _text(limits.BODY_MAX, allow_empty=True)] = ""
    needs: list[Scope] = Field(default_factory=list, max_length=limits.LIST_MAX)
    after: list[CardRef] = Field(default_factory=list, max_length=limits.LIST_MAX)
    priority: Annotated[int, Field(ge=limits.PRIORITY_MIN, le=limits.PRIORITY_MAX)] = 2
    owner: AgentId | None = None
    next: Annotated[str, _text(limits.NEXT_MAX)] | None = None
    verify: Annotated[str, _text(limits.VERIFY_MAX)] | None = None
    max_turns: Annotated[int, Field(ge=1, le=limits.TURNS_MAX)] | None = None
    max_tokens: Annotated[int, Field(ge=1, le=limits.TOKENS_MAX)] | None = None
    max_usd: Annotated[float, Field(gt=0, le=limits.USD_MAX), AfterValidator(_finite)] | None = None
    backlog: bool = False


class EditInput(Input):
    """``loopx card edit``: what a person rewrites (an empty next or verify clears it)."""

    kind: ClassVar[str] = "edit"
    title: Annotated[str, _text(limits.TITLE_MAX, multiline=False)] | None = None
    body: Annotated[str, _text(limits.BODY_MAX, allow_empty=True)] | None = None
    next: Annotated[str, _text(limits.NEXT_MAX, allow_empty=True)] | None = None
    verify: Annotated[str, _text(limits.VERIFY_MAX, allow_empty=True)] | None = None


class BudgetInput(Input):
    kind: ClassVar[str] = "budget"
    add_turns: Annotated[int, Field(ge=1, le=limits.TURNS_MAX)] | None = None
    add_tokens: Annotated[int, Field(ge=1, le=limits.TOKENS_MAX)] | None = None
    add_usd: Annotated[float, Field(gt=0, le=limits.USD_MAX), AfterValidator(_finite)] | None = None


class GateAskInput(Input):
    kind: ClassVar[str] = "gate_ask"
    question: Annotated[str, _text(limits.QUESTION_MAX)]
    scope: Scope | None = None
    options: list[Annotated[str, _text(limits.OPTION_MAX, multiline=False)]] = Field(
        default_factory=list, max_length=limits.OPTIONS_MAX
    )
    deadline: Duration | None = None
    wait: Duration | None = None


class GateAnswerInput(Input):
    kind: ClassVar[str] = "gate_answer"
    decision: Literal["approve", "reject"]
    note: Annotated[str, _text(limits.NOTE_MAX)] | None = None
    remember: Literal["card", "agent", "board", "session"] | None = None
    for_seconds: Duration | None = None
    choice: Annotated[str, _text(limits.OPTION_MAX, multiline=False)] | None = (
        None  # one of the gate's options (its text or number)
    )
    text: Annotated[str, _text(limits.NOTE_MAX)] | None = None  # the person's own words


class HandoffInput(Input):
    kind: ClassVar[str] = "handoff"
    to: AgentId
    summary: Annotated[str, _text(limits.SUMMARY_MAX)]
    done: list[Todo] = Field(default_factory=list, max_length=limits.LIST_MAX)
    pending: list[Todo] = Field(default_factory=list, max_length=limits.LIST_MAX)


class DoneInput(Input):
    kind: ClassVar[str] = "done"
    summary: Annotated[str, _text(limits.SUMMARY_MAX)]
    verify_timeout: Duration | None = None


class MonitorInput(Input):
    kind: ClassVar[str] = "monitor"
    every: Duration


Rate = Annotated[float, Field(ge=0, le=limits.RATE_MAX), AfterValidator(_finite)]


class PriceInput(Input):
    """``loopx price set``: dollars per million tokens."""

    kind: ClassVar[str] = "price"

    model: Annotated[str, _pattern(limits.MODEL, "model name", "claude-sonnet-4-6", 128)]
    input: Rate
    output: Rate
    cache_read: Rate | None = None
    cache_write: Rate | None = None


class TextInput(Input):
    """A single free-text argument (e.g. ``--objective``, ``--summary`` of a reassign)."""

    kind: ClassVar[str] = "text"

    text: Annotated[str, _text(limits.BODY_MAX, allow_empty=True)]


def _models(base: type[Input]) -> dict[str, type[Input]]:
    """Every input model by its ``kind`` (the shape a verb declares in shapes/verbs.py)."""
    found: dict[str, type[Input]] = {}
    for model in base.__subclasses__():
        found[model.kind] = model
        found.update(_models(model))
    return found


MODELS = _models(Input)
