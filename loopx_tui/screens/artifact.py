"""An artifact from the evidence, read from the project folder: text with
syntax highlighting, checked against the sha256 the evidence recorded."""

from __future__ import annotations

import hashlib
import os
import shlex
import subprocess
from pathlib import Path
from typing import NamedTuple

from rich.syntax import Syntax
from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import Static

from loopx_core.rules.artifacts import too_large
from loopx_core.rules.text import terminal_safe
from loopx_core.shapes.values import Artifact

from ..format import short_sha, size
from ..widgets.footer import KeyBar

MAX_BYTES = 512 * 1024  # shown; the rest is one key away in $PAGER


class FileView(NamedTuple):
    path: Path | None
    text: str | None  # None: binary or unreadable
    note: str
    matches: bool | None  # sha256 equals the recorded one (None: unknown)
    truncated: bool


def resolve(artifact: Artifact, root: str | None) -> Path | None:
    """The file an artifact names, only if it lies inside the project."""
    base = Path(root or os.getcwd()).resolve()
    candidate = (base / artifact.path).resolve()
    try:
        candidate.relative_to(base)
    except ValueError:
        return None
    return candidate


def read_artifact(artifact: Artifact, root: str | None) -> FileView:
    path = resolve(artifact, root)
    if path is None:
        return FileView(None, None, "outside the project folder: not opened", None, False)
    if not path.is_file():
        return FileView(
            path,
            None,
            "the file is not there any more" if not artifact.missing else "reported missing by the agent",
            None,
            False,
        )
    whole = not too_large(path.stat().st_size)  # a huge file: its first bytes only, never hashed
    digest = hashlib.sha256()
    head = b""
    with open(path, "rb") as handle:
        while chunk := handle.read(1 << 20):
            digest.update(chunk)
            if len(head) < MAX_BYTES:
                head += chunk[: MAX_BYTES - len(head)]
            elif not whole:
                break
    matches = None if artifact.sha256 is None or not whole else digest.hexdigest() == artifact.sha256
    truncated = path.stat().st_size > len(head)
    if b"\x00" in head[:8192]:
        return FileView(path, None, f"binary file, {size(path.stat().st_size)}", matches, truncated)
    # A file an agent wrote: shown, never played to the terminal.
    return FileView(path, terminal_safe(head.decode("utf-8", "replace"), multiline=True), "", matches, truncated)


def open_in_pager(app, artifact: Artifact, root: str | None) -> None:
    path = resolve(artifact, root)
    if path is None or not path.is_file():
        app.notify(f"{artifact.path}: not available", severity="error")
        return
    pager = os.environ.get("PAGER") or "less -R"
    try:
        with app.suspend():
            subprocess.call([*shlex.split(pager), str(path)])
    except Exception as exc:  # no terminal to hand over (headless), or no such pager
        app.notify(f"cannot open {pager}: {type(exc).__name__}", severity="error")


class ArtifactScreen(Screen):
    """Opens at once; the file is read and hashed in a thread (an artifact can
    be large), then shown."""

    BINDINGS = [
        Binding("escape,q", "back", "Back", tooltip="back to the card"),
        Binding("p", "pager", "In $PAGER", tooltip="open the file in $PAGER (less -R by default)"),
    ]

    def __init__(self, card_id: int, artifact: Artifact, root: str | None):
        super().__init__()
        self.card_id = card_id
        self.artifact = artifact
        self.root = root
        self.view: FileView | None = None  # set once the file has been read

    def _header(self) -> Text:
        art, view = self.artifact, self.view
        head = Text.assemble(
            (f" {art.path} ", "bold reverse"), (f"  {size(art.size)}  sha256 {short_sha(art.sha256)}", "dim")
        )
        if view is None:
            head.append("  reading and checking the file…", style="dim")
            return head
        if view.matches is True:
            head.append("  ✓ matches the evidence", style="green")
        elif view.matches is False:
            head.append("  ✗ changed since the evidence was written", style="bold red")
        if view.note:
            head.append(f"  {view.note}", style="yellow")
        if view.truncated:
            head.append(f"  (first {size(MAX_BYTES)}; p for all)", style="dim")
        return head

    def compose(self) -> ComposeResult:
        yield Static(self._header(), id="artifact-header")
        with VerticalScroll(id="artifact-body"):
            yield Static(Text("…", style="dim"), id="artifact-text")
        yield KeyBar()

    def on_mount(self) -> None:
        self.query_one("#artifact-body").focus()
        self.read_file()

    @work(thread=True, exclusive=True, group="artifact")
    def read_file(self) -> None:
        view = read_artifact(self.artifact, self.root)
        # Guessing the language loads Pygments' lexers: here, not on the UI thread.
        lexer = Syntax.guess_lexer(self.artifact.path, view.text) if view.text is not None else None
        self.app.call_from_thread(self.show_file, view, lexer)

    def show_file(self, view: FileView, lexer: str | None = None) -> None:
        if not self.is_attached:  # closed while the file was being read
            return
        self.view = view
        self.query_one("#artifact-header", Static).update(self._header())
        body = self.query_one("#artifact-text", Static)
        if view.text is not None:
            body.update(Syntax(view.text, lexer or "text", line_numbers=True, word_wrap=False, theme="ansi_dark"))
        else:
            body.update(Text(view.note or "nothing to show", style="dim"))

    def action_back(self) -> None:
        self.app.pop_screen()

    def action_pager(self) -> None:
        open_in_pager(self.app, self.artifact, self.root)
