"""The gate modal: one pending gate, answered with a keystroke.

``y`` approves, ``n`` rejects (an optional note first), ``A`` approves and
remembers the answer as a grant (for this card, this agent or the whole
board), ``Esc`` or ``q`` leave it for later in "Needs you" — never an answer.

The answer keys are armed only once the dialog has been on screen for
``arm_delay`` (1 s; as Firefox's ``security.dialog_enable_delay``): a key
pressed before that is dropped, not kept, and starts the countdown again,
so a person still typing what they meant for the board never answers a
gate. The countdown is on the dialog; its footer shows its own keys. A gate
whose scope the person marked dangerous (``loopx dangerous set``) asks a
second, different key, ``Y``, after ``y`` or ``A``."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.widgets import Input, OptionList, Static
from textual.widgets.option_list import Option

from loopx_core.ops.board import GateBrief

from ..format import ago, ellipsize, short_sha, size
from ..widgets.footer import KeyBar
from .base import LoopxModal

REMEMBER = (("card", "this card", "c"), ("agent", "this agent, any card", "a"), ("board", "the whole board", "b"))
PASS_KEYS = ("escape", "q", "ctrl+c")  # later (never an answer) and quit: these work armed or not
ANSWERS = ("approve", "reject", "remember", "pick", "confirm")  # the actions arming holds back


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
        Binding("escape,q", "later", "Later", tooltip="leave it for later in Needs you (g brings it back); never an answer"),
        Binding("Y", "confirm", "Yes, approve", show=False, tooltip="(a dangerous scope, after y or A) approve it"),
        Binding("c", "pick('card')", "Card", show=False, tooltip="(after A) remember for this card"),
        Binding("a", "pick('agent')", "Agent", show=False, tooltip="(after A) remember for this agent, any card"),
        Binding("b", "pick('board')", "Board", show=False, tooltip="(after A) remember for the whole board"),
    ]

    def __init__(self, brief: GateBrief, now: Callable[[], float], blink: bool = True, *, ticks: Callable[[], float], arm_delay: float):
        super().__init__()
        self.brief = brief
        self.gate_id = brief.gate.id
        self.dangerous = brief.dangerous
        self._now = now
        self._blink = blink
        self._ticks = ticks  # the app's monotonic clock of keys (tests step their own)
        self.arm_delay = arm_delay
        self.shown_at = ticks()  # when the countdown (re)started
        self.armed = arm_delay <= 0
        self.stage = "choose"  # choose | note | remember | confirm (a dangerous scope's second key)
        self._approval: GateAnswer | None = None  # what Y confirms

    def compose(self) -> ComposeResult:
        gate = self.brief.gate
        with Vertical(id="gate-dialog") as box:
            box.border_title = f"Gate {gate.key} · {gate.kind}"
            box.border_subtitle = f"asked {ago(gate.created_at, self._now())}"
            yield Static(Text(gate.question, style="bold"), id="gate-question")
            yield Static(self._facts(), id="gate-facts")
            # Disabled (so never focused) until n or A asks for them.
            yield Input(placeholder="why? (optional) — Enter rejects, Esc goes back", id="gate-note", max_length=2000, compact=True, disabled=True)
            yield OptionList(*[Option(f"[{key}] {label}", id=value) for value, label, key in REMEMBER], id="gate-remember", disabled=True)
            yield Static(self._keys(), id="gate-keys")
        yield KeyBar()

    def tick(self) -> None:
        """The clock moved: "asked 2m ago" and the deadline's countdown follow it."""
        if not self.query("#gate-facts"):
            return
        self.query_one("#gate-dialog").border_subtitle = f"asked {ago(self.brief.gate.created_at, self._now())}"
        self.query_one("#gate-facts", Static).update(self._facts())

    def on_mount(self) -> None:  # (LoopxModal's runs too: Textual calls each class's handler)
        if not self.query("#gate-note"):
            return  # the app closed while this was being put up
        note = self.query_one("#gate-note", Input)
        note.cursor_blink = self._blink
        note.display = False
        self.query_one("#gate-remember", OptionList).display = False
        self.set_focus(None)
        self.shown_at = self._ticks()
        if not self.armed:
            self._arming = self.set_interval(0.1, self.arm_tick, name="arming")

    # -- arming ----------------------------------------------------------------------
    def left(self) -> float:
        """Seconds until the answer keys work (0: armed)."""
        return 0.0 if self.armed else max(0.0, self.arm_delay - (self._ticks() - self.shown_at))

    def arm_tick(self) -> None:
        """The countdown (a timer; tests call it after stepping the clock)."""
        if self.armed or not self.is_attached:
            return
        if self.left() <= 0:
            self.armed = True
            self._arming.stop()
            self.refresh_bindings()
        self.query_one("#gate-keys", Static).update(self._keys())

    def drops(self, key: str) -> bool:
        """Whether the key ``key`` is dropped: any but Esc/q before the dialog
        is armed (and the countdown starts again)."""
        if self.left() <= 0:
            self.arm_tick()
            return False
        if key in PASS_KEYS:
            return False
        self.shown_at = self._ticks()
        self.arm_tick()
        return True

    def check_action(self, action: str, parameters: tuple) -> bool | None:
        if action in ANSWERS and not self.armed:
            return None  # shown dimmed in the footer until armed
        if action == "remember" and not self.brief.gate.scope:
            return False
        return True

    def _facts(self) -> Text:
        gate, card, ev = self.brief.gate, self.brief.card, self.brief.evidence
        rows: list[tuple[str, Text | str]] = [
            ("Card", Text.assemble((card.key, "bold"), f" {card.title} ", (f"({card.status})", "dim"))),
            ("Agent", gate.agent),
            ("Scope", self._scope()),
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

    def _scope(self) -> Text | str:
        gate = self.brief.gate
        if not gate.scope:
            return Text("— (a question)", style="dim")
        if self.dangerous:
            return Text.assemble((gate.scope, "bold"), "  ", (" DANGEROUS ", "bold reverse red"), " y, then Y, approves")
        return gate.scope

    def _keys(self) -> Text:
        if self.stage == "confirm":
            return Text.assemble(("Y", "bold reverse"), f" approve {self.brief.gate.scope} (dangerous)", ("  · ", "dim"), ("Esc", "bold reverse"), " back")
        if self.stage == "note":
            return Text("Enter reject with this note · Esc back", style="bold")
        if self.stage == "remember":
            return Text("c card · a agent · b board (or ↑↓ Enter) · Esc back", style="bold")
        keys = [("y", "approve"), ("n", "reject"), ("A", "approve & remember"), ("Esc/q", "later")]
        if not self.brief.gate.scope:
            keys = [k for k in keys if k[0] != "A"]
        out = Text()
        for i, (key, label) in enumerate(keys):
            if i:
                out.append(" · ", style="dim")
            out.append(key, style="bold reverse" if self.armed or key == "Esc/q" else "dim reverse")
            out.append(f" {label}", style="" if self.armed or key == "Esc/q" else "dim")
        if not self.armed:
            out.append(f"\nkeys work in {self.left():.1f} s", style="bold yellow")
            out.append(" — a key typed before that is dropped", style="yellow")
        return out

    def _stage(self, stage: str) -> None:
        self.stage = stage
        self.query_one("#gate-dialog").set_class(stage == "confirm", "-confirm")
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
    def _approve(self, answer: GateAnswer) -> None:
        """Approve now — or, for a dangerous scope, once ``Y`` confirms it."""
        if not self.dangerous:
            self.dismiss(answer)
            return
        self._approval = answer
        self._stage("confirm")

    def action_approve(self) -> None:
        if self.stage == "choose":
            self._approve(GateAnswer("approve"))

    def action_confirm(self) -> None:
        if self.stage == "confirm" and self._approval is not None:
            self.dismiss(self._approval)

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
            self._approve(GateAnswer("approve", remember=what))

    @on(OptionList.OptionSelected, "#gate-remember")
    def _picked(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self._approve(GateAnswer("approve", remember=event.option.id))

    def action_later(self) -> None:
        if self.stage != "choose":
            self._stage("choose")
            return
        self.dismiss(GateAnswer("later"))

    def gone(self) -> None:
        """The gate was answered elsewhere (another terminal, a deadline)."""
        self.dismiss(GateAnswer("gone"))
