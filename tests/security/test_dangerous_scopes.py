"""Scopes a person marked dangerous take a second key to approve in the board
(DESIGN §9). The list is theirs: an agent cannot change it with the CLI, and
an edit of the board behind LoopX's back — the setting changed or deleted,
the signed event altered — never makes a dangerous scope safe (real CLI
processes, the database's own client; SQLite and PostgreSQL)."""

from __future__ import annotations

import pytest

from loopx_core.ops.board import gate_brief

from .conftest import sql


def dangerous(board, gate: str) -> bool:
    """Whether the board's gate dialog asks a second key for ``gate`` (what it reads)."""
    store = board.store()
    try:
        return gate_brief(store, int(gate.split("-")[1])).dangerous
    finally:
        store.close()


def ask(board, scope: str) -> str:
    """a2 (holding LX-1) asks a gate for ``scope``."""
    res = board.cli(
        "gate",
        "ask",
        "LX-1",
        "--question",
        f"may I {scope or 'go on'}?",
        *(("--scope", scope) if scope else ()),
        agent="a2",
    )
    assert res.code == 6, res
    return res.data["gate"]["id"]


@pytest.fixture
def marked(working):
    assert working.ok("dangerous", "set", "db:*", "deploy:prod") == {"dangerous": ["db:*", "deploy:prod"]}
    return working


def test_a_person_marks_scopes_dangerous_and_an_agent_cannot_unmark_them(marked):
    assert dangerous(marked, ask(marked, "db:drop")) and dangerous(marked, ask(marked, "deploy:prod"))
    assert not dangerous(marked, ask(marked, "deploy:staging"))
    refused = marked.cli("dangerous", "set", "--none", agent="a2")
    assert refused.code == 10, refused
    assert marked.ok("dangerous", "list") == {"dangerous": ["db:*", "deploy:prod"]}  # reading it is anyone's


@pytest.mark.parametrize(
    "edit",
    [
        "UPDATE setting SET value = '[]' WHERE key = 'dangerous_scopes'",
        "DELETE FROM setting WHERE key = 'dangerous_scopes'",
    ],
)
def test_the_setting_edited_in_the_database_changes_nothing(marked, edit):
    sql(marked, edit)
    assert dangerous(marked, ask(marked, "db:drop"))
    assert marked.ok("dangerous", "list") == {"dangerous": ["db:*", "deploy:prod"]}


def test_the_signed_event_altered_makes_every_scope_dangerous(marked):
    sql(
        marked,
        "UPDATE event SET data = replace(data, 'db:*', 'zz:*') WHERE kind = 'setting_changed' AND data LIKE '%dangerous_scopes%'",
    )
    assert dangerous(marked, ask(marked, "db:drop"))
    assert dangerous(marked, ask(marked, "deploy:staging"))  # fail closed: the list cannot be read, so no scope is safe
    assert not dangerous(marked, ask(marked, ""))  # (a plain question has no scope to approve)
    assert marked.ok("dangerous", "list") == {"dangerous": ["*"]}


def test_a_pattern_that_is_not_a_scope_is_refused(working):
    bad = working.cli("dangerous", "set", "DB DROP")
    assert bad.code == 3 and "not a scope pattern" in bad.data["error"]["message"], bad
    assert working.ok("dangerous", "list") == {"dangerous": []}
