"""A card's diff: the files its branch changes with their line counts, then the
patch highlighted by Rich's diff lexer, a page at a time.

The diff is read with git in a thread worker (``BoardReader.card_diff``) and
arrives frozen, its text made terminal-safe: an agent wrote every line of it.
``[`` and ``]`` turn the pages, ↑↓ PgUp PgDn scroll one; the card screen's
Diff tab and the merge gate's ``d`` both show it — while a merge gate asks,
exactly the diff it pinned ("as asked"), and whether the branch moved since."""

from __future__ import annotations

from rich.console import Group
from rich.syntax import Syntax
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.widgets import Static

from loopx_core.shapes.errors import LoopxError

PAGE_LINES = 200  # a page is drawn at once; a long patch never is
STATS_FILES = 6  # files listed above the patch (the rest are in it)


def stats_text(summary, limit: int | None = None, more: str = "in the patch below", indent: str = " ") -> Text:
    """``3 files · +10 −2 · 2 commits on loopx/LX-7 (into main)`` and the files, one a line."""
    out = Text()
    ground = set(getattr(summary, "ground", ()) or ())  # the repository's ground (rules/repo_ground): listed first, marked
    left_out = getattr(summary, "more", 0) or 0  # files a bounded read did not list
    count = len(summary.files) + left_out
    out.append(f"{count} file{'s' if count != 1 else ''}", style="bold")
    out.append(" · ")
    out.append(f"+{summary.added}", style="green")
    out.append(" ")
    out.append(f"−{summary.removed}", style="red")
    out.append(f" · {summary.commits} commit{'s' if summary.commits != 1 else ''} on ", style="dim")
    out.append(summary.branch, style="bold")
    out.append(f" (into {summary.base})", style="dim")
    shown = summary.files if limit is None else summary.files[:limit]
    for f in shown:
        out.append("\n" + indent)
        if f.added is None:
            out.append(f"{'binary':>11} ", style="dim")
        else:
            out.append(f"{'+' + str(f.added):>5}", style="green")
            out.append(f" {'−' + str(f.removed):>5} ", style="red")
        if f.path in ground:
            out.append(" GROUND ", style="bold reverse red")
            out.append(" ")
        out.append(f.path)
    if limit is not None and count > limit:
        out.append(f"\n{indent}… {count - limit} more files {more}", style="dim")
    elif left_out:
        out.append(f"\n{indent}… {left_out} more files not listed (too many to read here)", style="dim")
    return out


def asked_line(out: Text, diff) -> None:
    """Say whose diff this is: a merge gate's pinned commits ("as asked"), and
    where the branch or base is now when it moved (the answer asks again)."""
    pin = diff.summary.pin if diff.asked else None
    if pin is None:
        return
    out.append("\nas asked: ", style="dim")
    out.append(pin.head[:12], style="bold")
    out.append(f" ({diff.asked}, into {diff.summary.base} at {pin.base_commit[:12]})", style="dim")
    now = diff.moved
    if now is None:
        return
    said = []
    if now.head != pin.head:
        said.append(f"{diff.summary.branch} is at {now.head[:12] or 'nothing'}")
    if now.base_commit != pin.base_commit:
        said.append(f"{diff.summary.base} is at {now.base_commit[:12] or 'nothing'}")
    out.append("\nmoved since: " + ", ".join(said) + " now — your answer asks again with the new diff", style="bold yellow")


class DiffView(Vertical):
    """The diff of one card; ``load()`` reads it (again) in a worker."""

    BINDINGS = [
        Binding("right_square_bracket", "page(1)", "Next page", tooltip="the diff's next page"),
        Binding("left_square_bracket", "page(-1)", "Prev page", tooltip="the diff's previous page"),
    ]

    def __init__(self, card_id: int, reader, gate_id: int | None = None, **kw):
        super().__init__(**kw)
        self.card_id = card_id
        self.gate_id = gate_id  # the merge gate whose diff to show (None: the card's pending one, else the branch now)
        self.reader = reader
        self.diff = None  # ops.merges.CardDiff, once read
        self.lines: list[str] = []
        self.page_no = 0
        self.loads = 0  # diffs applied (tests wait on this)
        self.position = ""  # which page and lines are shown

    def compose(self) -> ComposeResult:
        yield Static(Text("reading the diff…", style="dim"), classes="diff-stats")
        with VerticalScroll(classes="diff-scroll"):
            yield Static(classes="diff-patch")

    @property
    def pages(self) -> int:
        return max(1, -(-len(self.lines) // PAGE_LINES))

    def reset(self, card_id: int) -> None:
        self.card_id, self.gate_id, self.diff, self.lines, self.page_no, self.loads = card_id, None, None, [], 0, 0
        self.query_one(".diff-stats", Static).update(Text("reading the diff…", style="dim"))
        self.query_one(".diff-patch", Static).update("")

    def load(self) -> None:
        card_id, gate_id = self.card_id, self.gate_id

        def read() -> None:
            try:
                diff = self.reader.card_diff(card_id, gate_id)
            except (LoopxError, OSError) as err:
                self.app.call_from_thread(self._failed, card_id, getattr(err, "message", str(err)))
                return
            self.app.call_from_thread(self.show, card_id, diff)

        self.run_worker(read, thread=True, group="reads", name=f"diff of {card_id}", exit_on_error=False)

    def _failed(self, card_id: int, message: str) -> None:
        if card_id == self.card_id and self.is_attached:
            self.query_one(".diff-stats", Static).update(Text(f"the diff could not be read: {message}", style="bold red"))

    def show(self, card_id: int, diff) -> None:
        if card_id != self.card_id or not self.is_attached:
            return
        self.diff = diff
        self.lines = diff.patch.splitlines()
        self.page_no = min(self.page_no, self.pages - 1)
        self._draw()
        self.loads += 1

    def _draw(self) -> None:
        diff = self.diff
        stats = self.query_one(".diff-stats", Static)
        patch = self.query_one(".diff-patch", Static)
        if diff is None:
            return
        if diff.summary is None:
            stats.update(Text("No branch to show: the project is not a git repository, or this card has no workspace branch yet.", style="dim"))
            patch.update("")
            return
        head = stats_text(diff.summary, limit=STATS_FILES)
        asked_line(head, diff)
        if not self.lines:
            head.append("\nNothing changed since the branch left its base.", style="dim")
        stats.update(head)
        first = self.page_no * PAGE_LINES
        body = "\n".join(self.lines[first:first + PAGE_LINES])
        where = Text(f"page {self.page_no + 1}/{self.pages} · lines {first + 1}–{min(first + PAGE_LINES, len(self.lines))} of {len(self.lines)}"
                     + (" · cut: the patch is longer than the board shows (`git diff` has it all)" if diff.cut else "")
                     + ("  ·  ] next page  [ previous" if self.pages > 1 else ""), style="dim")
        self.position = where.plain
        patch.update(Group(where, Syntax(body, "diff", theme="ansi_dark", word_wrap=False, background_color="default")) if self.lines else "")
        self.query_one(".diff-scroll", VerticalScroll).scroll_home(animate=False)

    def action_page(self, step: int) -> None:
        page = max(0, min(self.pages - 1, self.page_no + step))
        if page != self.page_no:
            self.page_no = page
            self._draw()

    def focus_patch(self) -> None:
        self.query_one(".diff-scroll", VerticalScroll).focus()
