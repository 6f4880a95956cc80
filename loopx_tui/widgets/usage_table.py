"""The card screen's Usage tab: where the card's tokens and dollars come from,
per agent and per turn — tokens by kind (input, cache write, cache read,
output) and dollars at the person's prices (DESIGN §9).

The figures are ``loopx_core.ops.cards.usage_of``'s, the ones ``card show``
prints: the card's detail carries them (``CardDetail.usage``), read in the
card screen's worker. ``usage_model`` only arranges them (pure, unit-tested);
``UsageView`` draws the model."""

from __future__ import annotations

from typing import NamedTuple

from rich.table import Table
from rich.text import Text
from textual.containers import VerticalScroll
from textual.widgets import Static

from loopx_core.rules.text import terminal_safe

KINDS = (
    ("input", "in"),
    ("cache_write", "cache w"),
    ("cache_read", "cache r"),
    ("output", "out"),
    ("unsplit", "unsplit"),
)


class UsageRow(NamedTuple):
    who: str  # the agent ("(subagent)" added for a subagent's calls)
    when: str  # the turn's time (ISO), "" for an agent's sum
    source: str  # hook | runner | mcp | cli … ("" for an agent's sum)
    turns: int
    kinds: dict  # tokens by kind
    tokens: int
    usd: float


class UsageModel(NamedTuple):
    agents: tuple[UsageRow, ...]
    turns: tuple[UsageRow, ...]  # the latest (``usage_of`` keeps 20)
    left_out: int  # turns before those
    tokens: int  # the agents' sum: the card's quota "used"
    usd: float
    kinds: dict  # the agents' sum, by kind
    shown_kinds: tuple[str, ...]  # the kinds any row has


def usage_model(usage: dict | None) -> UsageModel:
    """``usage_of``'s figures arranged for the tab: every number as it came."""
    usage = usage or {"agents": [], "turns": [], "turns_left_out": 0}
    agents = tuple(
        UsageRow(a["agent"], "", "", a["turns"], dict(a.get("kinds") or {}), a["tokens"], a["usd"])
        for a in usage["agents"]
    )
    turns = tuple(
        UsageRow(
            t["agent"] + (" (subagent)" if t.get("subagent") else ""),
            t["at"],
            t["source"],
            1,
            dict(t.get("kinds") or {}),
            t["tokens"],
            t["usd"],
        )
        for t in usage["turns"]
    )
    kinds = {k: sum(row.kinds.get(k, 0) for row in agents) for k, _ in KINDS}
    shown = tuple(k for k, _ in KINDS if any(row.kinds.get(k) for row in agents + turns))
    return UsageModel(
        agents,
        turns,
        usage.get("turns_left_out", 0),
        sum(r.tokens for r in agents),
        round(sum(r.usd for r in agents), 6),
        kinds,
        shown,
    )


def _table(title: str, rows, model: UsageModel, *, turns: bool) -> Table:
    table = Table(
        title=title, title_justify="left", title_style="bold", box=None, pad_edge=False, padding=(0, 1), expand=False
    )
    if turns:
        table.add_column("when", style="dim")
        table.add_column("source", style="dim")
    table.add_column("agent")
    if not turns:
        table.add_column("turns", justify="right")
    for kind, name in KINDS:
        if kind in model.shown_kinds:
            table.add_column(name, justify="right")
    table.add_column("tokens", justify="right", style="bold")
    table.add_column("$", justify="right")
    for row in rows:
        cells = [row.when.replace("T", " ").rstrip("Z"), row.source] if turns else []
        cells.append(terminal_safe(row.who))
        if not turns:
            cells.append(str(row.turns))
        cells += [f"{row.kinds.get(k, 0):,}" for k, _ in KINDS if k in model.shown_kinds]
        cells += [f"{row.tokens:,}", f"{row.usd:.4f}"]
        table.add_row(*cells)
    return table


def usage_renderables(model: UsageModel) -> list:
    if not model.agents:
        return [
            Text(
                "No usage charged to this card yet: a hook's or a runner's charge, or a writeback's own figures, shows here.",
                style="dim",
            )
        ]
    total = Text()
    total.append("total ", style="dim")
    total.append(f"{model.tokens:,} tokens", style="bold")
    split = " · ".join(f"{name} {model.kinds[k]:,}" for k, name in KINDS if k in model.shown_kinds)
    if split:
        total.append(f" ({split})", style="dim")
    total.append(f"  ${model.usd:.4f}", style="bold")
    total.append("  at the person's prices", style="dim")
    title = "by turn" + (f" (the latest {len(model.turns)}; {model.left_out} before)" if model.left_out else "")
    return [
        total,
        Text(""),
        _table("by agent", model.agents, model, turns=False),
        Text(""),
        _table(title, model.turns, model, turns=True),
    ]


class UsageView(VerticalScroll):
    """The Usage tab's body. ``model`` is what it shows (tests read it)."""

    def __init__(self, **kw):
        super().__init__(**kw)
        self.model: UsageModel | None = None  # None: nothing drawn yet

    def compose(self):
        yield Static(id="card-usage")

    def show(self, usage: dict | None) -> None:
        """Draw ``usage_of``'s figures (only when they changed: an update lays the screen out again)."""
        from rich.console import Group

        model = usage_model(usage)
        if model != self.model:
            self.model = model
            self.query_one("#card-usage", Static).update(Group(*usage_renderables(model)))
