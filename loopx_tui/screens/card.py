"""Enter on a card: identity, authority, quota and lease; the evidence
timeline; gates with their answers; handoff packets; the raw events; and the
quota burn as a sparkline. Kept current while agents write."""

from __future__ import annotations

import json
from concurrent.futures import Future

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.screen import Screen
from textual.widgets import Static, TabbedContent, TabPane

from loopx_core.rules import ids
from loopx_core.shapes.errors import LoopxError
from loopx_core.shapes.values import CardDetail, CardView

from ..format import (
    ago,
    bar,
    clock_time,
    lease_left,
    limit_text,
    short_sha,
    sparks,
    tokens,
)
from ..messages import (
    BoardUpdated,
    BudgetWanted,
    CardGateWanted,
    CardLoaded,
    OpenTimeline,
    OpenTries,
    ReassignWanted,
    Say,
)
from ..widgets.diff_view import DiffView
from ..widgets.evidence_log import EvidenceLog
from ..widgets.footer import KeyBar
from ..widgets.line import FittedLine
from ..widgets.usage_table import UsageView


class Burn(FittedLine):
    """Tokens per evidence entry, a cell each (``format.sparks``)."""

    def draw(self, data: list[float], width: int) -> Text:
        return Text(sparks(data, width), style="bold")


def header_text(card: CardView, now: float) -> Text:
    t = Text()
    t.append(f" {card.key} ", style="bold reverse")
    t.append(f" {card.title}", style="bold")
    status = (
        card.status
        + (f" ({card.paused_reason})" if card.paused_reason else "")
        + (f" ({card.blocked_reason})" if card.blocked_reason else "")
    )
    t.append(f"  [{status}]", style="bold yellow" if card.status in ("waiting", "paused", "blocked") else "dim")
    # identity and continuation
    t.append("\n owner ", style="dim")
    t.append(card.owner or "—")
    t.append("  priority ", style="dim")
    t.append(str(card.priority))
    if card.after:
        t.append("  after ", style="dim")
        t.append(", ".join(ids.fmt(ids.CARD, a) or "?" for a in card.after))
    if card.handoff_to:
        t.append("  handoff to ", style="dim")
        t.append(card.handoff_to, style="bold")
    # authority and lease
    t.append("\n needs ", style="dim")
    t.append(", ".join(card.needs) if card.needs else "no scopes")
    t.append("  lease ", style="dim")
    if card.lease is not None:
        t.append(f"{card.lease.holder} #{card.lease.token} {lease_left(card, now)}")
    else:
        t.append("none")
    if card.pending_gate is not None:
        t.append(f"  ⚑ G-{card.pending_gate} waiting", style="bold yellow")
    # quota
    t.append("\n quota ", style="dim")
    for name in ("turns", "tokens", "usd"):
        limit = getattr(card.quota, name)
        t.append(f"{name} ", style="dim")
        t.append(limit_text(name, limit))
        if limit.limit is not None:
            t.append(" ")
            t.append_text(bar(limit.fraction, 6))
        t.append("  ")
    t.append("\n next ", style="dim")
    t.append(card.next_action or "—")
    open_todos = card.open_todos
    if card.todos:
        t.append(f"  todos {len(open_todos)} open / {len(card.todos) - len(open_todos)} done", style="dim")
    # each facet keeps its line (cut with "…"): a wrapped one made the panel's edge ragged
    t.no_wrap, t.overflow = True, "ellipsis"
    return t


def gates_text(detail: CardDetail, now: float) -> Text:
    if not detail.gates:
        return Text("No gates on this card.", style="dim")
    out = Text()
    for i, g in enumerate(detail.gates):
        if i:
            out.append("\n\n")
        style = {"pending": "bold yellow", "approved": "green", "rejected": "bold red", "expired": "red"}.get(
            g.status, "dim"
        )
        out.append(f"{g.key} ", style="bold")
        out.append(g.status, style=style)
        out.append(f"  {g.kind} · asked by {g.agent} {ago(g.created_at, now)}", style="dim")
        out.append(f"\n  {g.question}")
        if g.scope:
            out.append(f"\n  scope {g.scope}", style="dim")
        if g.options:
            out.append(f"\n  options {' / '.join(g.options)}", style="dim")
        if g.answered_by:
            out.append(f"\n  {g.answer or g.status} by {g.answered_by} {ago(g.answered_at, now)}")
        if g.note:
            out.append(f"\n  note: {g.note}", style="italic")
    return out


def handoffs_text(detail: CardDetail, now: float) -> Text:
    if not detail.handoffs:
        return Text("No handoffs yet.", style="dim")
    out = Text()
    for i, h in enumerate(detail.handoffs):
        if i:
            out.append("\n\n")
        p = h.packet
        out.append(f"{h.key} ", style="bold")
        out.append(f"{h.from_agent or '—'} → {h.to_agent}", style="bold")
        out.append(f"  by {h.created_by} {ago(h.created_at, now)}", style="dim")
        out.append(f"\n  digest {short_sha(h.digest)}", style="dim")
        if h.accepted_at is not None:
            ok = h.accepted_digest == h.digest
            out.append(
                f"  accepted {ago(h.accepted_at, now)}" + (" ✓ digest" if ok else " ✗ digest"),
                style="green" if ok else "bold red",
            )
        else:
            out.append("  not accepted yet", style="yellow")
        out.append(f"\n  {p.get('summary', '')}")
        for label, key in (("done", "done"), ("pending", "pending")):
            items = p.get(key) or []
            if items:
                out.append(f"\n  {label}: ", style="dim")
                out.append("; ".join(items))
        if p.get("needs"):
            out.append("\n  needs: ", style="dim")
            out.append(", ".join(p["needs"]))
        for gate in p.get("open_gates") or []:
            out.append(f"\n  open gate {gate.get('id')}: {gate.get('question')}", style="yellow")
        arts = p.get("last_artifacts") or []
        if arts:
            out.append("\n  artifacts: ", style="dim")
            out.append(", ".join(a.get("path", "?") for a in arts))
        if p.get("next"):
            out.append("\n  next: ", style="dim")
            out.append(str(p["next"]))
    return out


def events_text(detail: CardDetail) -> Text:
    if not detail.events:
        return Text("No events.", style="dim")
    out = Text()
    for i, e in enumerate(detail.events):
        if i:
            out.append("\n")
        out.append(f"{e.seq:>6} ", style="dim")
        out.append(f"{clock_time(e.at)} ", style="dim")
        out.append(f"{e.kind:<16}", style="bold")
        out.append(f" {e.actor}")
        data = {k: v for k, v in e.data.items() if v not in (None, [], {})}
        if data:
            out.append(
                "  " + json.dumps(data, separators=(",", ":"), ensure_ascii=False, default=str)[:300], style="dim"
            )
    return out


class CardScreen(Screen):
    """Opens at once with the card as the board knows it; the detail (evidence,
    gates, handoffs, events) is read in a thread worker and filled in.

    The app keeps one and shows the next card in it (``show``): building the
    screen's widgets and their styles was most of what opening a card cost."""

    BINDINGS = [
        Binding("escape,q", "back", "Back", tooltip="back to the board"),
        Binding(
            "1",
            "tab('evidence')",
            "Evidence",
            show=False,
            tooltip="the evidence timeline (↑↓ go from artifact to artifact, Enter opens one)",
        ),
        Binding("2", "tab('gates')", "Gates", show=False, tooltip="gates with their answers"),
        Binding("3", "tab('handoffs')", "Handoffs", show=False, tooltip="handoff packets"),
        Binding("4", "tab('events')", "Events", show=False, tooltip="the raw event history"),
        Binding(
            "5",
            "tab('diff')",
            "Diff",
            show=False,
            tooltip="what the card's work changed: its branch against the base (once merged: the merge), then its uncommitted work ([ ] turn pages)",
        ),
        Binding("6", "tab('usage')", "Usage", show=False, tooltip="tokens by kind and dollars, per agent and per turn"),
        Binding(
            "t",
            "timeline",
            "Timeline",
            tooltip="this card's trajectory: turns, gate waits, pauses, handoffs, burn per hour",
        ),
        Binding(
            "T",
            "tries",
            "Tries",
            show=False,
            tooltip="this card's tries side by side (diff, verify, turns, tokens, dollars); k keeps one",
        ),
        Binding("g", "gate", "Answer gate", tooltip="answer this card's pending gate"),
        Binding("plus", "budget", "+Budget", tooltip="raise this card's budget"),
        Binding("a", "reassign", "Assign", tooltip="reassign this card"),
        Binding("question_mark", "app.help", "Help", tooltip="every key"),
    ]

    def __init__(self, card: CardView, reader, now, ahead: Future | None = None):
        super().__init__()
        self.card = card
        self.card_id = card.id
        self.reader = reader
        self.now = now
        self._ahead = ahead  # the detail's read, started by whoever opened the card
        self.detail: CardDetail | None = None
        self.loads = 0  # details applied (tests wait on this)
        self._shown: dict[str, Text] = {}  # what each Static shows now

    def compose(self) -> ComposeResult:
        yield Static(header_text(self.card, self.now()), id="card-header")
        with Horizontal(id="card-burn"):
            yield Static(Text("reading the card…", style="dim"), id="card-burn-label")
            yield Burn(id="card-sparkline")
        with TabbedContent(id="card-tabs", initial="evidence"):
            with TabPane("Evidence", id="evidence"):
                yield EvidenceLog(self.card_id, self.now, id="evidence-log")
            with TabPane("Gates", id="gates"):
                yield VerticalScroll(Static(id="card-gates"))
            with TabPane("Handoffs", id="handoffs"):
                yield VerticalScroll(Static(id="card-handoffs"))
            with TabPane("Events", id="events"):
                yield VerticalScroll(Static(id="card-events"))
            with TabPane("Diff", id="diff"):
                yield DiffView(self.card_id, self.reader, work=True, id="card-diff")
            with TabPane("Usage", id="usage"):
                yield UsageView(id="card-usage-view")
        yield KeyBar()

    def on_mount(self) -> None:
        self.query_one("#card-sparkline").display = False
        self.query_one(EvidenceLog).focus()
        ahead, self._ahead = self._ahead, None
        self.load(ahead)

    def show(self, card: CardView, ahead: Future | None = None) -> None:
        """Show another card in this screen (it is not on screen): as if new."""
        self.card = card
        self.card_id = card.id
        self.detail = None
        self.loads = 0
        self._shown.clear()
        self._update("#card-header", header_text(card, self.now()))
        self.query_one("#card-sparkline").display = False
        self.query_one("#card-burn-label", Static).update(Text("reading the card…", style="dim"))
        for pane in ("gates", "handoffs", "events"):
            self.query_one(f"#card-{pane}", Static).update("")
        tabs = self.query_one(TabbedContent)
        for pane in ("evidence", "gates", "handoffs", "events"):
            tabs.get_tab(pane).label = pane.capitalize()
        tabs.get_tab("usage").label = "Usage"
        self.query_one(UsageView).show(None)
        tabs.active = "evidence"
        self.query_one(DiffView).reset(card.id)
        log = self.query_one(EvidenceLog)
        log.reset(card.id)
        log.focus()
        self.refresh_bindings()
        self.load(ahead)

    def load(self, ahead: Future | None = None) -> None:
        """Read the card's detail (or take the read ``ahead`` started) and show it:
        at once when that read is back already, else when it lands."""
        ahead = ahead or self.reader.card_detail_ahead(self.card_id)
        if ahead.done() and ahead.exception() is None:
            self._apply(ahead.result())
            return
        self.run_worker(
            lambda: self._read(ahead),
            thread=True,
            group="reads",
            name=f"card {self.card.key}",
            exclusive=True,
            exit_on_error=False,
        )

    def _read(self, ahead) -> None:
        try:
            detail = ahead.result()
        except LoopxError as err:
            self.app.call_from_thread(self._failed, err.message)
            return
        self.post_message(CardLoaded(detail))

    def _failed(self, message: str) -> None:
        if self.is_attached:
            self.app.post_message(Say(message, severity="error"))
            if self.app.screen is self:
                self.app.pop_screen()

    @on(CardLoaded)
    def _loaded(self, message: CardLoaded) -> None:
        self._apply(message.detail)

    def _apply(self, detail: CardDetail) -> None:
        if not self.is_attached or detail.card.id != self.card_id:
            return
        self.detail = detail
        self.card = detail.card
        now = self.now()
        self._update("#card-header", header_text(detail.card, now))
        burn = [float(e.tokens) for e in detail.evidence]
        spark = self.query_one(Burn)
        spark.show(burn)
        spark.display = bool(burn)
        total = sum(burn)
        quota = detail.card.quota
        label = f"burn {tokens(total)} tok"
        if quota.usd.used:
            label += f" ${quota.usd.used:.2f}"
        label += " · tokens per entry " if burn else " · no evidence yet"
        self.query_one("#card-burn-label", Static).update(Text(label, style="dim"))
        self.query_one(EvidenceLog).add(detail.evidence, detail.observed)
        self._update("#card-gates", gates_text(detail, now))
        self._update("#card-handoffs", handoffs_text(detail, now))
        self.query_one("#card-events", Static).update(events_text(detail))
        self.query_one(UsageView).show(detail.usage)
        tabs = self.query_one(TabbedContent)
        for pane, count in (
            ("evidence", len(detail.evidence)),
            ("gates", len(detail.gates)),
            ("handoffs", len(detail.handoffs)),
            ("events", len(detail.events)),
        ):
            tab = tabs.get_tab(pane)
            tab.label = f"{pane.capitalize()} {count}"
        if detail.usage is not None and detail.usage["agents"]:
            tabs.get_tab("usage").label = f"Usage {len(detail.usage['turns']) + detail.usage['turns_left_out']}"
        self.refresh_bindings()  # (the artifact keys, once there is one)
        self.loads += 1

    @on(BoardUpdated)
    def _board_updated(self, message: BoardUpdated) -> None:
        if self.card_id in message.touched and self.is_attached:
            self.load()
            if self.query_one(TabbedContent).active == "diff":
                self.query_one(DiffView).load()  # (the card moved: a new commit, a merge)

    def tick(self) -> None:
        """Once a second: every "2m ago" and lease time left on the screen."""
        logs = list(self.query(EvidenceLog))
        if not logs:
            return  # (not composed yet: its first draw is current)
        card = self.detail.card if self.detail is not None else self.card
        now = self.now()
        self._update("#card-header", header_text(card, now))
        logs[0].tick()
        if self.detail is not None:
            self._update("#card-gates", gates_text(self.detail, now))
            self._update("#card-handoffs", handoffs_text(self.detail, now))

    def _update(self, selector: str, text: Text) -> None:
        """Only what changed: a Static's update lays the screen out again."""
        if self._shown.get(selector) != text:
            self._shown[selector] = text
            self.query_one(selector, Static).update(text)

    def footer_shows(self, binding: Binding) -> bool:
        """The artifact keys are in the footer while the card has an artifact to open."""
        if binding.action in ("select", "pager", "cursor_down", "cursor_up"):
            return any(log.artifacts for log in self.query(EvidenceLog))
        return True

    def action_back(self) -> None:
        self.app.pop_screen()

    def action_tab(self, pane: str) -> None:
        self.query_one(TabbedContent).active = pane

    @on(TabbedContent.TabActivated, "#card-tabs")
    def _tab_shown(self, event: TabbedContent.TabActivated) -> None:
        """The diff is read (with git, in a worker) the first time its tab is shown for a card."""
        if event.pane.id != "diff":
            return
        diff = self.query_one(DiffView)
        if diff.diff is None:
            diff.load()
        diff.focus_patch()

    def action_timeline(self) -> None:
        self.app.post_message(OpenTimeline(self.card_id))

    def action_tries(self) -> None:
        self.app.post_message(OpenTries(self.card_id))

    def action_gate(self) -> None:
        self.app.post_message(CardGateWanted(self.card_id, self.card.pending_gate))

    def action_budget(self) -> None:
        self.app.post_message(BudgetWanted(self.card_id))

    def action_reassign(self) -> None:
        self.app.post_message(ReassignWanted(self.card_id))
