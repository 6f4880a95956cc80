"""The gate modal: one pending gate, answered with a keystroke.

``y`` approves, ``n`` rejects (an optional note first), ``A`` approves and
remembers the answer as a grant (for this card, this agent or the whole
board), ``Esc`` leaves it for later in "Needs you"."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.widgets import Input, OptionList, Static
from textual.widgets.option_list import Option

from loopx_core.ops.board import GateBrief

from ..format import ago, ellipsize, short_sha, size
from .base import LoopxModal

REMEMBER = (("card", "this card", "c"), ("agent", "this agent, any card", "a"), ("board", "the whole board", "b"))


@dataclass(frozen=True)
class GateAnswer:
    decision: str  # approve | reject | later | gone
    note: str | None = None
    remember: str | None = None  # card | agent | board


class GateModal(LoopxModal):
    AUTO_FOCUS = None  # keys go to the dialog, not to the (hidden) note box
    TYPE_AHEAD = False  # a key typed before the gate appeared never answers it

    BINDINGS = [
        Binding("y", "approve", "Approve", tooltip="approve the gate; the card goes back to active"),
        Binding("n", "reject", "Reject", tooltip="reject it, with an optional note; the card is blocked"),
        Binding("A", "remember", "Approve+remember", tooltip="approve and remember as a grant: this card, this agent or the board"),
        Binding("escape", "later", "Later", tooltip="leave it for later in Needs you (g brings it back)"),
        Binding("c", "pick('card')", "Card", show=False, tooltip="(after A) remember for this card"),
        Binding("a", "pick('agent')", "Agent", show=False, tooltip="(after A) remember for this agent, any card"),
        Binding("b", "pick('board')", "Board", show=False, tooltip="(after A) remember for the whole board"),
    ]

    def __init__(self, brief: GateBrief, now: Callable[[], float], blink: bool = True):
        super().__init__()
        self.brief = brief
        self.gate_id = brief.gate.id
        self._now = now
        self._blink = blink
        self.stage = "choose"  # choose | note | remember

    def compose(self) -> ComposeResult:
        gate, card = self.brief.gate, self.brief.card
        with Vertical(id="gate-dialog") as box:
            box.border_title = f"Gate {gate.key} · {gate.kind}"
            box.border_subtitle = f"asked {ago(gate.created_at, self._now())}"
            yield Static(Text(gate.question, style="bold"), id="gate-question")
            yield Static(self._facts(), id="gate-facts")
            # Disabled (so never focused) until n or A asks for them.
            yield Input(placeholder="why? (optional) — Enter rejects, Esc goes back", id="gate-note", max_length=2000, compact=True, disabled=True)
            yield OptionList(*[Option(f"[{key}] {label}", id=value) for value, label, key in REMEMBER], id="gate-remember", disabled=True)
            yield Static(self._keys(), id="gate-keys")

    def tick(self) -> None:
        """The clock moved: "asked 2m ago" and the deadline's countdown follow it."""
        if not self.query("#gate-facts"):
            return
        self.query_one("#gate-dialog").border_subtitle = f"asked {ago(self.brief.gate.created_at, self._now())}"
        self.query_one("#gate-facts", Static).update(self._facts())

    def on_mount(self) -> None:
        if not self.query("#gate-note"):
            return  # the app closed while this was being put up
        note = self.query_one("#gate-note", Input)
        note.cursor_blink = self._blink
        note.display = False
        self.query_one("#gate-remember", OptionList).display = False
        self.set_focus(None)

    def _facts(self) -> Text:
        gate, card, ev = self.brief.gate, self.brief.card, self.brief.evidence
        rows: list[tuple[str, Text | str]] = [
            ("Card", Text.assemble((card.key, "bold"), f" {card.title} ", (f"({card.status})", "dim"))),
            ("Agent", gate.agent),
            ("Scope", gate.scope or Text("— (a question)", style="dim")),
        ]
        if gate.options:
            rows.append(("Options", " / ".join(gate.options)))
        if gate.deadline is not None:
            rows.append(("Deadline", Text(f"{ago(gate.deadline, self._now())} (unanswered = rejected)", style="yellow")))
        if ev is None:
            rows.append(("Evidence", Text("none yet", style="dim")))
        else:
            rows.append(("Evidence", Text.assemble((f"E-{ev.id}", "bold"), f" {ev.agent}, {ago(ev.created_at, self._now())}: ", ellipsize(ev.summary, 200))))
            for art in ev.artifacts[:3]:
                state = "missing" if art.missing else f"{size(art.size)} {short_sha(art.sha256)}"
                rows.append(("", Text.assemble("▸ ", (art.path, "bold"), f"  {state}", style="")))
            if len(ev.artifacts) > 3:
                rows.append(("", Text(f"… {len(ev.artifacts) - 3} more artifacts", style="dim")))
            if ev.next_action:
                rows.append(("Next", ellipsize(ev.next_action, 200)))
        out = Text()
        for i, (label, value) in enumerate(rows):
            if i:
                out.append("\n")
            out.append(f"{label:<9}", style="dim")
            out.append(value if isinstance(value, Text) else Text(str(value)))
        return out

    def _keys(self) -> Text:
        if self.stage == "note":
            return Text("Enter reject with this note · Esc back", style="bold")
        if self.stage == "remember":
            return Text("c card · a agent · b board (or ↑↓ Enter) · Esc back", style="bold")
        keys = [("y", "approve"), ("n", "reject"), ("A", "approve & remember"), ("Esc", "later")]
        if not self.brief.gate.scope:
            keys = [k for k in keys if k[0] != "A"]
        out = Text()
        for i, (key, label) in enumerate(keys):
            if i:
                out.append(" · ", style="dim")
            out.append(key, style="bold reverse")
            out.append(f" {label}")
        return out

    def _stage(self, stage: str) -> None:
        self.stage = stage
        note = self.query_one("#gate-note", Input)
        remember = self.query_one("#gate-remember", OptionList)
        note.disabled = stage != "note"
        note.display = stage == "note"
        remember.disabled = stage != "remember"
        remember.display = stage == "remember"
        if stage == "note":
            note.focus()
        elif stage == "remember":
            remember.highlighted = 0
            remember.focus()
        else:
            self.set_focus(None)
        self.query_one("#gate-keys", Static).update(self._keys())

    # -- answers -------------------------------------------------------------------
    def action_approve(self) -> None:
        if self.stage == "choose":
            self.dismiss(GateAnswer("approve"))

    def action_reject(self) -> None:
        if self.stage == "choose":
            self._stage("note")

    @on(Input.Submitted, "#gate-note")
    def _note(self, event: Input.Submitted) -> None:
        event.stop()
        self.dismiss(GateAnswer("reject", note=event.value.strip() or None))

    def action_remember(self) -> None:
        if self.stage != "choose":
            return
        if not self.brief.gate.scope:
            self.notify("This gate has no scope to remember; y approves it once", severity="warning")
            return
        self._stage("remember")

    def action_pick(self, what: str) -> None:
        if self.stage == "remember":
            self.dismiss(GateAnswer("approve", remember=what))

    @on(OptionList.OptionSelected, "#gate-remember")
    def _picked(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.dismiss(GateAnswer("approve", remember=event.option.id))

    def action_later(self) -> None:
        if self.stage != "choose":
            self._stage("choose")
            return
        self.dismiss(GateAnswer("later"))

    def gone(self) -> None:
        """The gate was answered elsewhere (another terminal, a deadline)."""
        self.dismiss(GateAnswer("gone"))
