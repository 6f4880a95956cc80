"""Every read the board makes, in one place, for worker threads only.

Each call takes the thread's own connection, reads through loopx_core's API
(never the ORM), never writes (reaping has its own worker), and returns plain
frozen values with agents' text made safe for the terminal
(``loopx_core.rules.text``): everything the screens draw has passed through here.
Calling one on the UI thread raises — a slow writer must never freeze the
screen."""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TYPE_CHECKING, TypeVar

from loopx_core.ops import board, board_pages, cards
from loopx_core.rules.text import terminal_safe_value
from loopx_core.store.backends import Store
from loopx_core.store.discovery import BoardLocation

if TYPE_CHECKING:
    from loopx_core.authority.witness import Witness

T = TypeVar("T")

EVIDENCE_SHOWN = 100
# Up to this many events the history is checked in this process (milliseconds);
# a longer one in a `loopx verify` process of its own (see ``verify``).
VERIFY_HERE = 5000  # the latest entries on the card screen; `loopx log` has them all
# The problems of an altered history the board keeps (the first, then the next
# ones): it shows the first and the count, and `loopx verify` lists them all.
# Kept whole, a history altered row by row held ~100,000 of them, ~45 MB, for
# as long as the board stayed open (bench/tui_soak.py).
PROBLEMS_KEPT = 20


# Reads started at once from the UI thread (``card_detail_ahead``): a Textual
# worker's thread starts only once the UI thread yields, after it has drawn
# the screen the read is for; this one reads while the screen is drawn.
_AHEAD = ThreadPoolExecutor(max_workers=2, thread_name_prefix="loopx-read-ahead")


class UIThreadRead(RuntimeError):
    """Store work was attempted on the UI thread."""


def off_ui_thread(what: str) -> None:
    if threading.current_thread() is threading.main_thread():
        raise UIThreadRead(f"{what} on the UI thread: run it in a thread worker")


def open_store(location: BoardLocation) -> Store:
    """Open an existing board (never creates one: that is ``loopx init``)."""
    off_ui_thread("opening the board")
    store = Store.open(location)
    store.close()  # this thread's connection; every read takes its own
    return store


def survey_boards(wait: float | None = None) -> list:
    """The person's boards (``store/known_boards``) and what needs them on each
    (``ops/my_boards.survey``: every board at once, bounded by one deadline).
    Kept as they are (a path opens its board): whoever shows a name or path
    makes it terminal-safe and shows it as text, never markup."""
    from loopx_core.ops import my_boards
    from loopx_core.store import known_boards

    off_ui_thread("reading your boards")
    found = my_boards.survey(known_boards.known(), my_boards.WAIT if wait is None else wait)
    return found


def _kept(report) -> tuple:
    """``report`` with its first ``PROBLEMS_KEPT`` problems (its ``first`` among them), and how many it had."""
    first = report.first
    if len(report.problems) <= PROBLEMS_KEPT:
        return report, len(report.problems)
    kept = [first] + [p for p in report.problems if p is not first][: PROBLEMS_KEPT - 1]
    return report._replace(problems=kept), len(report.problems)


class BoardReader:
    """Reads of one board, each in the calling worker thread's connection."""

    def __init__(self, store: Store, now: Callable[[], float]):
        self.store = store
        self.now = now
        # The board's filter, set on the UI thread: the poller counts what passes it.
        self.card_filter = board_pages.CardFilter()
        self.by_owner = False  # True in the owner view: changes are counted by owner too
        self.children: list = []  # processes working for a read (ended when the board closes)
        self.witness: Witness | None = None  # what the board saw of the log (loopx_core/authority/witness.py)

    def stop(self) -> None:
        """The board is closing: end the processes still working for it."""
        for proc in list(self.children):
            proc.kill()

    def _read(self, what: str, fn: Callable[[], T]) -> T:
        off_ui_thread(what)
        with self.store.thread_connection():
            return terminal_safe_value(fn())

    def verify(self):
        """``loopx verify``'s report on this board (its chain, signatures and
        decisions), with its first ``PROBLEMS_KEPT`` problems, and how many
        there are in all; a clean one becomes this machine's anchor.

        A long history is checked by ``loopx verify`` in a process of its own:
        the check takes time and memory that grow with the history (every
        event is read and hashed), and in this process it would hold the GIL
        against the screen and keep its memory after. The worker only waits."""
        import json
        import subprocess

        from loopx_core.authority import verify
        from loopx_core.rules import spawn

        off_ui_thread("verifying the history")
        with self.store.thread_connection():
            events = self.store.max_seq()
        if events <= VERIFY_HERE:

            def check():
                report = verify.verify_store(self.store)
                verify.save_anchor(self.store, report)
                return report

            return _kept(self._read("verifying the history", check))
        env = spawn.person_env(LOOPX_DB=self.store.location.url)  # (a URL's password stays out of the process list)
        env.pop("LOOPX_AGENT", None)
        proc = subprocess.Popen(
            spawn.loopx_argv("verify", "--json"),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
            stdin=subprocess.DEVNULL,
        )
        self.children.append(proc)
        try:
            out, err = proc.communicate()
        finally:
            self.children.remove(proc)
        try:
            doc = json.loads(out)["verify"]
            doc_events, doc_signed, doc_head, notes = doc["events"], doc["signed"], doc["head"], list(doc["notes"])
        except (ValueError, KeyError, TypeError):
            raise RuntimeError((err or out).strip()[-300:] or f"`loopx verify` exited {proc.returncode}") from None
        problems = [verify.Problem(p["seq"], p["where"], p["what"]) for p in doc["problems"]]
        del out, doc  # (a history altered row by row: megabytes of JSON)
        kept, count = _kept(verify.Report(doc_events, doc_signed, doc_head, problems, notes))
        return terminal_safe_value(kept), count

    def witnessed(self):
        """None while the log only grew since the board last looked, else what
        vanished (a ``witness.Gone``); this machine's anchor moves on meanwhile."""
        from loopx_core.authority.witness import Witness

        witness = self.witness
        if witness is None:
            witness = self.witness = Witness()
        return self._read("witnessing the log", lambda: witness.observe(self.store))

    def snapshot(self, mode: str, limits: dict) -> board.BoardSnapshot:
        """The board as it opens: counts and the first page of the columns in ``limits``."""
        return self._read("reading the board", lambda: board.board_snapshot(self.store, mode, limits, reap=False))

    def page(self, mode: str, limits: dict, card_filter: board_pages.CardFilter) -> board_pages.Page:
        """Counts and the first cards of some columns (a view shown the first time, a new filter)."""
        return self._read("reading columns", lambda: board_pages.board_page(self.store, mode, limits, card_filter))

    def more(self, mode: str, key: str | None, offset: int, limit: int, card_filter: board_pages.CardFilter) -> tuple:
        """The next cards of one column."""
        return self._read(
            "reading a column", lambda: board_pages.more_of_column(self.store, mode, key, offset, limit, card_filter)
        )

    def card(self, card_id: int):
        """One card (to open a card that is not on the board's pages)."""
        return self._read("reading a card", lambda: board_pages.read_card(self.store, card_id))

    def delta(self, seq: int) -> board.BoardDelta:
        return self._read(
            "reading changes", lambda: board.board_delta(self.store, seq, self.card_filter, self.by_owner)
        )

    def runners(self) -> tuple:
        """Every runner's row as it is now (its heartbeat, its process looked at here)."""
        from loopx_core.ops.runners import list_runners

        return self._read("reading the runners", lambda: tuple(list_runners(self.store)))

    def card_detail(self, card_id: int):
        return self._read(
            "reading a card", lambda: cards.card_detail(self.store, card_id, reap=False, evidence_limit=EVIDENCE_SHOWN)
        )

    def card_detail_ahead(self, card_id: int) -> Future:
        """``card_detail`` started now in a thread of its own (the caller's worker waits for it)."""
        return _AHEAD.submit(self.card_detail, card_id)

    def card_diff(self, card_id: int, gate_id: int | None = None):
        """The card's branch against the base: files, stats and the patch — while
        a merge gate asks (``gate_id``, or the card's pending one), exactly the
        diff it pinned (``ops.merges``; git, no store write)."""
        from loopx_core.ops import merges

        return self._read("reading a diff", lambda: merges.card_diff(self.store, card_id, gate_id))

    def card_changes(self, card_id: int):
        """Everything the card's work changed (``ops.card_changes``): its branch or
        its merge, and its uncommitted work (git, no store write)."""
        from loopx_core.ops import card_changes

        return self._read("reading a diff", lambda: card_changes.card_changes(self.store, card_id))

    def tries(self, card_id: int):
        """The card's tries side by side (``ops.tries.compare``): (the first card's id, its tries)."""
        from loopx_core.ops import tries

        return self._read("reading the tries", lambda: tries.compare(self.store, card_id))

    def workspaces(self):
        """The board's workspaces with their size and age, and the person's cap (``ops.workspace_cap``)."""
        from loopx_core.ops import workspace_cap

        return self._read(
            "measuring the workspaces", lambda: (workspace_cap.lines(self.store), workspace_cap.cap(self.store))
        )

    def gate_brief(self, gate_id: int) -> board.GateBrief | None:
        return self._read("reading a gate", lambda: board.gate_brief(self.store, gate_id))

    def trajectory(self, card_id: int | None):
        """The timeline's figures (``ops.trajectory``, imported here: its SQL is
        peewee's, and opening the board never needs it)."""
        from loopx_core.ops import trajectory

        # Times and numbers, agent ids (validated when registered) and labels the
        # kernel composes: no agent prose, so the tens of thousands of turns of a
        # long board skip the sanitiser.
        off_ui_thread("reading a timeline")
        with self.store.thread_connection():
            return trajectory.read_trajectory(self.store, card_id, self.now())
