"""Pushed, not polled (#42): on a team board every write NOTIFYs the board's
channel as it commits, and a runner's waker LISTENs — it wakes on another
process's write at once, its polling only the fallback."""

from __future__ import annotations

import contextlib
import threading

from tests.pg.test_pg_board import ok


@contextlib.contextmanager
def slow_waker(url: str):
    """A runner's waker on the board at ``url`` whose next poll is an hour
    away (only a notification wakes it soon), and a thread to start that waits
    on it: yields (waker, thread, what its wait returned)."""
    from loopx_core.runner.waker import Interrupt, Waker
    from loopx_core.store.backends import Store
    from loopx_core.store.discovery import parse_target

    store = Store.open(parse_target(url, "flag"))
    interrupted = Interrupt()
    waker = Waker(store, interrupted, fast=3600.0, slow=3600.0)
    woke: list[bool] = []
    waiting = threading.Thread(target=lambda: woke.append(waker.wait(600.0)))
    try:
        yield waker, waiting, woke
    finally:
        interrupted.set()
        if waiting.ident is not None:
            waiting.join(timeout=60)
        waker.close()
        interrupted.close()
        store.close()


def test_a_waker_that_no_longer_polls_still_wakes_on_a_write(pg_url, tmp_path):
    ok(pg_url, "init", cwd=tmp_path)
    with slow_waker(pg_url) as (waker, waiting, woke):
        assert waker.listener is not None
        waiting.start()
        ok(pg_url, "card", "add", "from another process", cwd=tmp_path)
        waiting.join(timeout=120)
        assert woke == [True]  # the write woke it, not a poll
        assert waker.token == waker.store.change_token()
