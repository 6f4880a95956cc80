"""Small text pieces every screen shows: quota bars, lease time left, sizes, times.

Everything here is a pure function of plain values and an explicit ``now``,
so a frozen clock gives the same pixels on every run."""

from __future__ import annotations

import os
from datetime import UTC, datetime

from rich.cells import cell_len, set_cell_size
from rich.text import Text

from loopx_core.rules.clock import human_delta
from loopx_core.shapes.values import CardView, Limit, Quota

FULL, EMPTY = "█", "░"


def colourless() -> bool:
    """``NO_COLOR`` is set: Textual then draws every colour as a grey, and a
    red or green bar came out a dark grey on a dark card. Read on each call
    (tests switch it)."""
    return "NO_COLOR" in os.environ


def quota_style(fraction: float | None) -> str:
    if fraction is None:
        return "dim"
    if colourless():  # the text's own colour, the brightest grey there is; bold once it nears the limit
        return "bold" if fraction >= 0.8 else ""
    if fraction >= 1.0:
        return "bold red"
    if fraction >= 0.8:
        return "yellow"
    return "green"


def bar(fraction: float | None, width: int) -> Text:
    """A bar of ``width`` cells; readable without colour (filled vs light shade)."""
    width = max(1, width)
    if fraction is None:
        return Text(EMPTY * width, style="dim")
    filled = min(width, int(round(fraction * width)))
    if fraction > 0 and filled == 0:
        filled = 1
    return Text.assemble((FULL * filled, quota_style(fraction)), (EMPTY * (width - filled), "dim"))


def tokens(n: float) -> str:
    n = float(n)
    if n >= 1_000_000:
        return f"{n / 1_000_000:.1f}M".replace(".0M", "M")
    if n >= 10_000:
        return f"{n / 1000:.0f}k"
    if n >= 1000:
        return f"{n / 1000:.1f}k".replace(".0k", "k")
    return f"{int(n)}"


def limit_text(name: str, limit: Limit) -> str:
    if name == "usd":
        used = f"${limit.used:.2f}"
        return used if limit.limit is None else f"{used}/${limit.limit:.2f}"
    if name == "tokens":
        return tokens(limit.used) if limit.limit is None else f"{tokens(limit.used)}/{tokens(limit.limit)}"
    used = f"{int(limit.used)}"
    return used if limit.limit is None else f"{used}/{int(limit.limit)}"


def quota_face(quota: Quota, width: int) -> Text:
    """The card face's quota: a bar of the most-spent limit and its percentage."""
    fraction = quota.fraction
    if fraction is None:
        return Text(f"{tokens(quota.tokens.used)} tok", style="dim")
    pct = f" {int(round(fraction * 100))}%"
    return bar(fraction, max(3, width - len(pct))) + Text(pct, style=quota_style(fraction))


def lease_left(card: CardView, now: float) -> str:
    """Lease time left on a held card ("12m"), or what it waits on."""
    if card.status == "monitoring" and card.monitor_due is not None:
        return "◷" + human_delta(card.monitor_due - now)
    if card.lease is None:
        return ""
    if card.lease.expires_at is None:
        return "held"
    left = card.lease.expires_at - now
    return "expired" if left <= 0 else human_delta(left)


def size(n: int | None) -> str:
    if n is None:
        return "missing"
    if n < 1024:
        return f"{n} B"
    if n < 1024 * 1024:
        return f"{n / 1024:.1f} KB"
    return f"{n / 1024 / 1024:.1f} MB"


def short_sha(sha: str | None) -> str:
    return sha[:12] if sha else "—"


def clock_time(ts: float | None) -> str:
    if ts is None:
        return "—"
    return datetime.fromtimestamp(ts, tz=UTC).strftime("%m-%d %H:%M:%S")


def ago(ts: float | None, now: float) -> str:
    if ts is None:
        return "—"
    return human_delta(now - ts) + " ago" if now >= ts else "in " + human_delta(ts - now)


def ellipsize(text: str, width: int) -> str:
    """One line of at most ``width`` terminal cells (wide characters count two)."""
    text = " ".join(text.split())
    if cell_len(text) <= width:
        return text
    if width <= 1:
        return set_cell_size(text, max(0, width))
    return set_cell_size(text, width - 1).rstrip() + "…"


def hang(lead: Text | str, body: str, width: int, style: str = "") -> Text:
    """``lead`` then ``body`` word-wrapped so each line after the first starts
    under the first (where a terminal's wrap would start at column 0).
    ``width`` 0 (not laid out yet): one line, left to the widget to wrap."""
    lead = Text(lead) if isinstance(lead, str) else lead
    indent = lead.cell_len
    room = width - indent
    out = Text()
    out.append_text(lead)  # (its style stays its own, not the body's)
    if room < 8:
        return out.append(body, style=style)
    words: list[str] = []
    for word in body.split():
        while cell_len(word) > room:  # a word longer than a line is cut
            head = set_cell_size(word, room)
            words.append(head)
            word = word[len(head) :]
        words.append(word)
    line, lines = "", []
    for word in words:
        candidate = f"{line} {word}" if line else word
        if cell_len(candidate) <= room:
            line = candidate
        else:
            lines.append(line)
            line = word
    lines.append(line)
    out.append(("\n" + " " * indent).join(lines), style=style)
    return out


SPARKS = "▁▂▃▄▅▆▇█"


def sparks(values: list[float], width: int) -> str:
    """One cell per value (the last ``width`` of them), its height its share
    of the largest: a turn is a cell, never a bar stretched across the row."""
    shown = values[-width:] if width > 0 else []
    top = max(shown, default=0.0)
    if top <= 0:
        return SPARKS[0] * len(shown)
    return "".join(
        SPARKS[min(len(SPARKS) - 1, int(v / top * (len(SPARKS) - 1) + 0.5))] if v > 0 else " " for v in shown
    )


def lock_wait_line(waiting: list[str], seconds: float, limit: float) -> str:
    """The footer while a person's action waits for the board's write lock
    (another process holds it): what waits, for how long, and the bound."""
    return f"waiting for the board: {', '.join(waiting)} — another process holds its write lock ({int(seconds)} s; gives up after {limit:g} s)"
