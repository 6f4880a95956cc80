"""A card's evidence timeline: one entry per turn (summary, usage, source,
next action, todos) with its artifacts (path, size, sha256) as selectable
rows — Enter opens one in the viewer, ``p`` in ``$PAGER``."""

from __future__ import annotations

from typing import Callable, Iterable

from rich.text import Text
from textual.binding import Binding
from textual.widgets import ListItem, ListView, Static

from loopx_core.values import Artifact, EvidenceView, ObservedView

from ..format import ago, clock_time, short_sha, size, tokens
from ..messages import OpenArtifact


def evidence_text(ev: EvidenceView, now: float) -> Text:
    head = Text.assemble((f"E-{ev.id}", "bold"), "  ", (clock_time(ev.created_at), "dim"), f"  {ev.agent}", (f"  {ev.source}", "dim"), (f"  {ago(ev.created_at, now)}", "dim"))
    if ev.turn_id:
        head.append(f"  turn {ev.turn_id}", style="dim")
    lines = [head, Text("  " + ev.summary)]
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
        lines.append(Text.assemble(("  next ", "dim"), ev.next_action))
    verify = (ev.extra or {}).get("verify") if isinstance(ev.extra, dict) else None
    if verify:
        ok = verify.get("passed")
        lines.append(Text(f"  verify `{verify.get('command')}` {'passed' if ok else 'FAILED'} in {verify.get('seconds', 0)}s", style="green" if ok else "bold red"))
    return Text("\n").join(lines)


def artifact_text(art: Artifact) -> Text:
    if art.missing:
        return Text.assemble("    ▸ ", (art.path, "bold"), ("  missing when reported", "red"))
    return Text.assemble("    ▸ ", (art.path, "bold underline"), (f"  {size(art.size)}  sha256 {short_sha(art.sha256)}", "dim"))


class EvidenceItem(ListItem):
    def __init__(self, evidence: EvidenceView, now: float):
        super().__init__(Static(evidence_text(evidence, now)), classes="evidence-entry")
        self.evidence = evidence


class ArtifactItem(ListItem):
    def __init__(self, card_id: int, artifact: Artifact):
        super().__init__(Static(artifact_text(artifact)), classes="artifact-row" + (" -missing" if artifact.missing else ""))
        self.card_id = card_id
        self.artifact = artifact


class ObservedItem(ListItem):
    def __init__(self, card_id: int, observed: ObservedView, now: float):
        art = Artifact(observed.path, observed.size, observed.sha256, observed.size is None)
        text = Text.assemble(("  observed ", "dim"), (observed.path, "bold"), (f"  {size(observed.size)}  sha256 {short_sha(observed.sha256)}  {observed.agent}  {ago(observed.created_at, now)}", "dim"))
        super().__init__(Static(text), classes="artifact-row observed-row")
        self.card_id = card_id
        self.artifact = art


class EvidenceLog(ListView):
    """Entries oldest first; new evidence is appended, never re-rendered.
    ↑/↓ go from artifact to artifact (an entry's text needs no stop of its
    own); without artifacts they step through the entries."""

    BINDINGS = [
        Binding("down", "cursor_down", "↓ Next artifact", tooltip="the next artifact (▸) in the timeline"),
        Binding("up", "cursor_up", "↑ Previous", tooltip="the previous artifact"),
        Binding("enter", "select_cursor", "Open artifact", tooltip="open the highlighted artifact (▸) in the viewer"),
        Binding("p", "pager", "In $PAGER", tooltip="open the highlighted artifact in $PAGER"),
    ]

    def __init__(self, card_id: int, now: Callable[[], float], **kw):
        super().__init__(**kw)
        self.card_id = card_id
        self._now = now
        self.shown: set[int] = set()
        self.observed_shown: set[int] = set()
        self._placeholder: ListItem | None = None

    def add(self, evidence: Iterable[EvidenceView], observed: Iterable[ObservedView] = ()) -> None:
        now = self._now()
        items: list[ListItem] = []
        for ev in evidence:
            if ev.id in self.shown:
                continue
            self.shown.add(ev.id)
            items.append(EvidenceItem(ev, now))
            items.extend(ArtifactItem(self.card_id, art) for art in ev.artifacts)
        for obs in observed:
            if obs.id in self.observed_shown:
                continue
            self.observed_shown.add(obs.id)
            items.append(ObservedItem(self.card_id, obs, now))
        if items:
            if self._placeholder is not None:
                self._placeholder.remove()
                self._placeholder = None
            self.extend(items)
        elif not self.shown and not self.observed_shown and self._placeholder is None:
            self._placeholder = ListItem(Static(Text("No evidence yet: each writeback an agent makes shows here.", style="dim")), classes="evidence-entry", disabled=True)
            self.append(self._placeholder)

    def _step(self, direction: int) -> None:
        items = list(self.children)
        if not items:
            return
        start = self.index if self.index is not None else -1 if direction > 0 else len(items)
        i = start + direction
        while 0 <= i < len(items):
            if isinstance(items[i], (ArtifactItem, ObservedItem)):
                self.index = i
                return
            i += direction
        # No artifact that way: one step, so the entries can still be read.
        self.index = max(0, min(len(items) - 1, start + direction))

    def action_cursor_down(self) -> None:
        self._step(1)

    def action_cursor_up(self) -> None:
        self._step(-1)

    def on_list_view_selected(self, event: ListView.Selected) -> None:
        item = event.item
        if isinstance(item, (ArtifactItem, ObservedItem)):
            event.stop()
            self.post_message(OpenArtifact(item.card_id, item.artifact))

    def action_pager(self) -> None:
        item = self.highlighted_child
        if isinstance(item, (ArtifactItem, ObservedItem)):
            self.post_message(OpenArtifact(item.card_id, item.artifact, pager=True))
        else:
            self.app.notify("Highlight an artifact (▸) first", severity="warning")
