"""The watch loop: follow the board's folders with ``watchfiles.awatch`` and
feed every change to the ``Ingestor`` (``ingest.py``). See the package
docstring for the API and the rules."""

from __future__ import annotations

import asyncio
import os
import stat as statmod
import time
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import NamedTuple

from ..store.failures import connection_lost
from ..store.failures import first_line as _first_line
from .ingest import Ingestor, Result
from .rules import IGNORED_DIRS, Root, Rules, norm

TYPE_CHECKING = False  # (annotations only; checkers read this as typing's)
if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Any, Protocol, TypeGuard, TypeVar

    from watchfiles import Change

    from ..store.backends import Store
    from ..store.discovery import BoardLocation

    T = TypeVar("T")

    class StopSignal(Protocol):
        """What stops the watcher: an asyncio.Event (awaited), a threading.Event or the like (polled)."""

        def is_set(self) -> bool: ...


RECONNECT_FIRST, RECONNECT_MAX = 0.5, 10.0  # s: the backoff between tries to reach a board whose server went away
BATCH = 25  # files per write transaction (about 30 ms of lock at ~1 ms a document)


class WatchConfig(NamedTuple):
    settle: float = 1.0  # a document that does not parse is reported once unchanged this long
    observe_delay: float = 0.3  # quiet time before a changed file becomes an observed artifact
    recheck: float = 0.5  # how often new agents and missing folders are looked for
    debounce_ms: int = 200  # watchfiles: the longest a batch of changes collects (ingesting goes on meanwhile)
    step_ms: int = 50  # watchfiles: the quiet time before a batch is yielded
    chunk: int = 100  # files per worker job (progress and stop are checked between jobs)
    inbox: bool = True  # follow the board's .loopx/inbox/ (created if missing)
    force_polling: bool | None = None  # watchfiles: poll instead of OS notifications
    poll_delay_ms: int = 300


class WatchStats(NamedTuple):
    ingested: int
    duplicate: int
    refused: int
    observed: int
    scanned: int  # files looked at by catch-up scans
    folders: tuple[str, ...]  # folders followed when it stopped

    def to_json(self) -> dict:
        return {k: (list(v) if isinstance(v, tuple) else v) for k, v in self._asdict().items()}


def _outermost(paths: list[str]) -> list[str]:
    """Drop folders inside another one (watching is recursive)."""
    out: list[str] = []
    for path in sorted(set(paths)):
        if not any(path == o or path.startswith(o.rstrip(os.sep) + os.sep) for o in out):
            out.append(path)
    return out


class _Engine:
    def __init__(
        self,
        board: BoardLocation,
        config: WatchConfig,
        on_result: Callable[[Result], object] | None,
        on_progress: Callable[[int, int], object] | None,
        stop_event: StopSignal | None,
    ):
        self.cfg = config
        self.board = board
        self.on_result = on_result
        self.on_progress = on_progress
        self.stop_event = stop_event
        self.store: Store | None = None  # opened by _setup in the worker thread (or given)
        self.owned = False
        self.executor = ThreadPoolExecutor(1, thread_name_prefix="loopx-watch")
        self.ingestor: Ingestor | None = None
        self.rules = Rules([])
        self.board_files: tuple[str, ...] = ()
        self.inbox: str | None = None
        self.desired: list[Root] = []
        self.roots: list[Root] = []  # the folders that exist and are followed
        self.missing: set[Root] = set()
        self.pending: dict[str, tuple[float, str, tuple[str, ...]]] = {}  # path -> (due, kind, agents)
        self.batches: list = []
        self.wake: asyncio.Event | None = None
        self.stopping = False
        self.producer: asyncio.Task | None = None
        self.producer_stop: asyncio.Event | None = None
        self.producer_paths: list[str] = []
        self.restart = False
        self.token: int | None = None
        self.counts: Counter = Counter()
        self.scanned = 0
        self.once = False
        self.next_recheck = 0.0
        self.polling = config.force_polling  # set when the OS runs out of file watches

    @property
    def opened(self) -> Store:
        """The board, once ``_setup`` (the first job) opened it."""
        assert self.store is not None
        return self.store

    @property
    def ing(self) -> Ingestor:
        """The ingestor, once ``_setup`` (the first job) made it."""
        assert self.ingestor is not None
        return self.ingestor

    @property
    def woken(self) -> asyncio.Event:
        """What wakes the loop, once ``run`` made it."""
        assert self.wake is not None
        return self.wake

    # -- plumbing ---------------------------------------------------------------------
    async def call(self, fn: Callable[..., T], *args: Any) -> T:
        """Run ``fn`` in the watcher's worker thread (its own board connection).
        A board whose server went away (a PostgreSQL restart) is reconnected
        with backoff, said in a notice, and the job run again: ingesting is
        idempotent, so nothing is lost or doubled."""
        loop = asyncio.get_running_loop()
        delay, lost = RECONNECT_FIRST, False
        while True:
            try:
                found = await loop.run_in_executor(self.executor, self._job, fn, args)
            except Exception as exc:
                if not connection_lost(exc) or self.is_stopping():
                    raise
                if not lost:
                    self.notice(f"lost the connection to the board ({_first_line(exc)}); reconnecting")
                lost = True
                await loop.run_in_executor(self.executor, self._drop_connection)
                await self._pause(delay)
                delay = min(delay * 2, RECONNECT_MAX)
                continue
            if lost:
                self.notice("reconnected to the board; carrying on")
            return found

    async def _pause(self, seconds: float) -> None:
        """Sleep, or less when the watcher is asked to stop."""
        try:
            await asyncio.wait_for(self.wake.wait(), seconds) if self.wake is not None else await asyncio.sleep(seconds)
        except TimeoutError:
            pass

    def _drop_connection(self) -> None:
        if self.store is None:
            return
        try:
            self.store.db.close()
        except Exception:  # a connection the server dropped may not close cleanly
            self.store.db._state.reset()  # type: ignore[attr-defined]  # (peewee-stubs leave out _state, its per-thread connection state)

    def _job(self, fn: Callable[..., T], args: tuple[Any, ...]) -> T:
        if self.store is not None:  # None before _setup opens it (watch_board given a location)
            db = self.store.db
            if db.is_closed():
                db.connect(reuse_if_open=True)
        if self.ingestor is not None:
            self.ingestor.new_batch()
        return fn(*args)

    def _close_connection(self) -> None:
        if self.store is not None and not self.store.db.is_closed():
            self.store.db.close()

    def emit(self, results: Iterable[Result]) -> None:
        for result in results:
            self.counts[result.kind] += 1
            if self.on_result is not None:
                try:
                    self.on_result(result)
                except Exception:  # a display callback must not stop ingestion
                    pass

    def notice(self, message: str, path: str = "") -> None:
        self.emit([Result("notice", path, path, message=message)])

    def is_stopping(self) -> bool:
        if not self.stopping and self.stop_event is not None and self.stop_event.is_set():
            self.stopping = True
        return self.stopping

    # -- setup (worker thread) ----------------------------------------------------------
    def _setup(self) -> None:
        from ..store.backends import Store

        if self.store is None:
            self.store, self.owned = Store.open(self.board), True
        # Load pydantic (documents are validated with it) and the writeback
        # operator now, so the first burst of documents does not pay for it.
        from ..ops import writeback  # noqa: F401

        self.ingestor = Ingestor(self.store, settle=self.cfg.settle)
        self.ingestor.load()
        loc = self.store.location
        if loc.backend == "sqlite" and loc.path is not None:
            board = norm(loc.path)
            self.board_files = (board,)
            inbox: str | None = os.path.join(os.path.dirname(board), "inbox")
        else:
            # a team board records no project folder: this checkout's (its .loopx/team.json), as every verb's
            root = self.store.project_folder()
            inbox = os.path.join(root, ".loopx", "inbox") if root else None
        if inbox and self.cfg.inbox:
            try:
                os.makedirs(inbox, exist_ok=True)
            except OSError:
                pass  # reported as a missing folder
            self.inbox = norm(inbox)
        self.token = self.store.change_token()

    def _desired_roots(self) -> list[Root]:
        roots = [Root(self.inbox, None)] if self.inbox else []
        for agent, folder in self.ing.agent_folders():
            roots.append(Root(norm(folder), agent))
        return list(dict.fromkeys(roots))

    def _probe(self) -> list[Root] | None:
        """New desired roots when someone else wrote to the board (agents may have changed)."""
        token = self.opened.change_token()
        if token == self.token:
            return None
        self.token = token
        return self._desired_roots()

    # -- folders ----------------------------------------------------------------------------
    async def apply_roots(self, desired: list[Root], *, initial: bool = False) -> None:
        """Follow the desired folders that exist, remember the missing ones, and
        restart watchfiles (then rescan) when the followed set changed."""
        self.desired = desired
        present = [r for r in desired if os.path.isdir(r.path)]
        missing = {r for r in desired if r not in present}
        for root in sorted(missing - self.missing, key=lambda r: (r.path, r.agent or "")):
            who = f"{root.agent}'s watch folder" if root.agent else "the inbox"
            if root in self.roots:
                self.notice(f"{who} {root.path} disappeared; it will be followed again once it reappears", root.path)
            elif os.path.exists(root.path):
                self.notice(f"{who} {root.path} is not a folder; it is ignored until it becomes one", root.path)
            else:
                self.notice(f"{who} {root.path} does not exist yet; it will be followed once it appears", root.path)
        for root in present:
            if root in self.missing:
                who = f"{root.agent}'s watch folder" if root.agent else "the inbox"
                self.notice(f"{who} {root.path} appeared: following it", root.path)
            elif not initial and root not in self.roots:
                self.notice(
                    f"following {root.agent}'s watch folder {root.path}" if root.agent else f"following {root.path}",
                    root.path,
                )
        self.missing = missing
        changed = set(present) != set(self.roots)
        self.roots = present
        self.rules = Rules(present, self.board_files)
        if initial:
            names = ", ".join(f"{r.path} ({r.agent or 'inbox'})" for r in present) or "none"
            self.notice(f"following {len(present)} folder{'s' if len(present) != 1 else ''}: {names}")
        paths = _outermost([r.path for r in present])
        if initial or changed or self.restart or paths != self.producer_paths:
            self.restart = False
            if not self.once:
                await self.start_producer(paths)
            await self.catch_up(present)

    # -- watchfiles ---------------------------------------------------------------------------
    def _filter(self, change: Change, path: str) -> bool:
        return self.rules.wanted(path)

    async def _produce(self, paths: list[str], stop: asyncio.Event, started: asyncio.Event) -> None:
        from watchfiles import awatch

        cfg = self.cfg
        started.set()  # awatch sets up its OS watches before its first await (see start_producer)
        try:
            async for changes in awatch(
                *paths,
                watch_filter=self._filter,
                stop_event=stop,
                debounce=cfg.debounce_ms,
                step=cfg.step_ms,
                force_polling=self.polling,
                poll_delay_ms=cfg.poll_delay_ms,
                recursive=True,
                ignore_permission_denied=True,
            ):
                self.batches.append(changes)
                self.woken.set()
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # e.g. FileNotFoundError: a folder vanished as it was added
            self.batches.append(exc)
            self.woken.set()

    async def start_producer(self, paths: list[str]) -> None:
        await self.stop_producer()
        self.producer_paths = paths
        if not paths:
            return
        self.producer_stop = asyncio.Event()
        started = asyncio.Event()
        self.producer = asyncio.create_task(
            self._produce(paths, self.producer_stop, started), name="loopx-watch-producer"
        )
        # The producer runs from started.set() into awatch without yielding, and
        # awatch creates its watcher (the OS watches) before its first await: once
        # we resume here, changes are being recorded, so the scan that follows
        # misses nothing.
        await started.wait()

    async def stop_producer(self) -> None:
        task, self.producer = self.producer, None
        if task is None:
            return
        assert self.producer_stop is not None  # made with the producer
        self.producer_stop.set()
        try:
            await asyncio.wait_for(asyncio.shield(task), 2.0)
        except (TimeoutError, asyncio.CancelledError):
            task.cancel()
        except Exception:
            pass

    # -- work (worker thread) ---------------------------------------------------------------
    def _walk(self, roots: list[Root]) -> list[tuple[float, str]]:
        """Every file below ``roots`` that anyone cares about, oldest first."""
        seen: set[str] = set()
        found: list[tuple[float, str]] = []
        for top in _outermost([r.path for r in roots]):
            for folder, dirs, files in os.walk(top):
                dirs[:] = [
                    d
                    for d in dirs
                    if (d not in IGNORED_DIRS and not d.endswith(".egg-info")) or self._is_root(os.path.join(folder, d))
                ]
                for name in files:
                    path = os.path.join(folder, name)
                    if path in seen or self.rules.classify(path) is None:
                        continue
                    seen.add(path)
                    try:
                        st = os.stat(path)
                    except OSError:
                        continue
                    if statmod.S_ISREG(st.st_mode):
                        found.append((st.st_mtime, path))
        found.sort()
        return found

    def _is_root(self, path: str) -> bool:
        return any(r.path == path or r.path.startswith(path + os.sep) for r in self.roots)

    def _expand(self, paths: list[str]) -> list[str]:
        """Changed paths as files, oldest first; a folder stands for every file in
        it (a new folder: files written into it before its watch was added raised
        no event)."""
        files: list[tuple[float, str]] = []
        for path in paths:
            try:
                st = os.stat(path)
            except OSError:
                self.ing.forget(path)
                continue
            if statmod.S_ISDIR(st.st_mode):
                files.extend(self._walk([Root(path, None)]))
            elif statmod.S_ISREG(st.st_mode):
                files.append((st.st_mtime, path))
        files.sort()
        return list(dict.fromkeys(p for _, p in files))

    def _handle(self, paths: list[str], scan: bool) -> tuple[list[Result], list[tuple[str, str, tuple]]]:
        """Ingest documents and streams now; return (results, later) where
        ``later`` holds (path, kind, agents) to schedule: unfinished documents
        (settle) and, when not scanning, files to observe once quiet.

        Files go in batches of ``BATCH``, one transaction each: few enough that
        the write lock is never held long from agents' own calls. A batch that
        fails to commit is redone one file per transaction, where each file's
        failure is reported on its own."""
        results: list[Result] = []
        later: list[tuple[str, str, tuple]] = []
        for i in range(0, len(paths), BATCH):
            part = paths[i : i + BATCH]
            try:
                out, again = self.ing.batch(lambda: self._handle_each(part, scan))
            except Exception:
                out, again = self._handle_each(part, scan)
            results.extend(out)
            later.extend(again)
        return results, later

    def _handle_each(self, paths: list[str], scan: bool) -> tuple[list[Result], list[tuple[str, str, tuple]]]:
        ing = self.ing
        results: list[Result] = []
        later: list[tuple[str, str, tuple]] = []
        for path in paths:
            what = self.rules.classify(path)
            if what is None:
                continue
            kind, agents = what
            origin = self.rules.origin(path)
            try:
                if kind == "doc":
                    out, pending = ing.doc(path, origin=origin)
                elif kind == "stream":
                    out, pending = ing.stream(path, origin=origin)
                elif scan:
                    out, pending = ing.observe(path, origin, scan=True), False
                else:
                    later.append((path, kind, tuple(agents)))
                    continue
            except Exception as exc:  # the board is busy or broken: say so, try again later
                if connection_lost(exc):
                    raise  # the whole job waits for the board (``call``)
                results.append(
                    Result(
                        "notice",
                        path,
                        ing.show(path),
                        message=f"could not ingest {ing.show(path)} ({type(exc).__name__}: {exc}); retrying",
                    )
                )
                later.append((path, kind, tuple(agents)))
                continue
            results.extend(out)
            if pending:
                later.append((path, kind, ()))
        return results, later

    def _due(self, items: list[tuple[str, str, tuple]]) -> tuple[list[Result], list[tuple[str, str, tuple]]]:
        ing = self.ing
        results: list[Result] = []
        again: list[tuple[str, str, tuple]] = []
        for path, kind, agents in items:
            origin = self.rules.origin(path)  # the followed folders may have changed meanwhile
            try:
                if kind == "doc":
                    out, pending = ing.doc(path, origin=origin, final=True)
                elif kind == "stream":
                    out, pending = ing.stream(path, origin=origin, final=True)
                else:
                    out, pending = ing.observe(path, origin), False
            except Exception as exc:
                if connection_lost(exc):
                    raise
                results.append(
                    Result(
                        "notice",
                        path,
                        ing.show(path),
                        message=f"could not ingest {ing.show(path)} ({type(exc).__name__}: {exc}); retrying",
                    )
                )
                again.append((path, kind, agents))
                continue
            results.extend(out)
            if pending:
                again.append((path, kind, ()))
        return results, again

    def _forget(self, paths: list[str]) -> None:
        for path in paths:
            self.ing.forget(path)

    # -- scheduling ---------------------------------------------------------------------------------
    def schedule(self, items: Iterable[tuple[str, str, tuple[str, ...]]], now: float | None = None) -> None:
        now = time.monotonic() if now is None else now
        for path, kind, agents in items:
            delay = self.cfg.observe_delay if kind == "other" else self.cfg.settle
            self.pending[path] = (now + delay, kind, agents)

    async def process(self, paths: list[str], *, scan: bool, progress: bool = False) -> None:
        total = len(paths)
        if progress and self.on_progress is not None:
            self.on_progress(0, total)
        for i in range(0, total, self.cfg.chunk):
            chunk = paths[i : i + self.cfg.chunk]
            results, later = await self.call(self._handle, chunk, scan)
            self.emit(results)
            self.schedule(later)
            if progress and self.on_progress is not None:
                self.on_progress(min(i + len(chunk), total), total)
            if self.is_stopping():
                return

    async def catch_up(self, roots: list[Root]) -> None:
        if not roots:
            return
        found = await self.call(self._walk, roots)
        self.scanned += len(found)
        await self.process([p for _, p in found], scan=True, progress=True)

    async def take_batches(self) -> None:
        batches, self.batches = self.batches, []
        latest: dict[str, int] = {}
        failed = None
        for batch in batches:
            if isinstance(batch, BaseException):
                failed = batch
                continue
            for change, path in batch:
                latest[path] = int(change)
        if failed is not None:
            self.producer = None
            self.restart = True
            self.next_recheck = 0.0
            if _is_watch_limit(failed) and not self.polling:
                # Restarting would fail the same way, forever and silently: poll instead.
                self.polling = True
                self.notice(
                    "the OS limit on file watches was reached (on Linux: fs.inotify.max_user_watches); "
                    f"following the folders by polling every {self.cfg.poll_delay_ms} ms instead. Raise the limit "
                    "(`sudo sysctl fs.inotify.max_user_watches=524288`), or keep big trees such as node_modules "
                    "out of agents' watch folders"
                )
            elif not isinstance(failed, FileNotFoundError):
                self.notice(f"the file watcher stopped ({type(failed).__name__}: {failed}); restarting it")
        if not latest:
            return
        deleted = [p for p, c in latest.items() if c == 3]  # watchfiles.Change.deleted
        if deleted:
            for path in deleted:
                self.pending.pop(path, None)
            await self.call(self._forget, deleted)
        changed = sorted(p for p, c in latest.items() if c != 3)
        for path in changed:
            self.pending.pop(
                path, None
            )  # handled now; rescheduled if still unfinished (or, for artifacts, until quiet)
        if changed:
            await self.process(await self.call(self._expand, changed), scan=False)

    async def run_due(self, *, everything: bool = False) -> None:
        now = time.monotonic()
        due = [(p, k, a) for p, (t, k, a) in self.pending.items() if everything or t <= now]
        if not due:
            return
        for path, _, _ in due:
            del self.pending[path]
        for i in range(0, len(due), self.cfg.chunk):
            results, again = await self.call(self._due, due[i : i + self.cfg.chunk])
            self.emit(results)
            self.schedule(again)

    async def recheck(self) -> None:
        desired = await self.call(self._probe)
        await self.apply_roots(desired if desired is not None else self.desired)

    # -- the loop ----------------------------------------------------------------------------------------
    async def _stop_waiter(self) -> None:
        stop = self.stop_event
        if stop is None:  # (never: the waiter runs only with a stop_event)
            return
        waiter = getattr(stop, "wait", None)
        if waiter is not None and asyncio.iscoroutinefunction(waiter):
            await waiter()
        else:  # a threading.Event or similar: poll it
            while not stop.is_set():
                await asyncio.sleep(0.05)
        self.stopping = True
        self.woken.set()

    async def run(self, once: bool) -> WatchStats:
        self.once = once
        self.wake = asyncio.Event()
        stopper = asyncio.create_task(self._stop_waiter()) if self.stop_event is not None else None
        try:
            await self.call(self._setup)
            desired = await self.call(self._desired_roots)
            self.next_recheck = time.monotonic() + self.cfg.recheck
            await self.apply_roots(desired, initial=True)
            if once:
                deadline = time.monotonic() + 5 * self.cfg.settle + 1
                while self.pending and not self.is_stopping() and time.monotonic() < deadline:
                    wait = min(t for t, _, _ in self.pending.values()) - time.monotonic()
                    if wait > 0:
                        await asyncio.sleep(wait)
                    await self.run_due()
                return self.stats()
            while not self.is_stopping():
                now = time.monotonic()
                until = self.next_recheck
                if self.pending:
                    until = min(until, min(t for t, _, _ in self.pending.values()))
                if not self.batches and until > now:
                    try:
                        await asyncio.wait_for(self.wake.wait(), until - now)
                    except TimeoutError:
                        pass
                self.wake.clear()
                if self.is_stopping():
                    break
                if self.batches:
                    await self.take_batches()
                await self.run_due()
                if time.monotonic() >= self.next_recheck:
                    self.next_recheck = time.monotonic() + self.cfg.recheck
                    await self.recheck()
            return self.stats()
        finally:
            if stopper is not None:
                stopper.cancel()
            try:
                await self.stop_producer()
            except BaseException:
                pass
            self.executor.submit(self._close_connection)
            self.executor.shutdown(wait=False)
            if self.owned and self.store is not None:
                self.executor.shutdown(wait=True)
                self.store.close()

    def stats(self) -> WatchStats:
        c = self.counts
        return WatchStats(
            c["ingested"], c["duplicate"], c["refused"], c["observed"], self.scanned, tuple(r.path for r in self.roots)
        )


def _is_watch_limit(exc: BaseException) -> bool:
    """watchfiles reports inotify's ENOSPC as FileNotFoundError("OS file watch limit reached. …")."""
    text = str(exc).lower()
    return "watch limit" in text or getattr(exc, "errno", None) == 28


def _is_store(obj: object) -> TypeGuard[Store]:
    return hasattr(obj, "run") and hasattr(obj, "db") and hasattr(obj, "location")


async def watch_board(
    board: Store | BoardLocation | str,
    *,
    stop_event: StopSignal | None = None,
    on_result: Callable[[Result], object] | None = None,
    on_progress: Callable[[int, int], object] | None = None,
    once: bool = False,
    config: WatchConfig | None = None,
) -> WatchStats:
    """Follow ``board`` until ``stop_event`` is set or the task is cancelled
    (``once``: catch up, then return). See the package docstring."""
    from ..store.discovery import BoardLocation, discover

    if isinstance(board, str):
        board = discover(board)
    if _is_store(board):
        engine = _Engine(board.location, config or WatchConfig(), on_result, on_progress, stop_event)
        engine.store = board
    elif isinstance(board, BoardLocation):
        engine = _Engine(board, config or WatchConfig(), on_result, on_progress, stop_event)
    else:
        raise TypeError("watch_board takes a Store, a BoardLocation or a --db string")
    return await engine.run(once)
