"""Sleeping until the board changes — a cheap change probe with back-off, not
busy polling (PITFALLS "Change detection across processes").

SQLite: ``PRAGMA data_version`` on the runner's own connection (a few µs; it
changes whenever another connection commits, never for our own commits).
PostgreSQL: the newest event's ``seq`` (``Store.change_token``). The probe
runs every ``FAST`` seconds right after a change and backs off to ``SLOW``
while the board is quiet, so an idle runner costs a fraction of a percent of a
core and still notices a change within ``SLOW`` seconds. On PostgreSQL every
write also NOTIFYs the board's channel as it commits, and the waker LISTENs
(``Store.listener``): a change wakes it at once, the probe stays the fallback.
"""

from __future__ import annotations

import os
import select
import time

TYPE_CHECKING = False  # (annotations only; checkers read this as typing's)
if TYPE_CHECKING:
    from collections.abc import Iterable

    from ..store.base import Listener, Store

FAST = 0.05
SLOW = 0.4
BACK_OFF = 1.5


class Interrupt:
    """A stop flag a signal handler may set (PITFALLS "Signals and locks").

    Not a ``threading.Event``: its ``set`` takes the lock its ``wait`` holds
    around the sleep, and a handler runs in the main thread between two
    bytecodes — when a SIGTERM lands inside ``Event.wait``'s bookkeeping, the
    handler's ``set`` waits forever for a lock its own thread holds (a demo
    runner asleep on a paused card never stopped). Here ``set`` is a flag and
    one byte written to a pipe, and ``wait`` selects on the pipe: no lock, and
    a waiter wakes at once."""

    def __init__(self) -> None:
        self._read, self._write = os.pipe()
        os.set_blocking(self._read, False)
        os.set_blocking(self._write, False)
        self._set = False

    def set(self) -> None:
        self._set = True
        try:
            os.write(self._write, b"!")
        except (BlockingIOError, OSError):  # the pipe is full: a waiter is due to wake anyway
            pass

    def is_set(self) -> bool:
        return self._set

    def wait(self, seconds: float, also: Iterable[Listener] = ()) -> bool:
        """Sleep up to ``seconds``, or until set or one of ``also`` (objects
        with ``fileno``) is readable."""
        if not self._set:
            readable: list[int | Listener] = [self._read, *also]
            select.select(readable, [], [], max(0.0, seconds))
        return self._set

    def close(self) -> None:
        for fd in (self._read, self._write):
            try:
                os.close(fd)
            except OSError:
                pass


class Waker:
    def __init__(self, store: Store, interrupted: Interrupt, fast: float = FAST, slow: float = SLOW):
        self.store = store
        self.interrupted = interrupted  # set by a signal handler: stop waiting at once
        self.fast, self.slow = fast, slow
        self.interval = fast
        self.listener = store.listener()  # pushed changes (PostgreSQL), or None
        self.token = self._probe()

    def _probe(self) -> int:
        return self.store.change_token()

    def wait(self, seconds: float) -> bool:
        """Wait up to ``seconds`` for a change by another process; True when one came."""
        end = time.monotonic() + max(0.0, seconds)
        while True:
            if self.interrupted.is_set():
                return False
            token = self._probe()
            if token != self.token:
                self.token = token
                self.interval = self.fast
                return True
            left = end - time.monotonic()
            if left <= 0:
                return False
            listener = self.listener
            pushed = (listener,) if listener is not None and listener.fileno() >= 0 else ()
            self.interrupted.wait(min(self.interval, left), also=pushed)
            if pushed and listener is not None and listener.drain():
                continue  # a write committed: probe now
            self.interval = min(self.slow, self.interval * BACK_OFF)

    def reset(self) -> None:
        """After our own writes: take the current token as seen."""
        if self.listener is not None:
            self.listener.drain()  # (our own writes' notifications)
        self.token = self._probe()

    def close(self) -> None:
        if self.listener is not None:
            self.listener.close()
