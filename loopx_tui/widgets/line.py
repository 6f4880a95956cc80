"""One line of text that never changes size (a header, a count).

A Static lays the whole screen out again on every ``update`` (its size may
have changed); these lines have a fixed height, so an update only repaints
them — the board's header and column counts change with every live update."""

from __future__ import annotations

from rich.text import Text
from textual.widget import Widget


class Line(Widget):
    DEFAULT_CSS = "Line { height: 1; }"

    def __init__(self, text: Text | str = "", **kw):
        super().__init__(**kw)
        self._text = text

    def update(self, text: Text | str) -> None:
        if text != self._text:
            self._text = text
            self.refresh()

    def render(self) -> Text | str:
        return self._text


class FittedLine(Line):
    """A line drawn from ``data`` at the width it has (``draw``), again
    only when the data changes or the line is resized."""

    def __init__(self, **kw):
        super().__init__("", **kw)
        self.data: list = []

    def show(self, data: list) -> None:
        if data != self.data:
            self.data = list(data)
            self.refresh()

    def draw(self, data: list, width: int) -> Text:
        raise NotImplementedError

    def render(self) -> Text:
        return self.draw(self.data, self.size.width)
