"""The hook's sqlite3 reader agrees with the kernel's authority rules."""

from __future__ import annotations

import pytest

from loopx_core.adapters import fastcheck
from loopx_core.authority import authority
from loopx_core.rules import clock
from loopx_core.store import migrations
from loopx_core.store.models import Card

SCOPES = ["git:push", "deploy:prod", "deploy:staging", "publish:npm", "fs:write-outside"]


def kernel_view(board, agent: str, now: float) -> dict:
    store = board.store()
    try:
        with store.read():
            card = Card.select().where((Card.lease_holder == agent) & Card.status.in_(fastcheck.HELD)).first()
            rules = authority.Authority.of(store)
            return {
                s: rules.allowed(s, agent, card.id if card else None, card.lease_token if card else None, now)
                for s in SCOPES
            }
    finally:
        store.close()


def fast_view(board, agent: str, now: float) -> dict:
    verdict = fastcheck.check(str(board.db), agent, SCOPES, now)
    return {s: verdict.allowed.get(s) for s in SCOPES}


def test_schema_version_matches_the_kernel():
    assert fastcheck.SCHEMA_VERSION == migrations.SCHEMA_VERSION


def test_agrees_with_authority_allowed(team, hooks):
    if team.backend != "sqlite":
        pytest.skip("the fast reader is for SQLite boards")
    team.ok("agent", "add", "a3", "--can", "deploy:*")
    team.ok("card", "add", "one")
    team.ok("card", "add", "two")
    team.ok("next", "--claim", agent="a3")  # LX-1
    team.ok("next", "--claim", agent="a2")  # LX-2
    now = clock.now()
    for agent in ("a1", "a2", "a3"):
        assert fast_view(team, agent, now) == kernel_view(team, agent, now), agent
    # a gate approved in this lease covers its scope; a remembered one becomes a grant
    g1 = team.cli("gate", "ask", "LX-2", "--question", "push?", "--scope", "git:push", agent="a2").data["gate"]["id"]
    hooks.answer(g1)
    g2 = team.cli("gate", "ask", "LX-2", "--question", "npm?", "--scope", "publish:npm", agent="a2").data["gate"]["id"]
    hooks.answer(g2, remember="agent")
    now = clock.now()
    assert fast_view(team, "a2", now) == kernel_view(team, "a2", now)
    assert fast_view(team, "a2", now)["git:push"] == f"gate:{g1}"
    assert fast_view(team, "a2", now)["publish:npm"].startswith("grant:")
    # a new lease no longer carries the old approval
    team.ok("release", "LX-2", agent="a2")
    team.ok("claim", "LX-2", agent="a2")
    now = clock.now()
    assert fast_view(team, "a2", now) == kernel_view(team, "a2", now)
    assert fast_view(team, "a2", now)["git:push"] is None


def test_pending_gate_is_found_and_unknown_agent_reported(working):
    if working.backend != "sqlite":
        pytest.skip("the fast reader is for SQLite boards")
    gate = working.cli("gate", "ask", "LX-1", "--question", "push?", "--scope", "git:push", agent="a2").data["gate"]
    verdict = fastcheck.check(str(working.db), "a2", ["git:push", "deploy:prod"], clock.now())
    assert verdict.pending == {"git:push": int(gate["id"][2:])}
    assert verdict.open == ["deploy:prod"]
    assert fastcheck.check(str(working.db), "ghost", ["git:push"], clock.now()).known_agent is False


@pytest.mark.parametrize("value", ["5", "9e12", "yesterday"])
def test_the_hook_reads_now_as_the_kernel_does(hooks, working, value):
    """The hook had its own copy of the clock: ``LOOPX_NOW=5`` (1970, a time
    LoopX never records) reached its reader as is and a capability was
    allowed at it, where every verb refuses that time. Now both ask
    ``rules/clock``: the call is denied, saying why, and nothing is written."""
    from tests.adapters.conftest import deny_reason, payload

    before = working.snapshot()
    res = hooks.spawn(
        "claude-code",
        "pre-tool-use",
        payload(
            "claude/pre_tool_use_bash.json", CWD=str(working.root), COMMAND="git push origin main", SESSION="s", PATH=""
        ),
        agent="a1",
        env={"LOOPX_NOW": value},
    )
    assert "LOOPX_NOW" in deny_reason(res) and "Traceback" not in res.stderr
    assert working.snapshot() == before
    assert working.cli("card", "list", agent="a1", env={"LOOPX_NOW": value}).code == 2  # the CLI refuses the same time


def test_on_a_board_that_is_not_a_test_board_the_hook_refuses_loopx_now_as_the_kernel_does(
    hooks, tmp_path, monkeypatch
):
    """The fast reader took any in-range ``LOOPX_NOW`` as "now" on any board,
    while the kernel honours it only on a test board and refuses it on every
    other (``clock_refused``). One rule (``trust.clock_movable``) now answers
    both: on a board a person made without ``--test-board``, an hour-old
    ``LOOPX_NOW`` no longer lets a capability through the fast path; the call
    goes to the kernel, which refuses the clock, and is denied with the
    kernel's reason — the same answer as ``loopx card list`` with that clock."""
    import time

    from tests.adapters.conftest import deny_reason, payload
    from tests.conftest import Board

    if hooks.board.backend != "sqlite":
        pytest.skip("the fast reader is for SQLite boards")
    monkeypatch.delenv("LOOPX_NOW", raising=False)
    real = Board(tmp_path / "real", monkeypatch)
    real.root.mkdir()
    real.ok("init", "--objective", "a real board")  # no --test-board
    real.ok("agent", "add", "a1", "--can", "git:push")
    real.ok("card", "add", "ship")
    real.ok("claim", "LX-1", agent="a1")
    hooks.board = real
    push = payload(
        "claude/pre_tool_use_bash.json", CWD=str(real.root), COMMAND="git push origin main", SESSION="s", PATH=""
    )
    assert hooks.spawn("claude-code", "pre-tool-use", push, agent="a1").out is None  # the real clock: a1 may push
    before = real.snapshot()
    past = {"LOOPX_NOW": repr(time.time() - 3600)}  # in range, and on a board that is not a test board
    kernel = real.cli("card", "list", agent="a1", env=past)
    assert kernel.code == 2 and kernel.data["error"]["code"] == "clock_refused"
    reason = deny_reason(hooks.spawn("claude-code", "pre-tool-use", push, agent="a1", env=past))
    assert "not a test board" in reason, reason
    assert real.snapshot() == before
