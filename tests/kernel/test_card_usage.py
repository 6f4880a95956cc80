"""A card's token and dollar figures, per turn and per agent (#29): they add up to its quota."""

from __future__ import annotations

from .conftest import held


def test_card_show_gives_usage_per_turn_and_per_agent_adding_up_to_the_quota(team):
    """#29: the card's figures are the sum of what each turn reported, shown per turn and per agent."""
    team.ok("card", "add", "shared work")
    held(team, "LX-1", "a2")
    team.ok("writeback", "LX-1", "--summary", "one", "--tokens", "1200", "--usd", "0.02", "--turn-id", "t1", agent="a2")
    team.ok("writeback", "LX-1", "--summary", "two", "--tokens", "300", "--turn-id", "t2", "--release", agent="a2")
    held(team, "LX-1", "a1")
    team.ok(
        "writeback", "LX-1", "--summary", "three", "--tokens", "500", "--usd", "0.01", "--turn-id", "t3", agent="a1"
    )
    shown = team.ok("card", "show", "LX-1")
    usage, quota = shown["usage"], shown["card"]["quota"]
    by_agent = {a["agent"]: (a["tokens"], a["usd"], a["turns"]) for a in usage["agents"]}
    assert by_agent == {"a2": (1500, 0.02, 2), "a1": (500, 0.01, 1)}
    assert [t["turn_id"] for t in usage["turns"]] == ["t1", "t2", "t3"]
    assert sum(t["tokens"] for t in usage["turns"]) == quota["tokens"]["used"] == 2000
    assert round(sum(t["usd"] for t in usage["turns"]), 6) == quota["usd"]["used"]
    text = team.cli("card", "show", "LX-1", json_out=False).out
    assert "usage by agent:" in text and "a2: 1,500 tokens" in text and "usage by turn:" in text
