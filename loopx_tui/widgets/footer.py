"""Textual's Footer, recomposed only when the keys it shows change.

Textual's Footer rebuilds its keys on every change of the screen's bindings,
and moving the selection from card to card is one (focus moves): on the board
that rebuild was about half of what ↑↓←→ cost. Here it happens only when the
keys shown, their labels or whether they are enabled differ, and not while
it is hidden: whoever shows it again calls ``bindings_changed``."""

from __future__ import annotations

from textual.screen import Screen
from textual.widgets import Footer


def shown_keys(screen: Screen) -> tuple:
    return tuple((binding.key, binding.action, binding.description, enabled, tooltip) for (_, binding, enabled, tooltip) in screen.active_bindings.values() if binding.show)


class StableFooter(Footer):
    _shown: tuple | None = None

    def bindings_changed(self, screen: Screen) -> None:
        if not self.display:
            return  # hidden (the board's filter bar is in its place): brought up to date when shown
        if self.is_attached and screen is self.screen and screen.app.app_focus:
            shown = shown_keys(screen)
            if shown == self._shown and self._bindings_ready:
                return
            self._shown = shown
        super().bindings_changed(screen)
