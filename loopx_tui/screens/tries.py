"""A card's tries side by side (#26): one column per try — its status, owner,
diff size, verify result, turns, tokens and dollars — read in a worker.
←/→ pick a try, Enter opens it, ``k`` keeps it (asked first: the other tries
are archived under LoopX refs and cancelled, a signed decision)."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import Static

from loopx_core.rules import ids
from loopx_core.shapes.errors import LoopxError

from ..format import tokens
from ..messages import BoardUpdated, KeepTryWanted, OpenCard, Refused
from ..widgets.footer import KeyBar

VERIFY = {True: ("passed", "green"), False: ("failed", "bold red"), None: ("—", "dim")}


def tries_table(tries, selected: int) -> Table:
    table = Table(box=None, pad_edge=False, expand=False, show_edge=False, padding=(0, 2, 0, 0))
    table.add_column("", style="dim", no_wrap=True)
    for i, t in enumerate(tries):
        label = Text.assemble((f" try {t.number} ", "bold reverse" if i == selected else "bold"), f" {t.card.key}")
        table.add_column(label, no_wrap=True, min_width=14)

    def row(name, cells):
        table.add_row(name, *cells)

    row(
        "status",
        [
            Text(t.card.status, style="bold yellow" if t.card.status in ("waiting", "paused", "blocked") else "")
            for t in tries
        ],
    )
    row("owner", [t.card.owner or "—" for t in tries])
    row(
        "diff",
        [
            Text.assemble(
                f"{t.files} file{'s' if t.files != 1 else ''} ", (f"+{t.added}", "green"), " ", (f"−{t.removed}", "red")
            )
            if t.files is not None
            else Text("no branch", style="dim")
            for t in tries
        ],
    )
    row("verify", [Text(*VERIFY[t.verify]) for t in tries])
    row("turns", [str(t.card.quota.turns.used) for t in tries])
    row("tokens", [tokens(t.card.quota.tokens.used) for t in tries])
    row("dollars", [f"${t.card.quota.usd.used:.2f}" for t in tries])
    return table


class TriesScreen(Screen):
    BINDINGS = [
        Binding("escape,q", "back", "Back", tooltip="back"),
        Binding("left,h", "pick(-1)", "◀ Try", tooltip="the try to the left"),
        Binding("right,l", "pick(1)", "Try ▶", tooltip="the try to the right"),
        Binding("enter", "open", "Open", tooltip="open the picked try's card (its Diff tab: 5)"),
        Binding(
            "k",
            "keep",
            "Keep",
            tooltip="keep the picked try: the others are archived under refs/loopx/… and cancelled (asked first)",
        ),
        Binding("r", "reload", "Reload", show=False, tooltip="read the tries again"),
    ]

    def __init__(self, reader, card_id: int):
        super().__init__()
        self.reader = reader
        self.card_id = card_id
        self.first: int | None = None
        self.tries: list = []
        self.selected = 0
        self.loads = 0  # reads applied (tests wait on this)

    def compose(self) -> ComposeResult:
        yield Static(
            Text.assemble((" Tries ", "bold reverse"), f" {ids.fmt(ids.CARD, self.card_id)}"), id="tries-header"
        )
        with VerticalScroll(id="tries-body"):
            yield Static(Text("reading the tries…", style="dim"), id="tries-table")
        yield Static(id="tries-hint")
        yield KeyBar()

    def on_mount(self) -> None:
        self.action_reload()

    def action_reload(self) -> None:
        card_id = self.card_id

        def read() -> None:
            try:
                first, tries = self.reader.tries(card_id)
            except LoopxError as err:
                self.app.post_message(Refused(err.message, err.hint or ""))
                return
            self.app.call_from_thread(self._show, first, tries)

        self.run_worker(read, thread=True, group="reads", name="tries", exit_on_error=False)

    def _show(self, first: int, tries: list) -> None:
        if not self.is_attached:
            return
        self.first, self.tries = first, tries
        keys = [t.card.id for t in tries]
        self.selected = (
            keys.index(self.card_id) if self.card_id in keys and self.loads == 0 else min(self.selected, len(tries) - 1)
        )
        self._draw()
        self.loads += 1

    def _draw(self) -> None:
        first = self.tries[0].card if self.tries else None
        header = Text.assemble(
            (" Tries ", "bold reverse"),
            f" {ids.fmt(ids.CARD, self.first or self.card_id)} ",
            (first.title if first else "", "bold"),
        )
        self.query_one("#tries-header", Static).update(header)
        if len(self.tries) < 2:
            self.query_one("#tries-table", Static).update(
                Text(
                    "This card has no other tries. `loopx card try CARD --to AGENT` gives it to one more agent.",
                    style="dim",
                )
            )
            self.query_one("#tries-hint", Static).update("")
            return
        self.query_one("#tries-table", Static).update(tries_table(self.tries, self.selected))
        picked = self.tries[self.selected].card
        self.query_one("#tries-hint", Static).update(
            Text.assemble(
                " picked ",
                (picked.key, "bold"),
                " — k keeps it (the others are archived and cancelled) · Enter opens it",
                style="dim",
            )
        )

    def action_pick(self, step: int) -> None:
        if self.tries:
            self.selected = max(0, min(len(self.tries) - 1, self.selected + step))
            self._draw()

    def action_open(self) -> None:
        if self.tries:
            self.app.post_message(OpenCard(self.tries[self.selected].card.id))

    def action_keep(self) -> None:
        if len(self.tries) < 2:
            return
        from ..modals.confirm import ConfirmModal

        picked = self.tries[self.selected]
        kept = picked.card
        others = (
            ", ".join(t.card.key for t in self.tries if t.card.id != kept.id and t.card.status != "cancelled")
            or "none still open"
        )
        detail = f"{kept.key} {kept.title}\nThe other tries ({others}) are archived under refs/loopx/… and cancelled."

        def answered(yes: bool | None) -> None:
            if yes:
                self.app.post_message(
                    KeepTryWanted(kept.id, picked.head)
                )  # what was compared: refused if its branch moved since
                self.action_reload()  # (refused, the person compares the new heads)

        self.app.push_screen(ConfirmModal(f"Keep {kept.key}?", detail, "y keep it", "n not now"), answered)

    @on(BoardUpdated)
    def _board_updated(self, message: BoardUpdated) -> None:
        if any(t.card.id in message.touched for t in self.tries) and self.is_attached:
            self.action_reload()

    def action_back(self) -> None:
        self.app.pop_screen()
