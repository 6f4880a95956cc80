"""A card's face without a screen (widgets/card_face.draw): five lines, each
exactly the column's width, whatever the card says and however narrow."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from rich.style import Style

from loopx_core.shapes.values import Limit, Quota
from loopx_tui.widgets.card_face import CARD_ROWS, EDGE, Look, badge, draw

from .test_state import card

LOOK = Look(
    face=Style(color="white", bgcolor="black"),
    hover=Style(bgcolor="grey23"),
    selected=Style(color="blue", bgcolor="grey15"),
    dragging=Style(color="magenta"),
    muted=Style(color="grey50"),
    title=Style(bold=True),
    edges={"": Style(color="grey35"), **{k: Style(color="yellow") for k in set(EDGE.values())}},
    badges={"": Style(color="grey50"), **{k: Style(color="yellow") for k in set(EDGE.values())}},
)

TITLES = st.text(st.characters(blacklist_categories=("Cs", "Cc")), max_size=80) | st.sampled_from(
    ["部署到生产环境的按钮", "🚀 ship it 🚀", "a" * 200, ""]
)


@settings(max_examples=150, deadline=None)
@given(
    title=TITLES,
    owner=st.none() | st.sampled_from(["claude-1", "a-very-long-agent-name-indeed", "代理"]),
    status=st.sampled_from(
        ["backlog", "ready", "active", "waiting", "paused", "blocked", "done", "cancelled", "handoff", "monitoring"]
    ),
    width=st.integers(min_value=6, max_value=60),
    state=st.sampled_from([{}, {"selected": True}, {"hover": True}, {"dragging": True}]),
    gate=st.none() | st.integers(1, 10_000),
    priority=st.integers(0, 4),
)
def test_every_line_is_the_columns_width(title, owner, status, width, state, gate, priority):
    view = card(7, status=status, owner=owner, title=title, priority=priority)._replace(
        pending_gate=gate, evidence_count=3
    )
    lines = draw(view, width, 0.0, LOOK, **state)
    assert len(lines) == CARD_ROWS
    assert [line.cell_length for line in lines] == [width] * CARD_ROWS
    assert [sum(segment.cell_length for segment in line) for line in lines] == [
        width
    ] * CARD_ROWS  # (what is drawn, not what the strip claims)
    first, last = lines[0].text, lines[-1].text
    # The box holds: its corners at both ends of the top and bottom edges, a side on every line between.
    assert first[0] in "╭┏" and first[-1] in "╮┓" and last[0] in "╰┗" and last[-1] in "╯┛"
    assert all(line.text[0] in "│┃╏" and line.text[-1] in "│┃╏" for line in lines[1:-1])


def test_the_face_says_key_title_owner_quota_evidence_and_badge():
    quota = Quota(Limit(3, 4), Limit(0, None), Limit(0, None))
    view = card(12, status="waiting", owner="codex-1", title="Deploy to staging", priority=1)._replace(
        pending_gate=5, evidence_count=2, quota=quota
    )
    top, title, owner, spend, bottom = (line.text for line in draw(view, 30, 0.0, LOOK))
    assert top.startswith("╭─ LX-12 P1 ─") and bottom.endswith(f" {badge(view)} ─╯") and badge(view) == "⚑G-5"
    assert "Deploy to staging" in title and "codex-1" in owner and "75%" in spend and spend.rstrip("│ ").endswith("≡2")
    # Selected: a heavy edge (the same with or without colour).
    assert draw(view, 30, 0.0, LOOK, selected=True)[0].text.startswith("┏━ LX-12 P1 ━")
