"""The evidence shape, declared once: the fields a writeback carries, their
defaults and what each means. The MCP ``writeback`` tool's schema
(``shapes/verbs.py``) and the cold pre-check (``shapes/inputs._fast_evidence``)
are made from this table; the pydantic model (``shapes/schemas.EvidenceInput``)
is held to it by ``tests/kernel/test_properties.py`` (the same fields and
defaults) and to the pre-check by its property test. Standard library only:
the hook imports the verb table cold."""

from __future__ import annotations

TYPE_CHECKING = False  # (annotations only: the hook imports this cold; checkers read this as typing's)
if TYPE_CHECKING:
    # a field: its name, its default (a value, or a callable making a fresh one), its MCP schema
    EvidenceField = tuple[str, object, dict[str, object] | None]

_TEXT = {"type": "string"}
_LIST = {"type": "array", "items": {"type": "string"}}

LIST = list  # a fresh list per input


def Field(name: str, default: object, mcp: dict[str, object] | None) -> EvidenceField:
    """A field: its name, its default when absent (None: required or unset),
    its MCP schema (None: not offered over MCP). Plain tuples: the cold
    parser reads this table."""
    return name, default, mcp


FIELDS = (
    Field(
        "summary", None, {"type": "string", "description": "What this turn did (required; at most 4,000 characters)."}
    ),
    Field(
        "artifacts",
        LIST,
        {**_LIST, "description": "Files this turn made or changed, relative to the project; each is hashed."},
    ),
    Field("next", None, {**_TEXT, "description": "The next action for whoever continues the card."}),
    Field("todos_added", LIST, {**_LIST, "description": "New todo items, one string each."}),
    Field(
        "todos_done",
        LIST,
        {
            "type": "array",
            "items": {"type": "integer"},
            "description": "Numbers of the card's todos this turn finished, as `context` lists them.",
        },
    ),
    Field(
        "tokens",
        None,
        {"type": "integer", "minimum": 0, "description": "Tokens this turn used, charged to the card's budget."},
    ),
    Field("tokens_in", None, None),
    Field("tokens_out", None, None),
    Field(
        "usd",
        None,
        {"type": "number", "minimum": 0, "description": "Dollars this turn cost, charged to the card's budget."},
    ),
    Field(
        "turn_id",
        None,
        {
            **_TEXT,
            "description": "An id for this turn (letters, digits, . _ : @ / + -; up to 128): a retry with the same id returns the first result.",
        },
    ),
    Field(
        "release",
        False,
        {"type": "boolean", "default": False, "description": "Give the card back (ready) after recording."},
    ),
)
NAMES = frozenset(name for name, _, _ in FIELDS)


def default_of(value: object) -> object:
    return value() if callable(value) else value


def with_defaults(data: dict) -> dict:
    """Every field: its value in ``data``, else its default."""
    return {name: data[name] if name in data else default_of(default) for name, default, _ in FIELDS}


def mcp_properties() -> dict:
    return {name: mcp for name, _, mcp in FIELDS if mcp is not None}
