"""A card's diff: the files its branch changes with their line counts, then the
patch highlighted by Rich's diff lexer, a page at a time.

The diff is read with git in a thread worker (``BoardReader.card_diff``) and
arrives frozen, its text made terminal-safe: an agent wrote every line of it.
``[`` and ``]`` turn the pages, ↑↓ PgUp PgDn scroll one; the card screen's
Diff tab and the merge gate's ``d`` both show it.

The card screen's tab (``work=True``) shows everything the card's work
changed (``ops.card_changes``): a merged card's merge (the branch is in the
base then: its own diff is empty), and the uncommitted work — the workspace
folder's edits and untracked files, or what LoopX saved when the folder is
gone — marked as on no commit: a merge does not bring it in. The merge
gate's ``d`` shows only the branch: what a merge brings in. While a merge gate
asks, both show exactly the diff it pinned ("as asked"), and whether the
branch moved since."""

from __future__ import annotations

from rich.console import Group
from rich.syntax import Syntax
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.widgets import Static

PAGE_LINES = 200  # a page is drawn at once; a long patch never is
STATS_FILES = 6  # files listed above the patch (the rest are in it)
SHARED_FILES = 3  # each of the branch's and the uncommitted work's, when both are listed


def stats_text(summary, limit: int | None = None, more: str = "in the patch below", indent: str = " ") -> Text:
    """``3 files · +10 −2 · 2 commits on loopx/LX-7 (into main)`` and the files,
    one a line: the repository's ground first and marked (``rules/repo_ground``),
    and what a bounded read did not list counted."""
    out = Text()
    ground = set(getattr(summary, "ground", ()) or ())
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
    _files(out, summary.files, limit=limit, indent=indent, more=more, ground=ground, left_out=left_out)
    return out


NO_BRANCH = "No branch to show: the project is not a git repository, or this card has no workspace branch yet."
NOTHING = "Nothing changed since the branch left its base."
WORK_MARK = "### uncommitted work: on no commit (a merge does not bring it in) ###"


def _files(
    out: Text,
    files,
    untracked=(),
    limit: int | None = STATS_FILES,
    indent: str = " ",
    more: str = "in the patch below",
    ground=frozenset(),
    left_out: int = 0,
) -> None:
    """The files, one a line with their counts (``untracked`` ones and the
    ``ground`` marked), ``limit`` of them, then how many are not listed."""
    for f in files if limit is None else files[:limit]:
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
        if f.path in untracked:
            out.append("  (untracked)", style="yellow")
    count = len(files) + left_out
    if limit is not None and count > limit:
        out.append(f"\n{indent}… {count - limit} more files {more}", style="dim")
    elif left_out:
        out.append(f"\n{indent}… {left_out} more files not listed (too many to read here)", style="dim")


def _counts(out: Text, files) -> None:
    count = len(files)
    out.append(f"{count} file{'s' if count != 1 else ''}", style="bold")
    out.append(" · ")
    out.append(f"+{sum(f.added or 0 for f in files)}", style="green")
    out.append(" ")
    out.append(f"−{sum(f.removed or 0 for f in files)}", style="red")


def layout(diff) -> tuple[Text, list[str], bool]:
    """What the view draws for ``diff``: the text above the patch, the patch's
    lines, and whether git's patch was cut."""
    work = getattr(diff, "work", None)
    merged = getattr(diff, "merged", None)
    branch = getattr(diff, "branch", diff)  # (a CardDiff: the merge gate's)
    head, lines, cut = Text(), [], False
    if merged is not None:
        if merged.already:
            head.append(
                f"Merged by {merged.by}: {merged.branch} was in {merged.base} already (nothing new came in)",
                style="bold",
            )
        else:
            head.append(f"Merged into {merged.base} as {merged.commit[:10]} by {merged.by}: ", style="bold")
            _counts(head, merged.files)
            head.append(f" from {merged.branch}", style="dim")
            _files(head, merged.files, limit=SHARED_FILES if work else STATS_FILES)
        lines, cut = merged.patch.splitlines(), merged.cut
    elif branch.summary is not None:
        head = stats_text(branch.summary, limit=SHARED_FILES if work else STATS_FILES)
        asked_line(head, branch)
        lines, cut = branch.patch.splitlines(), branch.cut
        if not lines:
            head.append("\n" + NOTHING + (" Its uncommitted work is below." if work else ""), style="dim")
    elif work is None:
        head.append(NO_BRANCH, style="dim")
    if work is not None:
        head.append("\n" if head.plain else "")
        where = (
            "in the workspace folder"
            if work.saved is None
            else f"saved at {work.saved[:10]} (refs/loopx/…/wip: the folder is gone)"
        )
        head.append("Uncommitted work ", style="bold yellow")
        head.append(f"{where}, on no commit: ", style="yellow")
        _counts(head, work.files)
        _files(head, work.files, work.untracked, limit=SHARED_FILES if (merged or branch.summary) else STATS_FILES)
        lines = lines + ([WORK_MARK] if lines else []) + work.patch.splitlines()
        cut = cut or work.cut
    return head, lines, cut


def asked_line(out: Text, diff) -> None:
    """Say whose diff this is: a merge gate's pinned commits ("as asked"), and
    where the branch or base is now when it moved (the answer asks again)."""
    pin = diff.summary.pin if getattr(diff, "asked", None) else None
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
    out.append(
        "\nmoved since: " + ", ".join(said) + " now — your answer asks again with the new diff", style="bold yellow"
    )


class DiffView(Vertical):
    """The diff of one card; ``load()`` reads it (again) in a worker."""

    BINDINGS = [
        Binding("right_square_bracket", "page(1)", "Next page", tooltip="the diff's next page"),
        Binding("left_square_bracket", "page(-1)", "Prev page", tooltip="the diff's previous page"),
    ]

    def __init__(self, card_id: int, reader, gate_id: int | None = None, *, work: bool = False, **kw):
        super().__init__(**kw)
        self.card_id = card_id
        self.gate_id = gate_id  # the merge gate whose diff to show (None: the card's pending one, else the branch now)
        self.reader = reader
        self.work = work  # the card screen's tab: the merge and the uncommitted work too (ops.card_changes)
        self.diff = None  # ops.merges.CardDiff (or ops.card_changes.CardChanges: ``work``), once read
        self.head = Text()  # what is drawn above the patch
        self.lines: list[str] = []
        self.cut = False
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
                diff = self.reader.card_changes(card_id) if self.work else self.reader.card_diff(card_id, gate_id)
            except Exception as err:  # (git's own failure too: said, never a diff left "reading…")
                self.app.call_from_thread(
                    self._failed, card_id, getattr(err, "message", None) or f"{type(err).__name__}: {err}"
                )
                return
            self.app.call_from_thread(self.show, card_id, diff)

        self.run_worker(read, thread=True, group="reads", name=f"diff of {card_id}", exit_on_error=False)

    def _failed(self, card_id: int, message: str) -> None:
        if card_id == self.card_id and self.is_attached:
            self.query_one(".diff-stats", Static).update(
                Text(f"the diff could not be read: {message}", style="bold red")
            )

    def show(self, card_id: int, diff) -> None:
        if card_id != self.card_id or not self.is_attached:
            return
        self.diff = diff
        self.head, self.lines, self.cut = layout(diff)
        self.page_no = min(self.page_no, self.pages - 1)
        self._draw()
        self.loads += 1

    def _draw(self) -> None:
        diff = self.diff
        stats = self.query_one(".diff-stats", Static)
        patch = self.query_one(".diff-patch", Static)
        if diff is None:
            return
        stats.update(self.head)
        first = self.page_no * PAGE_LINES
        body = "\n".join(self.lines[first : first + PAGE_LINES])
        where = Text(
            f"page {self.page_no + 1}/{self.pages} · lines {first + 1}–{min(first + PAGE_LINES, len(self.lines))} of {len(self.lines)}"
            + (" · cut: the patch is longer than the board shows (`git diff` has it all)" if self.cut else "")
            + ("  ·  ] next page  [ previous" if self.pages > 1 else ""),
            style="dim",
        )
        self.position = where.plain
        patch.update(
            Group(where, Syntax(body, "diff", theme="ansi_dark", word_wrap=False, background_color="default"))
            if self.lines
            else ""
        )
        self.query_one(".diff-scroll", VerticalScroll).scroll_home(animate=False)

    def action_page(self, step: int) -> None:
        page = max(0, min(self.pages - 1, self.page_no + step))
        if page != self.page_no:
            self.page_no = page
            self._draw()

    def focus_patch(self) -> None:
        self.query_one(".diff-scroll", VerticalScroll).focus()
