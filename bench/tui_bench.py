"""TUI figures: how fast an agent's write shows on the board, and what a big
board costs to open — as a curve from 100 to 50,000 cards.

1. Latency: a separate agent process writes evidence (a real ``writeback``)
   at irregular intervals and notes the wall-clock time each commit returned;
   the board (headless, change poller on, default interval) notes when the
   card showing that write has been repainted. Prints median and p95
   (target p95 <= 150 ms), on a small board and on the big one.
2. Boards of 100, 1,000, 2,000, 10,000 and 50,000 cards (25 evidence
   entries a card up to 2,000 cards — 50,000 — then 10: 500,000 at 50,000
   cards), built in bulk: time from start to the first paint of the board (in
   a fresh process, imports included, and from the app's start) and the
   process's memory (RSS) once painted, each against the floor of a bare
   Textual app painted the same way, sampled between the runs (targets
   <= 0.5 s and <= 80 MB at 2,000 cards, <= 1 s and <= 120 MB at 50,000).
   The RSS curve is the memory-flat check: it must not grow with history.
3. On the 2,000- and 50,000-card boards, keystroke to screen: the key event
   is posted to the app as the terminal driver posts it, and the time ends
   at the first frame handed to the driver that shows the key's effect (the
   focus moved, the other view's cards drawn, the card's detail or the timeline drawn).
   Each frame is rendered to the terminal's bytes on the way (the headless
   driver skips that; a terminal pays it) and timestamped in ``App._display``.
   ``pilot.press`` is not used to time: it waits for idle in 20 ms sleeps
   (Textual 8.2.8 ``_press_keys``/``_wait.py``), so it measured the harness
   (~62 ms for a key on a bare app). The floor is the same key measured the
   same way on a bare Textual app whose one line of text the key changes.
   Switching view
   (target <= 100 ms), opening a card until its detail is drawn (<= 100 ms),
   the timeline of a card with 5,000 events until drawn (<= 300 ms),
   quitting (<= 300 ms), and keys while another process holds the SQLite
   write lock (<= 50 ms).
4. On the 50,000-card board: an agent's evidence, and a new card added by
   another process, until on screen (p95 <= 100 ms); and what counting every
   card costs a change (by owner in the owner view, by status in the status view).

Run: ``.venv/bin/python bench/tui_bench.py [--writes N] [--sizes 100,2000] [--skip-big]``.
Figures are printed; nothing here asserts on time.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

os.environ.setdefault("TEXTUAL_ANIMATIONS", "none")
REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

from common import compiled_env  # noqa: E402

from loopx_core.authority.keys import ephemeral  # noqa: E402

BENCH = ephemeral("bench")  # the bench board's person (an in-memory key)

WRITER = textwrap.dedent(
    """
    import random, sys, time
    from loopx_core.store.discovery import parse_target
    from loopx_core.store.backends import Store
    from loopx_core.ops.writeback import writeback
    db, card, n, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
    rnd = random.Random(seed)
    store = Store.open(parse_target(db, "flag"))
    time.sleep(1.0)  # let the board open first
    for i in range(1, n + 1):
        writeback(store, card, "bench-agent", {"summary": f"turn {i}", "next": f"step {i + 1}", "tokens": 100})
        print(i, repr(time.time()), flush=True)
        time.sleep(rnd.uniform(0.08, 0.25))
    store.close()
    """
)


NEW_CARDS = textwrap.dedent(
    """
    import random, sys, time
    from loopx_core.ops.cards import add_card
    from loopx_core.store.discovery import parse_target
    from loopx_core.store.backends import Store
    db, n, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    rnd = random.Random(seed)
    store = Store.open(parse_target(db, "flag"))
    time.sleep(1.0)  # let the board open first
    for i in range(1, n + 1):
        card = add_card(store, {"title": f"new card {i}", "priority": 0}, "agent:bench-agent")  # priority 0: first in Ready
        print(card.id, repr(time.time()), flush=True)
        time.sleep(rnd.uniform(0.08, 0.25))
    store.close()
    """
)


def percentile(values: list[float], pct: float) -> float:
    ordered = sorted(values)
    k = max(0, min(len(ordered) - 1, round(pct / 100 * (len(ordered) - 1))))
    return ordered[k]


def make_small_board(folder: Path):
    from loopx_core.ops import cards, claims
    from loopx_core.ops.agents import add_agent
    from loopx_core.ops.board import init_board
    from loopx_core.store.discovery import parse_target

    location = parse_target(str(folder / ".loopx" / "board.db"), "flag")
    store, _ = init_board(location, "latency bench", BENCH, pin=False)
    add_agent(store, {"id": "bench-agent", "can": []}, BENCH)
    for i in range(200):
        cards.add_card(store, {"title": f"card {i}", "priority": i % 5}, BENCH)
    claims.claim(store, 1, "bench-agent", 86400)
    store.close()
    return location, 1


def evidence_for(n_cards: int) -> int:
    return n_cards * (25 if n_cards <= 2000 else 10)


def make_big_board(folder: Path, n_cards: int = 2000, n_evidence: int = 50_000):
    """Rows written in bulk (the operators would take minutes for 50k turns);
    the shapes are the operators' own."""
    from loopx_core.ops.agents import add_agent
    from loopx_core.ops.board import init_board
    from loopx_core.rules import clock
    from loopx_core.store.discovery import parse_target
    from loopx_core.store.models import Card, Event, Evidence

    location = parse_target(str(folder / ".loopx" / "board.db"), "flag")
    store, _ = init_board(location, "big board", BENCH, pin=False)
    agents = [f"agent-{i}" for i in range(8)]
    for a in agents + ["bench-agent"]:
        add_agent(store, {"id": a, "can": []}, BENCH)
    rnd = random.Random(7)
    now = clock.now()
    statuses = ["ready"] * 5 + [
        "backlog",
        "active",
        "active",
        "waiting",
        "paused",
        "blocked",
        "done",
        "done",
        "done",
        "done",
        "cancelled",
    ]
    per_card = n_evidence // n_cards

    def body():
        rows = []
        for i in range(n_cards):
            # Card 1, the writers', is first in Active; new cards (priority 0) come first in Ready: on screen.
            status = "active" if i == 0 else rnd.choice(statuses)
            holder = (
                "bench-agent" if i == 0 else (rnd.choice(agents) if status in ("active", "waiting", "paused") else None)
            )
            rows.append(
                {
                    "title": f"Card {i}: "
                    + rnd.choice(["fix", "add", "refactor", "test", "ship"])
                    + " "
                    + rnd.choice(["login", "billing", "search", "cache", "docs"]),
                    "status": status,
                    "priority": 0 if i == 0 else rnd.randint(1, 4),
                    "assignee": holder,
                    "needs": [],
                    "todos": [],
                    "lease_holder": holder,
                    "lease_token": 1 if holder else None,
                    "fence": 1 if holder else 0,
                    "lease_expires": (now + 86400) if status == "active" else None,
                    "lease_seconds": 86400 if holder else None,
                    "paused_reason": "budget" if status == "paused" else None,
                    "blocked_reason": "gate rejected" if status == "blocked" else None,
                    "evidence_count": per_card,
                    "used_turns": per_card,
                    "used_tokens": per_card * 1500,
                    "max_turns": 100 if i % 3 == 0 else None,
                    "created_at": now - 86400 + i,
                    "updated_at": now - 3600 + i,
                    "done_at": (now - 100 + i) if status == "done" else None,
                }
            )
        for chunk in range(0, len(rows), 500):
            Card.insert_many(rows[chunk : chunk + 500]).execute()
        events = [
            {
                "at": now,
                "actor": "human:bench",
                "card": i + 1,
                "kind": "card_added",
                "data": {"title": rows[i]["title"]},
            }
            for i in range(n_cards)
        ]
        # Each held card's lease as the log grants it (the operators hold a lease row to its claim: ops/leases.check_logged).
        events += [
            {
                "at": now,
                "actor": f"agent:{row['lease_holder']}",
                "card": i + 1,
                "kind": "claimed",
                "data": {"agent": row["lease_holder"], "token": 1},
            }
            for i, row in enumerate(rows)
            if row["lease_holder"]
        ]
        evidence = []
        for n in range(n_evidence):
            card = n % n_cards + 1
            evidence.append(
                {
                    "card": card,
                    "agent": agents[n % len(agents)],
                    "summary": f"turn {n}: did a thing on card {card}",
                    "artifacts": [{"path": f"src/file{n % 97}.py", "size": 1200 + n % 500, "sha256": f"{n:064x}"}],
                    "todos_added": [],
                    "todos_done": [],
                    "tokens": 1500,
                    "tokens_in": 1000,
                    "tokens_out": 500,
                    "usd": 0.01,
                    "source": "cli",
                    "payload_hash": f"{n:064x}",
                    "created_at": now - 3600 + n * 0.05,
                }
            )
            events.append(
                {
                    "at": now,
                    "actor": f"agent:{agents[n % len(agents)]}",
                    "card": card,
                    "kind": "evidence_added",
                    "data": {"evidence": f"E-{n + 1}"},
                }
            )
        for chunk in range(0, len(evidence), 1000):
            Evidence.insert_many(evidence[chunk : chunk + 1000]).execute()
        for chunk in range(0, len(events), 2000):
            Event.insert_many(events[chunk : chunk + 2000]).execute()

    store.run(body)
    store.close()
    return location, 1


def add_long_card(location, n_events: int = 5000) -> int:
    """One more card with a long history: 5,000 events (turns, gates asked and
    answered, pauses and budget raises, a handoff) over ten days."""
    from loopx_core.rules import clock
    from loopx_core.store.backends import Store
    from loopx_core.store.discovery import parse_target
    from loopx_core.store.models import Card, Event, Evidence, Gate

    store = Store.open(parse_target(str(location.path), "flag"))
    now = clock.now()
    start = now - 10 * 86400

    def body():
        card = Card.create(
            title="A long loop",
            status="active",
            priority=0,
            assignee="bench-agent",
            needs=[],
            todos=[],
            lease_holder="bench-agent",
            lease_token=1,
            fence=1,
            lease_expires=now + 86400,
            lease_seconds=86400,
            created_at=start,
            updated_at=now,
        )
        events, evidence = (
            [
                {"at": start, "actor": "human:bench", "card": card.id, "kind": "card_added", "data": {}},
                {
                    "at": start + 60,
                    "actor": "agent:bench-agent",
                    "card": card.id,
                    "kind": "claimed",
                    "data": {"agent": "bench-agent", "token": 1},
                },
            ],
            [],
        )
        step = (now - start) / n_events
        i = 0
        while len(events) < n_events:
            at = start + 120 + i * step * 4
            i += 1
            evidence.append(
                {
                    "card": card.id,
                    "agent": "bench-agent",
                    "summary": f"turn {i}",
                    "artifacts": [],
                    "todos_added": [],
                    "todos_done": [],
                    "tokens": 1200,
                    "tokens_in": 800,
                    "tokens_out": 400,
                    "usd": 0.01,
                    "source": "cli",
                    "payload_hash": f"{i:064x}",
                    "created_at": at,
                }
            )
            events.append(
                {"at": at, "actor": "agent:bench-agent", "card": card.id, "kind": "evidence_added", "data": {}}
            )
            if i % 10 == 0:
                gate = Gate.create(
                    card=card.id,
                    agent="bench-agent",
                    kind="permission",
                    question=f"push {i}?",
                    scope="git:push",
                    options=[],
                    status="approved",
                    answer="approved",
                    answered_by="human:bench",
                    created_at=at + step,
                    answered_at=at + 3 * step,
                )
                events.append(
                    {
                        "at": at + step,
                        "actor": "agent:bench-agent",
                        "card": card.id,
                        "kind": "gate_asked",
                        "data": {"gate": f"G-{gate.id}"},
                    }
                )
                events.append(
                    {
                        "at": at + 3 * step,
                        "actor": "human:bench",
                        "card": card.id,
                        "kind": "gate_answered",
                        "data": {"answer": "approved"},
                    }
                )
            if i % 50 == 0:
                events.append(
                    {
                        "at": at + 2 * step,
                        "actor": "system",
                        "card": card.id,
                        "kind": "paused",
                        "data": {"reason": "budget"},
                    }
                )
                events.append(
                    {
                        "at": at + 3.5 * step,
                        "actor": "human:bench",
                        "card": card.id,
                        "kind": "budget_raised",
                        "data": {"resumed": "active"},
                    }
                )
        for chunk in range(0, len(evidence), 1000):
            Evidence.insert_many(evidence[chunk : chunk + 1000]).execute()
        for chunk in range(0, len(events), 2000):
            Event.insert_many(events[chunk : chunk + 2000]).execute()
        card.evidence_count = len(evidence)
        card.save()
        return card.id

    card_id = store.run(body)
    store.close()
    return card_id


KEYS = textwrap.dedent(
    """
    import asyncio, json, statistics, subprocess, sys, time
    sys.path.insert(0, sys.argv[2])
    from textual import events
    from textual.keys import _character_to_key, _get_unicode_name_from_key
    from loopx_core.store.discovery import parse_target
    from loopx_tui.app import LoopxApp

    db, long_card, lock_script = sys.argv[1], int(sys.argv[3]), sys.argv[4]
    out = {}

    class Frames:
        # Keystroke -> screen, without the test harness's waits. A key is
        # posted to the app as the driver posts it (no pilot.press: that sleeps
        # in 20 ms steps until idle); every frame the app hands the driver is
        # rendered to the terminal's bytes (what the headless driver skips and
        # a terminal pays) and timestamped; the key's time ends at the first
        # frame after which ``done()`` holds -- the frame that shows the key.
        def __init__(self, app):
            self.app, self.waiting = app, []
            display, console = app._display, app.console

            def timed_display(screen, renderable):
                display(screen, renderable)
                if renderable is None or app._batch_count:
                    return
                if hasattr(renderable, "render_segments"):
                    renderable.render_segments(console)
                now = time.perf_counter()
                for item in list(self.waiting):
                    if item[0]():
                        self.waiting.remove(item)
                        item[1].set_result(now)

            app._display = timed_display

        def fingerprint(self):
            app = self.app
            # (the selected card: the focused column and its cursor)
            return (id(app.screen), id(app.focused), getattr(app.focused, "cursor", None), getattr(getattr(app, "model", None), "mode", None), getattr(app, "flips", None))

        async def key(self, pilot, key, done=None, timeout=60.0):
            await pilot.pause()  # settle (not timed)
            before = self.fingerprint()
            done = done or (lambda: self.fingerprint() != before)
            fut = asyncio.get_running_loop().create_future()
            self.waiting.append((done, fut))
            name = _character_to_key(key) if len(key) == 1 and not key.isalnum() else key
            try:
                import unicodedata
                char = unicodedata.lookup(_get_unicode_name_from_key(name))
            except KeyError:
                char = name if len(name) == 1 else None
            t = time.perf_counter()
            self.app.post_message(events.Key(name, char))
            return (await asyncio.wait_for(fut, timeout) - t) * 1000

        async def call(self, pilot, fn, done, timeout=60.0):
            await pilot.pause()
            fut = asyncio.get_running_loop().create_future()
            self.waiting.append((done, fut))
            t = time.perf_counter()
            fn()
            return (await asyncio.wait_for(fut, timeout) - t) * 1000

    def screen_named(app, name):
        return lambda: type(app.screen).__name__ == name and getattr(app.screen, "loads", 0) >= 1

    async def floor():
        # The same key, measured the same way, on a bare Textual app (one line
        # of text that the key changes): what a key costs here right now.
        from textual.app import App
        from textual.widgets import Static

        class Bare(App):
            BINDINGS = [("v", "flip", "flip")]
            flips = 0

            def compose(self):
                yield Static("bare")

            def action_flip(self):
                self.flips += 1
                self.query_one(Static).update("flipped" if self.flips % 2 else "bare")

        bare = Bare()
        async with bare.run_test(size=(160, 48)) as pilot:
            frames = Frames(bare)
            await pilot.pause()
            out["floor_ms"] = [await frames.key(pilot, "v") for _ in range(8)]

    async def main():
        await floor()
        app = LoopxApp(parse_target(db, "flag"), background=False)
        async with app.run_test(size=(160, 48)) as pilot:
            frames = Frames(app)
            await app.loaded.wait()
            await app.reads_idle()  # the other view's first cards and the history check, done after the first paint
            await pilot.pause()
            def view_drawn(mode):
                # the other view is on screen with every card of its columns laid out (drawn in that frame)
                board = app.board_screen.board
                return lambda: app.model.mode == mode and all(column.body.region.height for column in board.columns.values() if column.cards)

            views = []
            for _ in range(8):  # (an even number: the status view again at the end)
                mode = "owner" if app.model.mode == "status" else "status"
                views.append(await frames.key(pilot, "v", view_drawn(mode)))
            out["first_view_ms"], out["view_ms"] = views[0], views[1:]
            opens = []
            ready = app.board_screen.board.columns["ready"].card_ids()
            for card_id in [long_card] + ready[:5]:
                await pilot.pause()
                shown = lambda: type(app.screen).__name__ == "CardScreen" and app.screen.card_id == card_id and app.screen.loads >= 1  # noqa: E731
                if card_id == long_card:
                    # (not on the board's pages: read, then opened, as the palette does)
                    out["open_long_ms"] = await frames.call(pilot, lambda: app.open_card(card_id), shown)
                    out["timeline_ms"] = await frames.key(pilot, "t", screen_named(app, "TimelineScreen"))
                    out["timeline_events"] = len(app.screen.trajectory.turns)
                    await frames.key(pilot, "escape")
                else:
                    app.board_screen.select_card(card_id)
                    opens.append(await frames.key(pilot, "enter", shown))
                await frames.key(pilot, "escape")
            out["open_ms"] = opens
            out["board_timeline_ms"] = await frames.key(pilot, "t", screen_named(app, "TimelineScreen"))
            await frames.key(pilot, "escape")
            holder = subprocess.Popen([sys.executable, "-c", lock_script, db], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
            assert holder.stdout.readline().strip() == "locked"
            app.board_screen.select_card(app.board_screen.board.columns["ready"].card_ids()[0])
            app.post_message(events.Key("r", "r"))  # a person's action: it waits for the lock in its worker while the keys below are timed
            locked = []
            keys = ("j", "j", "k", "l", "h", "v", "v", "j", "k", "slash", "escape", "question_mark", "escape")
            for key in keys:
                locked.append(await frames.key(pilot, key))
            card_id = app.board_screen.selected_card().id
            locked.append(await frames.key(pilot, "enter", lambda: type(app.screen).__name__ == "CardScreen" and app.screen.card_id == card_id and app.screen.loads >= 1))
            await frames.key(pilot, "escape")
            out["locked_ms"] = locked
            out["locked_keys"] = [*keys, "enter"]
            holder.stdin.write(chr(10)); holder.stdin.flush(); holder.wait(30)
            await pilot.pause()
            t_quit = time.perf_counter()
            app.post_message(events.Key("q", "q"))
            while app.is_running:
                await asyncio.sleep(0.001)
        out["quit_ms"] = (time.perf_counter() - t_quit) * 1000
        print(json.dumps(out))

    asyncio.run(main())
    """
)

WRITE_LOCK = textwrap.dedent(
    """
    import sqlite3, sys
    con = sqlite3.connect(sys.argv[1], isolation_level=None, timeout=30)
    con.execute("BEGIN IMMEDIATE")
    con.execute("UPDATE setting SET value = value WHERE key = 'objective'")
    print("locked", flush=True)
    sys.stdin.readline()
    con.execute("COMMIT")
    """
)


def keystrokes(location, long_card: int) -> dict:
    proc = subprocess.run(
        [sys.executable, "-c", KEYS, str(location.path), str(REPO), str(long_card), WRITE_LOCK],
        capture_output=True,
        text=True,
        cwd=REPO,
        env=dict(compiled_env(), TEXTUAL_ANIMATIONS="none"),
        timeout=600,
    )
    if proc.returncode != 0:
        raise SystemExit(proc.stderr[-3000:])
    return json.loads(proc.stdout.strip().splitlines()[-1])


def report_keys(k: dict) -> None:
    med = lambda xs: statistics.median(xs)  # noqa: E731
    floor = med(k["floor_ms"])
    print(f"floor: a key on a bare Textual app (one line of text), same process, same load: median {floor:.0f} ms")
    print(
        f"first switch to the owner view (v: its columns built hidden after the first paint, shown now) until its cards are drawn: {k['first_view_ms']:.0f} ms"
    )
    print(
        f"switching view (v) until the other view's cards are drawn: median {med(k['view_ms']):.0f} ms ({med(k['view_ms']) / floor:.1f}x the floor), max {max(k['view_ms']):.0f} ms  (target <= 100 ms)"
    )
    print(f"opening a card not on the board's pages (read first) until its detail is drawn: {k['open_long_ms']:.0f} ms")
    print(
        f"opening a card until its detail is drawn: median {med(k['open_ms']):.0f} ms ({med(k['open_ms']) / floor:.1f}x the floor), max {max(k['open_ms']):.0f} ms  (target <= 100 ms)"
    )
    print(
        f"timeline of a card with 5,000 events ({k['timeline_events']:,} turns): {k['timeline_ms']:.0f} ms  (target <= 300 ms)"
    )
    print(f"timeline of the whole board (every event and evidence entry): {k['board_timeline_ms']:.0f} ms")
    print(
        f"keys while another process holds the write lock: median {med(k['locked_ms']):.0f} ms ({med(k['locked_ms']) / floor:.1f}x the floor), max {max(k['locked_ms']):.0f} ms over {len(k['locked_ms'])} keys  (target <= 50 ms)"
    )
    slowest = sorted(zip(k["locked_ms"], k["locked_keys"]), reverse=True)[:3]
    print("  slowest under the lock: " + " · ".join(f"{key} {ms:.0f} ms" for ms, key in slowest))
    print(f"quit (q until the app has stopped): {k['quit_ms']:.0f} ms  (target <= 300 ms)")


def measure_latency(location, card_id: int, writes: int, size=(160, 48)) -> list[float]:
    from loopx_tui.app import LoopxApp

    seen: dict[int, float] = {}
    committed: dict[int, float] = {}

    class BenchApp(LoopxApp):
        def on_board_changed(self, message) -> None:
            super().on_board_changed(message)
            card = self.model.cards.get(card_id)
            if card is not None and card.evidence_count not in seen:
                count = card.evidence_count

                def painted(count=count) -> None:
                    seen.setdefault(count, time.time())

                self.board_screen.call_after_refresh(painted)

    async def run() -> None:
        app = BenchApp(location, background=True, person=BENCH)
        async with app.run_test(size=size) as pilot:
            await app.loaded.wait()
            await app.reads_idle()  # after the open-time history check (a process of its own on a long history)
            await pilot.pause()
            base = app.model.cards[card_id].evidence_count
            proc = subprocess.Popen(
                [sys.executable, "-c", WRITER, str(location.path), str(card_id), str(writes), "1"],
                stdout=subprocess.PIPE,
                text=True,
                cwd=REPO,
            )
            loop = asyncio.get_running_loop()
            lines = await loop.run_in_executor(None, proc.communicate)
            for line in lines[0].splitlines():
                i, t = line.split()
                committed[base + int(i)] = float(t)
            deadline = time.monotonic() + 5
            while len(seen) < writes and time.monotonic() < deadline:
                await asyncio.sleep(0.05)

    asyncio.run(run())
    return [(seen[k] - committed[k]) * 1000 for k in committed if k in seen]


def measure_new_cards(location, writes: int, size=(160, 48)) -> list[float]:
    """A card added by another process until its column shows it (its card,
    or in "+N more" once a screenful of new cards is above it), in ms."""
    from loopx_tui.app import LoopxApp

    seen: dict[int, float] = {}
    committed: dict[int, float] = {}

    class BenchApp(LoopxApp):
        def on_board_changed(self, message) -> None:
            super().on_board_changed(message)
            ready = self.board_screen.board.columns.get("ready") if self.board_screen is not None else None
            held = (
                {c.id for c in ready.cards} if ready is not None else set()
            )  # mounted, or counted in "+N more" below them
            for card in message.delta.cards:
                if card.id not in seen and card.id in held:
                    self.board_screen.call_after_refresh(lambda cid=card.id: seen.setdefault(cid, time.time()))

    async def run() -> None:
        app = BenchApp(location, background=True, person=BENCH)
        async with app.run_test(size=size) as pilot:
            await app.loaded.wait()
            await app.reads_idle()
            await pilot.pause()
            proc = subprocess.Popen(
                [sys.executable, "-c", NEW_CARDS, str(location.path), str(writes), "2"],
                stdout=subprocess.PIPE,
                text=True,
                cwd=REPO,
            )
            loop = asyncio.get_running_loop()
            lines = await loop.run_in_executor(None, proc.communicate)
            for line in lines[0].splitlines():
                cid, t = line.split()
                committed[int(cid)] = float(t)
            deadline = time.monotonic() + 5
            while len(seen) < writes and time.monotonic() < deadline:
                await asyncio.sleep(0.05)

    asyncio.run(run())
    return [(seen[k] - committed[k]) * 1000 for k in committed if k in seen]


def owner_count(location, runs: int = 9) -> tuple[float, float]:
    """(median ms of the count of every card by owner, by status), each in a
    read of its own: what a change costs the owner view (by owner) and the
    status view (by status) on top of reading the changed cards."""
    from loopx_core.ops import board_pages
    from loopx_core.store.backends import Store

    store = Store.open(location)
    try:
        out = []
        for by_owner in (True, False):
            ms = []
            for _ in range(runs):
                with store.read():
                    t = time.perf_counter()
                    board_pages.tally(by_owner=by_owner)
                    ms.append((time.perf_counter() - t) * 1000)
            out.append(statistics.median(ms))
        return out[0], out[1]
    finally:
        store.close()


BARE_PAINT = textwrap.dedent(
    """
    import time
    T_PROCESS = time.perf_counter()
    import asyncio, json
    from textual.app import App
    from textual.widgets import Static

    marks = {}

    class Bare(App):
        def compose(self):
            yield Static("bare")

        def on_mount(self):
            self.call_after_refresh(lambda: marks.setdefault("painted", time.perf_counter()))

        def _display(self, screen, renderable):
            super()._display(screen, renderable)
            if renderable is not None and hasattr(renderable, "render_segments"):
                renderable.render_segments(self.console)  # (what a terminal is sent; headless skips it)
                marks.setdefault("frame", time.perf_counter())

    def rss_mb():
        for line in open("/proc/self/status"):
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024

    async def main():
        async with Bare().run_test(size=(160, 48)) as pilot:
            while "painted" not in marks:
                await asyncio.sleep(0.005)
            print(json.dumps({"from_process": marks["painted"] - T_PROCESS, "frame": marks["frame"] - T_PROCESS, "rss_mb": rss_mb()}))

    asyncio.run(main())
    """
)


PAINT = textwrap.dedent(
    """
    import time
    T_PROCESS = time.perf_counter()
    import asyncio, json, os, sys
    sys.path.insert(0, sys.argv[2])
    from loopx_core.store.discovery import parse_target
    from loopx_tui.app import LoopxApp
    from loopx_tui.screens.board import BoardScreen

    marks = {}
    original = BoardScreen.on_mount

    def on_mount(self):
        original(self)
        self.call_after_refresh(lambda: marks.setdefault("painted", time.perf_counter()))

    BoardScreen.on_mount = on_mount

    def first_frame(app):
        # The first frame handed to the driver that shows the board's cards.
        display = app._display

        def timed(screen, renderable):
            display(screen, renderable)
            if renderable is not None and hasattr(renderable, "render_segments"):
                renderable.render_segments(app.console)  # (what a terminal is sent; headless skips it)
                board = app.board_screen
                if board is not None and screen is board and any(c.body.region.height for c in board.board.columns.values() if c.cards):
                    marks.setdefault("frame", time.perf_counter())

        app._display = timed

    def rss_mb(field="VmRSS"):
        for line in open("/proc/self/status"):
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
        return float("nan")

    async def main():
        t_app = time.perf_counter()
        app = LoopxApp(parse_target(sys.argv[1], "flag"), background=False)
        first_frame(app)
        async with app.run_test(size=(160, 48)) as pilot:
            while "painted" not in marks or "frame" not in marks:
                await asyncio.sleep(0.005)
            cards = len(app.model.cards)  # the cards read to paint (not the board's)
            widgets = len(app.board_screen.query("*"))  # (the board's, all told)
            await pilot.pause()
            print(json.dumps({"from_process": marks["painted"] - T_PROCESS, "frame": marks["frame"] - T_PROCESS, "from_app": marks["painted"] - t_app, "rss_mb": rss_mb(), "peak_mb": rss_mb("VmHWM"), "cards": cards, "widgets": widgets}))

    asyncio.run(main())
    """
)


def _paint(script: str, *args: str) -> dict:
    proc = subprocess.run(
        [sys.executable, "-c", script, *args],
        capture_output=True,
        text=True,
        cwd=REPO,
        env=dict(compiled_env(), TEXTUAL_ANIMATIONS="none"),
        timeout=120,
    )
    if proc.returncode != 0:
        raise SystemExit(proc.stderr)
    return json.loads(proc.stdout.strip().splitlines()[-1])


def first_paint(location, runs: int = 3) -> tuple[list[dict], list[dict]]:
    """(the board's paints, the bare Textual app's), sampled interleaved."""
    board, bare = [], []
    for _ in range(runs):
        bare.append(_paint(BARE_PAINT))
        board.append(_paint(PAINT, str(location.path), str(REPO)))
    return board, bare


def report_paint(n_cards: int, n_evidence: int, paints: list[dict], bare: list[dict]) -> dict:
    med = statistics.median
    row = {
        "cards": n_cards,
        "process_ms": med(p["from_process"] for p in paints) * 1000,
        "app_ms": med(p["from_app"] for p in paints) * 1000,
        "rss_mb": med(p["rss_mb"] for p in paints),
        "peak_mb": max(p["peak_mb"] for p in paints),
        "floor_ms": med(b["from_process"] for b in bare) * 1000,
        "frame_ms": med(p["frame"] for p in paints) * 1000,
        "floor_frame_ms": med(b["frame"] for b in bare) * 1000,
        "floor_mb": med(b["rss_mb"] for b in bare),
        "widgets": paints[0]["widgets"],
        "in_hand": paints[0]["cards"],
    }
    print(
        f"first frame with the board's cards, {n_cards:,} cards / {n_evidence:,} evidence: {row['frame_ms']:.0f} ms from process start "
        f"({row['frame_ms'] / row['floor_frame_ms']:.1f}x a bare Textual app's first frame, {row['floor_frame_ms']:.0f} ms)"
    )
    print(
        f"settled (no layout pending), {n_cards:,} cards / {n_evidence:,} evidence: {row['process_ms']:.0f} ms from process start "
        f"({row['process_ms'] / row['floor_ms']:.1f}x a bare Textual app's {row['floor_ms']:.0f} ms), {row['app_ms']:.0f} ms from app start · "
        f"RSS {row['rss_mb']:.0f} MB (peak {row['peak_mb']:.0f}, bare app {row['floor_mb']:.0f}) · {row['in_hand']} cards read, {row['widgets']} widgets"
    )
    return row


def report_latency(label: str, ms: list[float], writes: int) -> None:
    if not ms:
        print(f"{label}: no writes seen on screen")
        return
    print(
        f"{label}: {len(ms)}/{writes} writes seen · median {statistics.median(ms):.0f} ms · p95 {percentile(ms, 95):.0f} ms · max {max(ms):.0f} ms  (target p95 <= 100 ms at 50,000 cards)"
    )


def load_average() -> str:
    try:
        return " ".join(open("/proc/loadavg").read().split()[:3])
    except OSError:
        return "?"


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--writes", type=int, default=60)
    parser.add_argument("--sizes", default="100,1000,2000,10000,50000", help="card counts of the boards to open")
    parser.add_argument("--skip-big", action="store_true", help="only the 200-card latency")
    parser.add_argument("--skip-keys", action="store_true", help="no keystrokes (first paint, memory and latency only)")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="loopx-tui-bench-") as tmp:
        tmp = Path(tmp)
        print(f"LoopX TUI bench (load average {load_average()})")
        location, card = make_small_board(tmp / "small")
        report_latency("write -> screen, 200-card board", measure_latency(location, card, args.writes), args.writes)
        if args.skip_big:
            return 0
        rows = []
        for n_cards in [int(x) for x in args.sizes.split(",")]:
            n_evidence = evidence_for(n_cards)
            t = time.perf_counter()
            big, card = make_big_board(tmp / f"big{n_cards}", n_cards, n_evidence)
            print(
                f"board built: {n_cards:,} cards, {n_evidence:,} evidence ({time.perf_counter() - t:.1f} s, {big.path.stat().st_size / 1e6:.0f} MB) · load {load_average()}"
            )
            rows.append(report_paint(n_cards, n_evidence, *first_paint(big)))
            if n_cards in (2000, 50000):
                long_card = add_long_card(big)
                if not args.skip_keys:
                    print(f"-- keys on {n_cards:,} cards (load {load_average()})")
                    report_keys(keystrokes(big, long_card))
                report_latency(
                    f"write -> screen, {n_cards:,}-card board", measure_latency(big, card, args.writes), args.writes
                )
                if n_cards == 50000:
                    by_owner, by_status = owner_count(big)
                    print(
                        f"count of every card by owner (a change in the owner view): median {by_owner:.1f} ms · by status {by_status:.1f} ms  (schema v5: from an index; 112 ms by owner before)"
                    )
                    report_latency(
                        f"new card (another process) -> screen, {n_cards:,}-card board",
                        measure_new_cards(big, args.writes),
                        args.writes,
                    )
            big.path.unlink()
        if len(rows) > 1:
            first, last = rows[0], rows[-1]
            print(
                "curve (cards: first paint ms from process / from app, RSS MB):",
                "  ".join(
                    f"{r['cards']:,}: {r['process_ms']:.0f}/{r['app_ms']:.0f} ms, {r['rss_mb']:.0f} MB" for r in rows
                ),
            )
            print(
                f"memory flat: RSS at {last['cards']:,} cards is {last['rss_mb'] / first['rss_mb']:.2f}x the RSS at {first['cards']:,} ({last['rss_mb'] - first['rss_mb']:+.0f} MB for {last['cards'] - first['cards']:,} more cards)"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
