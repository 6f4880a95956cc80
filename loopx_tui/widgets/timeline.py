"""The trajectory plots, drawn with textual-plotext (Textualize's Plotext
widget; only the timeline screen imports this module, so no other path pays
for Plotext).

``TrajectoryPlot``: one lane per kind of time on a shared axis of hours since
the loop began — turns (●, more marks where turns were dense), an agent
working, waiting for a person on a gate, paused, handoffs. ``BurnPlot``:
tokens per hour (or minute, or day) as bars, the dollars spent so far as
a line on the right axis.
Both cut the data into as many slices as the plot is wide (``trajectory.
buckets``), so a card with 5,000 events draws as fast as one with five."""

from __future__ import annotations

from itertools import accumulate

from rich.text import Text
from textual_plotext import PlotextPlot
from textual_plotext.plotext_plot import Plot

from loopx_core.ops.trajectory import HOUR, Trajectory, buckets, burn

from ..format import tokens

LANES = (("handoff", "magenta"), ("paused", "red"), ("gate wait", "yellow"), ("working", "green"), ("turns", "cyan"))
LANE = {name: i + 1 for i, (name, _) in enumerate(LANES)}
COLOUR = dict(LANES)


def time_ticks(plt, total_hours: float, count: int = 6) -> None:
    """x ticks at round-looking points, labelled as durations ("45m", "6h", "3d")."""
    from loopx_core.rules.clock import human_delta

    total = max(total_hours, 1e-6)
    positions = [total * i / (count - 1) for i in range(count)]
    plt.xticks(positions, ["0"] + [human_delta(p * HOUR) for p in positions[1:]])


def _axis_hours(start: float, width: float, n: int) -> list[float]:
    """The middle of each slice, in hours since the start."""
    return [((i + 0.5) * width) / HOUR for i in range(n)]


class DrawnOnce(PlotextPlot):
    """A Plotext plot built once per trajectory, size and theme: Textual
    renders a widget again on every repaint of its region, and a Plotext
    build of a long trajectory was most of what opening the timeline cost.

    ``build`` draws into a Plot of its own and touches no widget state, so the
    timeline's worker builds the figure next to its read (``prebuild``) and the
    UI thread only shows the text; a resize or a new theme builds again here."""

    _cached: tuple | None = None  # (key, the text)

    def __init__(self, **kw):
        super().__init__(**kw)
        self.trajectory: Trajectory | None = None

    def figure(self, plt, t: Trajectory | None, width: int) -> None:
        raise NotImplementedError

    def _key(self, t: Trajectory | None, size) -> tuple:
        return (id(t), size.width, size.height, self._get_plotext_theme_name(self.app.theme))

    def build(self, t: Trajectory | None, width: int, height: int, theme: str) -> Text:
        plt = Plot()
        self.figure(plt, t, width)
        plt.plotsize(width, height)
        plt._set_size(width, height)
        plt.theme(theme)
        return Text.from_ansi(plt.build())

    def prebuild(self, t: Trajectory) -> tuple | None:
        """In a worker: the figure of ``t`` at the plot's size now (None before the first layout)."""
        size = self.size
        if size.width <= 0 or size.height <= 0:
            return None
        key = self._key(t, size)
        return (key, self.build(t, size.width, size.height, key[3]))

    def show(self, trajectory: Trajectory, built: tuple | None = None) -> None:
        self.trajectory = trajectory
        if built is not None:
            self._cached = built
        self.refresh()

    def on_resize(self) -> None:
        self.refresh()

    def on_unmount(self) -> None:
        # PlotextPlot subscribes to the app's theme signal with a lambda that holds
        # the plot; Textual drops a dead subscriber only when the theme changes, so
        # every timeline closed kept its two plots, their trajectory and their figure.
        self.app.theme_changed_signal.unsubscribe(self)

    def render(self):
        if self.trajectory is None:
            return Text("reading…", style="dim")  # (an empty figure is a full Plotext build too)
        key = self._key(self.trajectory, self.size)
        if self._cached is None or self._cached[0] != key:
            self._cached = (key, self.build(self.trajectory, self.size.width, self.size.height, key[3]))
        return self._cached[1]


class TrajectoryPlot(DrawnOnce):
    def figure(self, plt, t: Trajectory | None, width: int) -> None:
        plt.title("Trajectory")
        if t is None:
            return
        n = max(8, width - 14)
        b = buckets(t, n)
        xs = _axis_hours(b.start, b.width, n)
        lanes = {
            "turns": [x for x, count in zip(xs, b.turns) if count],
            "working": [x for x, on in zip(xs, b.working) if on],
            "gate wait": [x for x, on in zip(xs, b.waiting) if on],
            "paused": [x for x, on in zip(xs, b.paused) if on],
            "handoff": [x for x, count in zip(xs, b.handoffs) if count],
        }
        for name, points in lanes.items():
            if points:
                marker = "●" if name in ("turns", "handoff") else "━"
                plt.scatter(points, [LANE[name]] * len(points), marker=marker, color=COLOUR[name])
        plt.yticks([LANE[name] for name, _ in LANES], [name for name, _ in LANES])
        plt.ylim(0.5, len(LANES) + 0.5)
        plt.xlim(0, max(b.width * n / HOUR, 1e-3))
        time_ticks(plt, b.width * n / HOUR)
        plt.xlabel("time since the start")


def value_ticks(top: float, label, count: int = 4) -> tuple[list[float], list[str]]:
    """y ticks from 0 to ``top``, labelled by ``label`` ("12k", "$0.40"): plotext's
    own labels are its raw numbers ("86334")."""
    top = top if top > 0 else 1.0
    ticks = [top * i / count for i in range(count + 1)]
    return ticks, [label(v) for v in ticks]


class BurnPlot(DrawnOnce):
    def figure(self, plt, t: Trajectory | None, width: int) -> None:
        if t is None:
            plt.title("Burn")
            return
        per = burn(t, max_bars=max(4, (width - 20) // 4))  # four cells a slot: a bar and a gap
        plt.title(f"Tokens per {per.per} (bars) · dollars so far (line, right)")
        middles = [h + per.step / HOUR / 2 for h in per.hours]  # a bar stands over its slice of time
        plt.bar(middles, per.tokens, color="cyan", width=0.7)  # (width: the share of the space between bars)
        plt.yticks(*value_ticks(max(per.tokens, default=0), tokens))
        spent = list(accumulate(per.usd))
        if spent and spent[-1] > 0:
            plt.plot(middles, spent, yside="right", color="yellow", marker="hd")
            plt.yticks(*value_ticks(spent[-1], lambda v: f"${v:.2f}"), yside="right")
        total = per.hours[-1] + per.step / HOUR if per.hours else 1.0
        plt.xlim(0, total)
        time_ticks(plt, total)
        plt.xlabel("time since the start")
