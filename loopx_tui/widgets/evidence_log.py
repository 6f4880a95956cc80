"""A card's evidence timeline: one entry per turn (summary, usage, source,
next action, todos) with its artifacts (path, size, sha256) as selectable
rows — Enter opens one in the viewer, ``p`` in ``$PAGER``."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from rich.text import Text
from textual.binding import Binding
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from loopx_core.shapes.values import Artifact, EvidenceView, ObservedView

from ..format import ago, clock_time, hang, short_sha, size, tokens
from ..messages import OpenArtifact


def evidence_text(ev: EvidenceView, now: float, width: int = 0) -> Text:
    """One entry; at ``width`` its summary and next action wrap under themselves."""
    head = Text.assemble(
        (f"E-{ev.id}", "bold"),
        "  ",
        (clock_time(ev.created_at), "dim"),
        f"  {ev.agent}",
        (f"  {ev.source}", "dim"),
        (f"  {ago(ev.created_at, now)}", "dim"),
    )
    if ev.turn_id:
        head.append(f"  turn {ev.turn_id}", style="dim")
    if ev.unverified:
        head.append("  UNVERIFIED writer (inbox)", style="bold yellow")
    lines = [head, hang("  ", ev.summary, width)]
    usage = [f"{tokens(ev.tokens)} tok"]
    if ev.tokens_in or ev.tokens_out:
        usage.append(f"in {tokens(ev.tokens_in)} / out {tokens(ev.tokens_out)}")
    if ev.usd:
        usage.append(f"${ev.usd:.2f}")
    todos = []
    if ev.todos_added:
        todos.append(f"+{len(ev.todos_added)} todo")
    if ev.todos_done:
        todos.append("✓ " + ", ".join(f"#{t}" for t in ev.todos_done))
    meta = Text("  usage " + " · ".join(usage), style="dim")
    if todos:
        meta.append("  " + "  ".join(todos), style="dim")
    lines.append(meta)
    if ev.next_action:
        lines.append(hang(Text("  next ", style="dim"), ev.next_action, width))
    verify = (ev.extra or {}).get("verify") if isinstance(ev.extra, dict) else None
    if verify:
        ok = verify.get("passed")
        lines.append(
            Text(
                f"  verify `{verify.get('command')}` {'passed' if ok else 'FAILED'} in {verify.get('seconds', 0)}s",
                style="green" if ok else "bold red",
            )
        )
    return Text("\n").join(lines)


def artifact_text(art: Artifact) -> Text:
    if art.missing:
        return Text.assemble("    ▸ ", (art.path, "bold"), ("  missing when reported", "red"))
    return Text.assemble(
        "    ▸ ", (art.path, "bold underline"), (f"  {size(art.size)}  sha256 {short_sha(art.sha256)}", "dim")
    )


class EvidenceLog(OptionList):
    """Entries oldest first, artifacts (▸) under each: one widget drawing only
    the lines on screen, so a card with many turns opens at once. Entries are
    not stops: ↑/↓ go from artifact to artifact; Enter opens one in the
    viewer, ``p`` in ``$PAGER``. New evidence is appended."""

    BINDINGS = [
        Binding("down", "cursor_down", "Next artifact", tooltip="the next artifact (▸) in the timeline"),
        Binding("up", "cursor_up", "Previous artifact", tooltip="the previous artifact"),
        Binding("enter", "select", "Open artifact", tooltip="open the highlighted artifact (▸) in the viewer"),
        Binding("p", "pager", "In $PAGER", tooltip="open the highlighted artifact in $PAGER"),
    ]

    def __init__(self, card_id: int, now: Callable[[], float], **kw):
        super().__init__(**kw)
        self.card_id = card_id
        self._now = now
        self.shown: set[int] = set()
        self.observed_shown: set[int] = set()
        self.entries: list[EvidenceView] = []  # in the order shown
        self.artifacts: dict[str, Artifact] = {}  # option id -> artifact
        self._placeholder = False
        self._drawn: dict[int, str] = {}  # entry id -> the "ago" it was drawn with
        self._width = 0  # the width the entries were wrapped at

    def reset(self, card_id: int) -> None:
        """Empty, for another card."""
        self.card_id = card_id
        self.shown.clear()
        self.observed_shown.clear()
        self.entries.clear()
        self.artifacts.clear()
        self._drawn.clear()
        self._placeholder = False
        self.clear_options()

    def _text_width(self) -> int:
        """The cells an entry's text has (0 before the first layout)."""
        region = self.scrollable_content_region
        return max(0, region.width - self._get_left_gutter_width()) if region else 0

    def _entry(self, ev: EvidenceView, now: float) -> Text:
        self._drawn[ev.id] = ago(ev.created_at, now)
        # A blank line above each entry, as text: Textual draws a Text as its own
        # content, any other renderable (rich's Padding was) through a console.
        return Text("\n").append_text(evidence_text(ev, now, self._width))

    def tick(self) -> None:
        """Once a second: the entries whose "2m ago" now says something else."""
        now = self._now()
        for ev in self.entries:
            if self._drawn.get(ev.id) != ago(ev.created_at, now):
                self.replace_option_prompt(f"E-{ev.id}", self._entry(ev, now))

    def on_resize(self) -> None:
        width = self._text_width()
        if width and width != self._width:
            self._width = width
            now = self._now()
            for ev in self.entries:
                self.replace_option_prompt(f"E-{ev.id}", self._entry(ev, now))

    def add(self, evidence: Iterable[EvidenceView], observed: Iterable[ObservedView] = ()) -> None:
        now = self._now()
        self._width = self._width or self._text_width()
        options: list[Option] = []
        for ev in evidence:
            if ev.id in self.shown:
                continue
            self.shown.add(ev.id)
            self.entries.append(ev)
            options.append(Option(self._entry(ev, now), id=f"E-{ev.id}", disabled=True))
            for i, art in enumerate(ev.artifacts):
                key = f"E-{ev.id}/{i}"
                self.artifacts[key] = art
                options.append(Option(artifact_text(art), id=key))
        for obs in observed:
            if obs.id in self.observed_shown:
                continue
            self.observed_shown.add(obs.id)
            key = f"O-{obs.id}"
            self.artifacts[key] = Artifact(obs.path, obs.size, obs.sha256, obs.size is None)
            text = Text.assemble(
                ("  observed ", "dim"),
                (obs.path, "bold"),
                (f"  {size(obs.size)}  sha256 {short_sha(obs.sha256)}  {obs.agent}  {ago(obs.created_at, now)}", "dim"),
            )
            options.append(Option(text, id=key))
        if options:
            if self._placeholder:
                self.clear_options()
                self._placeholder = False
            self.add_options(options)
            if self.highlighted is None and self.artifacts:  # Enter opens one at once, as the footer says
                self.highlighted = next(
                    i for i in range(self.option_count) if self.get_option_at_index(i).id in self.artifacts
                )
        elif not self.shown and not self.observed_shown and not self._placeholder:
            self._placeholder = True
            self.add_option(
                Option(Text("No evidence yet: each writeback an agent makes shows here.", style="dim"), disabled=True)
            )

    @property
    def highlighted_artifact(self) -> Artifact | None:
        if self.highlighted is None:
            return None
        return self.artifacts.get(self.get_option_at_index(self.highlighted).id or "")

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        art = self.artifacts.get(event.option.id or "")
        if art is not None:
            event.stop()
            self.post_message(OpenArtifact(self.card_id, art))

    def action_pager(self) -> None:
        art = self.highlighted_artifact
        if art is not None:
            self.post_message(OpenArtifact(self.card_id, art, pager=True))
        else:
            self.app.notify("Highlight an artifact (▸) first", severity="warning")
