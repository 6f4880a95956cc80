"""Each agent's runner at a glance (DESIGN §10 "Runners"): the text the owner
view puts under an agent's column header and the board's header sums up.

Pure functions of frozen ``RunnerView`` values and an explicit ``now``, so a
frozen clock gives the same pixels on every run. Readable without colour: each
state has its own word, the marks only help."""

from __future__ import annotations

from loopx_core.rules import ids
from loopx_core.rules.clock import human_delta
from loopx_core.ops.runners import RunnerView

MARKS = {"running": "▶", "asleep": "☾", "waiting": "⚑", "paused": "‖", "stopped": "■", "gone": "✗"}


def state(view: RunnerView, now: float) -> str:
    """running | asleep | waiting | paused | stopped | gone (its process went silent)."""
    if view.state != "stopped" and not view.live(now):
        return "gone"
    return view.state


def runner_text(view: RunnerView | None, now: float) -> str:
    """Short enough for a column header: ``▶ LX-7 #14 3m12s`` (turn 14 on LX-7 for
    3m12s) · ``⚑ wait G-4`` · ``☾ sleep 10m`` · ``‖ paused`` · ``■ stopped`` ·
    ``✗ gone 2m`` (silent); a person's pause or stop not acted on yet follows:
    ``▶ LX-7 #14 3m pausing``."""
    if view is None:
        return ""
    what = state(view, now)
    mark = MARKS[what]
    if what == "running":
        text = f"{mark} {ids.fmt(ids.CARD, view.card) or '?'} #{view.turn} {human_delta(now - view.since)}"
    elif what == "waiting":
        text = f"{mark} wait {ids.fmt(ids.GATE, view.gate) or ''}".rstrip()
    elif what == "asleep":
        text = f"{mark} sleep" + (f" {human_delta(view.wake_at - now)}" if view.wake_at and view.wake_at > now else "")
    elif what == "gone":
        text = f"{mark} gone {human_delta(now - (view.heartbeat or view.since))}"
    else:
        text = f"{mark} {what}"
    asked = view.control.control
    if asked in ("pause", "stop") and what in ("running", "asleep", "waiting"):
        text += " pausing" if asked == "pause" else " stopping"
    return text


def summary(runners, now: float) -> str:
    """``runners: 2 running · 1 asleep · 1 waiting`` (empty without runners)."""
    counts: dict[str, int] = {}
    for view in runners:
        what = state(view, now)
        if what != "stopped" or view.control.control != "run":
            counts[what] = counts.get(what, 0) + 1
    order = ("running", "waiting", "asleep", "paused", "gone", "stopped")
    parts = [f"{counts[s]} {s}" for s in order if counts.get(s)]
    return ("runners: " + " · ".join(parts)) if parts else ""
