"""The board and Python's garbage collector: collections out of a person's way.

What the board built to open (Textual, its styles, the widgets, the first
pages) lives as long as the app: ``freeze_heap`` moves it out of the
collector's sight, where a full collection walking it took 150–340 ms on the
UI thread. What the board makes later is mostly Textual's drawing — strips,
each with seven small caches — and a collection of the older generations
walked 160,000 of them: 23–58 ms for the middle one, ~136 ms for a full one,
landing inside whichever key came next. So the collector runs only its young
generation by itself (20,000 objects, a few ms), and the app collects the
older ones once the person has been idle for ``IDLE_AFTER`` seconds
(``collect_when_idle``, from a one-second timer), or regardless when a long
burst has put it off ``OVERDUE`` times; on the way it lets go of what
Textual's styles cache keeps of closed widgets (``forget_closed_widgets``).
``thaw_heap`` puts everything back as the app ends, without collecting on the
way out.

Memory Python frees is not always given back: glibc's allocator gives each
thread that allocates an arena of its own (up to eight per core), and the
board's worker threads each kept the pages they had freed — a board left open
grew by ~9 MB per 1,000 changes with its Python objects flat (``tracemalloc``),
and stayed flat with ``MALLOC_ARENA_MAX=2`` (bench/tui_soak.py). So the board
asks for ``ARENAS`` arenas (``limit_arenas``, before its threads start).
What glibc still keeps free in them — the tail of a heap above a chunk in
use is given back by itself, the pages in its middle are not: 16–20 MB of the
board's 28–36 MB heap, after the history check read ``loopx verify``'s report
and as the soak went on — is given back after each collection of the older
generations made while the person is idle (``give_back``: ``malloc_trim``, 0.3–11 ms)."""

from __future__ import annotations

import gc
import sys

from textual._styles_cache import StylesCache

YOUNG = 20_000  # new objects between two young collections (Python's default is 700)
NEVER = 1_000_000  # the older generations' thresholds: not by themselves
DUE = 10  # young collections before the middle one is due (Python's default)
OVERDUE = 100  # ... and collected even while the person keeps typing
IDLE_AFTER = 1.0  # s without a key or a click
ARENAS = 2  # glibc malloc arenas for the whole board (its default: 8 per core)
M_ARENA_MAX = -8  # mallopt's parameter number (glibc's malloc.h)

_THRESHOLDS: list[tuple[int, int, int]] = []  # the collector's thresholds before the board set its own


def freeze_heap() -> None:
    """Everything alive now out of the collector's sight; from the first
    call, the older generations wait for ``collect_when_idle``."""
    gc.freeze()
    if not _THRESHOLDS:
        _THRESHOLDS.append(gc.get_threshold())
        gc.set_threshold(YOUNG, NEVER, NEVER)


def thaw_heap() -> None:
    """The app ended: what it froze can be collected again and the thresholds
    are Python's (another app in this process, a test suite, must not keep them).
    Everything goes to the oldest generation first (``freeze`` then
    ``unfreeze``: two list splices): with Python's thresholds back, the middle
    generation the board let grow was otherwise collected at once (20–60 ms),
    inside the app's exit, before the terminal was given back."""
    gc.freeze()
    gc.unfreeze()
    if _THRESHOLDS:
        gc.set_threshold(*_THRESHOLDS.pop())


def collect_when_idle(idle_for: float) -> int | None:
    """Collect the middle generation (and the old one, when it is due) if the
    person has been idle long enough, or if a long burst put it off; returns
    the generation collected, None when nothing was."""
    if not _THRESHOLDS:
        return None  # (the board has not set its thresholds: Python collects as usual)
    _, middle, old = gc.get_count()
    if middle < DUE or (idle_for < IDLE_AFTER and middle < OVERDUE):
        return None
    generation = 2 if old >= DUE else 1
    forget_closed_widgets()
    gc.collect(generation)
    give_back()
    return generation


_LIBC: list = []  # glibc, looked up once (or None)


def _libc():
    """glibc's allocator calls, or None (another libc, another system)."""
    if not _LIBC:
        libc = None
        if sys.platform.startswith("linux"):
            import ctypes

            try:
                found = ctypes.CDLL(None)
                libc = found if hasattr(found, "mallopt") else None
            except OSError:
                pass
        _LIBC.append(libc)
    return _LIBC[0]


def limit_arenas() -> bool:
    """Ask glibc for ``ARENAS`` malloc arenas at most; True if it agreed."""
    libc = _libc()
    return bool(libc is not None and libc.mallopt(M_ARENA_MAX, ARENAS) == 1)


def give_back() -> bool:
    """Hand the pages glibc keeps free inside its heaps back to the system
    (``malloc_trim(0)``); True if some were."""
    libc = _libc()
    return bool(libc is not None and libc.malloc_trim(0) == 1)


def forget_closed_widgets() -> None:
    """Textual 8's ``StylesCache.get_inner_outer`` is an ``lru_cache(1024)`` on
    a method: its keys hold the styles cache of every widget drawn — and the
    lines it keeps — long after the widget closed (a board left open reached
    ~250 dead ones, 7,000 lines, a minute of keys). Emptied here, it fills again
    with the widgets on screen: two colour sums each."""
    clear = getattr(getattr(StylesCache, "get_inner_outer", None), "cache_clear", None)
    if clear is not None:  # (a Textual without that cache: nothing to forget)
        clear()
