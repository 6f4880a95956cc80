"""Property tests over the CLI's inputs: whatever an agent (or a fuzzer) sends,
the answer is a documented refusal or a success — never an internal error or a
traceback — and a refusal for bad input (exit 2 or 3) leaves the board as it was.
Also: the cold-path pre-check in loopx_core/shapes/inputs.py agrees with pydantic."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from loopx_core.shapes import inputs
from loopx_core.shapes.errors import InvalidInput

from .conftest import card

FUZZ = settings(
    max_examples=80,
    deadline=None,
    database=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)

# -- values -------------------------------------------------------------------

SPECIAL = [
    "",
    " ",
    "\t",
    "\n",
    "\r\n",
    "\x00",
    "a\x00b",
    "\x01\x02\x1b[31m\x7f",
    "\u202eevil",
    "\ufeff",
    "\udcff",
    "x\ud800",
    "nan",
    "NaN",
    "inf",
    "-inf",
    "Infinity",
    "1e309",
    "-1",
    "0",
    "-0",
    "1",
    "+5",
    "0x10",
    "1_000",
    "9" * 30,
    "1" * 5000,
    "LX-1",
    "lx-1",
    " LX-2 ",
    "LX-0",
    "LX-" + "9" * 25,
    "G-1",
    "E-1",
    "12",
    "a" * 64,
    "a" * 65,
    "a" * 201,
    "a" * 1025,
    "😀" * 3,
    "١٢٣",
    "²",
    "git:push",
    "*",
    "deploy:*",
    "30m",
    "0.5s",
    "1h30m",
    "2y",
    "a1",
    "a2",
    "claude-1",
    "~",
    "/etc/passwd",
    "../outside",
    "out/report.md",
    "--json",
    "-x",
]

surrogate = st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF, exclude_categories=())
chars = st.one_of(st.characters(), st.characters(max_codepoint=0x1F), surrogate)
text = st.text(chars, max_size=24)
number = st.one_of(
    st.integers(min_value=-(10**30), max_value=10**30).map(str),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
)
value = st.one_of(st.sampled_from(SPECIAL), text, number)
positional = value.filter(lambda v: not v.startswith("-"))  # "-…" is an option to argparse (and "--h" would print help)


def flag(name: str, values=value):
    """``--name=value``: the ``=`` form, so values starting with "-" stay values."""
    return values.map(lambda v: f"{name}={v}")


def flags(*pairs, switches=()):
    """A random subset of the given flags (each once or twice), in random order."""
    parts = [st.lists(flag(name, values), max_size=2) for name, values in pairs]
    parts += [st.lists(st.just(s), max_size=1) for s in switches]
    return st.tuples(*parts).map(lambda groups: [a for g in groups for a in g]).flatmap(st.permutations)


def agent_choice(registered=("a1",)):
    return st.one_of(st.sampled_from(list(registered) + ["a2", "ghost"]), value)


# -- the property ----------------------------------------------------------------

OK_CODES = {0, 2, 3, 4, 5, 6}


def check(board, argv, *, agent=None, stdin=None, allowed=OK_CODES):
    """Run one fuzzed command: a documented code, no traceback, and no change on
    2 (usage), 3 (invalid input), 4 (not found) or 5 (conflict)."""
    before = board.snapshot()
    if agent is not None and agent not in ("a1", "a2", "ghost"):
        argv, agent = [*argv, f"--agent={agent}"], None  # the flag: an environment cannot hold a NUL
    res = board.cli(*argv, agent=agent, stdin=stdin)
    assert res.code in allowed, (argv, agent, res)
    assert "Traceback" not in res.err + res.out and "internal error" not in res.out, (argv, res)
    if res.code in (2, 3, 4, 5, 10):
        assert set(res.data) == {"error"} and res.data["error"]["message"], res.data
    if res.code in (2, 3, 4, 5):
        assert board.snapshot() == before, (argv, agent, res)
    return res


def ensure_held(board, key="LX-1", agent="a1"):
    """Put ``key`` back in ``agent``'s hands if the last example moved it (release, pause…)."""
    c = card(board, key)
    if c["status"] == "active" and c["lease"]["holder"] == agent:
        return
    if c["status"] != "ready":
        board.ok("card", "move", key, "--to", "ready")
    board.ok("claim", key, agent=agent)


# -- writeback ------------------------------------------------------------------

writeback_flags = flags(
    ("--summary", value),
    ("--artifact", value),
    ("--next", value),
    ("--todo-add", value),
    ("--todo-done", value),
    ("--tokens", number | value),
    ("--usd", number | value),
    ("--turn-id", value),
    ("--lease-token", number | value),
    ("--op-id", value),
    switches=("--release",),
)


@FUZZ
@given(
    extra=writeback_flags,
    who=agent_choice(),
    key=st.sampled_from(["LX-1", "LX-1", "LX-1", "LX-9"]) | positional,
    summary=st.booleans(),
)
def test_writeback_flags(team, extra, who, key, summary):
    if not hasattr(team, "_seeded"):
        team.ok("card", "add", "one")
        team._seeded = True
    ensure_held(team)
    argv = (
        ["writeback", key]
        + (["--summary", "a turn"] if summary and not any(a.startswith("--summary=") for a in extra) else [])
        + extra
    )
    check(team, argv, agent=who)


json_scalar = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**400), max_value=10**400),
    st.integers(min_value=-5, max_value=10**13),
    st.floats(allow_nan=True, allow_infinity=True),
    text,
    st.sampled_from(SPECIAL),
)
json_value = st.recursive(
    json_scalar, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(text, inner, max_size=3), max_leaves=6
)
EVIDENCE_KEYS = [
    "summary",
    "artifacts",
    "next",
    "todos_added",
    "todos_done",
    "tokens",
    "tokens_in",
    "tokens_out",
    "usd",
    "turn_id",
    "release",
    "card",
    "agent",
]
documents = st.fixed_dictionaries(
    {"summary": st.one_of(st.just("a turn"), json_value)},
    optional={k: json_value for k in EVIDENCE_KEYS[1:]} | {"extra": json_value},
)
RAW = [
    "",
    "{",
    "[]",
    "null",
    "42",
    '"summary"',
    "{}",
    '{"summary": "x"} trailing',
    '{"summary": "x", "tokens": ' + "9" * 5000 + "}",
    "[" * 50000,
    '{"summary": "\\ud800"}',
    '{"summary": "x", "usd": 1' + "0" * 400 + "}",
    '{"summary": "x", "todos_done": ["²"]}',
    '{"summary": "x", "usd": -0.0}',
    '{"summary": "x", "tokens": true}',
    '\ufeff{"summary": "bom"}',
]


@FUZZ
@given(doc=documents, raw=st.none() | st.sampled_from(RAW), via_file=st.booleans(), release=st.booleans())
def test_writeback_input_documents(team, doc, raw, via_file, release):
    if not hasattr(team, "_seeded"):
        team.ok("card", "add", "one")
        team._seeded = True
    ensure_held(team)
    body = raw if raw is not None else json.dumps(doc)  # NaN/Infinity and \ud800 escapes included
    argv = ["writeback", "LX-1"] + (["--release"] if release else [])
    if via_file:
        path = team.root / "evidence.json"
        path.write_text(body, encoding="utf-8", errors="surrogatepass")
        check(team, argv + ["--input", str(path)], agent="a1")
    else:
        check(team, argv + ["--input", "-"], agent="a1", stdin=body)


@FUZZ
@given(
    path=st.sampled_from(["", ".", "nope.json", "a\x00b", "\udcff", "dir/", "~"])
    | text.filter(lambda p: not p.startswith("/"))
)
def test_writeback_input_paths(team, path):
    if not hasattr(team, "_seeded"):
        team.ok("card", "add", "one")
        (team.root / "dir").mkdir()
        team._seeded = True
    ensure_held(team)
    check(team, ["writeback", "LX-1", f"--input={path}"], agent="a1", allowed={0, 2, 3})


# -- card add / agent add / gate ask / next ----------------------------------------

card_flags = flags(
    ("--body", value),
    ("--needs", value),
    ("--after", value),
    ("--priority", number | value),
    ("--owner", value),
    ("--next", value),
    ("--verify", value),
    ("--max-turns", number | value),
    ("--max-tokens", number | value),
    ("--max-usd", number | value),
    ("--op-id", value),
    switches=("--backlog",),
)


@FUZZ
@given(title=positional, extra=card_flags)
def test_card_add_flags(team, title, extra):
    if not hasattr(team, "_seeded"):
        team.ok("card", "add", "existing")  # LX-1, so some --after refs exist
        team._seeded = True
    res = check(team, ["card", "add", title, *extra])
    if res.code == 0:
        assert res.data["card"]["status"] in ("ready", "blocked", "backlog")


agent_flags = flags(
    ("--runtime", value), ("--can", value), ("--watch", value), ("--tokens", number | value), ("--window", value)
)


@FUZZ
@given(who=positional, extra=agent_flags)
def test_agent_add_flags(board, who, extra):
    res = check(board, ["agent", "add", who, *extra])
    if res.code == 0:
        assert res.data["agent"]["id"] == who


gate_flags = flags(
    ("--question", value),
    ("--scope", value),
    ("--option", value),
    ("--deadline", value),
    ("--lease-token", number | value),
    ("--op-id", value),
    ("--wait", st.sampled_from(["0.01", "0.05s", "", "nan", "-1", "x", "0", "1e9", "\udcff", "٣ms"])),
)


@FUZZ
@given(
    extra=gate_flags,
    who=agent_choice(("a1", "a2")),
    key=st.sampled_from(["LX-1", "LX-2"]) | positional,
    question=st.booleans(),
)
def test_gate_ask_flags(team, extra, who, key, question):
    if not hasattr(team, "_seeded"):
        team.ok("card", "add", "one")
        team.ok("card", "add", "two")
        team._seeded = True
    for k, a in (("LX-1", "a1"), ("LX-2", "a2")):
        c = card(team, k)
        if c["status"] not in ("active", "waiting"):
            ensure_held(team, k, a)
    argv = ["gate", "ask", key] + (["--question", "may I?"] if question else []) + extra
    check(team, argv, agent=who, allowed=OK_CODES | {7})


next_flags = flags(("--lease", value), ("--op-id", value), switches=("--claim",))


@FUZZ
@given(
    extra=next_flags,
    who=agent_choice(("a1", "a2")),
    verb=st.sampled_from(["next", "next", "claim"]),
    key=st.sampled_from(["LX-1", "LX-3"]) | positional,
)
def test_next_and_claim_flags(team, extra, who, verb, key):
    if not hasattr(team, "_seeded"):
        for t in ("one", "two", "three"):
            team.ok("card", "add", t)
        team._seeded = True
    argv = ["next", *extra] if verb == "next" else ["claim", key, *[a for a in extra if a != "--claim"]]
    check(team, argv, agent=who, allowed={0, 2, 3, 4, 5, 6, 8, 9, 10})


@FUZZ
@given(
    argv=st.one_of(
        st.tuples(st.just("card"), st.just("list"), st.lists(flag("--status") | flag("--owner"), max_size=2)).map(
            lambda t: [t[0], t[1], *t[2]]
        ),
        st.tuples(
            st.sampled_from([("card", "show"), ("agent", "show"), ("gate", "status"), ("log",), ("context",)]),
            positional,
        ).map(lambda t: [*t[0], t[1]]),
        st.lists(flag("--since", number | value) | flag("--card") | flag("--limit", number | value), max_size=2).map(
            lambda a: ["events", *a]
        ),
    )
)
def test_reads_with_odd_arguments(team, argv):
    if not hasattr(team, "_seeded"):
        team.ok("card", "add", "one")
        team._seeded = True
    check(team, argv, allowed={0, 2, 3, 4, 6, 7})


# -- values as separate arguments ---------------------------------------------------
# "--flag VALUE", not "--flag=VALUE": a value that starts with "-" is an option to
# argparse (exit 2, nothing changed). On SQLite only (the argument parsing is
# the same on both backends).

ANY_DOCUMENTED = set(range(13)) - {1}
SEPARATE = settings(
    max_examples=60,
    deadline=None,
    database=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
maybe = st.none() | value


def held_once(team, *, waiting_is_held=False):
    """LX-1 held by a1 (a card waiting on a1's gate still counts, if asked)."""
    if not hasattr(team, "_seeded"):
        team.ok("card", "add", "target")
        team._seeded = True
    if not (waiting_is_held and card(team, "LX-1")["status"] == "waiting"):
        ensure_held(team)
    return team


@pytest.mark.parametrize("backend", ["sqlite"], indirect=True)
@SEPARATE
@given(
    summary=value, nxt=maybe, tokens=st.none() | number | value, usd=st.none() | number | value, todo=maybe, turn=maybe
)
def test_writeback_values_as_separate_arguments(team, summary, nxt, tokens, usd, todo, turn):
    argv = ["writeback", "LX-1", "--summary", summary]
    for name, given_value in (
        ("--next", nxt),
        ("--tokens", tokens),
        ("--usd", usd),
        ("--todo-done", todo),
        ("--turn-id", turn),
    ):
        if given_value is not None:
            argv += [name, given_value]
    check(held_once(team), argv, agent="a1", allowed=ANY_DOCUMENTED)


@pytest.mark.parametrize("backend", ["sqlite"], indirect=True)
@SEPARATE
@given(title=value, priority=number | value, needs=value, after=value, max_usd=number | value)
def test_card_add_values_as_separate_arguments(team, title, priority, needs, after, max_usd):
    check(
        team,
        ["card", "add", title, "--priority", priority, "--needs", needs, "--after", after, "--max-usd", max_usd],
        allowed=ANY_DOCUMENTED,
    )


@pytest.mark.parametrize("backend", ["sqlite"], indirect=True)
@SEPARATE
@given(who=value, can=value, window=value, tokens=number | value)
def test_agent_add_values_as_separate_arguments(board, who, can, window, tokens):
    check(board, ["agent", "add", who, "--can", can, "--window", window, "--tokens", tokens], allowed=ANY_DOCUMENTED)


@pytest.mark.parametrize("backend", ["sqlite"], indirect=True)
@SEPARATE
@given(question=value, scope=value, deadline=value, lease=value, who=value)
def test_gate_ask_and_next_values_as_separate_arguments(team, question, scope, deadline, lease, who):
    check(
        held_once(team, waiting_is_held=True),
        ["gate", "ask", "LX-1", "--question", question, "--scope", scope, "--deadline", deadline],
        agent="a1",
        allowed=ANY_DOCUMENTED,
    )
    check(team, ["next", "--lease", lease, "--agent", who], allowed=ANY_DOCUMENTED)


# -- the fast pre-check agrees with pydantic ------------------------------------------

fast_value = st.one_of(
    json_scalar,
    st.sampled_from(
        [
            0,
            1,
            10**9,
            10**9 + 1,
            10**12,
            10**12 + 1,
            -1,
            1.0,
            0.5,
            -0.0,
            1e6,
            1e6 + 0.01,
            10**6,
            10**6 + 1,
            2**53 + 1,
            "3",
            "#3",
            "T3",
            " 4 ",
        ]
    ),
    st.lists(
        st.one_of(json_scalar, st.sampled_from([1, 2, 10**9, "a", " a ", "x" * 500, "x" * 501, "a\nb"])), max_size=4
    ),
    st.lists(text, max_size=201).filter(lambda xs: len(xs) in (0, 1, 2, 100, 101, 200, 201)),
)
fast_evidence = st.fixed_dictionaries(
    {
        "summary": st.one_of(
            st.sampled_from(["ok", " padded ", "x" * 4000, "x" * 4001, "multi\nline", "\x00", "\udcff", ""]), text
        )
    },
    optional={k: fast_value for k in EVIDENCE_KEYS[1:-2]} | {"colour": fast_value},
)
fast_evidence_any = st.dictionaries(
    st.sampled_from(EVIDENCE_KEYS[:-2]), fast_value, max_size=7
)  # a summary may be missing
fast_next = st.fixed_dictionaries(
    {
        "agent": st.one_of(
            st.sampled_from(["a1", "claude-1", "a" * 64, "a" * 65, "-a", "a b", "", "a\n"]), text, json_scalar
        )
    },
    optional={
        "lease": st.one_of(
            st.sampled_from(["30m", "0.5s", "1h30m", "0", "0s", "367d", "366d", "٣m", "1e3", " 5m "]), text, json_scalar
        ),
        "claim": json_scalar,
        "x": json_scalar,
    },
)


def _outcome(kind, data, fast):
    try:
        return "ok", json.dumps(inputs.validate(kind, data, fast=fast), sort_keys=True)
    except InvalidInput:
        return "invalid", None


# The other per-turn inputs: values near every limit, of every JSON type, plus what argparse hands over.
edge_value = st.one_of(
    fast_value,
    st.sampled_from(
        [
            "",
            " ",
            "x" * 100,
            "x" * 101,
            "x" * 200,
            "x" * 201,
            "x" * 2000,
            "x" * 2001,
            "LX-1",
            "lx-2",
            "LX-0",
            "G-1",
            "7",
            "git:push",
            "Git:push",
            "deploy:*",
            "a1",
            "a" * 65,
            "30m",
            "0s",
            "367d",
            "1.5h",
        ]
    ),
    st.sampled_from([0.0, 1e-9, 1e6, 1e6 + 1, float("inf"), float("nan"), 4, 5, -1, 10**6 + 1, 10**12 + 1]),
    st.lists(
        st.sampled_from(["LX-1", "2", "lx-3", "LX-0", "G-1", 3, 0, True, "git:push", "Bad Scope", "x" * 101, "ok"]),
        max_size=4,
    ),
)
FIELDS = {
    "card": [
        "title",
        "body",
        "needs",
        "after",
        "priority",
        "owner",
        "next",
        "verify",
        "max_turns",
        "max_tokens",
        "max_usd",
        "backlog",
    ],
    "done": ["summary", "verify_timeout"],
    "gate_ask": ["question", "scope", "options", "deadline", "wait"],
    "handoff": ["to", "summary", "done", "pending"],
    "monitor": ["every"],
    "text": ["text"],
}
REQUIRED = {
    "card": "title",
    "done": "summary",
    "gate_ask": "question",
    "handoff": "summary",
    "monitor": "every",
    "text": "text",
}


def _fast_case(kind):
    keys = FIELDS[kind] + ["colour"]
    optional = {k: st.one_of(edge_value, st.none()) for k in keys if k != REQUIRED[kind]}
    required = {
        REQUIRED[kind]: st.one_of(
            edge_value, text, st.sampled_from(["ok", " padded ", "multi\nline", "\x00", "\udcff", "30m"])
        )
    }
    return st.tuples(st.just(kind), st.fixed_dictionaries(required, optional=optional))


@settings(max_examples=1500, deadline=None, database=None)
@given(case=st.one_of(*(_fast_case(kind) for kind in FIELDS)))
def test_the_fast_precheck_of_every_per_turn_input_returns_exactly_what_pydantic_returns(case):
    kind, data = case
    quick = inputs.FAST[kind](dict(data))
    slow = _outcome(kind, data, fast=False)
    if quick is not None:
        assert slow == ("ok", json.dumps(quick, sort_keys=True)), (data, quick, slow)
        assert list(quick) == FIELDS[kind]  # the model's field order: payload digests and JSON read the same
    assert _outcome(kind, data, fast=True) == slow


def test_the_fast_precheck_accepts_what_the_cli_sends_every_turn():
    """Not a fall-back to pydantic for the plain inputs: the cold path must stay cold."""
    plain = {
        "card": {"title": "fix it", "needs": ["git:push"], "after": ["LX-1"], "priority": 1, "max_usd": 2.5},
        "done": {"summary": "finished", "verify_timeout": "5m"},
        "gate_ask": {
            "question": "push?",
            "scope": "git:push",
            "options": ["yes", "no"],
            "deadline": "1h",
            "wait": "30m",
        },
        "handoff": {"to": "a2", "summary": "over to you", "done": ["a"], "pending": ["b"]},
        "monitor": {"every": "10m"},
        "text": {"text": ""},
    }
    for kind, data in plain.items():
        assert inputs.FAST[kind](data) == inputs.validate(kind, data, fast=False), kind


@settings(max_examples=400, deadline=None, database=None)
@given(
    case=st.one_of(
        st.tuples(st.just("evidence"), fast_evidence | fast_evidence_any), st.tuples(st.just("next"), fast_next)
    )
)
def test_the_fast_precheck_returns_exactly_what_pydantic_returns(case):
    kind, data = case
    quick = inputs.FAST[kind](dict(data))  # never raises: anything unsure is None
    slow = _outcome(kind, data, fast=False)
    if quick is not None:
        # The pre-check accepted it: pydantic must accept it too, with the same result (types included).
        assert slow == ("ok", json.dumps(quick, sort_keys=True)), (data, quick, slow)
        assert quick == inputs.validate(kind, data, fast=False)  # equal as Python values too (a tuple is no list)
    assert _outcome(kind, data, fast=True) == slow


def test_the_evidence_shape_is_one_table():
    """shapes/evidence.FIELDS is the evidence shape: the pydantic model has its
    fields and defaults, the MCP tool offers its fields (and only those besides
    the card, the lease token and the op id), the pre-check fills its defaults."""
    from loopx_core.shapes import evidence, verbs
    from loopx_core.shapes.schemas import EvidenceInput

    fields = EvidenceInput.model_fields
    assert set(fields) == evidence.NAMES
    for name, default, _ in evidence.FIELDS:
        if name != "summary":
            assert fields[name].get_default(call_default_factory=True) == evidence.default_of(default), name
    assert fields["summary"].is_required()
    tool = verbs.VERBS[("writeback", None)].tool
    assert set(tool.properties) - {"card", "lease_token", "op_id"} == {
        name for name, _, mcp in evidence.FIELDS if mcp is not None
    }
    assert inputs.validate("evidence", {"summary": "s"}) == inputs.validate(
        "evidence", evidence.with_defaults({"summary": "s"})
    )
