"""Short human output that always says the next step."""

from __future__ import annotations

from ..rules import clock
from ..rules.columns import STATUS_COLUMNS
from ..rules.text import terminal_safe


def for_terminal(text: str) -> str:
    """The last step before text output reaches a terminal: whatever an agent
    wrote inside it can neither drive the terminal nor fake lines around it."""
    return terminal_safe(text, multiline=True)


def one_line(text: str | None) -> str:
    """An agent's one-line field (a title, a question, a note) for text output."""
    return terminal_safe(text) if text else ""


def quota_line(q: dict) -> str:
    parts = []
    for name in ("turns", "tokens", "usd"):
        used, limit = q[name]["used"], q[name]["limit"]
        if limit is not None:
            parts.append(f"{name} {used:g}/{limit:g}")
        elif used:
            parts.append(f"{name} {used:g}")
    return ", ".join(parts)


def lease_text(lease: dict | None) -> str:
    if not lease:
        return ""
    until = lease["expires_at"]
    if until is None:
        return f"lease {lease['token']} ({lease['holder']}, held)"
    left = clock.parse_iso(until) - clock.now()
    return f"lease {lease['token']} ({lease['holder']}, {clock.human_delta(left)} left)"


def card_line(card: dict) -> str:
    bits = [f"{card['id']:<7} {one_line(card['title'])[:60]}", f"[{card['status']}]"]
    if card["owner"]:
        bits.append(f"@{card['owner']}")
    if card.get("pending_gate"):
        bits.append(f"gate {card['pending_gate']}")
    if card.get("paused_reason"):
        bits.append(f"paused: {card['paused_reason']}")
    if card.get("blocked_reason"):
        bits.append(one_line(card["blocked_reason"]))
    q = quota_line(card["quota"])
    if q:
        bits.append(q)
    return "  ".join(bits)


def card_block(card: dict) -> str:
    lines = [
        f"{card['id']}: {one_line(card['title'])}",
        f"  status {card['status']}" + (f" · owner {card['owner']}" if card["owner"] else ""),
    ]
    if card["lease"]:
        lines.append("  " + lease_text(card["lease"]))
    if card["needs"]:
        lines.append("  needs " + ", ".join(card["needs"]))
    if card["after"]:
        lines.append("  after " + ", ".join(card["after"]))
    q = quota_line(card["quota"])
    if q:
        lines.append("  quota " + q)
    if card["next"]:
        lines.append(f"  next: {one_line(card['next'])}")
    open_todos = [t for t in card["todos"] if not t["done"]]
    for t in open_todos[:10]:
        lines.append(f"  [ ] {t['id']}. {one_line(t['text'])}")
    if card.get("pending_gate"):
        lines.append(f"  pending gate {card['pending_gate']}")
    for key in ("paused_reason", "blocked_reason"):
        if card.get(key):
            lines.append(f"  {key.split('_')[0]}: {one_line(card[key])}")
    unverified = card.get("unverified_evidence") or 0
    shown = f" ({unverified} unverified: from the inbox, writer not proven)" if unverified else ""
    lines.append(f"  evidence {card['evidence_count']}{shown} · version {card['version']}")
    return "\n".join(lines)


def board_text(cards: list[dict], where: str) -> str:
    out = [f"LoopX board — {where}"]
    if not cards:
        out.append('(no cards yet) → add one: loopx card add "TITLE"')
        return "\n".join(out)
    for _, title, statuses in STATUS_COLUMNS:
        col = [c for c in cards if c["status"] in statuses]
        out.append(f"\n{title} ({len(col)})")
        for c in col[:50]:
            out.append("  " + card_line(c))
        if len(col) > 50:
            out.append(f"  … {len(col) - 50} more (`loopx card list --status …`)")
    return "\n".join(out)


KIND_NAMES = (
    ("input", "in"),
    ("cache_write", "cache write"),
    ("cache_read", "cache read"),
    ("output", "out"),
    ("unsplit", "unsplit"),
)


def kinds_line(kinds: dict) -> str:
    """Tokens by kind, the kinds with any ("in 1,200 · cache read 4,000 · out 80")."""
    return " · ".join(f"{name} {kinds[k]:,}" for k, name in KIND_NAMES if kinds.get(k))


def usage_block(usage: dict) -> str:
    """Where the card's tokens and dollars come from: per agent, then the latest turns."""
    if not usage["agents"]:
        return ""
    lines = ["", "  usage by agent:"]
    for a in usage["agents"]:
        split = f" ({kinds_line(a['kinds'])})" if a.get("kinds") and kinds_line(a["kinds"]) else ""
        lines.append(
            f"    {one_line(a['agent'])}: {a['tokens']:,} tokens{split}, ${a['usd']:.4f} over {a['turns']} turn(s)"
        )
    lines.append(
        "  usage by turn:"
        + (f" (the latest {len(usage['turns'])}; {usage['turns_left_out']} before)" if usage["turns_left_out"] else "")
    )
    for t in usage["turns"]:
        who = one_line(t["agent"]) + (" (subagent)" if t.get("subagent") else "")
        split = f" ({kinds_line(t['kinds'])})" if t.get("kinds") and kinds_line(t["kinds"]) else ""
        lines.append(f"    {t['at']} {who} {t['source']}: {t['tokens']:,} tokens{split}, ${t['usd']:.4f}")
    return "\n".join(lines)


def gate_line(g: dict) -> str:
    scope = f" [{g['scope']}]" if g["scope"] else ""
    who = f" by {g['answered_by']}" if g["answered_by"] else ""
    note = f"\n  note: {one_line(g['note'])}" if g.get("note") else ""
    if g.get("choice"):
        note = f"\n  chose: {one_line(g['choice'])}" + note
    elif g.get("text"):
        note = f"\n  answer: {one_line(g['text'])}" + note
    return f"{g['id']} {g['status']}{who} — {g['card']} {g['agent']}{scope}: {one_line(g['question'])}{note}"


def artifact_state(a: dict) -> str:
    """An evidence artifact's size and hash, or why it has none."""
    if a.get("missing"):
        return "(missing)"
    if a.get("sha256") is None:
        return f"{a['size']} B (too large to hash)"
    return f"{a['size']} B {a['sha256'][:12]}"


def window_text(window: dict | None) -> str:
    """A rolling window as a person reads it: ``2000000 tokens · $20 · 30 turns / 5h``."""
    if not window:
        return "-"
    parts = []
    if window.get("tokens") is not None:
        parts.append(f"{window['tokens']} tokens")
    if window.get("usd") is not None:
        parts.append(f"${window['usd']:g}")
    if window.get("turns") is not None:
        parts.append(f"{window['turns']} turns")
    seconds = float(window["seconds"])
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size and seconds % size == 0:
            span = f"{int(seconds // size)}{unit}"
            break
    else:
        span = f"{seconds:g}s"
    return f"{' · '.join(parts) or 'no limit'} / {span}"
