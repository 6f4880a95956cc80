"""The board's garbage collection (loopx_tui/heap.py): inside a burst of keys
only the young generation is collected (a few ms); the older ones wait for
the person to pause, or for a burst long enough to make them overdue."""

from __future__ import annotations

import gc

import pytest

from loopx_tui import heap


@pytest.fixture
def board_thresholds():
    heap.freeze_heap()
    yield
    heap.thaw_heap()


def _young_collections(n: int) -> None:
    """Make the collector run its young generation ``n`` times (cyclic garbage, so it is real work)."""
    for _ in range(n):
        start = gc.get_count()[1]
        while gc.get_count()[1] == start:
            a: list = []
            a.append(a)


def test_the_board_sets_and_restores_the_thresholds():
    before = gc.get_threshold()
    heap.freeze_heap()
    try:
        assert gc.get_threshold() == (heap.YOUNG, heap.NEVER, heap.NEVER)
    finally:
        heap.thaw_heap()
    assert gc.get_threshold() == before and gc.get_freeze_count() == 0


def test_quitting_leaves_no_young_or_middle_garbage_to_collect_on_the_way_out():
    heap.freeze_heap()
    try:
        _young_collections(heap.DUE * 3)  # a middle generation grown while the board ran
        assert gc.get_objects(generation=1)
    finally:
        heap.thaw_heap()
    # Python's thresholds are back, and nothing is left where they would collect it at once:
    # the board's objects wait in the oldest generation for the next full collection.
    assert gc.get_objects(generation=1) == []


def test_a_closed_widgets_styles_cache_is_let_go_when_the_board_collects(board_thresholds):
    import weakref

    from textual._styles_cache import StylesCache
    from textual.color import Color

    cache = StylesCache()  # (what every widget has; Textual asks it for its inner and outer colours as it draws)
    cache.get_inner_outer(Color(1, 2, 3), Color(4, 5, 6))
    gone = weakref.ref(cache)
    del cache
    gc.collect()
    assert gone() is not None  # the widget closed, Textual's cache still holds it (and its lines)
    _young_collections(heap.DUE)
    assert heap.collect_when_idle(idle_for=heap.IDLE_AFTER) is not None
    assert gone() is None


def test_the_older_generations_wait_for_a_pause(board_thresholds):
    gc.collect()
    _young_collections(heap.DUE)
    assert gc.get_count()[1] >= heap.DUE  # due, and Python did not collect it by itself
    assert heap.collect_when_idle(idle_for=0.2) is None  # typing: not now
    assert gc.get_count()[1] >= heap.DUE
    assert heap.collect_when_idle(idle_for=heap.IDLE_AFTER) == 1  # a pause: now
    assert gc.get_count()[1] == 0
    for _ in range(heap.DUE - 1):
        _young_collections(heap.DUE)
        assert heap.collect_when_idle(idle_for=5) == 1
    _young_collections(heap.DUE)
    assert heap.collect_when_idle(idle_for=5) == 2  # the old one too, once it is due
    assert gc.get_count()[2] == 0


def test_a_long_burst_does_not_put_it_off_for_ever(board_thresholds):
    gc.collect()
    _young_collections(heap.OVERDUE)
    assert heap.collect_when_idle(idle_for=0.0) == 1


async def test_a_burst_of_keys_on_the_board_collects_only_the_young_generation(make_app):
    collections: list[int] = []

    def seen(phase, info):
        if phase == "stop":
            collections.append(info["generation"])

    app = make_app()
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.pause()
        gc.callbacks.append(seen)
        try:
            for _ in range(100):  # (bounded; long enough for Python's own thresholds to collect the middle one)
                if collections.count(0) >= heap.DUE:
                    break
                await pilot.press("v", "v", "j", "l", "k", "h")
            assert collections.count(0) >= heap.DUE
            assert set(collections) == {0}, collections  # only the young generation was collected
            await app.reads_idle()  # (a worker thread's allocations may run a young collection at any moment)
            _young_collections(heap.DUE)  # (however many keys it took: due now)
            app._collect_when_idle()  # the one-second timer, right after a key: not yet
            assert gc.get_count()[1] >= heap.DUE and 1 not in collections
            app.last_input -= heap.IDLE_AFTER  # the person paused
            app._collect_when_idle()
            # Collected, and no longer due (not "== 0": another thread's young collection may come in between).
            assert 1 in collections and gc.get_count()[1] < heap.DUE
        finally:
            gc.callbacks.remove(seen)


def test_the_board_asks_glibc_for_two_malloc_arenas_before_its_threads_start():
    """What a board left open kept outside Python's objects was the pages its
    worker threads freed, one glibc arena each (bench/tui_soak.py: RSS flat
    with two arenas). A fresh process that makes the board's app has asked for
    them, and glibc agreed."""
    import subprocess
    import sys

    if heap._libc() is None:
        pytest.skip("glibc's allocator only")
    script = "from loopx_tui import heap, app\nasked = []\nheap.limit_arenas = (lambda real: lambda: asked.append(real()) or asked[-1])(heap.limit_arenas)\napp.limit_arenas = heap.limit_arenas\napp.LoopxApp(None)\nprint(asked)"
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[True]"


def test_what_glibc_keeps_free_inside_its_heap_is_given_back_when_the_person_pauses():
    """After the history check read `loopx verify`'s report, and as a soak went
    on, glibc kept 16–19 MB free in the middle of the board's heap, counted in
    its RSS for as long as the board stayed open (bench/tui_soak.py). A fresh
    process frees most of 32 MB it allocated in 16 kB pieces (the piece at the
    top stays, so glibc cannot shrink the heap by itself): its RSS falls by
    the freed pages only once the board's idle collection runs."""
    import subprocess
    import sys

    if heap._libc() is None:
        pytest.skip("glibc's allocator only")
    script = (
        "from pathlib import Path\n"
        "from loopx_tui import heap\n"
        "def rss(): return next(int(l.split()[1]) for l in Path('/proc/self/status').read_text().splitlines() if l.startswith('VmRSS:')) // 1024\n"
        "heap.freeze_heap()\n"
        "pieces = [bytearray(16_384) for _ in range(2048)]\n"
        "kept = pieces[::64] + [pieces[-1]]\n"
        "del pieces\n"
        "freed = rss()\n"
        "heap.collect_when_idle(heap.IDLE_AFTER)  # nothing due: the collector is not run, nothing given back\n"
        "waiting = rss()\n"
        "import gc\n"
        "while gc.get_count()[1] < heap.DUE:  # (a middle generation due: cyclic garbage, which only the collector frees)\n"
        "    a = []; a.append(a)\n"
        "heap.collect_when_idle(heap.IDLE_AFTER)\n"
        "print(freed, waiting, rss())\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    freed, waiting, after = map(int, done.stdout.split())
    assert waiting >= freed - 2  # freed by Python, still held by glibc
    assert after <= freed - 20, (freed, waiting, after)  # given back: most of the 32 MB
