"""The command that gets an agent its next card, said the same way wherever
LoopX suggests it (`agent add`, `card add`, a lost claim, the hooks)."""

from __future__ import annotations


def take_work(agent: str = "ID") -> str:
    return f"`loopx next --agent {agent} --claim`"
