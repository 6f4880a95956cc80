"""A team board's writers (DESIGN §3, store/pg.py): a turn's writes to one card
do not wait for writes to another card, while a write that has the board
alone still waits for them, and the log keeps one gap-free order."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from tests.conftest import Board

pytestmark = pytest.mark.usefixtures("pg_server")


@pytest.fixture
def team_board(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, pg_url: str) -> Board:
    root = tmp_path / "project"
    root.mkdir()
    b = Board(root, monkeypatch, pg_url)
    b.ok("init", "--objective", "writers", "--test-board")
    for agent in ("a1", "a2", "a3"):
        b.ok("agent", "add", agent)
    for title in ("one", "two", "three"):
        b.ok("card", "add", title)
    for n, agent in ((1, "a1"), (2, "a2"), (3, "a3")):
        b.ok("claim", f"LX-{n}", agent=agent)
    return b


def _answer(proc: subprocess.CompletedProcess) -> tuple[int, dict]:
    return proc.returncode, json.loads(proc.stdout.strip().splitlines()[-1]) if proc.stdout.strip() else {}


@pytest.mark.parametrize("writes", ["apart", "serial"])
def test_a_turn_on_one_card_does_not_wait_for_a_write_in_progress_on_another(
    team_board: Board, monkeypatch: pytest.MonkeyPatch, writes: str
):
    """LX-1's write is in progress (its card locked, its Python running, as a
    turn's writeback is between statements). A writeback on LX-2 from another
    process goes through at once; LX-1's own heartbeat and a card added (a
    write that has the board alone) wait for it. ``serial`` is the code
    before (every write had the board alone): there LX-2's waits too."""
    from loopx_core.ops import claims
    from loopx_core.store import events

    if writes == "serial":
        monkeypatch.setenv("LOOPX_PG_WRITES", "serial")
    b = team_board
    store = b.store()
    held, release = threading.Event(), threading.Event()
    outcome: list[object] = []

    def lx1_write() -> None:
        held.set()
        assert release.wait(120), "the test never let LX-1's write finish"
        outcome.append(claims.heartbeat(store, 1, "a1").status)

    def hold() -> None:
        try:
            store.run(lx1_write, card=1)
        except BaseException as exc:  # (said by the assertion below)
            outcome.append(exc)

    holder = threading.Thread(target=hold)
    holder.start()
    try:
        assert held.wait(60)
        short = {"LOOPX_LOCK_WAIT": "2"}
        beside = b.spawn("--json", "writeback", "LX-2", "--summary", "beside", "--turn-id", "t2", agent="a2", env=short)
        same_card = b.spawn("--json", "heartbeat", "LX-1", agent="a1", env=short)
        whole_board = b.spawn("--json", "card", "add", "four", env=short)
    finally:
        release.set()
        holder.join(120)
    assert outcome == ["active"], outcome

    code, answer = _answer(beside)
    if writes == "apart":
        assert code == 0, (answer, beside.stderr)
    else:
        assert code == 5 and answer["error"]["code"] == "lock_wait", (answer, beside.stderr)
    for waited in (same_card, whole_board):
        code, answer = _answer(waited)
        assert code == 5 and answer["error"]["code"] == "lock_wait", (answer, waited.stderr)

    # One order: LX-2's evidence committed first, so it comes first in the log.
    with store.read():
        log = events.since(0)
    store.close()
    assert [e.seq for e in log] == list(range(1, len(log) + 1))
    kinds = [(e.kind, e.card) for e in log]
    if writes == "apart":
        assert kinds.index(("evidence_added", 2)) < kinds.index(("heartbeat", 1))
    assert b.ok("verify")["verify"]["ok"] is True


@pytest.mark.slow
def test_turns_on_many_cards_beside_whole_board_writes_keep_one_gap_free_log(team_board: Board, tmp_path: Path):
    """Three agents' turns on their own cards, an agent adding cards and a
    reader following "events since the last seq" run at once as processes:
    every write lands once, and the reader saw every event, in order, with
    no seq committed behind one it had already seen."""
    import os

    b = team_board
    stop, seen = tmp_path / "stop", tmp_path / "seen"
    env = dict(os.environ, LOOPX_DB=b.url, WRITERS_STOP=str(stop))
    env.pop("LOOPX_AGENT", None)

    def start(*argv: str) -> subprocess.Popen:
        return subprocess.Popen(
            [sys.executable, "-m", "tests.pg.writers", *argv], cwd=Path(__file__).parents[2], env=env
        )

    reader = start("read", str(seen))
    rounds = 12
    writers = [start("turns", str(n), f"a{n}", str(rounds)) for n in (1, 2, 3)] + [start("cards", str(rounds))]
    try:
        codes = [w.wait(300) for w in writers]
    finally:
        stop.touch()
        reader.wait(120)
    assert codes == [0, 0, 0, 0]
    assert reader.returncode == 0

    order = [int(s) for s in seen.read_text().split()]
    store = b.store()
    try:
        last = store.max_seq()
        counts = dict(store.query('SELECT "card_id", COUNT(*) FROM "evidence" GROUP BY "card_id"'))
        cards = store.query('SELECT COUNT(*) FROM "card"')[0][0]
    finally:
        store.close()
    assert order == list(range(1, last + 1)), "the reader missed an event or saw one out of order"
    assert counts == {1: rounds, 2: rounds, 3: rounds}
    assert cards == 3 + rounds
    assert b.ok("verify")["verify"]["ok"] is True
