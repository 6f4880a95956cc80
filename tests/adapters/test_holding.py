"""One rule for "the agent's card": `loopx next`, the PreToolUse hook's gate,
the Stop hook's charge, the hook's sqlite3 reader and the watcher all pick the
same card when an agent holds several (loopx_core/rules/holding.py)."""

from __future__ import annotations

import os
import re

from loopx_core.adapters import fastcheck
from loopx_core.adapters.hooks import _held
from loopx_core.rules import clock, holding
from loopx_core.watch.ingest import Ingestor
from tests.adapters.conftest import deny_reason, payload
from tests.gitrepo import commit, open_workspace

T0 = 1_900_000_000


def test_every_reader_picks_the_same_card(team, hooks, monkeypatch):
    """a2 holds LX-1, monitored and due, and LX-2 (higher priority) waiting on
    a person. `next` resumes the due card (work before waiting), so everyone
    else must name LX-1 too."""
    at = {"LOOPX_NOW": str(T0)}
    team.ok("card", "add", "Watch the deploy", "--priority", "2", env=at)
    team.ok("card", "add", "Wait for the review", "--priority", "0", env=at)
    team.ok("claim", "LX-1", agent="a2", env=at)
    team.ok("monitor", "LX-1", "--every", "10m", agent="a2", env=at)
    team.ok("claim", "LX-2", agent="a2", env=at)
    assert team.cli("gate", "ask", "LX-2", "--question", "Is the review done?", agent="a2", env=at).code == 6  # pending
    later = T0 + 3600
    monkeypatch.setenv("LOOPX_NOW", str(later))
    clock.freeze(later)

    # the PreToolUse hook's gate: the card it asks on
    reason = deny_reason(
        hooks.run(
            "claude-code",
            "pre-tool-use",
            payload("claude/pre_tool_use_bash.json", CWD=str(team.root), COMMAND="git push"),
            env={"LOOPX_NOW": str(later)},
        )
    )
    hook_card = re.search(r"\bon (LX-\d+)", reason).group(1)

    store = team.store()
    try:
        with store.read():
            stop_card = f"LX-{_held('a2').id}"  # the Stop hook's charge
        watcher_card = f"LX-{Ingestor(store).held_card('a2').id}"  # observed artifacts
    finally:
        store.close()
    readers = {"hook": hook_card, "stop": stop_card, "watcher": watcher_card}
    if team.backend == "sqlite":
        readers["fastcheck"] = f"LX-{fastcheck.check(str(team.db), 'a2', ['git:push'], later).card.id}"

    nxt = team.ok("next", agent="a2", env={"LOOPX_NOW": str(later)})  # last: it wakes the monitored card
    assert nxt["action"] == "work" and nxt["reason"] == "monitor_due"
    assert readers == {name: nxt["card"]["id"] for name in readers}, readers


def test_a_card_waiting_on_its_merge_is_never_the_agents_card_when_it_took_another(repo_team, hooks):
    """a2's LX-1 (the most urgent) waits on the person's merge; `next --claim`
    gave it LX-2, which waits on a permission gate. Both wait, but only LX-2
    is a2's to work on: every reader names LX-2, never the merge (#39)."""
    team = repo_team
    team.ok("card", "add", "Ship the fix", "--priority", "0")
    team.ok("card", "add", "Deploy it", "--priority", "2", "--needs", "deploy:prod")
    tree = open_workspace(team, 1, "a2")
    team.ok("claim", "LX-1", agent="a2")
    commit(tree, {"fix.py": "fixed = True\n"}, "the fix")
    team.ok("writeback", "LX-1", "--summary", "fixed", agent="a2")
    assert team.ok("done", "LX-1", "--summary", "fixed", agent="a2")["card"]["pending_gate"] == "G-1"  # the merge gate
    took = team.cli("next", "--claim", agent="a2").data
    assert took["action"] == "wait" and took["card"]["id"] == "LX-2" and took["claimed"] is True, (
        took
    )  # its permission gate G-2

    reason = deny_reason(
        hooks.run(
            "claude-code",
            "pre-tool-use",
            payload("claude/pre_tool_use_bash.json", CWD=str(team.root), COMMAND="git push"),
        )
    )
    store = team.store()
    try:
        with store.read():
            stop_card = f"LX-{_held('a2').id}"
        watcher_card = f"LX-{Ingestor(store).held_card('a2').id}"
    finally:
        store.close()
    readers = {"hook": re.search(r"\bon (LX-\d+)", reason).group(1), "stop": stop_card, "watcher": watcher_card}
    if team.backend == "sqlite":
        readers["fastcheck"] = f"LX-{fastcheck.check(str(team.db), 'a2', ['git:push'], clock.now()).card.id}"
    nxt = team.cli("next", agent="a2").data
    assert nxt["action"] == "wait" and nxt["gate"]["id"] == "G-2"
    assert readers == {name: "LX-2" for name in readers}, readers


def test_the_order(monkeypatch):
    class Card:
        def __init__(self, id, status, priority=2, monitor_due=None):
            self.id, self.status, self.priority, self.monitor_due = id, status, priority, monitor_due

    now = 100.0
    cards = [
        Card(1, "paused", 0),
        Card(2, "waiting", 1),
        Card(3, "monitoring", 0, monitor_due=50),
        Card(4, "monitoring", 0, monitor_due=500),
        Card(5, "done", 0),
    ]
    assert holding.choose(cards, now).id == 3
    assert holding.choose([c for c in cards if c.id != 3], now).id == 2
    assert holding.choose([cards[0], cards[3]], now).id == 1  # paused before a monitored card that is not due
    assert holding.choose([Card(6, "active", 4), *cards], now).id == 6
    assert holding.choose([cards[4]], now) is None
    assert holding.choose([cards[1], cards[3]], now, frozenset({2})).id == 4  # a card waiting on its merge comes last
    assert set(holding.HELD) == {"active", "waiting", "monitoring", "paused"}
    assert os.path.basename(holding.__file__) == "holding.py"
