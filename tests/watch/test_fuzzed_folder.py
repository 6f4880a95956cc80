"""A folder of fuzzed documents and streams (#30), seeded and bounded: three
passes of a real `loopx watch --once`. Each refused document is one
`ingest_error` event (a stream at most STREAM_REFUSALS + 1), an unchanged
folder adds none on the next pass, nothing is "retrying", and every byte the
watcher prints is terminal-safe whatever the file names hold."""

from __future__ import annotations

import json
import random

from loopx_core.watch.ingest import STREAM_REFUSALS

SEED = 30
DOCS, STREAMS = 120, 6
NAMES = [
    "plain",
    "tab\there",
    "nl\nforged line",
    "esc\x1b]0;title\x07",
    "csi\x1b[31mred",
    "bell\x07",
    "bidi\u202eevil",
    "cr\rback",
]


def _mutate(rng: random.Random, text: str) -> str:
    roll = rng.random()
    if roll < 0.2:
        return "[" * rng.choice([10, 5000, 200000])  # nested deeper than the decoder allows
    if roll < 0.35:
        return text[: rng.randrange(len(text))]  # cut short
    if roll < 0.5:
        i = rng.randrange(len(text))
        return text[:i] + chr(rng.randrange(0, 0x3000)) + text[i + 1 :]
    if roll < 0.6:
        return json.dumps({"card": "LX-1", "agent": "w1", "summary": "x", "todos_added": [[[["deep"]]]] * 3})
    if roll < 0.7:
        return '{"card": "LX-1", "agent": "w1", "summary": "n", "tokens": 1' + "0" * 5000 + "}"
    if roll < 0.8:
        return json.dumps([1, 2, 3])
    return text


def _fill(folder, rng: random.Random) -> None:
    good = json.dumps({"card": "LX-1", "agent": "w1", "summary": "ok"})
    for n in range(DOCS):
        name = f"{n}-{rng.choice(NAMES)}.loopx.json"
        (folder / name).write_bytes(_mutate(rng, good).encode("utf-8", "surrogatepass"))
    for n in range(STREAMS):
        lines = [_mutate(rng, good).replace("\n", " ") for _ in range(rng.randrange(50, 400))]
        (folder / f"s{n}-{rng.choice(NAMES)}.loopx.jsonl").write_bytes(
            ("\n".join(lines) + "\n").encode("utf-8", "surrogatepass")
        )


def _errors(board) -> int:
    found, since = 0, 0
    while True:
        page = board.ok("events", "--since", str(since), "--limit", "1000")
        found += sum(1 for e in page["events"] if e["kind"] == "ingest_error")
        if page["next_since"] is None:
            return found
        since = page["next_since"]


def test_a_fuzzed_folder_is_refused_once_and_printed_terminal_safe(project):
    _fill(project.root / "out", random.Random(SEED))
    counts = []
    for _ in range(3):
        res = project.spawn("watch", "--once", timeout=300)
        assert res.returncode == 0, res.stderr[-2000:]
        assert "retrying" not in res.stderr, res.stderr[-2000:]
        for text in (res.stdout, res.stderr):
            assert not any(c in text for c in "\x1b\x07\r\u202e"), [
                line for line in text.splitlines() if any(c in line for c in "\x1b\x07\r\u202e")
            ][:3]
        for line in res.stdout.splitlines():  # a newline in a file name never forges a line of its own
            assert line.startswith(("ingested ", "refused ", "already had ", "observed ", "  → ")), line
        counts.append(_errors(project))
    assert counts[0] == counts[1] == counts[2], counts  # an unchanged folder: no new events
    assert 0 < counts[0] <= DOCS + STREAMS * (STREAM_REFUSALS + 1), counts
