"""The board left open while agents work: does it grow?

A board of 2,000 cards / 50,000 evidence is opened headless (change poller,
lease reaper and watcher on, as `loopx board` runs them); another process
writes as agents do — a turn's evidence on an active card, and one write in
five a new card (``--cards-every``) — about ten times a second, and the person works in bursts: a key every quarter of a
second for two seconds (select, switch view, open a card and close it, the
timeline, the help), then two seconds of reading. Every ten seconds the
board's memory (RSS), the objects the garbage collector tracks and the changes
seen so far are printed; at the end, after a full collection, what the board
still holds, and the growth per 1,000 changes after the first minute (what a
day of agents would add), then which kinds of object grew (``--by-type``: the
types of every tracked object counted after the first minute and at the end,
beside the cards the board holds), to tell the new cards it holds from a leak;
``--tracemalloc``: Python's own allocations made after the first minute and
still alive at the end, by line (what of the RSS growth is Python's).

Each sample also says glibc's heap (obtained, in use, free), the blocks
Python's small-object allocator holds, the process's threads and the files
open on the board's database (three a connection); at the first minute and
the end, pymalloc's arenas; ``--trim``: what ``malloc_trim`` gives back at the
end (what glibc still kept free). The slope of the run's second half tells a
warm-up from a leak.

Run: ``.venv/bin/python bench/tui_soak.py [--minutes 3] [--rate 10] [--by-type] [--tracemalloc] [--trim]``.
Figures are printed; nothing here asserts.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import os
import subprocess
import sys
import tempfile
import textwrap
import time
from collections import Counter
from pathlib import Path

os.environ.setdefault("TEXTUAL_ANIMATIONS", "none")
REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

from tui_bench import BENCH, load_average  # noqa: E402

BOARD = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    sys.path.insert(0, sys.argv[2])
    from tui_bench import make_big_board
    from loopx_core.store.backends import Store
    from loopx_core.store.models import Card
    location, _ = make_big_board(Path(sys.argv[1]), 2000, 50_000)
    store = Store.open(location)
    store.run(lambda: Card.update(max_turns=None).where(Card.id == 1).execute())  # (the agents' card never runs out of turns)
    store.close()
    print(location.path)
    """
)

AGENTS = textwrap.dedent(
    """
    import random, sys, time
    from loopx_core.ops.cards import add_card
    from loopx_core.ops.writeback import writeback
    from loopx_core.store.backends import Store
    from loopx_core.store.discovery import parse_target
    db, seconds, rate, cards_every = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4])
    rnd = random.Random(3)
    store = Store.open(parse_target(db, "flag"))
    end, n = time.monotonic() + seconds, 0
    while time.monotonic() < end:
        n += 1
        if not cards_every or n % cards_every:
            writeback(store, 1, "bench-agent", {"summary": f"turn {n}", "next": f"step {n + 1}", "tokens": 100})
        else:
            add_card(store, {"title": f"soak card {n}", "priority": rnd.randint(0, 4)}, "agent:bench-agent")
        time.sleep(rnd.uniform(0.5, 1.5) / rate)
    print(n, flush=True)
    store.close()
    """
)

KEYS = (
    "j",
    "j",
    "k",
    "v",
    "l",
    "h",
    "v",
    "enter",
    "escape",
    "t",
    "escape",
    "question_mark",
    "escape",
    "slash",
    "escape",
)


def rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


class MallInfo2(__import__("ctypes").Structure):
    """glibc's ``struct mallinfo2`` (malloc.h): the heap's bytes, in size_t."""

    _fields_ = [
        (name, __import__("ctypes").c_size_t)
        for name in (
            "arena",
            "ordblks",
            "smblks",
            "hblks",
            "hblkhd",
            "usmblks",
            "fsmblks",
            "uordblks",
            "fordblks",
            "keepcost",
        )
    ]


def malloc_figures() -> dict:
    """glibc's heap (all arenas): obtained from the system (sbrk + arenas' mmap), in use, free but kept, mmapped chunks; {} without glibc ≥ 2.33."""
    import ctypes

    try:
        libc = ctypes.CDLL(None)
        fn = libc.mallinfo2
    except (OSError, AttributeError):
        return {}
    fn.restype = MallInfo2
    info = fn()
    return {
        "heap": info.arena / 2**20,
        "in use": info.uordblks / 2**20,
        "free": info.fordblks / 2**20,
        "mmapped": info.hblkhd / 2**20,
    }


def pymalloc_figures() -> dict:
    """Python's small-object allocator (``sys._debugmallocstats``, which writes to the C stderr):
    its arenas now, the most it held at once, and the bytes in blocks in use and free in them."""
    import ctypes
    import re

    with tempfile.TemporaryFile() as out:
        saved = os.dup(2)
        try:
            sys.stderr.flush()
            os.dup2(out.fileno(), 2)
            sys._debugmallocstats()
            ctypes.CDLL(None).fflush(None)
        finally:
            os.dup2(saved, 2)
            os.close(saved)
        out.seek(0)
        text = out.read().decode(errors="replace")
    figures = {}
    for label, key in (
        ("arenas allocated current", "arenas"),
        ("arenas highwater mark", "most arenas"),
        ("bytes in allocated blocks", "in use"),
        ("bytes in available blocks", "free blocks"),
        ("bytes lost to pool headers", "headers"),
        ("bytes lost to quantization", "quantization"),
        ("bytes in maximum", ""),
    ):
        found = re.search(rf"# {label}\s*=\s*([\d,]+)", text)
        if found and key:
            value = int(found.group(1).replace(",", ""))
            figures[key] = value if "arenas" in key else round(value / 2**20, 1)
    return figures


def threads_and_connections(db: Path) -> tuple[int, int]:
    """The process's threads (the kernel's count) and the files open on the board's database, WAL and index."""
    threads = len(os.listdir("/proc/self/task"))
    names = {str(db), f"{db}-wal", f"{db}-shm"}
    fds = 0
    for fd in os.listdir("/proc/self/fd"):
        try:
            fds += os.readlink(f"/proc/self/fd/{fd}") in names
        except OSError:
            pass
    return threads, fds


def by_type() -> Counter:
    """Every object the collector tracks, counted by its type's module and name."""
    return Counter(f"{type(o).__module__}.{type(o).__qualname__}" for o in gc.get_objects())


def soak(
    location,
    minutes: float,
    rate: float,
    cards_every: int,
    types: list | None = None,
    traced: list | None = None,
    trim: bool = False,
) -> list[tuple[float, int, float, int]]:
    """``types``: when given, filled with (cards held, objects by type) after the first minute and at the end."""
    from textual import events

    from loopx_tui.app import LoopxApp

    changes = 0

    class SoakApp(LoopxApp):
        def on_board_changed(self, message) -> None:
            nonlocal changes
            changes += 1
            super().on_board_changed(message)

    samples: list[tuple[float, int, float, int]] = []  # (seconds, changes, RSS MB, tracked objects)

    async def run() -> None:
        app = SoakApp(location, background=True, person=BENCH)
        async with app.run_test(size=(160, 48)) as pilot:
            await app.loaded.wait()
            await app.reads_idle()
            await pilot.pause()
            agents = subprocess.Popen(
                [sys.executable, "-c", AGENTS, str(location.path), str(minutes * 60), str(rate), str(cards_every)],
                stdout=subprocess.PIPE,
                text=True,
                cwd=REPO,
            )
            start = time.monotonic()
            next_sample, pressed, settled = start, 0, None
            while agents.poll() is None:
                now = time.monotonic()
                if settled is None and now - start >= 60:
                    gc.collect()  # (the baseline: what the board holds after its first minute)
                    settled = (now - start, changes, rss_mb(), len(gc.get_objects()))
                    if types is not None:
                        types.append((len(app.model.cards), by_type()))
                    if traced is not None:
                        import tracemalloc

                        tracemalloc.start()
                    print(
                        f"after the first minute and a full collection: RSS {settled[2]:.1f} MB, {settled[3]:,} tracked objects; malloc {malloc_figures()}; pymalloc {pymalloc_figures()}"
                    )
                if now >= next_sample:
                    samples.append((now - start, changes, rss_mb(), len(gc.get_objects())))
                    heap = malloc_figures()
                    threads, fds = threads_and_connections(location.path)
                    print(
                        f"{now - start:6.0f} s  {changes:6,} changes  RSS {samples[-1][2]:6.1f} MB  {samples[-1][3]:9,} tracked objects"
                        + (
                            f"  malloc: heap {heap['heap']:5.1f} in use {heap['in use']:5.1f} free {heap['free']:5.1f} mmapped {heap['mmapped']:5.1f} MB"
                            if heap
                            else ""
                        )
                        + f"  pymalloc blocks {sys.getallocatedblocks():,}  threads {threads}  db files open {fds}",
                        flush=True,
                    )
                    next_sample += 10
                key = KEYS[pressed % len(KEYS)]
                pressed += 1
                char = {"question_mark": "?", "slash": "/"}.get(key, key if len(key) == 1 else None)
                app.post_message(events.Key(key, char))
                await asyncio.sleep(0.25 if pressed % 8 else 2.0)  # (a pause: the board collects its older garbage)
            await asyncio.sleep(1.0)  # the last writes arrive
            gc.collect()
            samples.append((time.monotonic() - start, changes, rss_mb(), len(gc.get_objects())))
            if types is not None:
                types.append((len(app.model.cards), by_type()))
            if traced is not None and settled is not None:
                import tracemalloc

                traced.append(tracemalloc.take_snapshot())
                tracemalloc.stop()
            print(
                f"at the end, after a full collection: RSS {samples[-1][2]:.1f} MB, {samples[-1][3]:,} tracked objects; malloc {malloc_figures()}; pymalloc {pymalloc_figures()}"
            )
            if trim:
                import ctypes

                ctypes.CDLL(None).malloc_trim(0)
                print(f"after malloc_trim(0): RSS {rss_mb():.1f} MB; malloc {malloc_figures()}")
            print(f"written by the agents: {agents.stdout.read().strip()} · keys pressed: {pressed}")
            if settled is not None:
                samples.insert(0, settled)

    asyncio.run(run())
    return samples


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--minutes", type=float, default=3.0)
    parser.add_argument("--rate", type=float, default=10.0, help="agent writes a second")
    parser.add_argument(
        "--cards-every", type=int, default=5, help="one write in N adds a card (0: none, only turns' evidence)"
    )
    parser.add_argument(
        "--by-type", action="store_true", help="which types of object grew from the first minute to the end"
    )
    parser.add_argument(
        "--trim", action="store_true", help="at the end, what glibc gives back to the system when asked (malloc_trim)"
    )
    parser.add_argument(
        "--tracemalloc",
        action="store_true",
        help="Python's allocations after the first minute still alive at the end, by line",
    )
    args = parser.parse_args()
    from loopx_core.store.discovery import parse_target

    with tempfile.TemporaryDirectory(prefix="loopx-tui-soak-") as tmp:
        # Built in a process of its own: the board's process holds only the board.
        built = subprocess.run(
            [sys.executable, "-c", BOARD, tmp, str(REPO / "bench")],
            capture_output=True,
            text=True,
            cwd=REPO,
            check=True,
        )
        location = parse_target(built.stdout.strip().splitlines()[-1], "flag")
        print(
            f"LoopX board soak: {args.minutes:g} min, ~{args.rate:g} agent writes/s, keys in bursts of 8 a quarter of a second apart (load average {load_average()})"
        )
        types: list | None = [] if args.by_type else None
        traced: list | None = [] if args.tracemalloc else None
        samples = soak(location, args.minutes, args.rate, args.cards_every, types, traced, args.trim)
    first, last = samples[0], samples[-1]  # (both after a full collection when the soak lasted over a minute)
    per_k = 1000 / max(1, last[1] - first[1])
    print(
        f"from the first minute to the end: RSS {first[2]:.1f} -> {last[2]:.1f} MB ({(last[2] - first[2]) * per_k:+.2f} MB per 1,000 changes), "
        f"tracked objects {first[3]:,} -> {last[3]:,} ({(last[3] - first[3]) * per_k:+,.0f} per 1,000 changes) over {last[1] - first[1]:,} changes"
    )
    half = next(
        (s for s in samples[1:] if s[0] >= samples[-1][0] / 2), None
    )  # (the slope of the second half: a warm-up, or a leak?)
    if half is not None and last[1] > half[1]:
        print(
            f"the second half ({half[0]:.0f} s to the end): RSS {half[2]:.1f} -> {last[2]:.1f} MB ({(last[2] - half[2]) * 1000 / (last[1] - half[1]):+.2f} MB per 1,000 changes over {last[1] - half[1]:,} changes)"
        )
    if traced:
        stats = traced[0].statistics("lineno")
        total = sum(st.size for st in stats)
        print(
            f"Python's allocations after the first minute still alive at the end: {total / 1e6:.2f} MB in {sum(st.count for st in stats):,} blocks; the largest:"
        )
        for st in stats[:12]:
            frame = st.traceback[0]
            print(
                f"  {st.size / 1e3:9.1f} kB {st.count:8,}  {frame.filename.split('site-packages/')[-1].replace(str(REPO) + '/', '')}:{frame.lineno}"
            )
    if types and len(types) == 2:
        (cards_then, then), (cards_now, now) = types
        grown = now - then  # (a Counter's subtraction keeps only what grew)
        held = cards_now - cards_then
        print(
            f"cards the board holds: {cards_then:,} -> {cards_now:,} ({held:+,}); what grew, per new card held and in all:"
        )
        for name, n in grown.most_common(15):
            print(f"  {name:60s} {n:+9,}  ({n / held:+.1f} per card)" if held > 0 else f"  {name:60s} {n:+9,}")
        shrank = sum((then - now).values())
        print(
            f"  (every other type: {sum(grown.values()) - sum(n for _, n in grown.most_common(15)):+,}; types that shrank: -{shrank:,})"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
