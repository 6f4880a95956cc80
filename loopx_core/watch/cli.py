"""``loopx watch``: the watcher, headless. One line per ingested, refused or
observed document on stdout; notices and the catch-up progress on stderr (a
live progress line on a terminal, plain lines otherwise). Ctrl-C or SIGTERM
stops it cleanly (exit 0). ``--once`` catches up and exits. With ``--json``,
stdout holds exactly one JSON object, written when the watcher ends: the counts
and the first ``JSON_RESULTS`` outcomes (every line an agent's file name or
text reaches is terminal-safe either way)."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
import time

from ..rules.text import terminal_safe
from ..shapes.errors import LoopxError, UsageError

TYPE_CHECKING = False  # (annotations only; checkers read this as typing's)
if TYPE_CHECKING:
    from typing import TextIO

    from .ingest import Result
    from .watcher import WatchStats

PROGRESS_FROM = 50  # a catch-up over at least this many files shows progress
JSON_RESULTS = 1000  # --json: outcomes kept for the one object (a catch-up can see 20,000 files)


class _Printer:
    def __init__(self, out: TextIO | None = None, err: TextIO | None = None, *, as_json: bool = False):
        self.as_json = as_json
        self.kept: list[dict] = []  # --json: the outcomes, for the one object at the end
        self.left_out = 0
        self.out = out or sys.stdout
        self.err = err or sys.stderr
        self.tty = bool(getattr(self.err, "isatty", lambda: False)())
        self.bar_shown = False
        self.last_draw = 0.0
        self.started = 0.0

    def _clear_bar(self) -> None:
        if self.bar_shown:
            self.err.write("\r\x1b[2K")
            self.err.flush()
            self.bar_shown = False

    def result(self, result: Result) -> None:
        if result.kind == "duplicate":
            return
        if result.kind == "notice":
            self._clear_bar()
            self.err.write(terminal_safe(f"loopx watch: {result.message}") + "\n")
            self.err.flush()
            return
        if self.as_json:
            if len(self.kept) < JSON_RESULTS:
                self.kept.append(result.to_json())
            else:
                self.left_out += 1
            return
        self._clear_bar()
        self.out.write(terminal_safe(result.text(), multiline=True) + "\n")
        self.out.flush()

    def progress(self, done: int, total: int) -> None:
        if total < PROGRESS_FROM:
            return
        now = time.monotonic()
        if done == 0:
            self.started = now
            if not self.tty:
                self.err.write(f"loopx watch: catching up on {total} files…\n")
                self.err.flush()
        if self.tty:
            if done not in (0, total) and now - self.last_draw < 0.1:
                return
            self.last_draw = now
            width = 30
            filled = int(width * done / total) if total else width
            self.err.write(f"\r\x1b[2Kcatching up [{'#' * filled}{'.' * (width - filled)}] {done}/{total} files")
            self.bar_shown = True
            if done == total:
                self._clear_bar()
        if done == total:
            self.err.write(f"loopx watch: caught up on {total} files in {now - self.started:.1f}s\n")
        self.err.flush()


def _refused(err: LoopxError, as_json: bool) -> int:
    if as_json:
        sys.stdout.write(json.dumps(err.to_json(), default=str) + "\n")
    else:
        sys.stderr.write(
            terminal_safe(f"loopx: {err.message}\n" + (f"  → {err.hint}\n" if err.hint else ""), multiline=True)
        )
    return err.exit_code


def run_watch(db_flag: str | None, *, once: bool = False, as_json: bool = False) -> int:
    from ..store.backends import Store
    from ..store.discovery import discover
    from .watcher import watch_board

    try:
        try:
            location = discover(db_flag)
        except ValueError as exc:
            raise UsageError(str(exc), "pass --db PATH or a sqlite:/// or postgresql:// URL") from None
        store = Store.open(location, create=False)
    except LoopxError as err:
        return _refused(err, as_json)
    printer = _Printer(as_json=as_json)

    async def main() -> WatchStats:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            try:
                loop.add_signal_handler(sig, stop.set)
            except (NotImplementedError, RuntimeError, ValueError):  # not the main thread, or Windows
                pass
        return await watch_board(
            store, stop_event=stop, on_result=printer.result, on_progress=printer.progress, once=once
        )

    deliverer = None
    if not once:  # the person's notification command runs with no board open (ops/notify.py)
        from ..ops.notify_send import Deliverer

        deliverer = Deliverer(store, f"watch:{os.getpid()}")
        deliverer.start()
    try:
        stats = asyncio.run(main())
    except KeyboardInterrupt:
        return 0
    except LoopxError as err:
        return _refused(err, as_json)
    finally:
        if deliverer is not None:
            deliverer.stop()
        store.close()
    ended = "caught up" if once else "stopped"
    counts = {
        "ingested": stats.ingested,
        "refused": stats.refused,
        "duplicate": stats.duplicate,
        "observed": stats.observed,
    }
    if as_json:
        sys.stdout.write(
            json.dumps({"watch": ended, **counts, "results": printer.kept, "results_left_out": printer.left_out}) + "\n"
        )
    sys.stderr.write(
        f"loopx watch: {ended}: {stats.ingested} ingested, {stats.refused} refused, "
        f"{stats.duplicate} already had, {stats.observed} observed\n"
    )
    return 0
