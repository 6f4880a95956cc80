"""Each agent's runner at a glance (DESIGN §10 "Runners"): the text the owner
view puts under an agent's column header and the board's header sums up.

Pure functions of frozen ``RunnerView`` values and an explicit ``now``, so a
frozen clock gives the same pixels on every run. Readable without colour: each
state has its own word, the marks only help."""

from __future__ import annotations

from loopx_core.ops.runners import RunnerView
from loopx_core.rules import ids
from loopx_core.rules.clock import human_delta

MARKS = {"running": "▶", "asleep": "☾", "waiting": "⚑", "paused": "‖", "stopped": "■", "gone": "✗"}


def state(view: RunnerView, now: float) -> str:
    """running | asleep | waiting | paused | stopped | gone (its process went silent)."""
    if view.state != "stopped" and not view.live(now):
        return "gone"
    return view.state


def runner_text(view: RunnerView | None, now: float) -> str:
    """Short enough for a column: ``▶ LX-7 #14 3m12s`` (turn 14 on LX-7 for
    3m12s) · ``⚑ wait G-4`` · ``☾ sleep 10m`` · ``‖ paused`` · ``■ stopped`` ·
    ``✗ gone 2m`` (silent); a person's pause or stop not acted on yet follows:
    ``▶ LX-7 #14 3m pausing``."""
    variants = runner_variants(view, now)
    return variants[0] if variants else ""


def runner_variants(view: RunnerView | None, now: float) -> list[str]:
    """``runner_text`` and shorter ways to say the same (longest first) for a
    narrow column: the turn number goes first, then how long; the state's
    word and a pause or stop asked for always stay."""
    if view is None:
        return []
    what = state(view, now)
    mark = MARKS[what]
    parts: list[tuple[str, int]] = [(mark, 0)]  # (word, how readily it goes: 2 first, then 1; 0 stays)
    if what == "running":
        parts += [(ids.fmt(ids.CARD, view.card) or "?", 0), (f"#{view.turn}", 2), (human_delta(now - view.since), 1)]
    elif what == "waiting":
        parts += [("wait", 0)] + ([(ids.fmt(ids.GATE, view.gate) or "?", 0)] if view.gate else [])
    elif what == "asleep":
        parts += [("sleep", 0)] + (
            [(human_delta(view.wake_at - now), 1)] if view.wake_at and view.wake_at > now else []
        )
    elif what == "gone":
        parts += [("gone", 0), (human_delta(now - (view.heartbeat or view.since)), 1)]
    else:
        parts += [(what, 0)]
    asked = view.control.control
    if asked in ("pause", "stop") and what in ("running", "asleep", "waiting"):
        parts.append(("pausing" if asked == "pause" else "stopping", 0))
    variants = [" ".join(w for w, _ in parts)]
    for level in (2, 1):
        parts = [(w, g) for w, g in parts if g != level]
        shorter = " ".join(w for w, _ in parts)
        if shorter != variants[-1]:
            variants.append(shorter)
    return variants


def summary(runners, now: float, short: bool = False) -> str:
    """``runners: 2 running · 1 asleep · 1 waiting`` (empty without runners);
    ``short``: ``runners ▶2 ⚑1 ☾1``, for a narrow header."""
    counts: dict[str, int] = {}
    for view in runners:
        what = state(view, now)
        if what != "stopped" or view.control.control != "run":
            counts[what] = counts.get(what, 0) + 1
    order = ("running", "waiting", "asleep", "paused", "gone", "stopped")
    if short:
        parts = [f"{MARKS[s]}{counts[s]}" for s in order if counts.get(s)]
        return ("runners " + " ".join(parts)) if parts else ""
    parts = [f"{counts[s]} {s}" for s in order if counts.get(s)]
    return ("runners: " + " · ".join(parts)) if parts else ""
