"""The screen's keys on the bottom line: one widget, not one per key.

Textual's Footer is a container of a FooterKey widget per key (about a dozen
on the board). Each widget is a message pump of its own: mounting and laying
out a screen costs ~3 ms a widget here, so the footer's keys cost the board's
first paint ~35 ms, and every change of the screen's keys recomposed them
(moving the selection from card to card is one: focus moves). ``KeyBar``
draws the same line — each shown key and its description, the disabled ones
dimmed, the command palette's key on the right — as one widget, and draws it
again only when the keys shown, their labels or whether they are enabled
change. A click on a key presses it; hovering one shows its tooltip."""

from __future__ import annotations

from rich.cells import cell_len
from rich.text import Text
from textual import events
from textual.binding import Binding
from textual.screen import Screen
from textual.widget import Widget


def shown_keys(screen: Screen) -> tuple[tuple, tuple | None]:
    """The keys a screen shows now, ``(binding, enabled, tooltip)`` per action
    (the first binding wins), and the command palette's key (not shown with
    the others: on the right) or None."""
    seen: dict[str, tuple[Binding, bool, str]] = {}
    palette = None
    applies = getattr(screen, "footer_shows", None)  # a screen may keep a key out of the footer where it does not apply
    for key, (_, binding, enabled, tooltip) in screen.active_bindings.items():
        entry = (binding, enabled, tooltip or binding.tooltip or binding.description)
        if key == screen.app.COMMAND_PALETTE_BINDING:
            palette = entry if screen.app.ENABLE_COMMAND_PALETTE else None
        elif binding.show and binding.action not in seen and (applies is None or applies(binding)):
            seen[binding.action] = entry
    return tuple(seen.values()), palette


class KeyBar(Widget):
    COMPONENT_CLASSES = {"keybar--key", "keybar--description", "keybar--palette", "keybar--note"}
    ALLOW_SELECT = False

    def __init__(self, **kw):
        super().__init__(**kw)
        self._shown: tuple[tuple, tuple | None] = ((), None)
        self.note = ""  # said before the keys ("waiting for the board", #30); "" says nothing
        self._spans: list[tuple[int, int, Binding, bool, str]] = []  # (start cell, end cell, binding, enabled, tooltip)

    def on_mount(self) -> None:
        self.screen.bindings_updated_signal.subscribe(self, self.bindings_changed)
        self.bindings_changed(self.screen)

    def on_unmount(self) -> None:
        self.screen.bindings_updated_signal.unsubscribe(self)

    def bindings_changed(self, screen: Screen) -> None:
        """Draw again if the keys shown changed (not while hidden: whoever shows
        the bar again calls this)."""
        if not self.display or not self.is_attached or screen is not self.screen:
            return
        shown = shown_keys(screen)
        if shown != self._shown:
            self._shown = shown
            self.refresh()

    def say(self, note: str) -> None:
        """Put ``note`` before the keys (the keys still work; "" takes it away)."""
        if note != self.note:
            self.note = note
            self.refresh()

    @property
    def keys(self) -> list[str]:
        """The keys shown, in order (tests and the curious)."""
        return [binding.key for binding, _, _ in self._shown[0]]

    def render(self) -> Text:
        key_style = self.get_component_rich_style("keybar--key", partial=True)
        description_style = self.get_component_rich_style("keybar--description", partial=True)
        text = Text(no_wrap=True, overflow="crop")
        spans: list[tuple[int, int, Binding, bool, str]] = []
        keys, palette = self._shown
        if self.note:
            text.append(f" {self.note} ", style=self.get_component_rich_style("keybar--note", partial=True))
            text.append("  ")
        for binding, enabled, tooltip in keys:
            start = cell_len(text.plain)
            item = Text.assemble(
                (self.app.get_key_display(binding), key_style), (binding.description, description_style)
            )
            if not enabled:
                item.stylize("dim")
            text.append_text(item)
            spans.append((start, cell_len(text.plain), binding, enabled, tooltip))
            text.append("  ")
        if palette is not None:
            binding, enabled, tooltip = palette
            label = Text.assemble(
                ("▏", self.get_component_rich_style("keybar--palette", partial=True)),
                (self.app.get_key_display(binding), key_style),
                (binding.description, description_style),
                " ",
            )
            width = self.size.width or 80
            room = width - label.cell_len
            text.truncate(max(0, room), pad=True)
            spans = [s for s in spans if s[1] <= room]
            spans.append((room + 1, width, binding, enabled, tooltip))
            text.append_text(label)
        self._spans = spans
        return text

    def _span_at(self, x: int):
        for start, end, binding, enabled, tooltip in self._spans:
            if start <= x < end:
                return binding, enabled, tooltip
        return None

    def on_mouse_move(self, event: events.MouseMove) -> None:
        found = self._span_at(event.x)
        self.tooltip = found[2] if found else None

    def on_mouse_down(self, event: events.MouseDown) -> None:
        found = self._span_at(event.x)
        if found is None:
            return
        binding, enabled, _ = found
        if enabled:
            self.app.simulate_key(binding.key)  # (one key each: the screen's bindings, split per key)
        else:
            self.app.bell()
