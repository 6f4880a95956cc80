"""Property tests over the CLI's inputs: bad input is exit 2 or 3 with a
message, never a traceback or exit 1, and it changes nothing."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from loopx_core.shapes import inputs

texts = st.one_of(
    st.text(max_size=40),
    st.text(alphabet=st.characters(codec="utf-8", categories=["Cc", "Zs", "So", "Lo"]), max_size=20),
    st.sampled_from(["", " ", "\x00", "\udcff", "nan", "inf", "-1", "1e309", "9" * 30, "LX-0", "LX--1", "G-x", "--json"]),
)
numbers = st.one_of(st.integers(-10**15, 10**15).map(str), st.floats(allow_nan=True, allow_infinity=True).map(str), texts)

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])


@pytest.fixture
def held(team):
    team.ok("card", "add", "target")
    team.ok("claim", "LX-1", agent="a1")
    return team


def check(board, argv, **kw):
    before = board.snapshot()
    res = board.cli(*argv, **kw)
    assert res.code != 1, res
    assert "Traceback" not in res.err and "Traceback" not in res.out
    if res.code in (2, 3, 4, 5):
        assert res.data["error"]["message"]
        assert board.snapshot() == before
    return res


@pytest.mark.parametrize("backend", ["sqlite"], indirect=True)
@SETTINGS
@given(summary=texts, nxt=st.one_of(st.none(), texts), tokens=st.one_of(st.none(), numbers), usd=st.one_of(st.none(), numbers), todo=st.one_of(st.none(), texts), turn=st.one_of(st.none(), texts))
def test_writeback_flags(held, summary, nxt, tokens, usd, todo, turn):
    argv = ["writeback", "LX-1", "--summary", summary]
    for flag, value in (("--next", nxt), ("--tokens", tokens), ("--usd", usd), ("--todo-done", todo), ("--turn-id", turn)):
        if value is not None:
            argv += [flag, value]
    check(held, argv, agent="a1")


@pytest.mark.parametrize("backend", ["sqlite"], indirect=True)
@SETTINGS
@given(doc=st.one_of(
    st.dictionaries(st.sampled_from(["summary", "artifacts", "next", "todos_added", "todos_done", "tokens", "usd", "turn_id", "card", "agent", "extra"]),
                    st.one_of(texts, st.integers(-10**13, 10**13), st.floats(), st.booleans(), st.none(), st.lists(st.one_of(texts, st.integers()), max_size=3)), max_size=6),
    st.lists(st.integers(), max_size=2),
    texts,
))
def test_writeback_input_documents(held, doc):
    check(held, ["writeback", "LX-1", "--input", "-"], agent="a1", stdin=json.dumps(doc))


@pytest.mark.parametrize("backend", ["sqlite"], indirect=True)
@SETTINGS
@given(title=texts, priority=numbers, needs=texts, after=texts, max_usd=numbers)
def test_card_add_flags(team, title, priority, needs, after, max_usd):
    check(team, ["card", "add", title, "--priority", priority, "--needs", needs, "--after", after, "--max-usd", max_usd])


@pytest.mark.parametrize("backend", ["sqlite"], indirect=True)
@SETTINGS
@given(agent=texts, can=texts, window=texts, tokens=numbers)
def test_agent_add_flags(board, agent, can, window, tokens):
    check(board, ["agent", "add", agent, "--can", can, "--window", window, "--tokens", tokens])


@pytest.mark.parametrize("backend", ["sqlite"], indirect=True)
@SETTINGS
@given(question=texts, scope=texts, deadline=texts, lease=texts, agent=texts)
def test_gate_ask_and_next_flags(held, question, scope, deadline, lease, agent):
    check(held, ["gate", "ask", "LX-1", "--question", question, "--scope", scope, "--deadline", deadline], agent="a1")
    check(held, ["next", "--lease", lease, "--agent", agent])


evidence_values = st.one_of(texts, st.integers(-5, 10**13), st.floats(), st.booleans(), st.none(), st.lists(st.one_of(texts, st.integers(-3, 5)), max_size=3))


@settings(max_examples=400, deadline=None)
@given(st.dictionaries(st.sampled_from(["summary", "artifacts", "next", "todos_added", "todos_done", "tokens", "tokens_in", "usd", "turn_id", "release"]), evidence_values, max_size=7))
def test_the_fast_precheck_agrees_with_pydantic(data):
    """Whatever the cold-path pre-check accepts, pydantic accepts with the same result."""
    fast = inputs.FAST["evidence"](data)
    if fast is not None:
        assert fast == inputs.validate("evidence", data, fast=False)


@settings(max_examples=200, deadline=None)
@given(st.fixed_dictionaries({"agent": texts, "lease": st.one_of(st.none(), texts), "claim": st.one_of(st.booleans(), texts)}))
def test_the_fast_next_precheck_agrees_with_pydantic(data):
    fast = inputs.FAST["next"](data)
    if fast is not None:
        assert fast == inputs.validate("next", data, fast=False)
