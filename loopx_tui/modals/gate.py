"""The gate modal: one pending gate, answered with a keystroke.

``y`` approves, ``n`` rejects (an optional note first), ``A`` approves and
remembers the answer as a grant (for this card, this agent or the whole
board), a number key approves with that option of a gate that offers some,
``t`` approves with the person's own words (a text field; Enter sends it),
``s`` (a runtime's own permission question) approves that exact call for the
rest of its runner's session on that card,
``Esc`` or ``q`` leave it for later in "Needs you" — never an answer.

The answer keys are armed only once the dialog has been on screen for
``arm_delay`` (1 s; as Firefox's ``security.dialog_enable_delay``): a key
pressed before that is dropped, not kept, and starts the countdown again,
so a person still typing what they meant for the board never answers a
gate. The countdown is on the dialog; its footer shows its own keys. A gate
whose scope the person marked dangerous (``loopx dangerous set``) asks a
second, different key, ``Y``, after ``y`` or ``A`` — and so does a merge that
changes the repository's ground (``.claude/``, CI, git's own files: listed
first and marked, ``rules/repo_ground``). A merge dialog shows the commits
the gate pinned; when the branch moved before the answer, the answer is
refused and the new gate asks again with the new diff (``ops/merges``)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.timer import Timer
from textual.widgets import Input, OptionList, Static
from textual.widgets.option_list import Option

from loopx_core.ops.board import GateBrief

from ..format import ago, clock_time, ellipsize, short_sha, size
from ..messages import GateAnswer
from ..reads import BoardReader
from ..widgets.diff_view import stats_text
from ..widgets.footer import KeyBar
from .base import LoopxModal

REMEMBER = (("card", "this card", "c"), ("agent", "this agent, any card", "a"), ("board", "the whole board", "b"))
PASS_KEYS = ("escape", "q", "ctrl+c", "d")  # later (never an answer), quit and the diff: these work armed or not
ANSWERS = (
    "approve",
    "reject",
    "remember",
    "pick",
    "confirm",
    "option",
    "words",
    "session",
)  # the actions arming holds back
SMALL_HEIGHT = (
    22  # rows: below it (a phone over ssh) the dialog shows the evidence on one line and drops its blank lines
)
OPTION_KEYS = 9  # options 1–9 have a key (a gate offers at most limits.OPTIONS_MAX = 10; the tenth: t and its text)


class GateModal(LoopxModal):
    AUTO_FOCUS = None  # keys go to the dialog, not to the (hidden) note box
    TYPE_AHEAD = False  # a key typed before the gate appeared never answers it

    BINDINGS = [
        Binding("y", "approve", "Approve", tooltip="approve the gate; the card goes back to active"),
        Binding("n", "reject", "Reject", tooltip="reject it, with an optional note; the card is blocked"),
        Binding(
            "A",
            "remember",
            "Approve+remember",
            tooltip="approve and remember as a grant: this card, this agent or the board",
        ),
        Binding("t", "words", "Answer in words", tooltip="approve with your own words: a text field, Enter sends it"),
        Binding(
            "s",
            "session",
            "Allow for session",
            tooltip="(a runtime's permission question) approve, and let this exact call run unasked on this card until its runner stops",
        ),
        Binding(
            "escape,q", "later", "Later", tooltip="leave it for later in Needs you (g brings it back); never an answer"
        ),
        Binding("d", "diff", "Diff", tooltip="(a merge gate) the card's whole diff; Esc comes back here"),
        Binding("Y", "confirm", "Yes, approve", show=False, tooltip="(a dangerous scope, after y or A) approve it"),
        Binding("c", "pick('card')", "Card", show=False, tooltip="(after A) remember for this card"),
        Binding("a", "pick('agent')", "Agent", show=False, tooltip="(after A) remember for this agent, any card"),
        Binding("b", "pick('board')", "Board", show=False, tooltip="(after A) remember for the whole board"),
        # One line in the help for the nine keys (a binding without a description is left out of it).
        Binding(
            "1",
            "option(1)",
            "Option",
            show=False,
            tooltip=f"(a gate that offers options) 1–{OPTION_KEYS} approve with that option",
        ),
        *[Binding(str(n), f"option({n})", "", show=False) for n in range(2, OPTION_KEYS + 1)],
    ]

    def __init__(
        self,
        brief: GateBrief,
        now: Callable[[], float],
        blink: bool = True,
        *,
        ticks: Callable[[], float],
        arm_delay: float,
        reader: BoardReader | None = None,
    ):
        super().__init__()
        self.brief = brief
        self.reader = reader  # what reads the card's diff (``d``)
        self.gate_id = brief.gate.id
        self.ground = tuple(getattr(brief.diff, "ground", ()) or ()) if brief.gate.kind == "merge" else ()
        self.dangerous = brief.dangerous or bool(self.ground)
        self._now = now
        self._blink = blink
        self._ticks = ticks  # the app's monotonic clock of keys (tests step their own)
        self.arm_delay = arm_delay
        self.shown_at = ticks()  # when the countdown (re)started
        self.armed = arm_delay <= 0
        self.stage = "choose"  # choose | note | words | remember | confirm (a dangerous scope's second key)
        self._approval: GateAnswer | None = None  # what Y confirms
        self._reading_diff = False  # the diff (d) is over this dialog
        self._arming: Timer | None = None  # the countdown's timer, once mounted (a test's clock may arm it first)

    def compose(self) -> ComposeResult:
        gate = self.brief.gate
        with Vertical(id="gate-dialog") as box:
            box.border_title = f"Gate {gate.key} · {gate.kind}"
            box.border_subtitle = f"asked {ago(gate.created_at, self._now())}"
            yield Static(Text(gate.question, style="bold"), id="gate-question")
            yield Static(self._facts(), id="gate-facts")
            # Disabled (so never focused) until n or A asks for them.
            yield Input(
                placeholder="why? (optional) — Enter rejects, Esc goes back",
                id="gate-note",
                max_length=2000,
                compact=True,
                disabled=True,
            )
            yield Input(
                placeholder="your answer — Enter approves with it, Esc goes back",
                id="gate-words",
                max_length=2000,
                compact=True,
                disabled=True,
            )
            yield OptionList(
                *[Option(f"[{key}] {label}", id=value) for value, label, key in REMEMBER],
                id="gate-remember",
                disabled=True,
            )
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
        for box in self.query("#gate-note, #gate-words").results(Input):
            box.cursor_blink = self._blink
            box.display = False
        self.query_one("#gate-remember", OptionList).display = False
        self.set_focus(None)
        self.shown_at = self._ticks()
        if not self.armed:
            self._arming = self.set_interval(0.1, self.arm_tick, name="arming")

    def on_resize(self) -> None:
        """A small terminal keeps the question and the keys on screen: the facts get shorter."""
        if not self.query("#gate-facts"):
            return
        small = self.app.size.height < SMALL_HEIGHT
        if small != self.has_class("-small"):
            self.set_class(small, "-small")
            self.query_one("#gate-facts", Static).update(self._facts())

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
            if self._arming is not None:
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
        if action == "session" and (self.brief.gate.kind != "runtime" or self.brief.gate.options):
            return False  # (only a runtime's permission question, not the question tool's)
        if action in ANSWERS and not self.armed:
            return None  # shown dimmed in the footer until armed
        if action == "remember" and (not self.brief.gate.scope or self.brief.gate.kind == "merge"):
            return False  # (a merge is decided once, never remembered)
        if action == "diff":
            return self.brief.gate.kind == "merge"
        if action == "option" and not self.brief.gate.options:
            return False
        if action == "words" and self.brief.gate.kind == "merge":
            return False  # (a merge is yes or no)
        return True

    def _facts(self) -> Text:
        gate, card, ev = self.brief.gate, self.brief.card, self.brief.evidence
        rows: list[tuple[str, Text | str]] = [
            ("Card", Text.assemble((card.key, "bold"), f" {card.title} ", (f"({card.status})", "dim"))),
            ("Agent", gate.agent),
            ("Scope", self._scope()),
        ]
        if gate.options:
            rows.append(("Options", self._options()))
        elif gate.kind == "runtime":
            rows.append(("Session", Text("s: this exact call runs unasked here until its runner stops", style="dim")))
        if self.brief.notified is not None:
            at, ok, error = self.brief.notified
            rows.append(
                (
                    "Told you",
                    Text(f"{clock_time(at)} ✓", style="green")
                    if ok
                    else Text(f"{clock_time(at)} ✗ {ellipsize(error or '', 60)}", style="red"),
                )
            )
        if gate.deadline is not None:
            rows.append(
                ("Deadline", Text(f"{ago(gate.deadline, self._now())} (unanswered = rejected)", style="yellow"))
            )
        if gate.kind == "merge":
            diff = self.brief.diff
            if diff is not None and self.ground:
                rows.append(
                    (
                        "Ground",
                        Text(
                            f"changes {len(self.ground)} file(s) that configure a runtime, LoopX, git or CI",
                            style="bold red",
                        ),
                    )
                )
            shown = len(self.ground) + 3  # every ground file, first, then three others
            rows.append(
                (
                    "Diff",
                    stats_text(diff, limit=shown, more="— d shows the whole diff", indent=" " * 9)
                    if diff is not None
                    else Text("the branch is gone (nothing to merge)", style="bold red"),
                )
            )
        if ev is None:
            rows.append(("Evidence", Text("none yet", style="dim")))
        elif self.app.size.height < SMALL_HEIGHT:
            rows.append(
                ("Evidence", Text.assemble((f"E-{ev.id}", "bold"), " ", ellipsize(ev.summary, 60)))
            )  # one line; its card has the rest
        else:
            rows.append(
                (
                    "Evidence",
                    Text.assemble(
                        (f"E-{ev.id}", "bold"),
                        f" {ev.agent}, {ago(ev.created_at, self._now())}: ",
                        ellipsize(ev.summary, 200),
                    ),
                )
            )
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

    def _options(self) -> Text:
        """The gate's options, each with the number key that chooses it."""
        out = Text()
        for n, option in enumerate(self.brief.gate.options, 1):
            if n > 1:
                out.append("  ")
            out.append(str(n) if n <= OPTION_KEYS else "t", style="bold reverse")
            out.append(f" {option}")
        return out

    def _scope(self) -> Text | str:
        gate = self.brief.gate
        if not gate.scope:
            return Text(
                "— (the runtime's own permission question)"
                if gate.kind == "runtime" and not gate.options
                else "— (a question)",
                style="dim",
            )
        if self.ground:
            return Text.assemble(
                (gate.scope, "bold"), "  ", (" TOUCHES THE GROUND ", "bold reverse red"), " y, then Y, merges"
            )
        if self.dangerous:
            return Text.assemble(
                (gate.scope, "bold"), "  ", (" DANGEROUS ", "bold reverse red"), " y, then Y, approves"
            )
        return gate.scope

    def _keys(self) -> Text:
        if self.stage == "confirm":
            what = (
                f"merge, ground files and all ({len(self.ground)})"
                if self.ground
                else f"approve {self.brief.gate.scope} (dangerous)"
            )
            return Text.assemble(("Y", "bold reverse"), f" {what}", ("  · ", "dim"), ("Esc", "bold reverse"), " back")
        if self.stage == "note":
            return Text("Enter reject with this note · Esc back", style="bold")
        if self.stage == "words":
            return Text("Enter approve with this answer · Esc back", style="bold")
        if self.stage == "remember":
            return Text("c card · a agent · b board (or ↑↓ Enter) · Esc back", style="bold")
        options = self.brief.gate.options
        keys = [
            ("y", "approve"),
            ("n", "reject"),
            ("A", "approve & remember"),
            ("t", "answer in words"),
            ("Esc/q", "later"),
        ]
        if options:
            keys.insert(0, (f"1–{min(len(options), OPTION_KEYS)}" if len(options) > 1 else "1", "choose"))
        if self.brief.gate.kind == "merge":
            keys = [("y", "merge"), ("n", "reject"), ("d", "diff"), ("Esc/q", "later")]
        elif not self.brief.gate.scope:
            keys = [k for k in keys if k[0] != "A"]
            if self.brief.gate.kind == "runtime" and not options:
                keys.insert(1, ("s", "allow for session"))
        out = Text()
        for i, (key, label) in enumerate(keys):
            if i:
                out.append(" · ", style="dim")
            live = self.armed or key in ("Esc/q", "d")
            out.append(key, style="bold reverse" if live else "dim reverse")
            out.append(f" {label}", style="" if live else "dim")
        if not self.armed:
            out.append(f"\nkeys work in {self.left():.1f} s", style="bold yellow")
            out.append(" — a key typed before that is dropped", style="yellow")
        return out

    def _stage(self, stage: str) -> None:
        self.stage = stage
        self.query_one("#gate-dialog").set_class(stage == "confirm", "-confirm")
        remember = self.query_one("#gate-remember", OptionList)
        for box, own in (
            (self.query_one("#gate-note", Input), "note"),
            (self.query_one("#gate-words", Input), "words"),
        ):
            box.disabled = stage != own
            box.display = stage == own
            if stage == own:
                box.focus()
        remember.disabled = stage != "remember"
        remember.display = stage == "remember"
        if stage == "remember":
            remember.highlighted = 0
            remember.focus()
        elif stage not in ("note", "words"):
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
            self.dismiss(replace(self._approval, second_key=True))

    def action_session(self) -> None:
        if self.stage == "choose" and self.check_action("session", ()):
            self._approve(GateAnswer("approve", remember="session"))

    def action_reject(self) -> None:
        if self.stage == "choose":
            self._stage("note")

    def action_option(self, number: int) -> None:
        options = self.brief.gate.options
        if self.stage == "choose" and 1 <= number <= len(options):
            self._approve(GateAnswer("approve", choice=options[number - 1]))

    def action_words(self) -> None:
        if self.stage == "choose":
            self._stage("words")

    @on(Input.Submitted, "#gate-words")
    def _words(self, event: Input.Submitted) -> None:
        event.stop()
        if not event.value.strip():
            self.notify("Write the answer first, or Esc to go back", severity="warning")
            return
        self._approve(GateAnswer("approve", text=event.value.strip()))

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

    def action_diff(self) -> None:
        """The card's whole diff over this dialog — the one this gate pinned; back here, the answer keys wait again."""
        from ..screens.diff import DiffScreen

        if self.stage != "choose" or self.brief.gate.kind != "merge" or self.reader is None:
            return
        card = self.brief.card
        self._reading_diff = True
        self.app.push_screen(
            DiffScreen(
                card.id,
                Text.assemble(
                    (f" {card.key} ", "bold reverse"), f" {card.title}  ", (f"diff for {self.brief.gate.key}", "dim")
                ),
                self.reader,
                self.brief.gate.id,
            )
        )

    def on_screen_resume(self) -> None:
        """Back from the diff: re-arm, so a key meant for it never answers the gate."""
        if not self._reading_diff:
            return
        self._reading_diff = False
        if self.arm_delay > 0 and self.query("#gate-keys"):
            if self._arming is not None:
                self._arming.stop()
            self.armed = False
            self.shown_at = self._ticks()
            self._arming = self.set_interval(0.1, self.arm_tick, name="arming")
            self.refresh_bindings()
            self.query_one("#gate-keys", Static).update(self._keys())

    def action_later(self) -> None:
        if self.stage != "choose":
            self._stage("choose")
            return
        self.dismiss(GateAnswer("later"))

    def gone(self) -> None:
        """The gate was answered elsewhere (another terminal, a deadline)."""
        self.dismiss(GateAnswer("gone"))
